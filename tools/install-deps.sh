#!/usr/bin/env bash
# Installs the Debian packages shardplan builds against, if any is missing.
# Uses sudo when not root. Safe to run repeatedly: does nothing when all are present.
set -euo pipefail
pkgs=(cmake g++ make nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev libtomlplusplus-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "shardplan: installing missing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

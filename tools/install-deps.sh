#!/usr/bin/env bash
# Installs what shardplan builds and tests against, if anything is missing: Debian packages through
# apt-get (sudo when not root). Safe to run repeatedly: does nothing when all are present.
set -euo pipefail
pkgs=(cmake g++ make pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev
      libtomlplusplus-dev libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev chromium
      clang libclang-rt-14-dev wrk pybind11-dev python3-dev python3-pytest emscripten)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs the browser tests; a machine may already have it from another source (with npm bundled),
# so only the commands are checked, and Debian's packages are used only when they are absent.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "shardplan: installing missing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

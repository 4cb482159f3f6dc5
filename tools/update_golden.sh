#!/usr/bin/env bash
# Rewrites tests/golden/*.json from the current model. Review `git diff tests/golden` before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build -j "$(nproc)" --target shardplan_tests >/dev/null
SHARDPLAN_UPDATE_GOLDEN=1 ./build/tests/shardplan_tests --gtest_filter='Golden.*'
git status --short tests/golden

#!/usr/bin/env bash
# docs/validation.md quotes `shardplan validate calibration.json`: the quote must be what it prints.
set -u
bin="$1"
root="$2"
data="$root/../shared/validation/calibration.json"
if [ ! -f "$data" ]; then
    echo "docs_validation: no ../shared/validation beside the checkout; skipped"
    exit 0
fi
want=$(sed -n '/<!-- validate-output-begin -->/,/<!-- validate-output-end -->/p' "$root/docs/validation.md" | sed '1,2d;$d' | sed '$d')
got=$("$bin" validate "$data")
if [ "$want" != "$got" ]; then
    echo "docs/validation.md is out of date; the command prints:"
    echo "$got"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
echo "docs_validation: 1 passed, 0 failed"

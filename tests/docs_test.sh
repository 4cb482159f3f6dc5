#!/usr/bin/env bash
# docs/validation.md quotes `shardplan validate calibration.json`: the quote must be what it prints.
set -u
bin="$1"
root="$2"
data="$root/../shared/validation/calibration.json"
if [ ! -f "$data" ]; then
    # In CI a missing ../shared fails: the quote would otherwise go unchecked and CI stay green.
    if [ -n "${CI:-}" ] && [ "${CI}" != "false" ] && [ "${CI}" != "0" ]; then
        echo "docs_validation: CI: $data is missing"
        exit 1
    fi
    echo "docs_validation: no ../shared/validation beside the checkout; skipped"
    exit 0
fi
want=$(sed -n '/<!-- validate-output-begin -->/,/<!-- validate-output-end -->/p' "$root/docs/validation.md" | sed '1,2d;$d' | sed '$d')
got=$("$bin" validate "$data")
if [ "$want" != "$got" ]; then
    echo "docs/validation.md is out of date (run tools/update_validation_doc.sh); the command prints:"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
want=$(sed -n '/<!-- holdout-output-begin -->/,/<!-- holdout-output-end -->/p' "$root/docs/validation.md" | sed '1,2d;$d' | sed '$d')
got=$("$bin" calibrate "$data" --per-generation --holdout-every 3 | grep -v efficiency)
if [ "$want" != "$got" ]; then
    echo "docs/validation.md hold-out block is out of date (run tools/update_validation_doc.sh):"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
want=$(sed -n '/<!-- loso-output-begin -->/,/<!-- loso-output-end -->/p' "$root/docs/validation.md" | sed '1,2d;$d' | sed '$d')
got=$("$bin" validate "$data" --leave-one-source-out | sed -n '/^leave one source out/,$p')
if [ "$want" != "$got" ]; then
    echo "docs/validation.md leave-one-source-out block is out of date (run tools/update_validation_doc.sh):"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
echo "docs_validation: 3 passed, 0 failed"

#!/usr/bin/env bash
# Rewrites the three quoted outputs in docs/validation.md (validate, the hold-out calibration, and
# leave-one-source-out) from the
# current build. The docs_validation CTest check fails until this has been run after a model change.
set -euo pipefail
cd "$(dirname "$0")/.."
data=../shared/validation/calibration.json
val=$(build/shardplan validate "$data")
hold=$(build/shardplan calibrate "$data" --per-generation --holdout-every 3 | grep -v efficiency)
loso=$(build/shardplan validate "$data" --leave-one-source-out | sed -n '/^leave one source out/,$p')
python3 - "$val" "$hold" "$loso" <<'PY'
import re, sys
p = 'docs/validation.md'
s = open(p).read()
for name, text in (('validate', sys.argv[1]), ('holdout', sys.argv[2]), ('loso', sys.argv[3])):
    s = re.sub(r'(<!-- %s-output-begin -->\n```\n).*?(\n```\n<!-- %s-output-end -->)' % (name, name),
               lambda m: m.group(1) + text + m.group(2), s, flags=re.S)
open(p, 'w').write(s)
PY
git --no-pager diff --stat docs/validation.md

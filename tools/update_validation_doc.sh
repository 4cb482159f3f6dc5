#!/usr/bin/env bash
# Rewrites the two quoted outputs in docs/validation.md (validate, and the hold-out calibration) from the
# current build. The docs_validation CTest check fails until this has been run after a model change.
set -euo pipefail
cd "$(dirname "$0")/.."
data=../shared/validation/calibration.json
val=$(build/shardplan validate "$data")
hold=$(build/shardplan calibrate "$data" --per-generation --holdout-every 3 --from-generic | grep -v efficiency)
python3 - "$val" "$hold" <<'PY'
import re, sys
p = 'docs/validation.md'
s = open(p).read()
for name, text in (('validate', sys.argv[1]), ('holdout', sys.argv[2])):
    s = re.sub(r'(<!-- %s-output-begin -->\n```\n).*?(\n```\n<!-- %s-output-end -->)' % (name, name),
               lambda m: m.group(1) + text + m.group(2), s, flags=re.S)
open(p, 'w').write(s)
PY
git --no-pager diff --stat docs/validation.md

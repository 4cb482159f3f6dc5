#!/usr/bin/env bash
# Every rejection code the library can return (problem("…") and LayoutProblem{"…"} in src/) is listed in
# docs/json.md, so a new check cannot land undocumented.
set -u
root="$1"
codes=$(grep -rhoE '(problem\(|LayoutProblem\{)"[a-z_]+"' "$root"/src/*/*.cpp | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u)
missing=0
n=0
for c in $codes; do
    n=$((n + 1))
    if ! grep -q "\`$c\`" "$root/docs/json.md"; then
        echo "docs/json.md does not list the rejection code \`$c\`"
        missing=$((missing + 1))
    fi
done
[ "$n" -gt 0 ] || { echo "docs_codes: found no codes in src/ (the pattern is stale)"; exit 1; }
echo "docs_codes: $((n - missing)) listed, $missing missing"
[ "$missing" -eq 0 ]

#!/usr/bin/env bash
# Every shardplan command README.md shows runs verbatim (issue 16): each `build/shardplan ...` line of its
# code blocks (continued lines joined, pipes kept) is run from a scratch folder laid out like a checkout
# (build/, examples/ and ../shared beside it). It must exit 0, or 2 where README shows the error line it
# prints. `serve` is left out (it runs until stopped; server_test covers it); `make` lines are CI itself.
set -u
bin="$1"
root="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/w/build"
ln -s "$bin" "$tmp/w/build/shardplan"
ln -s "$root/examples" "$tmp/w/examples"
[ -d "$root/../shared" ] && ln -s "$(cd "$root/../shared" && pwd)" "$tmp/shared"
python3 - "$root/README.md" > "$tmp/commands" <<'PY'
import sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
inside = False
i = 0
while i < len(lines):
    line = lines[i]
    if line.startswith('```'):
        inside = not inside
        i += 1
        continue
    text = line[2:] if line.startswith('$ ') else line
    if inside and text.startswith('build/shardplan') and not text.startswith('build/shardplan serve'):
        cmd = text
        while cmd.rstrip().endswith('\\') and i + 1 < len(lines):
            i += 1
            cmd = cmd.rstrip()[:-1] + ' ' + lines[i].strip()
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        rc = 2 if nxt.startswith('shardplan: ') else 0
        print(f'{rc}\t{cmd.strip()}')
    i += 1
PY
pass=0
fail=0
while IFS=$'\t' read -r want cmd; do
    [ -z "$cmd" ] && continue
    if [ ! -d "$tmp/shared" ] && [[ "$cmd" == *"../shared"* ]]; then
        echo "readme: no ../shared beside the checkout; skipped: $cmd"
        continue
    fi
    (cd "$tmp/w" && timeout 120 bash -o pipefail -c "$cmd" >"$tmp/out" 2>"$tmp/err")
    got=$?
    if [ "$got" = "$want" ]; then
        pass=$((pass + 1))
    else
        echo "FAIL (exit $got, README implies $want): $cmd"
        head -3 "$tmp/err"
        fail=$((fail + 1))
    fi
done < "$tmp/commands"
echo "readme: $pass commands ran as README shows, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 10 ]

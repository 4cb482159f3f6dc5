#!/usr/bin/env bash
# Runs the error catalogue in docs/errors.md: every row must exit 2 with one stderr line containing its message.
set -u
bin="$1"
doc="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
while IFS= read -r line; do
    [[ "$line" =~ ^\|\ ([0-9]+)\ \| ]] || continue
    n="${BASH_REMATCH[1]}"
    IFS='|' read -r _ _ cmd file msg _ <<<"$line"
    cmd=$(sed -E 's/^ *`(.*)` *$/\1/' <<<"$cmd")
    file=$(sed -E 's/^ *`?//; s/`? *$//' <<<"$file")
    msg=$(sed -E 's/^ *`(.*)` *$/\1/' <<<"$msg")
    input="$tmp/in-$n.json"
    case "$file" in
        "") ;;
        MISSING) rm -f "$input" ;;
        EMPTY) : >"$input" ;;
        BINARY) printf '\xff\xfe\x00\x80garbage\xc3' >"$input" ;;
        HUGE) head -c $((65 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$input" ;;
        *) printf '%s' "$file" >"$input" ;;
    esac
    read -r -a args <<<"${cmd//@FILE/$input}"
    "$bin" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
    code=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$code" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$msg" "$tmp/err"; then
        echo "FAIL #$n: shardplan $cmd → exit $code, $lines stderr lines:"
        head -3 "$tmp/err"
        echo "   wanted: $msg"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
    rm -f "$input"
done <"$doc"
echo "errors: $pass passed, $fail failed"
[ "$pass" -ge 40 ] && [ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Every rejection code check_layout can return has its sentence in search's table of reasons
# (app/cmd_search.cpp), so a count of rejected layouts never prints a bare code.
set -u
root="$1"
fail=0
for code in $(grep -o 'problem("[a-z_]*"' "$root/src/model/layout.cpp" | cut -d'"' -f2 | sort -u); do
    if ! grep -q "{\"$code\", \"" "$root/app/cmd_search.cpp"; then
        echo "reasons: rejection code $code has no text in app/cmd_search.cpp"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "reasons: every rejection code has its text"
exit $fail

#!/usr/bin/env bash
# The include rules of docs/architecture.md: each file of the library belongs to a layer, and includes
# headers of its own layer or lower ones only. The lower layers (through search) include no JSON and no
# HTTP. Prints each violation; exits 1 if there is any. Usage: tools/check_layers.sh [ROOT]
set -u
root="${1:-$(dirname "$0")/..}"
cd "$root" || exit 2
layer_of() {
    case "$1" in
        enums|error|model|hardware|constants|layout|presets|ranges) echo 0 ;; # inputs
        collectives|compute|memory|comm|topology|schedule) echo 1 ;;          # cost terms
        simulate|pipeline) echo 2 ;;                                          # pipeline
        plan|work|sync|terms) echo 3 ;;                                       # one evaluation
        search|suggest) echo 4 ;;                                             # many evaluations
        io|inputs_json|hf|resolve|toml) echo 5 ;;                             # JSON (and TOML) in and out
        validate|calibrate) echo 6 ;;                                         # against published runs
        report|report_text|table|sweep|export|trace|import|import_keys|launch_values) echo 7 ;;  # writers, and their readers back
        api) echo 8 ;;                                                        # the HTTP API, pure
        *) echo "" ;;
    esac
}
bad=0
for f in include/shardplan/*.h src/*/*.cpp; do
    name=$(basename "$f"); name="${name%.*}"
    [ "$name" = "shardplan" ] && continue  # the umbrella header includes everything
    me=$(layer_of "$name")
    if [ -z "$me" ]; then echo "layers: $f is in no layer (add it to tools/check_layers.sh and docs/architecture.md)"; bad=1; continue; fi
    while read -r dep; do
        them=$(layer_of "$dep")
        if [ -z "$them" ] || [ "$them" -gt "$me" ]; then
            echo "layers: $f (layer $me) includes shardplan/$dep.h (layer ${them:-?})"; bad=1
        fi
    done < <(grep -o '#include "shardplan/[a-z_]*\.h"' "$f" | sed 's/.*shardplan\/\([a-z_]*\)\.h"/\1/')
    if [ "$me" -le 4 ] && grep -qE '#include <(nlohmann|httplib)' "$f"; then
        echo "layers: $f (layer $me) includes JSON or HTTP"; bad=1
    fi
done
[ $bad -eq 0 ] && echo "layers: every include goes to the same layer or a lower one"
exit $bad

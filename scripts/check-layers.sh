#!/usr/bin/env bash
# Checks the library's layering (docs/DESIGN.md, section 1): a file in lib/mpt/<layer>/
# includes headers of its own layer and of the layers its row of the directions table names
# only, and no system header its row forbids. Prints every include that goes against the directions
# and exits 1 when there is one.
#
#   scripts/check-layers.sh [ROOT]        (ROOT: the checkout; default: this script's)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
lib=$root/lib/mpt
[ -d "$lib" ] || {
    echo "check-layers: error: $lib not found" >&2
    exit 2
}

# The directions table of docs/DESIGN.md, between its layers:begin and layers:end markers:
# rows "| layer | includes | forbidden system headers |" (each a space-separated list, a
# trailing * matching any rest of a name).
design=$root/docs/DESIGN.md
[ -f "$design" ] || {
    echo "check-layers: error: $design not found" >&2
    exit 2
}
declare -A allowed=()
declare -A forbidden=()
in_table=0
while IFS= read -r line; do
    case $line in
        '<!-- layers:begin -->') in_table=1 && continue ;;
        '<!-- layers:end -->') in_table=0 && continue ;;
    esac
    [ $in_table -eq 1 ] || continue
    IFS='|' read -r _ layer includes banned _ <<<"$line"
    layer=$(echo $layer)
    case $layer in '' | layer | ---*) continue ;; esac
    allowed[$layer]="$layer $(echo $includes)"
    re=""
    for h in $banned; do
        h=${h//./\\.}
        h=${h//\*/.*}
        re="${re:+$re|}$h"
    done
    forbidden[$layer]=${re:+^($re)\$}
done <"$design"
[ ${#allowed[@]} -gt 0 ] || {
    echo "check-layers: error: no directions table in $design" >&2
    exit 2
}

bad=0
checked=0
for dir in "$lib"/*/; do
    layer=$(basename "$dir")
    if [ -z "${allowed[$layer]+x}" ]; then
        echo "check-layers: lib/mpt/$layer/: not a known layer (add it to the table of docs/DESIGN.md)"
        bad=1
        continue
    fi
    for f in "$dir"*.hpp "$dir"*.cpp; do
        [ -e "$f" ] || continue
        checked=$((checked + 1))
        rel=${f#"$root"/}
        lineno=0
        while IFS= read -r line; do
            lineno=$((lineno + 1))
            [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\<\"]([^\>\"]+)[\>\"] ]] || continue
            inc=${BASH_REMATCH[1]}
            if [[ $inc =~ ^mpt/([a-z_]+)/ ]]; then
                target=${BASH_REMATCH[1]}
                if [[ " ${allowed[$layer]} " != *" $target "* ]]; then
                    echo "$rel:$lineno: $layer/ may not include $inc (allowed: ${allowed[$layer]})"
                    bad=1
                fi
            elif [[ $inc =~ ^mpt/ ]]; then
                echo "$rel:$lineno: $inc is not in a layer folder"
                bad=1
            elif [ -n "${forbidden[$layer]}" ] && [[ $inc =~ ${forbidden[$layer]} ]]; then
                echo "$rel:$lineno: $layer/ may not include <$inc>"
                bad=1
            fi
        done <"$f"
    done
done
if [ "$checked" -eq 0 ]; then
    echo "check-layers: error: no sources under $lib" >&2
    exit 2
fi
if [ "$bad" -ne 0 ]; then
    echo "check-layers: includes against the layer directions (see docs/DESIGN.md, section 1)"
    exit 1
fi
echo "check-layers: $checked files, every include within the layer directions"

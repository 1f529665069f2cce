#!/usr/bin/env bash
# Checks the library's layering (DESIGN.md section 2): a file in lib/mpt/<layer>/ includes
# headers of its own layer and of the layers below it only, and core/ includes no SQLite, no
# JSON library and nothing of threads. Prints every include that goes against the directions
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

# What each layer may include, itself included.
declare -A allowed=(
    [core]="core"
    [trie]="trie core"
    [input]="input core"
    [proof]="proof trie core"
    [store]="store trie core"
    [sort]="sort input core"
    [state]="state input proof trie core"
    [ops]="ops sort input state proof store trie core"
)
# System headers a layer may not use, as extended regular expressions.
declare -A forbidden=(
    [core]='^(sqlite3\.h|nlohmann/.*|thread|mutex|atomic|condition_variable|future|fstream|filesystem|fcntl\.h|unistd\.h)$'
    [trie]='^(sqlite3\.h|nlohmann/.*)$'
    [input]='^(sqlite3\.h|nlohmann/.*)$'
    [proof]='^(sqlite3\.h|nlohmann/.*)$'
    [state]='^(sqlite3\.h|nlohmann/.*)$'
    [sort]='^(sqlite3\.h|nlohmann/.*)$'
    [store]='^(nlohmann/.*)$'
    [ops]='^(nlohmann/.*)$'
)

bad=0
checked=0
for dir in "$lib"/*/; do
    layer=$(basename "$dir")
    if [ -z "${allowed[$layer]+x}" ]; then
        echo "check-layers: lib/mpt/$layer/: not a known layer (add it to this script and DESIGN.md)"
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
            elif [[ $inc =~ ${forbidden[$layer]} ]]; then
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
    echo "check-layers: includes against the layer directions (see DESIGN.md section 2)"
    exit 1
fi
echo "check-layers: $checked files, every include within the layer directions"

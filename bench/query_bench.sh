#!/usr/bin/env bash
# Whole-process times of the query commands on a 1M-key trie file, with hyperfine:
#   mpt proof of one key                   (goal: under 3 ms median)
#   mpt verify-range of a 1,000-key range  (goal: under 5 ms)
#   mpt get-node of 100 paths
#   mpt diff of two 1M-key files that differ in 100 keys (goal: under 50 ms)
# beside a bare process start (`mpt --version`).
#
#   bench/query_bench.sh [N]      # N defaults to 1000000
#
# The data (key i = keccak256(uint64 big-endian i), value = keccak256(key)) and the trie files
# are made once into bench/data/ and reused.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-1000000}
case $n in
'' | *[!0-9]*)
    echo "query_bench: error: N must be a whole number, got '$n'" >&2
    exit 2
    ;;
esac
command -v hyperfine >/dev/null || {
    echo "query_bench: error: hyperfine not found (scripts/setup.sh installs it)" >&2
    exit 2
}

# shellcheck source=bench/dataset.sh
. "$root/bench/dataset.sh"
kv=$data
db=$root/bench/data/kv_$n.db
db_b=$root/bench/data/kv_${n}_b.db
if [ ! -s "$db" ]; then
    rm -f "$db.tmp"*
    "$mpt" build "$kv" -o "$db.tmp" >/dev/null
    mv "$db.tmp" "$db"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# B: A with 100 values changed.
if [ ! -s "$db_b" ]; then
    {
        echo '['
        sed -n '2,101p' "$kv" | awk -F'"' '{ printf "%s[\"%s\", \"0x%064d\"]\n", (NR > 1 ? "," : ""), $2, NR }'
        echo ']'
    } >"$tmp/changes.json"
    cp "$db" "$tmp/b.db"
    "$mpt" build "$tmp/changes.json" -o "$tmp/b.db" >/dev/null
    mv "$tmp/b.db" "$db_b"
fi

key=$(sed -n 2p "$kv" | cut -d'"' -f2)
"$mpt" proof "$db" --range 0x00 --limit 1000 >"$tmp/range.json"
[ "$("$mpt" verify-range "$tmp/range.json")" = "valid more=true" ] || {
    echo "query_bench: error: the range does not verify" >&2
    exit 1
}
# 100 paths: the root, the 16 one-nibble positions, 83 two-nibble ones (compact encoding).
paths=(0x00)
for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do paths+=("0x1$a"); done
for a in 0 1 2 3 4 5; do
    for b in 0 1 2 3 4 5 6 7 8 9 a b c d; do
        [ ${#paths[@]} -lt 100 ] && paths+=("0x00$a$b")
    done
done
changed=$({ "$mpt" diff "$db" "$db_b" || true; } | wc -l)
echo "files: $n keys; B differs from A in $changed keys"

hyperfine -N -i --warmup 5 --runs 50 --style basic --export-csv "$tmp/times.csv" \
    -n "process start (mpt --version)" "$mpt --version" \
    -n "proof of one key" "$mpt proof $db $key" \
    -n "verify-range of 1000 keys" "$mpt verify-range $tmp/range.json" \
    -n "get-node of 100 paths" "$mpt get-node $db ${paths[*]}" \
    -n "diff of 100 changed keys" "$mpt diff $db $db_b"

# The goals are medians: print them beside the bare process start's.
echo
awk -F, 'NR == 1 { next }
    NR == 2 { start = $4 }
    { printf "%-32s median %6.2f ms  min %6.2f ms  %5.2fx a process start\n", $1, $4 * 1e3, $7 * 1e3, $4 / start }' "$tmp/times.csv"

#!/usr/bin/env bash
# Whole-process times of the query commands on a 1M-key trie file, with hyperfine:
#   mpt proof of one key                   (goal: under 3 ms median)
#   mpt verify-range of a 1,000-key range  (goal: under 5 ms)
#   mpt get-node of 100 paths
#   mpt diff of two 1M-key files that differ in 100 keys (goal: under 50 ms)
# beside a bare process start (`mpt --version`). Then the batch rows: 10,000 proofs and
# 10,000 gets in one process (`--keys FILE`), per second, beside the same keys as one process
# each (1,000 of them, run one after another, scaled to a rate) and beside the SQLite
# point-read floor of the same rows (build/mpt_proof_floor: the rows each proof reads, read
# by path in the same order through the store's own statement in one read transaction); the
# ratio to the floor is printed (goal: within 1.5x).
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

# Batch rows: the first 10,000 keys of the file (keccak256 hashes, so spread over the trie).
batch=10000
sed -n "2,$((batch + 1))p" "$kv" | cut -d'"' -f2 >"$tmp/keys.txt"
[ "$(wc -l <"$tmp/keys.txt")" -eq "$batch" ] || {
    echo "query_bench: error: the file has fewer than $batch keys" >&2
    exit 1
}
[ "$("$mpt" proof "$db" --keys "$tmp/keys.txt" | wc -l)" -eq "$batch" ] || {
    echo "query_bench: error: mpt proof --keys did not give one proof per key" >&2
    exit 1
}
"$mpt" get "$db" --keys "$tmp/keys.txt" >/dev/null || {
    echo "query_bench: error: mpt get --keys missed a key" >&2
    exit 1
}
hyperfine -N --warmup 2 --runs 10 --style basic --export-csv "$tmp/batch.csv" \
    -n "proof of $batch keys in one process" "$mpt proof $db --keys $tmp/keys.txt" \
    -n "get of $batch keys in one process" "$mpt get $db --keys $tmp/keys.txt" >/dev/null
# One process each: 1,000 of the keys, one process after another.
head -1000 "$tmp/keys.txt" >"$tmp/keys_1000.txt"
now() { date +%s.%N; }
start=$(now)
xargs -n 1 "$mpt" proof "$db" <"$tmp/keys_1000.txt" >/dev/null
single_proof_s=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print (b - a) / 1000 }')
start=$(now)
xargs -n 1 "$mpt" get "$db" <"$tmp/keys_1000.txt" >/dev/null
single_get_s=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print (b - a) / 1000 }')
floor_json=$("$root/build/mpt_proof_floor" "$db" "$tmp/keys.txt")
floor_s=$(printf '%s\n' "$floor_json" | sed -E 's/.*"read_seconds":([0-9.]+).*/\1/')
floor_rows=$(printf '%s\n' "$floor_json" | sed -E 's/.*"rows":([0-9]+).*/\1/')
echo
echo "batch: $batch keys; the SQLite floor reads the $floor_rows rows their proofs read (least of 5 rounds)"
awk -F, -v n="$batch" -v floor="$floor_s" -v sp="$single_proof_s" -v sg="$single_get_s" '
    NR == 1 { next }
    {
        per = (NR == 2) ? sp : sg
        printf "%-36s mean %6.1f ms, least %6.1f ms: %6.0f /s   one process each: %5.0f /s (%5.1fx slower)   SQLite floor (least): %6.1f ms, %6.0f /s: %4.2fx the floor, least against least (goal: 1.5x)\n",
            $1, $2 * 1e3, $7 * 1e3, n / $7, 1 / per, (per * n) / $7, floor * 1e3, n / floor, $7 / floor
    }' "$tmp/batch.csv"

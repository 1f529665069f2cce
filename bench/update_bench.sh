#!/usr/bin/env bash
# Update benchmark: block-sized change sets applied to a large existing trie file, each with
# `mpt build BLOCK.json -o DB` (the update path: read the nodes on the changed paths, rewrite
# them, delete the rows of paths that no longer hold a node), beside SQLite's floor for the
# same work, measured in the same run.
#
#   bench/update_bench.sh [N] [B]     (defaults: 10000000 keys, 20 blocks; BUILD=build,
#                                      SEED=1)
#   bench/update_bench.sh --state [N] [B]   (state files: bench/state_update_bench.sh)
#
# Data, made once into bench/data/ and reused (never committed): kv_N.json, the N pairs of
# mpt_gen_kv (key i = keccak256(uint64 big-endian i), value = keccak256(key)); base_N.db, its
# trie built by `mpt build`; blocks_N_B_SEED/, the B blocks of mpt_gen_blocks: each 10,000
# overwrites, 1,000 deletes (null) and 1,000 inserts of new keys, the keys drawn uniformly
# from those present (deterministic seed), as a JSON array of pairs applied in order, and the
# whole content after the first and the last block. Each run starts from a copy of base_N.db.
# The base is checked with `mpt check` once, when it is made.
#
# For each block, in order:
#   - the file is copied aside (not timed), then `mpt build --json BLOCK -o DB` runs, timed as
#     a whole process (start, parsing the block, opening the file, the transaction, close);
#   - the floor (build/mpt_update_floor, on the copy): the rows the update had to read are
#     the rows of the block's keys' paths in the file before (the rows their proofs read, each
#     once, in the block's order); the rows it wrote and deleted are learned by comparing the
#     file before and after, row by row. The floor is one write transaction through the
#     store's own connection and statements that reads those rows by path in that order,
#     writes the written rows (64 a statement, as the store's row writer does) and deletes
#     the deleted ones, sets the root and commits. Only the transaction is timed: the floor
#     is an in-process lower bound, with no process start, parsing, hashing or open/close.
#     floor1 is the same with each written row its own statement, as the update path
#     (apply_commit) writes them today, printed beside it for comparison;
#   - the written and deleted counts of the floor are checked against the build's own
#     rows_written and rows_deleted (which may be a few more: a row rewritten with the bytes
#     it had is not seen by the comparison, and the floor does not write it); both printed;
#   - after the first and the last block, the root is checked against `mpt root` of the
#     whole content (the base with all blocks so far applied) from scratch;
#   - the file's size (with its WAL, if any) is printed, and its growth beside the bytes of
#     the rows the block added (path + rlp of new rows less deleted ones), so that growth
#     beyond what the new rows need (stale rows not freed or reused) shows.
# Goal: each block within 1.5x of its floor. The machine may be shared: wall times are noisy;
# the load average is printed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# --state: blocks of account and slot changes into a state file (bench/state_update_bench.sh).
if [ "${1:-}" = --state ]; then
    shift
    exec "$root/bench/state_update_bench.sh" "$@"
fi
n=${1:-10000000}
blocks=${2:-20}
seed=${SEED:-1}
build=${BUILD:-$root/build}
for v in "$n" "$blocks" "$seed"; do
    case $v in
    '' | *[!0-9]* | 0)
        echo "update_bench: error: N, B and SEED must be positive whole numbers, got '$v'" >&2
        exit 2
        ;;
    esac
done
mpt=$build/mpt
for b in "$mpt" "$build/mpt_gen_kv" "$build/mpt_gen_blocks" "$build/mpt_update_floor"; do
    [ -x "$b" ] || {
        echo "update_bench: error: $b not found (cmake --build build --target mpt mpt_gen_kv mpt_gen_blocks mpt_update_floor)" >&2
        exit 2
    }
done
data=$root/bench/data
mkdir -p "$data"
kv=$data/kv_$n.json
base=$data/base_$n.db
bdir=$data/blocks_${n}_${blocks}_$seed
if [ ! -s "$kv" ]; then
    echo "generating $n pairs into $kv"
    "$build/mpt_gen_kv" "$n" "$kv.tmp"
    mv "$kv.tmp" "$kv"
fi
if [ ! -s "$base" ]; then
    echo "building $base"
    rm -f "$base.tmp"*
    "$mpt" build "$kv" -o "$base.tmp" >/dev/null
    # Every update reads the base: a damaged one stops here, not in the middle of a block.
    "$mpt" check "$base.tmp" >/dev/null || {
        echo "update_bench: error: mpt check of the new $base.tmp failed" >&2
        exit 1
    }
    mv "$base.tmp" "$base"
fi
if [ ! -s "$bdir/content_$blocks.json" ]; then
    echo "generating $blocks blocks into $bdir"
    rm -rf "$bdir" "$bdir.tmp"
    mkdir -p "$bdir.tmp"
    "$build/mpt_gen_blocks" "$n" "$blocks" "$seed" "$bdir.tmp"
    mv "$bdir.tmp" "$bdir"
fi
work=$(mktemp -d "$data/update.XXXXXX")
trap 'rm -rf "$work"' EXIT
db=$work/trie.db
cp "$base" "$db"

field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
size_of() { # the file with its WAL
    local s=0
    for f in "$1" "$1-wal"; do [ -e "$f" ] && s=$((s + $(stat -c %s "$f"))); done
    echo "$s"
}
# The bytes (path + rlp) of all rows of trie main.
row_bytes() { "$mpt" stats --json "$1" | field rowBytes; }

echo "dataset: $n pairs, $blocks blocks of 10000 overwrites, 1000 deletes, 1000 inserts (seed $seed)"
echo "load average at start (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%5s %9s %9s %6s %9s %7s %15s %11s %12s %10s %10s\n' block 'build s' 'floor s' ratio 'floor1 s' \
    reads 'written b/f' 'deleted b/f' 'file bytes' 'growth' 'row growth'
prev_size=$(size_of "$db")
prev_rows=$(row_bytes "$db")
ratios=$work/ratios
: >"$ratios"
tb=0
tf=0
tf1=0
for ((b = 1; b <= blocks; ++b)); do
    block=$bdir/block_$b.json
    rm -f "$work/before.db"* "$work/before1.db"*
    for c in before before1; do
        cp "$db" "$work/$c.db"
        if [ -e "$db-wal" ]; then cp "$db-wal" "$work/$c.db-wal"; fi
    done
    sync
    t0=$(date +%s.%N)
    out=$("$mpt" build --json "$block" -o "$db")
    t1=$(date +%s.%N)
    floor=$("$build/mpt_update_floor" "$work/before.db" "$db" "$bdir/keys_$b.txt")
    floor1=$("$build/mpt_update_floor" "$work/before1.db" "$db" "$bdir/keys_$b.txt" 1)
    rm -f "$work/before.db"* "$work/before1.db"*
    bw=$(echo "$t0 $t1" | awk '{ printf "%.4f", $2 - $1 }')
    fw=$(echo "$floor" | field seconds)
    f1w=$(echo "$floor1" | field seconds)
    written=$(echo "$out" | field rowsWritten)
    deleted=$(echo "$out" | field rowsDeleted)
    # The build may rewrite a row with the bytes it had (the diff cannot see it), never fewer.
    if [ "$written" -lt "$(echo "$floor" | field writes)" ] || [ "$deleted" -lt "$(echo "$floor" | field deletes)" ]; then
        echo "update_bench: block $b: the build wrote $written and deleted $deleted rows; the files differ in $(echo "$floor" | field writes) written and $(echo "$floor" | field deletes) deleted" >&2
        exit 1
    fi
    if [ "$b" = 1 ] || [ "$b" = "$blocks" ]; then
        want=$("$mpt" root "$bdir/content_$b.json")
        got=$(echo "$out" | field root)
        if [ "$got" != "$want" ]; then
            echo "update_bench: block $b: root $got, but mpt root of the content gives $want" >&2
            exit 1
        fi
    fi
    size=$(size_of "$db")
    rows=$(row_bytes "$db")
    printf '%5d %9.4f %9.4f %6.2f %9.4f %7d %15s %11s %12d %10d %10d\n' "$b" "$bw" "$fw" \
        "$(echo "$bw $fw" | awk '{ print $1 / $2 }')" "$f1w" "$(echo "$floor" | field reads)" \
        "$written/$(echo "$floor" | field writes)" "$deleted/$(echo "$floor" | field deletes)" \
        "$size" $((size - prev_size)) $((rows - prev_rows))
    echo "$bw $fw" | awk '{ print $1 / $2 }' >>"$ratios"
    tb=$(echo "$tb $bw" | awk '{ print $1 + $2 }')
    tf=$(echo "$tf $fw" | awk '{ print $1 + $2 }')
    tf1=$(echo "$tf1 $f1w" | awk '{ print $1 + $2 }')
    prev_size=$size
    prev_rows=$rows
done
echo "roots checked against mpt root of the whole content after block 1 and block $blocks"
echo "load average at end (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg); wall times suffer on a busy machine"
sort -n "$ratios" | awk -v tb="$tb" -v tf="$tf" -v tf1="$tf1" -v s0="$(size_of "$base")" -v s1="$(size_of "$db")" \
    -v r0="$(row_bytes "$base")" -v r1="$(row_bytes "$db")" '
    { v[NR] = $1 }
    END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "build / floor per block: median %.2f, from %.2f to %.2f (goal <= 1.5)\n", m, v[1], v[NR]
        printf "total: build %.3f s, floor %.3f s: %.2fx\n", tb, tf, tb / tf
        printf "floor with one row per statement (floor1): %.3f s: build %.2fx that\n", tf1, tb / tf1
        printf "file: %d -> %d bytes (+%d); row bytes %d -> %d (+%d)\n", s0, s1, s1 - s0, r0, r1, r1 - r0
    }'

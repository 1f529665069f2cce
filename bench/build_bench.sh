#!/usr/bin/env bash
# Build benchmark: `mpt build` of N pairs (key_i = keccak256(i as 8 bytes big-endian),
# value_i = keccak256(key_i)) into a new trie file, against the floor: the same rows in the
# same order only inserted into a new trie file in one transaction (bench/sqlite_floor.cpp),
# with the store's statement of 64 rows; and, for comparison, the floor of one row per
# statement.
#
# Usage: bench/build_bench.sh [BUILD_DIR] [N]     (defaults: build, 1000000)
# Needs about 1 GB of free space in TMPDIR (the JSON input is ~140 MB per million pairs).
#
# Prints: the whole-process time of `mpt build`, its rows and rows/s; `mpt root` of the same
# input (parsing, sorting and hashing without storage); the floor's time (transaction, and
# transaction plus close); the ratio build / floor; and the file size against the bytes of
# the rows (path + rlp). Goals: build within 1.3x the floor, file at most 1.1x the row bytes.
set -eu
BUILD=${1:-build}
N=${2:-1000000}
MPT=$BUILD/mpt
FLOOR=$BUILD/mpt_sqlite_floor
for b in "$MPT" "$FLOOR"; do
    [ -x "$b" ] || { echo "build_bench: $b not found (build the project first)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
# run_timed NAME CMD...: runs CMD (stdout to $work/NAME.out), records "wall user sys".
run_timed() {
    local name=$1
    shift
    local TIMEFORMAT='%R %U %S'
    { time "$@" >"$work/$name.out" 2>"$work/$name.err"; } 2>"$work/$name.time" ||
        { echo "build_bench: $name failed: $(cat "$work/$name.err")" >&2; exit 1; }
}
wall() { awk '{ print $1 }' "$work/$1.time"; }
cpu() { awk '{ printf "%.3f", $2 + $3 }' "$work/$1.time"; }

echo "dataset: $N pairs; floor rows first"
run_timed floor "$FLOOR" "$N" "$work/data.json" "$work/floor.db"
floor=$(cat "$work/floor.out")
floor_rows=$(echo "$floor" | field rows)
floor_root=$(echo "$floor" | field root)
# The floor of a writer that puts each row by its own statement, for comparison.
run_timed floor1 "$FLOOR" "$N" "$work/data1.json" "$work/floor1.db" 1
rm -f "$work/data1.json" "$work/floor1.db"*
floor1=$(cat "$work/floor1.out")
sync

run_timed root "$MPT" root "$work/data.json"
run_timed build "$MPT" build "$work/data.json" -o "$work/build.db" --json
root=$(field root <"$work/build.out")
rows=$(field rows_written <"$work/build.out")
stats=$("$MPT" stats --json "$work/build.db")
row_bytes=$(echo "$stats" | field row_bytes)
file_bytes=$(echo "$stats" | field file_bytes)

if [ "$root" != "$floor_root" ] || [ "$root" != "$(cat "$work/root.out")" ]; then
    echo "build_bench: roots differ: build $root, floor $floor_root, mpt root $(cat "$work/root.out")" >&2
    exit 1
fi
if [ "$rows" != "$floor_rows" ]; then
    echo "build_bench: rows differ: build $rows, floor $floor_rows" >&2
    exit 1
fi

echo "load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg); wall times suffer on a busy machine, CPU times less"
awk -v root="$root" -v rows="$rows" \
    -v bw="$(wall build)" -v bc="$(cpu build)" -v rw="$(wall root)" -v rc="$(cpu root)" \
    -v fw="$(echo "$floor" | field insert_seconds)" -v fc="$(echo "$floor" | field insert_cpu_seconds)" \
    -v fcw="$(echo "$floor" | field close_seconds)" -v fcc="$(echo "$floor" | field close_cpu_seconds)" \
    -v f1w="$(echo "$floor1" | field insert_seconds)" -v f1c="$(echo "$floor1" | field insert_cpu_seconds)" \
    -v f1cw="$(echo "$floor1" | field close_seconds)" -v f1cc="$(echo "$floor1" | field close_cpu_seconds)" \
    -v rb="$row_bytes" -v fb="$file_bytes" -v ffb="$(echo "$floor" | field file_bytes)" 'BEGIN {
    ftw = fw + fcw; ftc = fc + fcc
    printf "root                %s, %d rows\n", root, rows
    printf "                       wall s    cpu s\n"
    printf "mpt build           %9.3f %8.3f   whole process; %.0f rows/s (wall)\n", bw, bc, rows / bw
    printf "mpt root            %9.3f %8.3f   parse, sort, hash: no storage\n", rw, rc
    printf "build - root        %9.3f %8.3f   the storage share of the build\n", bw - rw, bc - rc
    printf "floor               %9.3f %8.3f   insert transaction + close; %.0f rows/s (wall)\n", ftw, ftc, rows / ftw
    printf "build / floor       %9.2f %8.2f   (goal <= 1.3)\n", bw / ftw, bc / ftc
    f1tw = f1w + f1cw; f1tc = f1c + f1cc
    printf "floor, 1 row/stmt   %9.3f %8.3f   the same, each row its own statement\n", f1tw, f1tc
    printf "build / that floor  %9.2f %8.2f\n", bw / f1tw, bc / f1tc
    printf "(build-root) / floor%9.2f %8.2f\n", (bw - rw) / ftw, (bc - rc) / ftc
    printf "row bytes           %d (path + rlp)\n", rb
    printf "file bytes          %d = %.3f x row bytes (goal <= 1.1); floor file %.3f x\n", fb, fb / rb, ffb / rb
}'

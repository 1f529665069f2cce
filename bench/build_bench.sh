#!/usr/bin/env bash
# Build benchmark: `mpt build` of N pairs (key_i = keccak256(i as 8 bytes big-endian),
# value_i = keccak256(key_i)) into a new trie file, against the floor: the same rows in the
# same order only inserted into a new trie file in one transaction (bench/sqlite_floor.cpp),
# with the store's statement of 64 rows; and, for comparison, the floor of one row per
# statement.
#
# Usage: bench/build_bench.sh [BUILD_DIR] [N]     (defaults: build, 1000000; RUNS=k rounds,
# default 3)
# Needs about 1 GB of free space in TMPDIR (the JSON input is ~140 MB per million pairs).
#
# Each round runs the floor, the floor of one row per statement, `mpt root` of the same input
# (parsing, sorting and hashing without storage) and `mpt build`, one after another. Prints
# the least time of each over the rounds (the run the shared machine disturbed least), the
# ratio build / floor of those, and the same ratio within each round (the two measured
# seconds apart): its median and range show how much the machine drifted. Then the file
# size against the bytes of the rows (path + rlp). Goals: build within 1.3x the floor, file
# at most 1.1x the row bytes.
set -eu
BUILD=${1:-build}
N=${2:-1000000}
RUNS=${RUNS:-3}
case $RUNS in
'' | *[!0-9]* | 0)
    echo "build_bench: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 2
    ;;
esac
MPT=$BUILD/mpt
FLOOR=$BUILD/mpt_sqlite_floor
for b in "$MPT" "$FLOOR"; do
    [ -x "$b" ] || { echo "build_bench: $b not found (build the project first)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
# run_timed NAME CMD...: runs CMD (stdout to $work/NAME.out), appends "wall cpu" to
# $work/NAME.times.
run_timed() {
    local name=$1
    shift
    local TIMEFORMAT='%R %U %S'
    { time "$@" >"$work/$name.out" 2>"$work/$name.err"; } 2>"$work/$name.time" ||
        { echo "build_bench: $name failed: $(cat "$work/$name.err")" >&2; exit 1; }
    awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$work/$name.time" >>"$work/$name.times"
}
# floor_round NAME [1]: one floor run; appends its "wall cpu" (transaction + close).
floor_round() {
    local name=$1
    shift
    rm -f "$work/$name.db"*
    "$FLOOR" "$N" "$work/$name.json" "$work/$name.db" "$@" >"$work/$name.out" ||
        { echo "build_bench: $name failed" >&2; exit 1; }
    local f
    f=$(cat "$work/$name.out")
    awk -v w1="$(echo "$f" | field insert_seconds)" -v w2="$(echo "$f" | field close_seconds)" \
        -v c1="$(echo "$f" | field insert_cpu_seconds)" -v c2="$(echo "$f" | field close_cpu_seconds)" \
        'BEGIN { printf "%.3f %.3f\n", w1 + w2, c1 + c2 }' >>"$work/$name.times"
}

echo "dataset: $N pairs; $RUNS rounds"
for ((r = 0; r < RUNS; ++r)); do
    floor_round floor
    mv "$work/floor.json" "$work/data.json"
    floor_round floor1 1
    rm -f "$work/floor1.json" "$work/floor1.db"*
    sync
    run_timed root "$MPT" root "$work/data.json"
    rm -f "$work/build.db"*
    run_timed build "$MPT" build "$work/data.json" -o "$work/build.db" --json
done

floor=$(cat "$work/floor.out")
root=$(field root <"$work/build.out")
rows=$(field rowsWritten <"$work/build.out")
if [ "$root" != "$(echo "$floor" | field root)" ] || [ "$root" != "$(cat "$work/root.out")" ]; then
    echo "build_bench: roots differ: build $root, floor $(echo "$floor" | field root), mpt root $(cat "$work/root.out")" >&2
    exit 1
fi
if [ "$rows" != "$(echo "$floor" | field rows)" ]; then
    echo "build_bench: rows differ: build $rows, floor $(echo "$floor" | field rows)" >&2
    exit 1
fi
stats=$("$MPT" stats --json "$work/build.db")

# least FILE COLUMN: the least value of a column of a times file.
least() { awk -v c="$2" 'NR == 1 || $c < m { m = $c } END { print m }' "$work/$1.times"; }
echo "load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg); wall times suffer on a busy machine, CPU times less"
awk -v root="$root" -v rows="$rows" \
    -v bw="$(least build 1)" -v bc="$(least build 2)" -v rw="$(least root 1)" -v rc="$(least root 2)" \
    -v fw="$(least floor 1)" -v fc="$(least floor 2)" -v f1w="$(least floor1 1)" -v f1c="$(least floor1 2)" \
    -v rb="$(echo "$stats" | field rowBytes)" -v fb="$(echo "$stats" | field fileBytes)" \
    -v ffb="$(echo "$floor" | field file_bytes)" 'BEGIN {
    printf "root                %s, %d rows\n", root, rows
    printf "least of each          wall s    cpu s\n"
    printf "mpt build           %9.3f %8.3f   whole process; %.0f rows/s (wall)\n", bw, bc, rows / bw
    printf "mpt root            %9.3f %8.3f   parse, sort, hash: no storage\n", rw, rc
    printf "floor               %9.3f %8.3f   insert transaction + close; %.0f rows/s (wall)\n", fw, fc, rows / fw
    printf "build / floor       %9.2f %8.2f   (goal <= 1.3)\n", bw / fw, bc / fc
    printf "floor, 1 row/stmt   %9.3f %8.3f   the same, each row its own statement\n", f1w, f1c
    printf "build / that floor  %9.2f %8.2f\n", bw / f1w, bc / f1c
    printf "row bytes           %d (path + rlp)\n", rb
    printf "file bytes          %d = %.3f x row bytes (goal <= 1.1); floor file %.3f x\n", fb, fb / rb, ffb / rb
}'
paste -d' ' "$work/build.times" "$work/floor.times" | awk '{ print $1 / $3 }' | sort -n | awk '
    { v[NR] = $1 }
    END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "build / floor within a round (wall): median %.2f, from %.2f to %.2f\n", m, v[1], v[NR]
    }'

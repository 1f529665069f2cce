#!/usr/bin/env bash
# State build benchmark: `mpt build --state` of a generated state of A accounts and S storage
# slots (bench/gen_state.cpp) into a new file, beside `mpt build` of a key/value file of as
# many pairs (A + S, bench/gen_kv.cpp) into a new file; wall time and peak memory of each
# (/usr/bin/time -v). Goal: the state build within 1.3x the key/value build.
# Then `mpt diff --stats` of two state files of A accounts that differ in C accounts: its
# time and the nodes it reads.
#
# Usage: bench/state_build_bench.sh [BUILD_DIR] [ACCOUNTS] [SLOTS] [CHANGED]
#        (defaults: build, 1000000, 10000000, 100)
# Needs about 3 GB of free space in TMPDIR per 10 million slots.
set -eu
BUILD=${1:-build}
A=${2:-1000000}
S=${3:-10000000}
C=${4:-100}
MPT=$BUILD/mpt
for b in "$MPT" "$BUILD/mpt_gen_kv" "$BUILD/mpt_gen_state"; do
    [ -x "$b" ] || { echo "state_build_bench: $b not found (build the project first)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "state_build_bench: /usr/bin/time not found (apt install time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# timed NAME CMD...: runs CMD; prints "NAME: W s wall, M MiB peak".
timed() {
    local name=$1 label=$2
    shift 2
    /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out"
    local wall rss
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$name.time" |
        awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$name.time")
    echo "$wall $rss" >"$work/$name.num"
    printf '%-28s %8.2f s wall, %6d MiB peak\n' "$label:" "$wall" $((rss / 1024))
}

echo "state: $A accounts, $S slots; key/value: $((A + S)) pairs"
"$BUILD/mpt_gen_state" "$A" "$S" "$work/state.json"
"$BUILD/mpt_gen_kv" $((A + S)) "$work/kv.json"
echo "inputs: state $(($(stat -c %s "$work/state.json") / 1048576)) MiB, key/value $(($(stat -c %s "$work/kv.json") / 1048576)) MiB"
timed kv "mpt build (key/value)" "$MPT" build "$work/kv.json" -o "$work/kv.db"
rm -f "$work/kv.db"* "$work/kv.json"
timed state "mpt build --state" "$MPT" build --state "$work/state.json" -o "$work/state.db"
echo "state root: $(cat "$work/state.out")"
read -r kw kr <"$work/kv.num"
read -r sw sr <"$work/state.num"
awk -v s="$sw" -v k="$kw" -v sr="$sr" -v kr="$kr" \
    'BEGIN { printf "state / key-value: %.2fx wall, %.2fx peak memory (goal: 1.3x)\n", s / k, sr / kr }'
rm -f "$work/state.db"* "$work/state.json"

echo "diff: two states of $A accounts (no storage) that differ in $C"
"$BUILD/mpt_gen_state" "$A" 0 "$work/a.json"
"$BUILD/mpt_gen_state" "$A" 0 "$work/b.json" "$C"
"$MPT" build --state "$work/a.json" -o "$work/a.db" >/dev/null
"$MPT" build --state "$work/b.json" -o "$work/b.db" >/dev/null
set +e
/usr/bin/time -v -o "$work/diff.time" "$MPT" diff --stats "$work/a.db" "$work/b.db" >"$work/diff.out" 2>"$work/diff.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "state_build_bench: diff exited $rc, want 1" >&2; cat "$work/diff.err" >&2; exit 1; }
echo "diff: $(wc -l <"$work/diff.out") changed accounts; $(grep '^nodes read' "$work/diff.err"); $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/diff.time") wall"

#!/usr/bin/env bash
# State build benchmark: `mpt build --state` of a generated state of A accounts and S storage
# slots (bench/gen_state.cpp) into a new file, beside `mpt build` of a key/value file of as
# many pairs (A + S, bench/gen_kv.cpp) into a new file; wall time, CPU time (user + system)
# and peak memory of each (/usr/bin/time), the median of ROUNDS rounds. Goal: the state build
# within 1.3x the key/value build.
# With OLD=path/to/another/mpt, each round also runs that binary's state build, interleaved
# with the others so that the machine's drift hits all alike, and its file is compared byte
# for byte with this build's.
# Then `mpt diff --stats` of two state files of A accounts that differ in C accounts: its
# time and the nodes it reads.
#
# Usage: [OLD=MPT] [ROUNDS=N] bench/state_build_bench.sh [BUILD_DIR] [ACCOUNTS] [SLOTS] [CHANGED]
#        (defaults: build, 1000000, 10000000, 100; ROUNDS 1)
# Needs about 3 GB of free space in TMPDIR per 10 million slots (twice that with OLD).
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

# timed NAME CMD...: runs CMD, appending "wall cpu rss" (s, s, KiB) to $work/NAME.num.
timed() {
    local name=$1
    shift
    /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" "$@" >"$work/$name.out"
    awk '{ print $1, $2 + $3, $4 }' "$work/$name.time" >>"$work/$name.num"
}
# median NAME COLUMN: the median of a column of $work/NAME.num.
median() {
    sort -g -k"$2" "$work/$1.num" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

rounds=${ROUNDS:-1}
old=${OLD:-}
[ -z "$old" ] || [ -x "$old" ] || { echo "state_build_bench: OLD=$old is not an executable" >&2; exit 2; }
echo "state: $A accounts, $S slots; key/value: $((A + S)) pairs; $rounds round(s)"
"$BUILD/mpt_gen_state" "$A" "$S" "$work/state.json"
"$BUILD/mpt_gen_kv" $((A + S)) "$work/kv.json"
echo "inputs: state $(($(stat -c %s "$work/state.json") / 1048576)) MiB, key/value $(($(stat -c %s "$work/kv.json") / 1048576)) MiB"
sides="state"
[ -z "$old" ] || sides="state old"
for _ in $(seq "$rounds"); do
    rm -f "$work/kv.db"*
    timed kv "$MPT" build "$work/kv.json" -o "$work/kv.db"
    for side in $sides; do
        bin=$MPT
        [ "$side" = old ] && bin=$old
        rm -f "$work/$side.db"*
        timed "$side" "$bin" build --state "$work/state.json" -o "$work/$side.db"
    done
done
rm -f "$work/kv.db"* "$work/kv.json"
echo "state root: $(cat "$work/state.out")"
report() {
    printf '%-28s %8.2f s wall, %6.2f s CPU, %6d MiB peak\n' "$2:" "$(median "$1" 1)" "$(median "$1" 2)" $(($(median "$1" 3) / 1024))
}
report kv "mpt build (key/value)"
report state "mpt build --state"
ratio() {
    awk -v s="$(median "$1" 1)" -v k="$(median kv 1)" -v sc="$(median "$1" 2)" -v kc="$(median kv 2)" \
        -v sr="$(median "$1" 3)" -v kr="$(median kv 3)" -v n="$2" \
        'BEGIN { printf "%s / key-value: %.2fx wall, %.2fx CPU, %.2fx peak memory (goal: 1.3x)\n", n, s / k, sc / kc, sr / kr }'
}
ratio state "state"
if [ -n "$old" ]; then
    report old "OLD mpt build --state"
    ratio old "OLD state"
    same=yes
    cmp -s "$work/state.db" "$work/old.db" || same=no
    echo "OLD root: $(cat "$work/old.out"); files byte-identical: $same"
fi
rm -f "$work/state.db"* "$work/old.db"* "$work/state.json"

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
echo "diff: $(wc -l <"$work/diff.out") changed accounts; $(grep '^mpt: stats: nodes read' "$work/diff.err"); $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/diff.time") wall"

#!/usr/bin/env bash
# Two builds of mpt side by side, in one run, on the same data: whole-process times (hyperfine
# for the short queries; the long root and build runs alternated between the two binaries so
# that the machine's drift hits both alike, each after an untimed run of itself), callgrind
# instruction counts (repeatable whatever the machine does), count-allocs, and whether the
# outputs and the files each one writes are byte-identical.
#
#   bench/ab.sh OLD_MPT NEW_MPT [N]        (N pairs, default 1000000; RUNS=k hyperfine runs
#                                          of each query, k/4 rounds (at least 3) of the rest)
#
# The data (key i = keccak256(uint64 big-endian i), value = keccak256(key)) comes from
# bench/data/ as the other benchmarks make it (bench/dataset.sh builds the project first).
# Prints one table: each measure for OLD and NEW and the ratio NEW/OLD (under 1 is faster).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 2 ] || {
    echo "usage: bench/ab.sh OLD_MPT NEW_MPT [N]" >&2
    exit 2
}
old=$(realpath "$1")
new=$(realpath "$2")
n=${3:-1000000}
runs=${RUNS:-20}
for b in "$old" "$new"; do
    [ -x "$b" ] || {
        echo "ab: error: $b is not an executable" >&2
        exit 2
    }
done
for tool in hyperfine valgrind; do
    command -v $tool >/dev/null || {
        echo "ab: error: $tool not found (scripts/setup.sh installs it)" >&2
        exit 2
    }
done
case $n in
'' | *[!0-9]*)
    echo "ab: error: N must be a whole number, got '$n'" >&2
    exit 2
    ;;
esac

# shellcheck source=bench/dataset.sh
. "$root/bench/dataset.sh"
kv=$data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The files each side queries, built by itself (a newer schema may not open in an older
# build): A, and B with 100 values changed.
{
    echo '['
    sed -n '2,101p' "$kv" | awk -F'"' '{ printf "%s[\"%s\", \"0x%064d\"]\n", (NR > 1 ? "," : ""), $2, NR }'
    echo ']'
} >"$work/changes.json"
for side in old new; do
    bin=${!side}
    "$bin" build "$kv" -o "$work/a_$side.db" >/dev/null
    cp "$work/a_$side.db" "$work/b_$side.db"
    "$bin" build "$work/changes.json" -o "$work/b_$side.db" >/dev/null
done
db=$work/a_new.db
# Each binary builds its own file from the same input: the files must be the same bytes.
for side in old new; do
    bin=${!side}
    "$bin" build "$kv" -o "$work/$side.db" >"$work/$side.build.out"
done
same_file=yes
cmp -s "$work/old.db" "$work/new.db" || same_file=no

key=$(sed -n 2p "$kv" | cut -d'"' -f2)
miss=0x$(printf '%064d' 7)
"$new" proof "$db" --range 0x00 --limit 1000 >"$work/range.json"

# The outputs of every query, compared byte for byte (a failing command is part of them).
same_out=yes
for side in old new; do
    bin=${!side}
    db=$work/a_$side.db
    db_b=$work/b_$side.db
    set +e
    {
        cat "$work/$side.build.out"
        "$bin" root "$kv"
        "$bin" root "$db"
        "$bin" proof "$db" "$key"
        "$bin" proof "$db" "$miss"
        "$bin" proof "$db" --range 0x00 --limit 1000
        "$bin" verify-range "$work/range.json"
        "$bin" get "$db" "$key"
        "$bin" get "$db" "$miss" || true
        "$bin" get-node "$db" 0x00 0x1a 0x0012 --json
        "$bin" diff "$db" "$db_b" || true
        "$bin" check "$db"
        "$bin" stats "$db" --json
    } >"$work/$side.out" 2>&1
    set -e
done
cmp -s "$work/old.out" "$work/new.out" || {
    same_out=no
    diff "$work/old.out" "$work/new.out" | head -20 >&2 || true
}

# Interleaved whole-process times.
hyperfine -N -i --warmup 3 --runs "$runs" --style none --export-csv "$work/q.csv" \
    -n "old proof" "$old proof $work/a_old.db $key" -n "new proof" "$new proof $work/a_new.db $key" \
    -n "old verify-range" "$old verify-range $work/range.json" \
    -n "new verify-range" "$new verify-range $work/range.json" \
    -n "old get hit" "$old get $work/a_old.db $key" -n "new get hit" "$new get $work/a_new.db $key" \
    -n "old diff 100" "$old diff $work/a_old.db $work/b_old.db" \
    -n "new diff 100" "$new diff $work/a_new.db $work/b_new.db" \
    >/dev/null 2>&1
# The long runs (root, build) alternate the two binaries round by round, old first in one
# round and new first in the next, so that the machine's drift over the minute they take
# hits both alike (hyperfine would run all of one before the other); the median of each.
# Each timed run follows an untimed one of the same command: memory a process gives back is
# returned to the host of a virtual machine after a while, and a process that touches more
# memory than the one before it pays for backing the difference anew (at 10M pairs, a root
# taking 640 MB less than the other measured 0.3 to 0.6 s faster alternated, and 0.5 s
# slower each run after itself).
big_runs=$(((runs + 3) / 4))
[ "$big_runs" -ge 3 ] || big_runs=3
OLD=$old NEW=$new KV=$kv WORK=$work ROUNDS=$big_runs python3 - >"$work/b.csv" <<'PY'
import os, statistics, subprocess, time

old, new, kv, work = (os.environ[k] for k in ("OLD", "NEW", "KV", "WORK"))
measures = [
    ("root 1 thread", lambda b: [b, "root", "--threads", "1", kv]),
    ("root", lambda b: [b, "root", kv]),
    ("build", lambda b: [b, "build", kv, "-o", work + "/t.db"]),
]
times = {(side, name): [] for side in ("old", "new") for name, _ in measures}
for r in range(int(os.environ["ROUNDS"])):
    for name, args in measures:
        for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
            for timed in (False, True):
                for suffix in ("", "-wal", "-shm"):
                    try:
                        os.unlink(work + "/t.db" + suffix)
                    except FileNotFoundError:
                        pass
                start = time.perf_counter()
                subprocess.run(args(old if side == "old" else new), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                if timed:
                    times[(side, name)].append(time.perf_counter() - start)
print("command,mean,stddev,median")
for name, _ in measures:
    for side in ("old", "new"):
        print("%s %s,0,0,%.6f" % (side, name, statistics.median(times[(side, name)])))
PY

# Instruction counts of one process each.
instr() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "mpt side by side: $n keys; old $old, new $new"
echo "files written by build identical: $same_file (not when the schema moved); query outputs identical: $same_out"
printf '%-28s %14s %14s %8s\n' measure old new new/old
awk -F, 'FNR == 1 { next } {
        name = $1; sub(/^(old|new) /, "", name)
        if ($1 ~ /^old /) o[name] = $4; else { nw[name] = $4; order[++k] = name }
    }
    END { for (i = 1; i <= k; ++i) { m = order[i]
        printf "%-28s %11.2f ms %11.2f ms %7.2fx\n", m " (median)", o[m] * 1e3, nw[m] * 1e3, nw[m] / o[m] } }' \
    "$work/q.csv" "$work/b.csv"
for what in proof verify-range get; do
    case $what in
    proof) args=(proof "$db" "$key") ;;
    verify-range) args=(verify-range "$work/range.json") ;;
    get) args=(get "$db" "$key") ;;
    esac
    a=$(instr "$old" "${args[@]/a_new/a_old}")
    b=$(instr "$new" "${args[@]}")
    awk -v m="$what (instructions)" -v a="$a" -v b="$b" \
        'BEGIN { printf "%-28s %14d %14d %7.3fx\n", m, a, b, b / a }'
done
for side in old new; do
    bin=${!side}
    "$bin" count-allocs --leaves 50000 --json >"$work/$side.allocs" 2>/dev/null || true
done
python3 - "$work/old.allocs" "$work/new.allocs" <<'PY'
import json, sys
old, new = (json.load(open(f)) for f in sys.argv[1:3])
for o, n in zip(old, new):
    print(f"{'allocs per ' + o['op']:<28} {o['allocs']:14.2f} {n['allocs']:14.2f}")
PY

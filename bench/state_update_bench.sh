#!/usr/bin/env bash
# State update benchmark (bench/update_bench.sh --state runs it): blocks of account and slot
# changes applied to a large state file, each with `mpt update DB --changes BLOCK`, beside
# SQLite's floor for the same work, measured in the same run.
#
#   bench/update_bench.sh --state [N] [B]   (defaults: 1000000 accounts, 5 blocks; BUILD=build,
#                                            SEED=1)
#
# Data, made once into bench/data/ and reused (never committed): state_N.json, N accounts of
# mpt_gen_state with 2N slots over every tenth account; state_N.db, its state file built by
# `mpt build --state`; state_blocks_N_B_SEED/, the B blocks: each 10,000 accounts given a new
# balance and nonce, and 50,000 slot changes (10 slots of each of 5,000 accounts with storage,
# half of them present, half new), drawn with a deterministic seed, in mpt's changes shape,
# with keys_<b>.txt (the accounts and slots the block names, for the floor) and, for block 1,
# the whole state after it. Each run starts from a copy of state_N.db.
#
# For each block, in order: the file is copied aside (not timed); `mpt update --json` runs,
# timed as a whole process; the floor (build/mpt_state_update_floor, on the copy) reads the
# rows the update had to read (the proofs of the block's accounts and slots in the file
# before), writes the rows that differ between the file before and after, tries made and
# dropped included, deletes the others, sets the roots and commits, one transaction timed
# alone. After block 1 the root is checked against `mpt root --state` of the whole state.
# Goal: each block within 1.5x of its floor. The machine may be shared: wall times are noisy.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-1000000}
blocks=${2:-5}
seed=${SEED:-1}
build=${BUILD:-$root/build}
for v in "$n" "$blocks" "$seed"; do
    case $v in
    '' | *[!0-9]* | 0)
        echo "update_bench --state: error: N, B and SEED must be positive whole numbers, got '$v'" >&2
        exit 2
        ;;
    esac
done
[ "$n" -ge 100000 ] || {
    echo "update_bench --state: error: N must be at least 100000 (a block changes 10,000 accounts)" >&2
    exit 2
}
mpt=$build/mpt
for b in "$mpt" "$build/mpt_gen_state" "$build/mpt_state_update_floor"; do
    [ -x "$b" ] || {
        echo "update_bench --state: error: $b not found (cmake --build build --target mpt mpt_gen_state mpt_state_update_floor)" >&2
        exit 2
    }
done
data=$root/bench/data
mkdir -p "$data"
doc=$data/state_$n.json
base=$data/state_$n.db
bdir=$data/state_blocks_${n}_${blocks}_$seed
if [ ! -s "$doc" ]; then
    echo "generating $n accounts into $doc"
    "$build/mpt_gen_state" "$n" $((2 * n)) "$doc.tmp" --every 10 >/dev/null
    mv "$doc.tmp" "$doc"
fi
if [ ! -s "$base" ]; then
    echo "building $base"
    rm -f "$base.tmp"*
    "$mpt" build --state "$doc" -o "$base.tmp" >/dev/null
    mv "$base.tmp" "$base"
fi
if [ ! -s "$bdir/after_1.json" ]; then
    echo "generating $blocks blocks into $bdir"
    rm -rf "$bdir" "$bdir.tmp"
    mkdir -p "$bdir.tmp"
    python3 - "$doc" "$blocks" "$seed" "$bdir.tmp" <<'PY'
import json, random, sys
doc, blocks, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
alloc = json.load(open(doc))
rng = random.Random(seed)
addresses = sorted(alloc)
with_storage = [a for a in addresses if alloc[a].get("storage")]
for b in range(1, blocks + 1):
    changes, keys = {}, []
    for a in rng.sample(addresses, 10000):
        changes[a] = {"balance": hex(rng.randrange(1, 10**18)), "nonce": hex(rng.randrange(1, 100))}
        keys.append("A " + a)
    for a in rng.sample(with_storage, 5000):
        present = list(alloc[a]["storage"])
        chosen = rng.sample(present, min(5, len(present)))
        chosen += [hex(10**6 + b * 100 + j) for j in range(10 - len(chosen))]
        storage = {}
        for s in chosen:
            storage[s] = hex(rng.randrange(1, 2**64))
            keys.append("S " + a + " " + ("0x%064x" % int(s, 16)))
        changes.setdefault(a, {})["storage"] = storage
    json.dump(changes, open(f"{out}/block_{b}.json", "w"))
    open(f"{out}/keys_{b}.txt", "w").write("\n".join(keys) + "\n")
    if b == 1:
        # The whole state after block 1, for mpt root --state.
        after = json.loads(json.dumps(alloc))
        for a, c in changes.items():
            acc = after.setdefault(a, {"balance": "0"})
            if "balance" in c:
                acc["balance"] = str(int(c["balance"], 16))
            if "nonce" in c:
                acc["nonce"] = str(int(c["nonce"], 16))
            if "storage" in c:
                st = {"0x%064x" % int(k, 16): v for k, v in acc.get("storage", {}).items()}
                for k, v in c["storage"].items():
                    st["0x%064x" % int(k, 16)] = "0x%064x" % int(v, 16)
                acc["storage"] = st
        json.dump(after, open(f"{out}/after_1.json", "w"))
PY
    mv "$bdir.tmp" "$bdir"
fi
work=$(mktemp -d "$data/state_update.XXXXXX")
trap 'rm -rf "$work"' EXIT
db=$work/state.db
cp "$base" "$db"

field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^,\"}]*\).*/\1/p"; }
echo "dataset: $n accounts, $((2 * n)) slots; $blocks blocks of 10000 account and 50000 slot changes (seed $seed)"
echo "load average at start (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%5s %9s %9s %6s %7s %9s %9s %7s\n' block 'update s' 'floor s' ratio reads written deleted tries
ratios=$work/ratios
: >"$ratios"
tu=0
tf=0
for ((b = 1; b <= blocks; ++b)); do
    rm -f "$work/before.db"*
    cp "$db" "$work/before.db"
    sync
    t0=$(date +%s.%N)
    out=$("$mpt" update --json "$db" --changes "$bdir/block_$b.json")
    t1=$(date +%s.%N)
    floor=$("$build/mpt_state_update_floor" "$work/before.db" "$db" "$bdir/keys_$b.txt")
    rm -f "$work/before.db"*
    uw=$(echo "$t0 $t1" | awk '{ printf "%.4f", $2 - $1 }')
    fw=$(echo "$floor" | field seconds)
    if [ "$b" = 1 ]; then
        want=$("$mpt" root --state "$bdir/after_1.json")
        got=$(echo "$out" | field root)
        if [ "$got" != "$want" ]; then
            echo "update_bench --state: block 1: root $got, but mpt root --state of the state after it gives $want" >&2
            exit 1
        fi
    fi
    printf '%5d %9.4f %9.4f %6.2f %7d %9s %9s %7d\n' "$b" "$uw" "$fw" \
        "$(echo "$uw $fw" | awk '{ print $1 / $2 }')" "$(echo "$floor" | field reads)" \
        "$(echo "$out" | field rowsWritten)/$(echo "$floor" | field writes)" \
        "$(echo "$out" | field rowsDeleted)/$(echo "$floor" | field deletes)" "$(echo "$floor" | field tries)"
    echo "$uw $fw" | awk '{ print $1 / $2 }' >>"$ratios"
    tu=$(echo "$tu $uw" | awk '{ print $1 + $2 }')
    tf=$(echo "$tf $fw" | awk '{ print $1 + $2 }')
done
echo "root checked against mpt root --state of the whole state after block 1"
echo "load average at end (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
sort -n "$ratios" | awk -v tu="$tu" -v tf="$tf" '
    { v[NR] = $1 }
    END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "update / floor per block: median %.2f, from %.2f to %.2f (goal <= 1.5)\n", m, v[1], v[NR]
        printf "total: update %.3f s, floor %.3f s: %.2fx\n", tu, tf, tu / tf
    }'

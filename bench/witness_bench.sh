#!/usr/bin/env bash
# Execution witness benchmark: witnesses made from a large state file, beside the batch of
# eth_getProof answers for the same keys, and checked and applied, measured in one run.
#
#   bench/witness_bench.sh [ACCOUNTS [SLOTS [RUNS]]]   (defaults: 1000000 10000000 3;
#                                                       BUILD=build, SEED=1)
#
# Data, made once into bench/data/ and reused (never committed): witness_state_A_S.json,
# mpt_gen_state's A accounts with S slots over every tenth account (slots 1, 2, ... of each),
# and its state file witness_state_A_S.db. For N = 1,000 and 10,000, N accounts with storage
# are drawn (SEED), each read with its slots 1 to 5, and a tenth of them changed (a tenth of
# those deleted; the rest a new balance, slot 1 set and slot 2 cleared).
#
# Each timing is the median of RUNS whole processes:
# - proof: `mpt proof DB --account A... --slot 0x1 ... --slot 0x5`, every account's
#   eth_getProof answer (the same keys, each proven apart);
# - witness: `mpt witness DB --keys KEYS -o W` (the reads), and with --changes;
# - check + apply: `mpt witness check W` and `mpt witness apply W --changes C` of the witness
#   made with the changes, one after the other (two processes);
# - check --changes: both in one process, `mpt witness check W --changes C`, which checks the
#   witness and gives the post-state root (each process reads and hashes the witness).
# Sizes: the witness's nodes and their bytes, beside the bytes of every proof node of the
# separate answers (what sharing saves). Goals: witness within 1.3x of proof; check plus
# apply of the 10,000-account witness under 150 ms. The machine may be shared: times are noisy.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
accounts=${1:-1000000}
slots=${2:-10000000}
runs=${3:-3}
seed=${SEED:-1}
build=${BUILD:-$root/build}
for v in "$accounts" "$slots" "$runs" "$seed"; do
    case $v in
    '' | *[!0-9]* | 0)
        echo "witness_bench: error: ACCOUNTS, SLOTS, RUNS and SEED must be positive whole numbers, got '$v'" >&2
        exit 2
        ;;
    esac
done
[ "$accounts" -ge 100000 ] || {
    echo "witness_bench: error: ACCOUNTS must be at least 100000 (10,000 accounts with storage are drawn)" >&2
    exit 2
}
mpt=$build/mpt
for b in "$mpt" "$build/mpt_gen_state"; do
    [ -x "$b" ] || {
        echo "witness_bench: error: $b not found (cmake --build build --target mpt mpt_gen_state)" >&2
        exit 2
    }
done
command -v python3 >/dev/null || {
    echo "witness_bench: error: python3 not found" >&2
    exit 2
}
data=$root/bench/data
mkdir -p "$data"
doc=$data/witness_state_${accounts}_$slots.json
db=$data/witness_state_${accounts}_$slots.db
if [ ! -s "$doc" ]; then
    echo "generating $accounts accounts and $slots slots into $doc"
    "$build/mpt_gen_state" "$accounts" "$slots" "$doc.tmp" --every 10 >/dev/null
    mv "$doc.tmp" "$doc"
fi
if [ ! -s "$db" ]; then
    echo "building $db"
    rm -f "$db.tmp"
    "$mpt" build --state "$doc" -o "$db.tmp" >/dev/null
    mv "$db.tmp" "$db"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

MPT=$mpt DB=$db TMP=$tmp RUNS=$runs SEED=$seed ACCOUNTS=$accounts python3 -u - <<'PY'
import json, os, random, statistics, subprocess, sys, time

mpt, db, tmp = os.environ["MPT"], os.environ["DB"], os.environ["TMP"]
runs, seed, accounts = int(os.environ["RUNS"]), int(os.environ["SEED"]), int(os.environ["ACCOUNTS"])


def timed(args, stdout=subprocess.DEVNULL):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        r = subprocess.run(args, stdout=stdout, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if r.returncode != 0:
            sys.exit("witness_bench: %s failed: %s" % (" ".join(args[:3]), r.stderr.decode()))
    return statistics.median(times)


# The accounts with storage: mpt_gen_state gives slots to every tenth, by index; their
# addresses come from the file (dump --accounts, the preimages it keeps).
dump = subprocess.run([mpt, "dump", db, "--accounts"], capture_output=True, check=True).stdout
with_storage = []
empty_root = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
for line in dump.splitlines():
    a = json.loads(line)
    if a.get("storageRoot") != empty_root and "address" in a:
        with_storage.append(a["address"])
state_root = subprocess.run([mpt, "root", db], capture_output=True, check=True).stdout.decode().split()[0]
rng = random.Random(seed)
print("state: %d accounts, %d with storage (%s)" % (accounts, len(with_storage), db))
print("%8s %10s %10s %10s %8s %12s %12s %8s %10s %12s %12s" % (
    "accounts", "proof s", "witness s", "+changes s", "ratio", "check+apply", "one process", "nodes",
    "bytes", "proof bytes", "+chg nodes"))
for n in (1000, 10000):
    chosen = rng.sample(with_storage, n)
    slots = ["0x%x" % s for s in range(1, 6)]
    keys = os.path.join(tmp, "keys_%d.txt" % n)
    with open(keys, "w") as f:
        for a in chosen:
            f.write(a + "\n" + "\n".join(slots) + "\n")
    changes = {}
    for i, a in enumerate(chosen[: n // 10]):
        if i % 10 == 0:
            changes[a] = None
        else:
            changes[a] = {"balance": "0x%x" % (i + 12345), "storage": {"0x1": "0x%x" % (i + 7), "0x2": "0x0"}}
    ch = os.path.join(tmp, "changes_%d.json" % n)
    with open(ch, "w") as f:
        json.dump(changes, f)
    proof_args = [mpt, "proof", db]
    for a in chosen:
        proof_args += ["--account", a]
    for s in slots:
        proof_args += ["--slot", s]
    proofs = os.path.join(tmp, "proofs_%d.jsonl" % n)
    with open(proofs, "w") as f:
        t_proof = timed(proof_args, stdout=f)
    proof_bytes = 0
    for line in open(proofs):
        ans = json.loads(line)
        nodes = ans["accountProof"] + [p for sp in ans["storageProof"] for p in sp["proof"]]
        proof_bytes += sum((len(x) - 2) // 2 for x in nodes)
    w = os.path.join(tmp, "w_%d.json" % n)
    wc = os.path.join(tmp, "wc_%d.json" % n)
    t_witness = timed([mpt, "-q", "witness", db, "--keys", keys, "-o", w])
    t_changes = timed([mpt, "-q", "witness", db, "--keys", keys, "--changes", ch, "-o", wc])
    made = json.load(open(w))
    with_changes = json.load(open(wc))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        c = subprocess.run([mpt, "witness", "check", wc, "--root", state_root], capture_output=True)
        a = subprocess.run([mpt, "witness", "apply", wc, "--changes", ch, "--root", state_root],
                           capture_output=True)
        times.append(time.perf_counter() - start)
        if c.returncode != 0 or a.returncode != 0:
            sys.exit("witness_bench: check or apply failed: %s %s" % (c.stdout.decode()[-300:], a.stdout.decode()))
    one = []
    for _ in range(runs):
        start = time.perf_counter()
        b = subprocess.run([mpt, "witness", "check", wc, "--changes", ch, "--root", state_root],
                           capture_output=True)
        one.append(time.perf_counter() - start)
        if b.returncode != 0:
            sys.exit("witness_bench: check --changes failed: %s" % b.stderr.decode())
    post = b.stdout.decode().split("post-state root ")[-1].split()[0]
    # The root apply gives is the one mpt update writes into a copy.
    copy = os.path.join(tmp, "copy.db")
    subprocess.run(["cp", db, copy], check=True)
    want = subprocess.run([mpt, "update", copy, "--changes", ch], capture_output=True, check=True).stdout.decode().strip()
    if a.stdout.decode().strip() != want or post != want:
        sys.exit("witness_bench: apply gives %s, check --changes %s, update %s" % (
            a.stdout.decode().strip(), post, want))
    os.remove(copy)
    nodes = len(made["state"])
    size = sum((len(x) - 2) // 2 for x in made["state"])
    print("%8d %10.3f %10.3f %10.3f %7.2fx %10.0fms %10.0fms %8d %10d %12d %12d" % (
        n, t_proof, t_witness, t_changes, t_witness / t_proof, statistics.median(times) * 1000,
        statistics.median(one) * 1000,
        nodes, size, proof_bytes, len(with_changes["state"]) - nodes))
PY

#!/usr/bin/env bash
# Round trip of eth_getProof answers over data nobody here wrote: the postState of every
# ethereum/tests BlockchainTests fixture (ValidBlocks/) is built with `mpt build --state`,
# every account and two absent ones are answered by `mpt proof --account` with present and
# absent slots, and each answer is checked against the fixture's values
# (scripts/getproof_fixture_docs.py says what exactly); then
#
#   - `mpt proof --verify ANSWER --root R`, R the stateRoot of the test's last block header
#     (from the fixture, not from mpt), must say valid, present or absent as the fixture
#     says, with as many storage proofs as were asked for;
#   - without --root, its own root (the hash of its first node) must be R: the root node
#     comes first;
#   - one change per answer must be refused with exit 1: one hex digit changed in an
#     account proof node, a storage proof node, the balance, the nonce, a storage value, the
#     storageHash or the codeHash, in turn, each answer the next kind that applies to it.
#
#   scripts/getproof-roundtrip.sh DIR [BUILD_DIR]   (DIR: an ethereum/tests checkout, whose
#                                                    BlockchainTests/ holds the fixtures;
#                                                    BUILD_DIR defaults to build/)
#
# Prints failures and "N passed, M failed". Exit 0 when all pass, 1 when a check fails, 2
# when DIR, python3 or the binary is missing, or no fixture is found.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "getproof-roundtrip: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/getproof-roundtrip.sh DIR [BUILD_DIR]"
dir=$1
build=${2:-$root/build}
mpt=$build/mpt
[ -d "$dir/BlockchainTests/ValidBlocks" ] || die "$dir/BlockchainTests/ValidBlocks: no such folder (DIR must be an ethereum/tests checkout)"
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v python3 >/dev/null || die "python3 not found (it reads the fixtures)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$root/scripts/getproof_fixture_docs.py" "$dir/BlockchainTests" "$mpt" "$tmp"
docs_rc=$?
[ $docs_rc -le 1 ] || die "no answers were made (exit $docs_rc)"

python3 - "$mpt" "$tmp" "$docs_rc" <<'PY'
import concurrent.futures, json, os, subprocess, sys

mpt, out, docs_rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
passed = failed = 0


def digit(text, at):
    """text with the hex digit at index at changed to the next one."""
    d = "0123456789abcdef"
    return text[:at] + d[(d.index(text[at].lower()) + 1) % 16] + text[at + 1:]


def changes(doc):
    """The changes that apply to doc, each (what, changed doc)."""
    out = []
    def node(proof, what):
        if proof:
            j = len(proof) // 2
            changed = list(proof)
            changed[j] = digit(proof[j], len(proof[j]) // 2)
            return changed
        return None
    p = node(doc["accountProof"], "account proof node")
    if p is not None:
        out.append(("account proof node", dict(doc, accountProof=p)))
    slots = doc["storageProof"]
    with_nodes = [i for i, s in enumerate(slots) if s["proof"]]
    if with_nodes:
        i = with_nodes[len(with_nodes) // 2]
        s = list(slots)
        s[i] = dict(s[i], proof=node(s[i]["proof"], ""))
        out.append(("storage proof %d node" % i, dict(doc, storageProof=s)))
    for field in ("balance", "nonce"):
        out.append((field, dict(doc, **{field: digit(doc[field], len(doc[field]) - 1)})))
    if slots:
        i = len(slots) // 2
        s = list(slots)
        s[i] = dict(s[i], value=digit(s[i]["value"], len(s[i]["value"]) - 1))
        out.append(("storage value %d" % i, dict(doc, storageProof=s)))
    for field in ("storageHash", "codeHash"):
        out.append((field, dict(doc, **{field: digit(doc[field], 40)})))
    return out


index = [line.rstrip("\n").split("\t") for line in open(os.path.join(out, "index.tsv"))]


def check(n):
    """The checks of answer n: (passed, failed, lines to print)."""
    name, state_root, presence, test = index[n]
    passed = failed = 0
    lines = []
    path = os.path.join(out, "docs", name)
    doc = json.load(open(path))
    where = "%s %s" % (test, doc["address"])
    want = "valid: account %s %s, %d storage proof%s, under the trusted root %s" % (
        doc["address"], presence, len(doc["storageProof"]),
        "" if len(doc["storageProof"]) == 1 else "s", state_root)
    r = subprocess.run([mpt, "proof", "--verify", path, "--root", state_root],
                       capture_output=True, text=True)
    if r.returncode == 0 and r.stdout.strip() == want:
        passed += 1
    else:
        failed += 1
        lines.append("FAIL %s: exit %d: %s %s" % (where, r.returncode, r.stdout.strip(),
                                                 r.stderr.strip()))
    # Without a trusted root, the answer's own root is the hash of its first account proof
    # node: go-ethereum's order puts the state's root node first.
    r = subprocess.run([mpt, "proof", "--verify", path], capture_output=True, text=True)
    if r.returncode == 0 and (" under its own root %s " % state_root) in r.stdout:
        passed += 1
    else:
        failed += 1
        lines.append("FAIL %s: against itself: exit %d: %s %s" % (
            where, r.returncode, r.stdout.strip()[:300], r.stderr.strip()))
    options = changes(doc)
    what, changed = options[n % len(options)]
    changed_path = os.path.join(out, "changed-%d.json" % n)
    with open(changed_path, "w") as f:
        json.dump(changed, f, separators=(",", ":"))
    r = subprocess.run([mpt, "proof", "--verify", changed_path, "--root", state_root],
                       capture_output=True, text=True)
    os.remove(changed_path)
    if r.returncode == 1 and r.stdout.startswith("invalid: "):
        passed += 1
    else:
        failed += 1
        lines.append("FAIL %s, %s changed: exit %d: %s %s" % (where, what, r.returncode,
                                                            r.stdout.strip(), r.stderr.strip()))
    return passed, failed, lines


# The answers on every core (each check is a few processes), printed in index order.
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
    for p, f, lines in pool.map(check, range(len(index))):
        passed += p
        failed += f
        for line in lines:
            print(line)
if not index:
    print("getproof-roundtrip: no answers", file=sys.stderr)
    sys.exit(2)
if docs_rc != 0:
    failed += 1
    print("FAIL the answers differ from the fixtures (above)")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY

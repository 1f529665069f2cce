#!/usr/bin/env bash
# Checks `mpt root --block` over every block of the ethereum/tests BlockchainTests fixtures:
#
#   scripts/blocks-check.sh DIR [BUILD_DIR]   (DIR: an ethereum/tests checkout, whose
#                                              BlockchainTests/ holds the fixtures;
#                                              BUILD_DIR defaults to build/)
#
# For each block with an "rlp" and a decoded "blockHeader": `mpt root --block --json` of the
# rlp must exit 0, print the header's transactionsTrie and withdrawalsRoot as the fixture
# decodes them (withdrawalsRoot absent exactly where the fixture has none), and compute the
# same roots from the body, over as many transactions and withdrawals as the fixture lists.
# Then, for the first two blocks of each fixture file, these changes must each be refused with
# exit 1 and the root named as differing: the last byte of the first transaction changed (a
# signature byte, so the RLP stays valid), the last byte of the first withdrawal changed (its
# amount), and the last byte of the header's transactionsRoot changed. (Two blocks a file keep
# the sanitizer build's run short: each check is a process start.)
#
# Prints failures and "N blocks passed, M failed (C changed blocks refused)". Exit 0 when all
# pass, 1 when a check fails, 2 when DIR, python3 or the binary is missing or no block is found.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "blocks-check: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/blocks-check.sh DIR [BUILD_DIR]"
dir=$1
build=${2:-$root/build}
mpt=$build/mpt
[ -d "$dir/BlockchainTests" ] || die "$dir/BlockchainTests: no such folder (DIR must be an ethereum/tests checkout)"
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v python3 >/dev/null || die "python3 not found (it reads the fixtures)"

python3 - "$dir/BlockchainTests" "$mpt" <<'EOF'
import concurrent.futures, glob, json, os, subprocess, sys

folder, mpt = sys.argv[1], sys.argv[2]

def item(b, pos):
    """(is_list, payload_start, end) of the RLP item at pos."""
    x = b[pos]
    if x < 0x80:
        return False, pos, pos + 1
    is_list = x >= 0xc0
    base = 0xc0 if is_list else 0x80
    if x - base < 56:
        return is_list, pos + 1, pos + 1 + x - base
    n = x - base - 55
    length = int.from_bytes(b[pos + 1:pos + 1 + n], "big")
    return is_list, pos + 1 + n, pos + 1 + n + length

def children(b, pos):
    _, start, end = item(b, pos)
    out = []
    while start < end:
        out.append(start)
        start = item(b, start)[2]
    return out

def run(block, as_hex):
    # As 0x hex text (the fixtures' form) or as the binary bytes.
    data = ("0x" + block.hex() + "\n").encode() if as_hex else block
    p = subprocess.run([mpt, "root", "--block", "-", "--json"], input=data, capture_output=True)
    return p.returncode, p.stdout.decode(), p.stderr.decode()

def check(job):
    """The checks of one block: (problems, changes refused)."""
    where, blk, change = job
    hdr = blk["blockHeader"]
    raw = bytes.fromhex(blk["rlp"][2:])
    problems = []
    refused = 0
    rc, out, err = run(raw, True)
    if rc != 0:
        problems.append("exit %d: %s%s" % (rc, out.strip(), err.strip()))
        return problems, refused
    r = json.loads(out)
    tr = r["transactionsRoot"]
    if tr["header"] != hdr["transactionsTrie"].lower():
        problems.append("header transactionsRoot %s, fixture %s" % (tr["header"], hdr["transactionsTrie"]))
    if tr["computed"] != tr["header"] or tr["count"] != len(blk.get("transactions", [])):
        problems.append("transactions: %s" % tr)
    w = r["withdrawalsRoot"]
    want = hdr.get("withdrawalsRoot")
    if (w is None) != (want is None):
        problems.append("withdrawalsRoot %s, fixture %s" % (w, want))
    elif w is not None and (w["header"] != want.lower() or w["computed"] != w["header"]
                            or w["count"] != len(blk.get("withdrawals", []))):
        problems.append("withdrawals: %s, fixture %s" % (w, want))
    if not change:
        return problems, refused
    # Changes that must be refused.
    parts = children(raw, 0)
    changes = []
    txs = children(raw, parts[1])
    if txs:
        end = item(raw, txs[0])[2]
        changes.append(("first transaction's last byte", end - 1, "transactionsRoot"))
    if len(parts) > 3:
        ws = children(raw, parts[3])
        if ws:
            end = item(raw, ws[0])[2]
            changes.append(("first withdrawal's last byte", end - 1, "withdrawalsRoot"))
    field = children(raw, parts[0])[4]
    changes.append(("header transactionsRoot", item(raw, field)[1] + 31, "transactionsRoot"))
    for what, at, part in changes:
        changed = bytearray(raw)
        changed[at] ^= 0x01
        rc, out, err = run(bytes(changed), False)
        if rc == 1 and json.loads(out)[part]["match"] is False:
            refused += 1
        else:
            problems.append("%s changed: exit %d, %s%s" % (what, rc, out.strip(), err.strip()))
    return problems, refused


# Every block with an rlp and a header; the first two of each file also changed.
jobs = []
for f in sorted(glob.glob(folder + "/**/*.json", recursive=True)):
    name = os.path.relpath(f, folder)
    in_file = 0
    for test, t in json.load(open(f)).items():
        for n, blk in enumerate(t.get("blocks", [])):
            if "rlp" not in blk or "blockHeader" not in blk:
                continue
            in_file += 1
            jobs.append(("%s:%s block %d" % (name, test, n), blk, in_file <= 2))

# On every core (a block is one to four processes), printed in order.
passed = failed = refused = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
    for (where, _, _), (problems, n) in zip(jobs, pool.map(check, jobs)):
        refused += n
        if problems:
            failed += 1
            print("FAIL %s: %s" % (where, "; ".join(problems)[:600]))
        else:
            passed += 1
if passed + failed == 0:
    print("blocks-check: error: no block with rlp and blockHeader under " + folder, file=sys.stderr)
    sys.exit(2)
print("%d blocks passed, %d failed (%d changed blocks refused)" % (passed, failed, refused))
sys.exit(1 if failed else 0)
EOF

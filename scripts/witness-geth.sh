#!/usr/bin/env bash
# Checks `mpt witness check` on the execution witness go-ethereum ships with its stateless
# guest (cmd/keeper/: a Hoodi block, 1192c3_block.rlp, and its witness, 1192c3_witness.rlp,
# in geth's ExtWitness RLP):
#
#   scripts/witness-geth.sh GO_ETHEREUM [BUILD_DIR]   (GO_ETHEREUM: a go-ethereum checkout,
#                                                      git clone https://github.com/ethereum/go-ethereum)
#
# The witness must read as RLP [headers, codes, state, keys], every node reached from its
# header's stateRoot (none superfluous or undecodable), every code matched to an account
# reached, and its header must be the block's parent (the block's parentHash its hash), as
# binary and as 0x hex text. With one node left out (written back as RLP here), --strict must
# refuse it: the nodes under it are no longer reached. Nothing is copied into the project.
#
# Prints one line per failed check and "N passed, M failed". Exit 0 when all pass, 1 when a
# check fails, 2 when the checkout, the files, the binary or python3 are missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() {
    echo "witness-geth: error: $*" >&2
    exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/witness-geth.sh GO_ETHEREUM [BUILD_DIR]"
keeper=$1/cmd/keeper
mpt=${2:-$root/build}/mpt
for f in "$keeper/1192c3_witness.rlp" "$keeper/1192c3_block.rlp"; do
    [ -s "$f" ] || die "$f: no such file (GO_ETHEREUM must be a go-ethereum checkout)"
done
[ -x "$mpt" ] || die "$mpt: not built (scripts/setup.sh builds it)"
command -v python3 >/dev/null || die "python3 not found (scripts/setup.sh installs it)"

exec python3 - "$keeper" "$mpt" <<'PY'
import json, os, subprocess, sys, tempfile

keeper, mpt = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (name, ": " + why if why else ""))


def run(*args, stdin=None):
    return subprocess.run([mpt, *args], capture_output=True, input=stdin)


witness = open(os.path.join(keeper, "1192c3_witness.rlp"), "rb").read()
block_rlp = open(os.path.join(keeper, "1192c3_block.rlp"), "rb").read()
block = json.loads(run("rlp", "decode", "-", stdin=block_rlp).stdout)
parent = block[0][0]
tmp = tempfile.mkdtemp(prefix="witness-geth-")
hex_path = os.path.join(tmp, "w.hex")
open(hex_path, "w").write("0x" + witness.hex() + "\n")
for label, path in (("binary", os.path.join(keeper, "1192c3_witness.rlp")), ("0x hex", hex_path)):
    r = run("witness", "check", path, "--json", "--strict")
    try:
        out = json.loads(r.stdout)
    except ValueError:
        check(label, False, "exit %d %s" % (r.returncode, r.stderr.decode().strip()))
        continue
    n = out["nodes"]
    check(label + ": exit 0 under --strict", r.returncode == 0, r.stdout.decode()[-300:])
    check(label + ": the shape", out["shape"].startswith("RLP [headers, codes, state, keys]"),
          out["shape"])
    check(label + ": every node reached", n["reached"] == n["listed"] and not n["superfluous"]
          and not n["undecodable"] and not n["badAccounts"], json.dumps(n)[:300])
    check(label + ": every code matched", not out["codes"]["unmatched"] and
          out["codes"]["matched"] == out["codes"]["listed"], json.dumps(out["codes"]))
    check(label + ": the header is the block's parent", out["headers"][-1]["hash"] == parent,
          "%s, the block's parentHash %s" % (out["headers"][-1]["hash"], parent))
    print("%s: %d nodes, %d accounts, %d storage tries, %d slots, %d codes, header %d" % (
        label, n["listed"], out["accounts"], out["storageTries"], out["slots"],
        out["codes"]["listed"], out["headers"][-1]["number"]))

# One node left out: written back as RLP from mpt's own decoding of the witness.
items = json.loads(run("rlp", "decode", "-", stdin=witness).stdout)
r = run("rlp", "encode", "-", stdin=json.dumps([items[0], items[1], items[2][1:], items[3]]).encode())
less = os.path.join(tmp, "less.hex")
open(less, "w").write(r.stdout.decode())
r = run("witness", "check", less, "--strict")
check("a node left out: --strict refuses", r.returncode == 1, r.stdout.decode()[-300:])
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY

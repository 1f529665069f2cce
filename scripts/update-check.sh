#!/usr/bin/env bash
# Checks `mpt update` on state changes written elsewhere: every BlockchainTests test whose
# chain is one block, its pre state built into a state file and moved to its post state.
#
#   scripts/update-check.sh ETHEREUM_TESTS [BUILD_DIR]
#
# ETHEREUM_TESTS holds BlockchainTests/; BUILD_DIR defaults to build/. For each test with one
# block and a postState:
# - the difference from pre to postState as mpt's changes document ({address: changed fields
#   and slots, or null}), applied with --expect-root the block header's stateRoot, gives that
#   root, and the file then holds postState (mpt diff finds nothing between them);
# - the same difference as geth's prestateTracer diff ({pre, post}: pre the changed accounts
#   as they were, zero slots left out, a new account left out; post what changed, zero slots
#   left out; a deleted account in pre alone) gives the same root from another copy.
#
# Prints one line per failed check, then "N passed, M failed". Exit 0 when all pass, 1 when
# a check fails, 2 when the folder, the binary or python3 is missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "update-check: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/update-check.sh ETHEREUM_TESTS [BUILD_DIR]"
et=$1
build=${2:-$root/build}
mpt=$build/mpt
[ -d "$et/BlockchainTests" ] || die "$et/BlockchainTests: no such folder"
[ -x "$mpt" ] || die "$mpt: not built (scripts/setup.sh builds it)"
command -v python3 >/dev/null || die "python3 not found (scripts/setup.sh installs it)"

MPT_SCRIPTS=$root/scripts exec python3 - "$et/BlockchainTests" "$mpt" <<'PY'
import glob, json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.environ["MPT_SCRIPTS"])
from state_changes import differences  # noqa: E402

tests_dir, mpt = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="update-check-")
passed = failed = 0


def fail(what):
    global failed
    failed += 1
    print("FAIL " + what)


def run(*args, stdin=None):
    return subprocess.run([mpt, *args], capture_output=True, text=True, input=stdin)


files = sorted(glob.glob(os.path.join(tests_dir, "**", "*.json"), recursive=True))
tests = 0
for path in files:
    with open(path) as f:
        doc = json.load(f)
    for name, t in doc.items():
        if len(t.get("blocks", [])) != 1 or "postState" not in t:
            continue
        header = t["blocks"][0].get("blockHeader")
        if not header:
            continue
        tests += 1
        where = os.path.relpath(path, tests_dir) + ":" + name
        want = header["stateRoot"].lower()
        changes, tracer = differences(t["pre"], t["postState"])
        pre_json = os.path.join(tmp, "pre.json")
        post_json = os.path.join(tmp, "post.json")
        with open(pre_json, "w") as f:
            json.dump(t["pre"], f)
        with open(post_json, "w") as f:
            json.dump(t["postState"], f)
        base = os.path.join(tmp, "pre.db")
        if os.path.exists(base):
            os.remove(base)
        r = run("build", "--state", pre_json, "-o", base)
        if r.returncode != 0:
            fail(where + ": build --state of pre: " + r.stderr.strip())
            continue
        for form, body in (("changes", changes), ("prestate-diff", tracer)):
            db = os.path.join(tmp, "u.db")
            shutil.copyfile(base, db)
            r = run("update", db, "--changes", "-", "--expect-root", want, "--json",
                    stdin=json.dumps(body))
            if r.returncode != 0:
                fail(where + ": update (" + form + "): exit " + str(r.returncode) + ": " +
                     (r.stderr.strip() or r.stdout.strip())[:300])
                continue
            got = json.loads(r.stdout)
            if got["root"] != want or got["shape"] != form:
                fail(where + ": update (" + form + "): " + r.stdout.strip())
                continue
            d = run("diff", db, post_json)
            if d.returncode != 0:
                fail(where + ": after update (" + form + "), diff with postState: exit " +
                     str(d.returncode) + ": " + (d.stdout + d.stderr)[:300])
                continue
            passed += 1
shutil.rmtree(tmp)
print(f"update-check: {tests} one-block tests, each as changes and as a prestateTracer diff")
print(f"{passed} passed, {failed} failed")
sys.exit(0 if failed == 0 and passed > 0 else 1)
PY

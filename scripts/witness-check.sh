#!/usr/bin/env bash
# Checks `mpt witness check` on state written elsewhere: every BlockchainTests test's pre
# state, built into a state file, proven account by account and slot by slot, and the proofs'
# nodes given as the witness of block 1 (its parent header the test's genesis header).
#
#   scripts/witness-check.sh ETHEREUM_TESTS [BUILD_DIR]
#
# ETHEREUM_TESTS holds BlockchainTests/; BUILD_DIR defaults to build/. For each test:
# - the witness in four shapes (JSON with the header's RLP and the keys address by address;
#   a JSON-RPC response with geth's header object and the keys sorted; binary RLP with keys;
#   0x hex RLP without) checks clean against the genesis header's stateRoot: every account
#   and slot of pre present with its value, an address and a slot pre lacks proven absent,
#   every node reached, every code matched;
# - a node left out makes a key unresolved that names that node; a node changed by one byte
#   leaves a key unresolved; and in every fourth test, a header with another stateRoot
#   resolves nothing, a header whose fields do not give its "hash" and a header chain with a
#   break are refused (exit 2), a node and a code from elsewhere are superfluous, which
#   --strict refuses (exit 1).
#
# - for each test whose chain is one block, the witness that mpt witness makes from the pre
#   state file for the accounts and slots the block changes, with the block's changes
#   (the difference from pre to post), checks clean, and `witness apply` of it alone gives the
#   block header's stateRoot, from mpt's changes and from geth's tracer diff, as JSON and as
#   RLP; tampered (a byte of a node changed, another stateRoot; every second test) apply
#   gives no root, and a node from elsewhere changes nothing; in every eighth, each node left out in turn makes
#   apply fail naming that node, or was not needed and the root stays the block's;
# - changes that collapse branches (pre's first account deleted, a slot cleared beside
#   others) give, applied to the witness made with them, the root --state of pre without
#   them; the witness of their keys alone lacks a surviving sibling (apply names it), and
#   `witness diff` of the two finds the same resolutions, the nodes only the full one holds
#   all of class changes, the named one among them.
#
# Prints one line per failed check, then "N passed, M failed". Exit 0 when all pass, 1 when
# a check fails, 2 when the folder, the binary or python3 is missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "witness-check: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/witness-check.sh ETHEREUM_TESTS [BUILD_DIR]"
et=$1
build=${2:-$root/build}
mpt=$build/mpt
[ -d "$et/BlockchainTests" ] || die "$et/BlockchainTests: no such folder"
[ -x "$mpt" ] || die "$mpt: not built (scripts/setup.sh builds it)"
command -v python3 >/dev/null || die "python3 not found (scripts/setup.sh installs it)"

MPT_SCRIPTS=$root/scripts exec python3 - "$et/BlockchainTests" "$mpt" <<'PY'
import glob, json, os, random, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.environ["MPT_SCRIPTS"])
from state_changes import differences  # noqa: E402

tests_dir, mpt = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="witness-check-")
passed = failed = 0
rng = random.Random(1)


def fail(what):
    global failed
    failed += 1
    print("FAIL " + what)


def run(*args, stdin=None):
    return subprocess.run([mpt, *args], capture_output=True, input=stdin)


def num(v):
    return int(v, 16) if isinstance(v, str) and v.lower().startswith("0x") else int(v or 0)


def rlp_item(b, at=0):
    """(start of payload, end of item, is_list) of the RLP item at b[at]."""
    p = b[at]
    if p < 0x80:
        return at, at + 1, False
    if p < 0xb8:
        return at + 1, at + 1 + p - 0x80, False
    if p < 0xc0:
        n = p - 0xb7
        length = int.from_bytes(b[at + 1:at + 1 + n], "big")
        return at + 1 + n, at + 1 + n + length, False
    if p < 0xf8:
        return at + 1, at + 1 + p - 0xc0, True
    n = p - 0xf7
    length = int.from_bytes(b[at + 1:at + 1 + n], "big")
    return at + 1 + n, at + 1 + n + length, True


def rlp_bytes(b):
    if len(b) == 1 and b[0] < 0x80:
        return b
    if len(b) < 56:
        return bytes([0x80 + len(b)]) + b
    n = (len(b).bit_length() + 7) // 8
    return bytes([0xb7 + n]) + len(b).to_bytes(n, "big") + b


def rlp_list(payload):
    if len(payload) < 56:
        return bytes([0xc0 + len(payload)]) + payload
    n = (len(payload).bit_length() + 7) // 8
    return bytes([0xf7 + n]) + len(payload).to_bytes(n, "big") + payload


def genesis_header_rlp(t):
    block = bytes.fromhex(t["genesisRLP"][2:])
    start, _, _ = rlp_item(block)
    _, end, _ = rlp_item(block, start)
    return block[start:end]


def hx(b):
    return "0x" + b.hex()


def check(witness, *extra):
    path = os.path.join(tmp, "w")
    with open(path, "wb") as f:
        f.write(witness if isinstance(witness, bytes) else witness.encode())
    r = run("witness", "check", path, "--json", *extra)
    out = None
    if r.returncode in (0, 1):
        try:
            out = json.loads(r.stdout)
        except ValueError:
            pass
    return r, out


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def round_trip(where, t, db, header):
    """The witness of block 1 made from the pre state with the block's changes: it checks
    clean, and applied alone gives the block's stateRoot, from mpt's changes and from geth's
    tracer diff, as JSON and as RLP."""
    global passed, needed, unneeded, tampered_refused
    pre = {a.lower(): v for a, v in t["pre"].items()}
    post = {a.lower(): v for a, v in t["postState"].items()}
    want = t["blocks"][0]["blockHeader"]["stateRoot"].lower()
    changes, tracer = differences(t["pre"], t["postState"])
    # The keys the block changes (what a client reads to change them): each changed
    # account, then its changed slots.
    keys = []
    for a, acct in sorted(changes.items()):
        keys.append(a.lower())
        keys += sorted({"0x%064x" % num(k) for k in ((acct or {}).get("storage") or {})})
    # And one account the block reads without changing it, whose nodes apply does not need.
    unchanged = sorted(a for a in pre if a not in {c.lower() for c in changes})
    keys += unchanged[:1]
    keys_path = write("keys.txt", "\n".join(keys) + "\n")
    changes_path = write("changes.json", json.dumps(changes))
    tracer_path = write("tracer.json", json.dumps(tracer))
    header_path = write("header.hex", hx(header) + "\n")
    w = os.path.join(tmp, "made.json")
    r = run("witness", db, "--keys", keys_path, "--changes", changes_path, "--header",
            header_path, "-o", w)
    if r.returncode != 0:
        fail(where + ": witness: " + r.stderr.decode().strip())
        return
    r = run("witness", "check", w)
    if r.returncode != 0:
        fail(where + ": check of the made witness: " + r.stdout.decode()[-300:])
        return
    for label, doc in (("changes", changes_path), ("tracer diff", tracer_path)):
        r = run("witness", "apply", w, "--changes", doc)
        got = r.stdout.decode().strip()
        if r.returncode != 0 or got != want:
            fail("%s: apply %s: exit %d, %s%s, want %s" % (where, label, r.returncode, got,
                                                          r.stderr.decode().strip(), want))
            return
    wr = os.path.join(tmp, "made.rlp")
    r = run("witness", db, "--keys", keys_path, "--changes", changes_path, "--header",
            header_path, "--rlp", "-o", wr)
    r2 = run("witness", "apply", wr, "--changes", changes_path)
    if r.returncode != 0 or r2.stdout.decode().strip() != want:
        fail("%s: RLP witness: exit %d %d %s" % (where, r.returncode, r2.returncode,
                                                 r2.stderr.decode().strip()))
        return
    # Tampered, it never gives a wrong root: a byte of a node changed (apply stops at the
    # node it then lacks, or did not need it and gives the block's root), another stateRoot
    # (the root node is missing), a node from elsewhere added (unused: the block's root).
    made = json.load(open(w))
    if tests % 2 == 0:
        i = (tests * 7) % len(made["state"])
        node = bytearray.fromhex(made["state"][i][2:])
        node[len(node) // 2] ^= 0x10
        changed = dict(made, state=made["state"][:i] + [hx(bytes(node))] + made["state"][i + 1:])
        for label, doc, extra, ok in (
                ("a byte of a node changed", changed, (), False),
                ("another stateRoot", made, ("--root", "0x" + "11" * 32), False),
                ("a node from elsewhere", dict(made, state=made["state"] + [other_node or made["state"][0]]),
                 (), True)):
            r = run("witness", "apply", write("tampered.json", json.dumps(doc)), "--changes",
                    changes_path, *extra)
            got = r.stdout.decode().strip()
            if ok and (r.returncode != 0 or got != want):
                fail("%s: apply, %s: exit %d %s" % (where, label, r.returncode, got))
                return
            # A node apply needs changed: no root. One it does not need: the block's root.
            refused = r.returncode == 1 and got.startswith(("missing node ", "node at path "))
            if refused and extra == ():
                tampered_refused += 1
            if not ok and not refused and not (r.returncode == 0 and got == want and extra == ()):
                fail("%s: apply, %s: exit %d %s (never a wrong root)" % (where, label, r.returncode,
                                                                         got))
                return
    passed += 1
    if tests % 8 != 0:
        return
    # Every node left out in turn: apply fails naming it, or it was not needed and the root
    # is still the block's.
    for node in made["state"]:
        less = dict(made, state=[n for n in made["state"] if n != node])
        r = run("witness", "apply", write("less.json", json.dumps(less)), "--changes",
                changes_path)
        out = r.stdout.decode()
        if r.returncode == 1:
            h = run("keccak", node).stdout.decode().strip()
            if not out.startswith("missing node " + h + " "):
                fail("%s: without node %s: %s" % (where, h, out.strip()))
                return
            needed += 1
        elif r.returncode == 0 and out.strip() == want:
            unneeded += 1
        else:
            fail("%s: without a node: exit %d %s %s" % (where, r.returncode, out.strip(),
                                                        r.stderr.decode().strip()))
            return
    passed += 1


def collapse(where, t, db):
    """Changes that collapse branches: the first account of pre deleted, and a slot of an
    account with several cleared. The root they give is root --state of pre without them; the
    witness of their keys alone lacks the surviving siblings (apply says which), and with
    --changes holds them."""
    global passed, reads_short
    pre = {a.lower(): v for a, v in t["pre"].items()}
    if len(pre) < 3:
        return
    victim = sorted(pre)[0]
    changes = {victim: None}
    after = {a: v for a, v in pre.items() if a != victim}
    keys = [victim]
    for a in sorted(after):
        storage = {k: v for k, v in (after[a].get("storage") or {}).items() if num(v) != 0}
        if len(storage) >= 2:
            slot = sorted(storage, key=num)[0]
            changes[a] = {"storage": {slot: "0x0"}}
            after[a] = dict(after[a], storage={k: v for k, v in storage.items() if k != slot})
            keys += [a, "0x%064x" % num(slot)]
            break
    r = run("root", "--state", "-", stdin=json.dumps(after).encode())
    want = r.stdout.decode().strip()
    root = t["genesisBlockHeader"]["stateRoot"]
    keys_path = write("ckeys.txt", "\n".join(keys) + "\n")
    changes_path = write("cchanges.json", json.dumps(changes))
    reads, full = os.path.join(tmp, "creads.json"), os.path.join(tmp, "cfull.json")
    r1 = run("witness", db, "--keys", keys_path, "-o", reads)
    r2 = run("witness", db, "--keys", keys_path, "--changes", changes_path, "-o", full)
    a1 = run("witness", "apply", reads, "--changes", changes_path, "--root", root)
    a2 = run("witness", "apply", full, "--changes", changes_path, "--root", root)
    out1 = a1.stdout.decode().strip()
    if a1.returncode == 1 and out1.startswith("missing node "):
        reads_short += 1
        # The two side by side: the same keys resolved alike; what only the full one holds
        # is what the changes read, the node apply named among it.
        d = run("witness", "diff", full, reads, "--changes", changes_path, "--root", root)
        lines = d.stdout.decode().splitlines()
        only = [l for l in lines if l.startswith("- node ")]
        named = out1.split()[2]
        if (d.returncode != 0 or not only or not all(l.endswith(" (changes)") for l in only) or
                not any(l.split()[2] == named for l in only) or
                any(l.startswith(("+ ", "~ ")) for l in lines)):
            fail("%s: diff of the witness with changes and without: exit %d %s" %
                 (where, d.returncode, d.stdout.decode()[-300:]))
            return
    elif a1.returncode != 0 or out1 != want:
        fail("%s: collapse, reads alone: exit %d %s" % (where, a1.returncode, out1))
        return
    if r1.returncode or r2.returncode or a2.returncode or a2.stdout.decode().strip() != want:
        fail("%s: collapse: exit %d %d %d, %s, want %s %s" % (
            where, r1.returncode, r2.returncode, a2.returncode, a2.stdout.decode().strip(), want,
            a2.stderr.decode().strip()))
        return
    passed += 1


files = sorted(glob.glob(os.path.join(tests_dir, "**", "*.json"), recursive=True))
tests = 0
needed = unneeded = reads_short = tampered_refused = 0
other_node = other_header = other_parent = None
for path in files:
    with open(path) as f:
        doc = json.load(f)
    for name, t in doc.items():
        tests += 1
        where = os.path.relpath(path, tests_dir) + ":" + name
        pre = t["pre"]
        want_root = t["genesisBlockHeader"]["stateRoot"].lower()
        pre_json = os.path.join(tmp, "pre.json")
        with open(pre_json, "w") as f:
            json.dump(pre, f)
        db = os.path.join(tmp, "pre.db")
        if os.path.exists(db):
            os.remove(db)
        r = run("build", "--state", pre_json, "-o", db)
        if r.returncode != 0:
            fail(where + ": build --state of pre: " + r.stderr.decode().strip())
            continue
        addresses = sorted(a.lower() for a in pre)
        absent_address = "0x" + "de" * 20
        absent_slot = "0x" + "ff" * 32
        own = {a.lower(): sorted({"0x%064x" % num(k) for k, v in (acct.get("storage") or {}).items()
                                  if num(v) != 0}) for a, acct in pre.items()}
        all_slots = sorted({s for v in own.values() for s in v} | {absent_slot})
        args = ["proof", db]
        for a in addresses + [absent_address]:
            args += ["--account", a]
        for s in all_slots:
            args += ["--slot", s]
        r = run(*args)
        if r.returncode != 0:
            fail(where + ": proof: " + r.stderr.decode().strip())
            continue
        nodes = []
        for line in r.stdout.decode().splitlines():
            answer = json.loads(line)
            nodes += answer["accountProof"]
            for sp in answer["storageProof"]:
                nodes += sp["proof"]
        nodes = sorted(set(n.lower() for n in nodes))
        keys = []
        for a in addresses:
            keys.append(a)
            keys += own[a]
        keys.append(absent_address)
        keys.append(addresses[0])
        keys.append(absent_slot)
        codes = sorted({(acct.get("code") or "0x").lower() for acct in pre.values()} - {"0x"})
        header = genesis_header_rlp(t)
        canonical = {"state": nodes, "codes": codes, "keys": keys, "headers": [hx(header)]}

        # The expected answer for each key, in order.
        expect = []
        for k in keys:
            if len(k) == 42:
                acct = pre.get(k) or next((v for a, v in pre.items() if a.lower() == k), None)
                expect.append(("account", k, acct))
            else:
                expect.append(("slot", k, None))

        def verify(label, r, out, keys_given=True):
            global passed
            if r.returncode != 0 or out is None:
                fail("%s: %s: exit %d: %s%s" % (where, label, r.returncode,
                                                 r.stdout.decode()[:300], r.stderr.decode().strip()))
                return
            problems = []
            if out["root"] != want_root:
                problems.append("root " + out["root"])
            n = out["nodes"]
            if n["superfluous"] or n["undecodable"] or n["duplicated"]:
                problems.append("nodes " + json.dumps(n)[:200])
            if n["reached"] != len(nodes):
                problems.append("reached %d of %d" % (n["reached"], len(nodes)))
            if out["accounts"] < len(pre):
                problems.append("accounts reached %d of %d" % (out["accounts"], len(pre)))
            if out["codes"]["matched"] != len(codes):
                problems.append("codes " + json.dumps(out["codes"]))
            got = out["keys"]
            if not keys_given:
                if got:
                    problems.append("keys without keys")
            elif len(got) != len(keys):
                problems.append("%d keys for %d" % (len(got), len(keys)))
            else:
                account = None
                for k, g in zip(keys, got):
                    if len(k) == 42:
                        account = pre.get(k) or next((v for a, v in pre.items()
                                                      if a.lower() == k), None)
                        if account is None:
                            ok = g["status"] == "absent"
                        else:
                            ok = (g["status"] == "present" and
                                  num(g["nonce"]) == num(account.get("nonce")) and
                                  num(g["balance"]) == num(account.get("balance")))
                    else:
                        value = 0
                        owner = g.get("address")
                        if owner:
                            acct = next((v for a, v in pre.items() if a.lower() == owner), None)
                            for sk, sv in ((acct or {}).get("storage") or {}).items():
                                if num(sk) == int(k, 16):
                                    value = num(sv)
                        if value:
                            ok = g["status"] == "present" and num(g["value"]) == value
                        else:
                            ok = g["status"] == "absent"
                    if not ok:
                        problems.append("key %s: %s" % (k, json.dumps(g)))
                        break
            if problems:
                fail("%s: %s: %s" % (where, label, "; ".join(problems)))
            else:
                passed += 1

        r, out = check(json.dumps(canonical))
        verify("JSON", r, out)
        if r.returncode != 0:
            continue

        sorted_keys = sorted(set(keys), key=lambda k: bytes.fromhex(k[2:]))
        header_object = dict(t["genesisBlockHeader"])
        geth = {"jsonrpc": "2.0", "id": 1,
                "result": {"headers": [header_object], "codes": codes, "state": nodes,
                           "keys": sorted_keys}}
        r, out = check(json.dumps(geth))
        if r.returncode != 0 or out is None:
            fail("%s: geth JSON: exit %d %s" % (where, r.returncode, r.stderr.decode().strip()))
        elif out["unresolved"] or out["root"] != want_root or len(out["keys"]) != len(sorted_keys):
            fail("%s: geth JSON: %s" % (where, r.stdout.decode()[:300]))
        else:
            passed += 1

        strings = lambda items: rlp_list(b"".join(rlp_bytes(bytes.fromhex(i[2:])) for i in items))
        parts = [rlp_list(header), strings(codes), strings(nodes), strings(keys)]
        r, out = check(rlp_list(b"".join(parts)))
        verify("RLP", r, out)
        r, out = check(hx(rlp_list(b"".join(parts[:3]))) + "\n")
        verify("0x hex RLP, three items", r, out, keys_given=False)

        # A node left out: some key stops at its hash.
        gone = rng.choice(nodes)
        w = dict(canonical, state=[n for n in nodes if n != gone])
        from_keccak = run("keccak", gone).stdout.decode().strip()
        r, out = check(json.dumps(w))
        missing = [k.get("missing") for k in (out or {}).get("keys", [])]
        if r.returncode != 1 or from_keccak not in missing:
            fail("%s: without node %s: exit %d, missing %s" % (where, from_keccak, r.returncode,
                                                                missing[:3]))
        else:
            passed += 1

        # One byte of a node changed.
        i = rng.randrange(len(nodes))
        b = bytearray.fromhex(nodes[i][2:])
        j = rng.randrange(len(b))
        b[j] ^= 0x01
        w = dict(canonical, state=nodes[:i] + [hx(bytes(b))] + nodes[i + 1:])
        r, out = check(json.dumps(w))
        if r.returncode != 1 or not out or not out["unresolved"]:
            fail("%s: node %d byte %d changed: exit %d" % (where, i, j, r.returncode))
        else:
            passed += 1

        # The header and foreign-item cases test the reader, not the data: every fourth test.
        if tests % 4 == 0:
            # Another stateRoot: nothing resolves. The hash given as well: refused.
            forged = dict(header_object, stateRoot="0x" + "11" * 32)
            forged.pop("hash", None)
            r, out = check(json.dumps(dict(canonical, headers=[forged])))
            if r.returncode != 1 or not out or out["unresolved"] != len(keys):
                fail("%s: forged stateRoot: exit %d" % (where, r.returncode))
            else:
                passed += 1
            forged["hash"] = header_object["hash"]
            r, out = check(json.dumps(dict(canonical, headers=[forged])))
            if r.returncode != 2 or b"hash" not in r.stderr:
                fail("%s: forged stateRoot beside its hash: exit %d %s" % (where, r.returncode,
                                                                          r.stderr.decode()))
            else:
                passed += 1

            # A break in the chain: another test's header as block 1.
            if other_header is not None and other_parent != header_object["hash"].lower():
                r, out = check(json.dumps(dict(canonical, headers=[hx(header), other_header])))
                if r.returncode != 2 or b"chain" not in r.stderr:
                    fail("%s: broken chain: exit %d %s" % (where, r.returncode, r.stderr.decode()))
                else:
                    passed += 1
                block1 = t["blocks"][0].get("blockHeader")
                if block1:
                    r, out = check(json.dumps(dict(geth["result"], headers=[header_object, block1])),
                                   "--root", want_root)
                    if r.returncode != 0 or not out or out["root"] != want_root:
                        fail("%s: two headers and --root: exit %d %s" % (where, r.returncode,
                                                                        r.stderr.decode()))
                    else:
                        passed += 1

            # A node and a code from elsewhere: superfluous, and refused with --strict.
            if other_node is not None and other_node not in nodes:
                w = dict(canonical, state=nodes + [other_node], codes=codes + ["0x6001600055"])
                r, out = check(json.dumps(w))
                r2, _ = check(json.dumps(w), "--strict")
                if (r.returncode != 0 or not out or len(out["nodes"]["superfluous"]) != 1 or
                        len(out["codes"]["unmatched"]) != 1 or r2.returncode != 1):
                    fail("%s: a node and a code from elsewhere: exit %d, --strict %d" %
                         (where, r.returncode, r2.returncode))
                else:
                    passed += 1
        if (len(t.get("blocks", [])) == 1 and "postState" in t and
                t["blocks"][0].get("blockHeader")):
            round_trip(where, t, db, header)
        collapse(where, t, db)
        other_node = nodes[-1]
        if t.get("blocks") and t["blocks"][0].get("blockHeader"):
            other_header = hx(genesis_header_rlp({"genesisRLP": t["blocks"][0]["rlp"]}))
            other_parent = t["blocks"][0]["blockHeader"]["parentHash"].lower()

shutil.rmtree(tmp, ignore_errors=True)
if tests == 0:
    print("witness-check: error: no BlockchainTests tests under " + tests_dir, file=sys.stderr)
    sys.exit(2)
if tampered_refused == 0:
    fail("no changed node was one apply needed: the tampering is not tested")
if reads_short == 0:
    fail("no block's changes needed more nodes than its reads: --changes is not tested")
if needed == 0 or unneeded == 0:
    fail("nodes left out of a made witness: %d needed by apply, %d not; want some of each" %
         (needed, unneeded))
print("%d passed, %d failed (%d tests; %d collapses whose changes need nodes their reads do not; "
      "%d changed nodes refused by apply; of the nodes left out in turn, %d needed by apply, "
      "%d not)" % (passed, failed, tests, reads_short, tampered_refused, needed, unneeded))
sys.exit(1 if failed else 0)
PY

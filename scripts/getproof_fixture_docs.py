#!/usr/bin/env python3
"""eth_getProof answers made by `mpt proof --account` from the postStates of the ethereum/tests
BlockchainTests fixtures, checked field by field against the fixtures:

    getproof_fixture_docs.py BLOCKCHAIN_TESTS MPT OUT_DIR

For each test with a postState (tests that give only a postStateHash are counted and left
out): the postState is built with `mpt build --state`, whose root must be the stateRoot of
the test's last block (the block whose hash is lastblockhash, or the genesis header), and
`mpt diff` of the file and the postState must find nothing. Then
one `mpt proof DB --account ...` call answers every account of the state and two addresses
it lacks, each with the storage keys of every account of the state (as the fixture writes
them, so each account also proves the slots of the others, mostly absent) and two slots no
account has. Each answer must hold what the fixture says: the address; the nonce, balance and
each slot's value (0 where the account has none) as quantities; the empty root as
storageHash exactly where the account has no non-zero slot; the code's keccak256 (by `mpt
keccak`) as codeHash; each key echoed as go-ethereum echoes it; for an absent account nonce
and balance 0x0, zero hashes and slots without nodes.

Writes OUT_DIR/docs/N.json, one answer each, and OUT_DIR/index.tsv: a line per answer,
"N.json<TAB>state root<TAB>present|absent<TAB>test". Prints failures to stdout and one summary
line "docs: T tests (S without a postState), A answers (P present, B absent), K storage
proofs"; exits 1 when a check failed, 2 when no test was found or mpt failed.
"""
import glob
import json
import os
import subprocess
import sys

EMPTY_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
EMPTY_CODE = "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
ZERO = "0x" + "0" * 64
# Two addresses and two slots that no fixture state holds.
ABSENT_ADDRESSES = ["0x00000000000000000000000000000000000dead1",
                    "0xfffffffffffffffffffffffffffffffffffffffe"]
ABSENT_SLOTS = ["0x0dEad0000beef", "0x" + "f" * 63 + "e"]


def number(text):
    """A fixture number: 0x hex (perhaps "0x"), or decimal."""
    if isinstance(text, int):
        return text
    t = text.strip()
    if t[:2] in ("0x", "0X"):
        return int(t[2:] or "0", 16)
    return int(t or "0", 10)


def echo(key):
    """The key as go-ethereum's GetProof echoes it (read independently of mpt's code)."""
    digits = key[2:] if key[:2] in ("0x", "0X") else key
    if len(digits) % 2:
        digits = "0" + digits
    raw = bytes.fromhex(digits)
    if len(raw) == 32:
        return "0x" + raw.hex()
    return hex(int.from_bytes(raw, "big"))


def last_state_root(test):
    want = test.get("lastblockhash")
    genesis = test.get("genesisBlockHeader", {})
    if want is not None and genesis.get("hash") == want:
        return genesis.get("stateRoot")
    for block in test.get("blocks", []):
        header = block.get("blockHeader")
        if header and header.get("hash") == want:
            return header.get("stateRoot")
    return None


def main():
    folder, mpt, out = sys.argv[1], sys.argv[2], sys.argv[3]
    docs = os.path.join(out, "docs")
    os.makedirs(docs, exist_ok=True)
    files = sorted(glob.glob(os.path.join(folder, "ValidBlocks", "**", "*.json"), recursive=True))
    failures = []
    tests = skipped = answers = present = absent = storage = 0
    code_hashes = {}
    index = open(os.path.join(out, "index.tsv"), "w")

    def fail(where, why):
        failures.append(where + ": " + why)
        print("FAIL " + where + ": " + why)

    def keccak(code):
        if code not in code_hashes:
            r = subprocess.run([mpt, "keccak", code], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("getproof_fixture_docs: mpt keccak failed: " + r.stderr.strip())
            code_hashes[code] = r.stdout.strip()
        return code_hashes[code]

    for path in files:
        with open(path) as f:
            fixture = json.load(f)
        for name in sorted(fixture):
            test = fixture[name]
            if not isinstance(test, dict):
                continue
            post = test.get("postState")
            if post is None:
                skipped += 1
                continue
            tests += 1
            where = os.path.relpath(path, folder) + " " + name
            root = last_state_root(test)
            if root is None:
                fail(where, "no block header with the last block hash")
                continue
            state = os.path.join(out, "state.json")
            db = os.path.join(out, "state.db")
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
            with open(state, "w") as f:
                json.dump(post, f)
            r = subprocess.run([mpt, "build", "--state", state, "-o", db],
                               capture_output=True, text=True)
            if r.returncode != 0 or r.stdout.strip() != root:
                fail(where, "build --state gave %r (exit %d, %s), want %s"
                     % (r.stdout.strip(), r.returncode, r.stderr.strip(), root))
                continue
            # The state file holds what the document says, account by account and slot by slot.
            r = subprocess.run([mpt, "diff", db, state], capture_output=True, text=True)
            if r.returncode != 0 or r.stdout or r.stderr:
                fail(where, "diff of the state file and its document: exit %d, %s%s"
                     % (r.returncode, r.stdout.strip()[:300], r.stderr.strip()))
                continue
            addresses = sorted(post)
            lacking = [a for a in ABSENT_ADDRESSES if a.lower() not in
                       {x.lower() for x in addresses}]
            keys = []
            for a in addresses:
                for k in post[a].get("storage", {}):
                    if k not in keys:
                        keys.append(k)
            keys += ABSENT_SLOTS
            cmd = [mpt, "proof", db, "--account"] + addresses + lacking
            for k in keys:
                cmd += ["--slot", k]
            r = subprocess.run(cmd, capture_output=True, text=True)
            lines = r.stdout.splitlines()
            if r.returncode != 0 or len(lines) != len(addresses) + len(lacking):
                fail(where, "proof --account gave exit %d and %d lines for %d accounts: %s"
                     % (r.returncode, len(lines), len(addresses) + len(lacking),
                        r.stderr.strip()))
                continue
            for i, line in enumerate(lines):
                doc = json.loads(line)
                asked = (addresses + lacking)[i]
                is_present = i < len(addresses)
                at = "%s account %s" % (where, asked)
                want_fields = ["address", "accountProof", "balance", "codeHash", "nonce",
                               "storageHash", "storageProof"]
                if list(doc) != want_fields:
                    fail(at, "fields %s" % list(doc))
                    continue
                if doc["address"] != "0x" + asked[2:].lower().rjust(40, "0"):
                    fail(at, "address %s" % doc["address"])
                if [s["key"] for s in doc["storageProof"]] != [echo(k) for k in keys]:
                    fail(at, "storage keys not echoed as go-ethereum does")
                if any(list(s) != ["key", "value", "proof"] for s in doc["storageProof"]):
                    fail(at, "storage proof fields")
                if is_present:
                    acc = post[asked]
                    slots = {number(k): number(v) for k, v in acc.get("storage", {}).items()}
                    nonzero = any(v != 0 for v in slots.values())
                    if doc["nonce"] != hex(number(acc.get("nonce", "0"))):
                        fail(at, "nonce %s, the fixture %s" % (doc["nonce"], acc.get("nonce")))
                    if doc["balance"] != hex(number(acc.get("balance", "0"))):
                        fail(at, "balance %s, the fixture %s"
                             % (doc["balance"], acc.get("balance")))
                    code = acc.get("code", "0x") or "0x"
                    want_code = EMPTY_CODE if code in ("0x", "") else keccak(code)
                    if doc["codeHash"] != want_code:
                        fail(at, "codeHash %s, want %s" % (doc["codeHash"], want_code))
                    if (doc["storageHash"] == EMPTY_ROOT) == nonzero:
                        fail(at, "storageHash %s with%s storage"
                             % (doc["storageHash"], "" if nonzero else "out"))
                    for k, s in zip(keys, doc["storageProof"]):
                        want = hex(slots.get(number(k), 0))
                        if s["value"] != want:
                            fail(at, "slot %s: value %s, the fixture %s" % (k, s["value"], want))
                        if not nonzero and s["proof"]:
                            fail(at, "slot %s: nodes without storage" % k)
                    present += 1
                else:
                    if (doc["nonce"], doc["balance"], doc["codeHash"], doc["storageHash"]) != \
                            ("0x0", "0x0", ZERO, ZERO):
                        fail(at, "absent account answered with %s" % line[:200])
                    if any(s["value"] != "0x0" or s["proof"] for s in doc["storageProof"]):
                        fail(at, "absent account with slot values or nodes")
                    absent += 1
                storage += len(doc["storageProof"])
                name_out = "%d.json" % answers
                with open(os.path.join(docs, name_out), "w") as f:
                    f.write(line + "\n")
                index.write("%s\t%s\t%s\t%s\n" % (name_out, root,
                                                  "present" if is_present else "absent", where))
                answers += 1
    index.close()
    print("docs: %d tests (%d without a postState), %d answers (%d present, %d absent), "
          "%d storage proofs" % (tests, skipped, answers, present, absent, storage))
    if tests == 0:
        sys.exit(2)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

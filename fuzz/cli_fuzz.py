#!/usr/bin/env python3
"""Random command lines against the command contract.

Each run takes one of a list of command lines that answer on a pool of files of every kind
(trie files, state files, documents, proofs, witnesses, text, noise, an empty file, a folder,
a missing path) and changes it: a word replaced by another file or an odd string, a word
left out, a flag of the command (from its --help) added; or it puts random flags and
operands after a command. In some runs one file of the pool is truncated or tampered with
first; stdin is one of the pool's files or nothing. Each run is checked against what every
command promises:

- the exit code is 0, 1, 2 or 3 (4 is an internal error or out of memory; a signal or a run
  past the time limit is a hang or a crash);
- stderr holds only lines that start with "mpt: " (notes, then at most one error line), and
  exit 2 and 3 end with exactly one "mpt: error: " line, exit 0 with none;
- with --json, what exit 0 or 1 prints is JSON (one document, or one a line);
- in some runs, the ways to a document's root agree (two threads and one, past --memory 1M,
  built into a trie file): the same root or the same error line;
- after a write that succeeded, the trie files on its line that were sound pass mpt check;
- in some runs, get and proof of a key in a trie file agree, and the proof verifies;
- no file of the pool changes unless the command writes and succeeds, and a file named by -o
  or --output that was not there is not left by a command that failed.

Usage: cli_fuzz.py MPT [--runs N] [--seed S] [--fixtures DIR] [--keep DIR]
Prints each failing command line (shell-quoted, from the pool's folder) and its reason; exit
1 when any failed. The seed is printed; --seed replays it.
"""

import argparse
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

WRITERS = {"build", "update", "drop", "copy", "vacuum"}
TIMEOUT = 20


def command_table(mpt):
    out = subprocess.run([mpt, "--commands"], capture_output=True, text=True, check=True).stdout
    return [line.split("\t")[0] for line in out.splitlines() if line]


def flags_of(mpt, command):
    """(name, takes_value) for each option of `mpt COMMAND --help`."""
    out = subprocess.run([mpt, command, "--help"], capture_output=True, text=True).stdout
    flags = []
    in_options = False
    for line in out.splitlines():
        if line.startswith("Options:"):
            in_options = True
            continue
        if line and not line.startswith(" "):
            in_options = False
        m = re.match(r"^  (-[^ ]+)( [^ ])?", line) if in_options else None
        if m:
            names = m.group(1).split(",")
            flags.append((names[-1], m.group(2) is not None))
    return [f for f in flags if f[0] not in ("--help", "-h")]


def make_pool(mpt, fixtures, folder):
    """Files of every kind in folder; returns their names."""
    for name in ("dogs.json", "state_genesis.json", "state_a.json", "proof_present.json",
                 "proof_absent.json", "range_valid.json", "getproof.json", "witness_a.json",
                 "trie_vectors.json", "state_geth_dump_lines.jsonl", "diff_a.json"):
        shutil.copy(os.path.join(fixtures, name), os.path.join(folder, name))

    def run(*args):
        subprocess.run([mpt, *args], cwd=folder, capture_output=True, check=True)

    run("build", "dogs.json", "-o", "dogs.db")
    run("build", "diff_a.json", "-o", "dogs.db", "--trie", "other")
    run("build", "--state", "state_genesis.json", "-o", "state.db")
    with open(os.path.join(folder, "pairs.json"), "w") as f:
        f.write("{" + ",".join('"0x%064x":"0x%04x"' % (i * 7919, i + 1) for i in range(300)) + "}")
    run("build", "pairs.json", "-o", "pairs.db")
    # Two documents past what --memory 1M (the root check's budget) holds whole, 512 KiB of
    # key/value text for root and 233 KiB of state, so that tampering with them reaches the
    # spilled readers: pairs of keys and values of several lengths, and a state.
    with open(os.path.join(folder, "spill.json"), "w") as f:
        f.write("{" + ",".join('"0x%s":"0x%s"' % (
            hashlib.sha256(b"k%d" % i).hexdigest()[:2 * (1 + i % 32)],
            hashlib.sha256(b"v%d" % i).hexdigest()[:2 * (1 + i % 40)]) for i in range(8000)) + "}")
    with open(os.path.join(folder, "spill_state.json"), "w") as f:
        f.write("{" + ",".join('"0x%040x":{"balance":"0x%x","nonce":"0x%x"%s}' % (
            i * 104729 + 1, i * 1000003, i % 7,
            ',"code":"0x60016000","storage":{"0x01":"0x%04x","0x02":"0x02"}' % (i + 1)
            if i % 3 == 0 else "") for i in range(3500)) + "}")
    with open(os.path.join(folder, "text.txt"), "w") as f:
        f.write("this is text\n")
    with open(os.path.join(folder, "noise.bin"), "wb") as f:
        f.write(random.Random(7).randbytes(3000))
    with open(os.path.join(folder, "half.db"), "wb") as f:
        f.write(open(os.path.join(folder, "pairs.db"), "rb").read()[:6000])
    with open(os.path.join(folder, "changes.json"), "w") as f:
        f.write('{"0x0000000000000000000000000000000000000001": {"balance": "0x5"}}\n')
    with open(os.path.join(folder, "keys.txt"), "w") as f:
        f.write("0x646f67\ndog\n0x\n")
    open(os.path.join(folder, "empty"), "w").close()
    os.mkdir(os.path.join(folder, "folder"))
    return sorted(n for n in os.listdir(folder) if n != "folder")


STRINGS = ["0x", "0x01", "0x646f67", "dog", "doge", "", "0xzz", "0x123", "0X01", "0x" + "ab" * 32,
           "0x" + "ab" * 33, "0x" + "00" * 20, "00" * 20, "-1", "0", "1", "3", "100",
           "18446744073709551616", "main", "other", "x y", "\n", "-", "1M", "4G", "100K", "uint256:1",
           "address:0x" + "11" * 20, "decode", "encode", "check", "apply", "diff", "bash",
           "0x00", "0x0f", "0x10", "0x0000", "[]", "{}", '["0x01"]', "0x80", "0xc0", "0xf8"]


def mutate(rng, data):
    """data with one to three random changes: a cut, a flipped bit, a byte put in or taken out,
    a stretch repeated."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(data) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            del data[at:]
        elif kind == 1 and at < len(data):
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 2:
            data[at:at] = bytes([rng.choice(b'0x9af"{}[],: \n\x00\xff')])
        elif kind == 3:
            del data[at:at + rng.randint(1, 16)]
        else:
            data[at:at] = data[at:at + rng.randint(1, 64)]
    return bytes(data)


ADDRESS = "0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b"
# Keys the pool's trie files hold.
KEYS = ["dog", "doge", "dogglesworth", "0x646f65", "0x" + "%064x" % 7919, "0x" + "%064x" % (7919 * 299),
        "0x" + "%064x" % 0, ADDRESS]

# A command line of each shape that answers on the pool as made; runs start from one and
# change it (a word replaced or left out, a flag added), or are random words altogether.
LINES = [
    ["root", "dogs.json"], ["root", "--state", "state_genesis.json"], ["root", "pairs.db"],
    ["root", "--vectors", "trie_vectors.json"], ["root", "--trie", "other", "dogs.db"],
    ["root", "--state", "state_geth_dump_lines.jsonl"], ["root", "--list", "-"],
    ["root", "--memory", "1M", "spill.json"], ["root", "--memory", "1M", "--state", "spill_state.json"],
    ["build", "--memory", "1M", "spill.json", "-o", "new.db"],
    ["build", "--memory", "1M", "--state", "spill_state.json", "-o", "new.db"],
    ["build", "pairs.json", "-o", "new.db"], ["build", "diff_a.json", "-o", "dogs.db"],
    ["build", "--state", "state_a.json", "-o", "new.db"], ["build", "dogs.json", "-o", "pairs.db"],
    ["update", "state.db", "--changes", "changes.json"],
    ["get", "dogs.db", "dog"], ["get", "pairs.db", "0x" + "%064x" % 7919],
    ["get", "state.db", "--account", ADDRESS], ["get", "dogs.db", "--keys", "keys.txt"],
    ["get", "state.db", "--account", ADDRESS, "--slot", "0x01"],
    ["dump", "pairs.db"], ["dump", "state.db", "--accounts", "--storage"], ["dump", "dogs.db", "--json"],
    ["check", "pairs.db"], ["check", "state.db"], ["stats", "pairs.db"], ["stats", "state.db", "--json"],
    ["count-allocs", "--leaves", "64", "--samples", "4"],
    ["diff", "dogs.db", "diff_a.json"], ["diff", "pairs.db", "pairs.json"], ["diff", "state.db", "--state", "state_a.json"],
    ["get-node", "pairs.db", "0x"], ["get-node", "pairs.db", "0x00", "0x10"],
    ["proof", "pairs.db", "0x" + "%064x" % 7919], ["proof", "--verify", "proof_present.json"],
    ["proof", "--verify", "proof_absent.json"], ["proof", "--verify", "getproof.json"],
    ["proof", "pairs.db", "--range", "0x00", "--limit", "5"], ["proof", "state.db", "--account", ADDRESS],
    ["verify-range", "range_valid.json"], ["keccak", "0x01"], ["keccak", "-"],
    ["rlp", "decode", "0xc3010203"], ["rlp", "encode", '["0x01", ["0x02"]]'], ["rlp", "decode", "-"],
    ["slot", "0", "--key", "uint256:1"], ["slot", "3", "--index", "2"],
    ["witness", "state.db", ADDRESS], ["witness", "check", "witness_a.json"],
    ["witness", "apply", "witness_a.json", "--changes", "changes.json"], ["witness", "diff", "witness_a.json", "witness_a.json"],
    ["witness", "state.db", ADDRESS, "--rlp", "-o", "new.db"],
    ["tries", "dogs.db"], ["drop", "dogs.db", "--trie", "other"], ["copy", "pairs.db", "--to", "copy"],
    ["vacuum", "pairs.db"], ["tree", "pairs.db", "--depth", "2"], ["completion", "bash"],
]


def pick_value(rng, files):
    r = rng.random()
    if r < 0.45:
        return rng.choice(files + ["missing.db", "folder", "new.db", "-", "/dev/null"])
    return rng.choice(STRINGS)


def is_sqlite(path):
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (IsADirectoryError, FileNotFoundError):
        return None


def checks_clean(mpt, folder, env, name):
    """mpt check of the trie main in a trie file: (passed, the output's end). A file without
    a trie main (another name only) has nothing to check there."""
    checked = run_mpt(mpt, folder, env, "check", "--trie", "main", "--", name)
    passed = checked.returncode == 0 or b"no trie named main" in checked.stderr
    return passed, "exit %d %r" % (checked.returncode, (checked.stdout + checked.stderr)[-300:])


def written_files_check(mpt, folder, args, victim, unsound, env):
    """After a write that succeeded, every trie file on its line that was sound before (not
    the one tampered with this run, nor one of the pool made unsound) passes mpt check."""
    why = []
    for name in set(args[1:]):
        path = os.path.join(folder, name)
        if name == victim or name in unsound or not os.path.isfile(path) or not is_sqlite(path):
            continue
        passed, output = checks_clean(mpt, folder, env, name)
        if not passed:
            why.append("mpt check %s after the write: %s" % (name, output))
    return why


def check_run(args, proc, before, after, folder, new_existed):
    """The contract's breaches in one run, as reasons."""
    why = []
    code = proc.returncode
    if code not in (0, 1, 2, 3):
        why.append("exit %d" % code)
    lines = proc.stderr.decode(errors="replace").splitlines()
    if any(not line.startswith("mpt: ") for line in lines):
        why.append("stderr line without 'mpt: ': %r" % next(l for l in lines if not l.startswith("mpt: ")))
    errors = errors_of(proc)
    if args[0] == "root":
        # root with several inputs gives each that cannot be read its error line, the others
        # still run (mpt-root(1)).
        if code in (2, 3) and not errors:
            why.append("exit %d with no error line" % code)
    elif code in (2, 3) and (len(errors) != 1 or lines[-1] != errors[0]):
        why.append("exit %d with %d error lines, last %r" % (code, len(errors), lines[-1:] or ""))
    if code == 0 and errors:
        why.append("exit 0 with an error line %r" % errors[0])
    if "--json" in args and code in (0, 1) and proc.stdout.strip():
        # One JSON document, or one a line.
        out = proc.stdout.decode(errors="replace")
        try:
            json.loads(out)
        except ValueError:
            try:
                for line in out.splitlines():
                    json.loads(line)
            except ValueError:
                why.append("--json output is not JSON: %r" % out[:200])
    writes = args[0] in WRITERS or (args[0] == "witness" and ("-o" in args or "--output" in args))
    if not (writes and code == 0):
        for name, d in before.items():
            if after[name] != d:
                why.append("%s changed" % name)
        if not new_existed and os.path.exists(os.path.join(folder, "new.db")):
            why.append("new.db left by a failed command")
    return why


def run_mpt(mpt, folder, env, *args):
    """mpt ARGS in the pool's folder, nothing on stdin, its output kept."""
    return subprocess.run([mpt, *args], cwd=folder, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=TIMEOUT, env=env)


def errors_of(proc):
    return [l for l in proc.stderr.decode(errors="replace").splitlines() if l.startswith("mpt: error: ")]


def agree(mpt, folder, name, env):
    """The ways to a document's root agree: in memory on two threads and on one, past a
    --memory of 1M, and built into a trie file: the same root, or the same error line."""
    def run(*args):
        return run_mpt(mpt, folder, env, *args)

    why = []
    first = run("root", name)
    for variant in (["root", "--threads", "1", name], ["root", "--memory", "1M", name]):
        other = run(*variant)
        if (other.returncode, other.stdout, errors_of(other)) != (
                first.returncode, first.stdout, errors_of(first)):
            why.append("mpt %s: exit %d %r %r, where mpt root %s: exit %d %r %r" % (
                " ".join(variant), other.returncode, other.stdout, errors_of(other), name,
                first.returncode, first.stdout, errors_of(first)))
    built = run("build", name, "-o", "agree.db")
    if built.returncode != first.returncode or errors_of(built) != errors_of(first):
        why.append("mpt build %s: exit %d %r, where root: exit %d %r" % (
            name, built.returncode, errors_of(built), first.returncode, errors_of(first)))
    elif built.returncode == 0:
        again = run("root", "agree.db")
        if again.stdout != first.stdout:
            why.append("root of the file built from %s: %r, of the document: %r" % (
                name, again.stdout, first.stdout))
    elif os.path.exists(os.path.join(folder, "agree.db")):
        why.append("a failed build of %s left agree.db" % name)
    return why


def answers_agree(mpt, folder, db, key, env):
    """get and proof of one key in a trie file (tampered with in some runs) agree: the same
    exit code, the proof's value is get's, and the proof verifies against the file's root with
    that value; or both fail."""
    def run(*args):
        return run_mpt(mpt, folder, env, *args)

    got = run("get", db, key)
    proved = run("proof", db, key)
    if got.returncode in (0, 1) and proved.returncode == 0:
        doc = json.loads(proved.stdout)
        value = got.stdout.decode().strip() if got.returncode == 0 else None
        if doc["value"] != value:
            return ["get %s %s: %r, its proof's value %r" % (db, key, value, doc["value"])]
        with open(os.path.join(folder, "answer.json"), "wb") as f:
            f.write(proved.stdout)
        checked = run("proof", "--verify", "answer.json")
        if checked.returncode != 0:
            return ["proof %s %s does not verify: %r" % (db, key, checked.stdout[:200])]
        return []
    if (got.returncode in (0, 1)) != (proved.returncode == 0):
        return ["get %s %s: exit %d %r, proof: exit %d %r" % (
            db, key, got.returncode, errors_of(got), proved.returncode, errors_of(proved))]
    return []


def side_check(run, what, check):
    """Runs one of the checks beside a run (agree, answers_agree): prints its failures and
    returns 1, or returns 0."""
    try:
        why = check()
    except subprocess.TimeoutExpired:
        why = ["no answer in %d s" % TIMEOUT]
    if not why:
        return 0
    print("FAIL run %d: %s\n  %s" % (run, what, "; ".join(why)))
    sys.stdout.flush()
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mpt")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=random.SystemRandom().randrange(1 << 32))
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(__file__), "..", "fixtures"))
    ap.add_argument("--keep", help="make the pool in this folder and leave it")
    a = ap.parse_args()
    mpt = os.path.abspath(a.mpt)
    print("cli_fuzz: seed %d (--seed replays it)" % a.seed, flush=True)
    rng = random.Random(a.seed)
    folder = a.keep or tempfile.mkdtemp(prefix="mpt-cli-fuzz.")
    os.makedirs(folder, exist_ok=True)
    pristine = os.path.join(folder, ".pristine")
    os.makedirs(pristine, exist_ok=True)
    files = make_pool(mpt, os.path.abspath(a.fixtures), pristine)
    # The pool's trie files that fail mpt check as made (half.db, cut short).
    unsound = {n for n in files if is_sqlite(os.path.join(pristine, n)) and
               not checks_clean(mpt, pristine, os.environ, n)[0]}
    commands = command_table(mpt)
    flags = {c: flags_of(mpt, c) for c in commands}
    failed = 0
    exits = {}
    env = dict(os.environ, LC_ALL="C")
    for run in range(a.runs):
        # The pool as made, every run.
        for n in os.listdir(folder):
            p = os.path.join(folder, n)
            if n != ".pristine":
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
        for n in files:
            shutil.copy(os.path.join(pristine, n), os.path.join(folder, n))
        os.mkdir(os.path.join(folder, "folder"))
        # A changed copy of one of them, in place of it in some runs: truncated, tampered.
        victim = None
        if rng.random() < 0.4:
            victim = rng.choice(files)
            with open(os.path.join(pristine, victim), "rb") as f:
                data = mutate(rng, f.read())
            with open(os.path.join(folder, victim), "wb") as f:
                f.write(data)
        if rng.random() < 0.75:
            args = list(rng.choice(LINES))
            command = args[0]
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
                what = rng.randrange(3)
                if what == 0 and len(args) > 1:
                    args[rng.randrange(1, len(args))] = pick_value(rng, files)
                elif what == 1 and len(args) > 1:
                    del args[rng.randrange(1, len(args))]
                elif flags[command]:
                    name, takes = rng.choice(flags[command])
                    args += [name, pick_value(rng, files)] if takes else [name]
        else:
            command = rng.choice(commands)
            args = [command]
            words = [pick_value(rng, files) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4]))]
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4])):
                if not flags[command]:
                    break
                name, takes = rng.choice(flags[command])
                words.append(name)
                if takes:
                    words.append(pick_value(rng, files))
            rng.shuffle(words)
            args += words
        stdin_name = rng.choice([None, None] + files)
        before = {n: digest(os.path.join(folder, n)) for n in files}
        new_existed = os.path.exists(os.path.join(folder, "new.db"))
        stdin = open(os.path.join(folder, stdin_name), "rb") if stdin_name else subprocess.DEVNULL
        try:
            proc = subprocess.run([mpt, *args], cwd=folder, stdin=stdin, capture_output=True,
                                  timeout=TIMEOUT, env=env)
            after = {n: digest(os.path.join(folder, n)) for n in files}
            exits[proc.returncode] = exits.get(proc.returncode, 0) + 1
            why = check_run(args, proc, before, after, folder, new_existed)
            if proc.returncode == 0 and args[0] in WRITERS:
                why += written_files_check(mpt, folder, args, victim, unsound, env)
        except subprocess.TimeoutExpired:
            why = ["no answer in %d s" % TIMEOUT]
            proc = None
        finally:
            if stdin_name:
                stdin.close()
        if rng.random() < 0.15:
            # A document of the pool, maybe tampered with above: not a trie file, which
            # --memory does not apply to.
            name = rng.choice([n for n in files if not is_sqlite(os.path.join(folder, n))])
            failed += side_check(run, "the roots of " + name,
                                 lambda: agree(mpt, folder, name, env))
        if rng.random() < 0.15:
            db = rng.choice([n for n in files if is_sqlite(os.path.join(folder, n))] or ["missing.db"])
            key = rng.choice(KEYS + STRINGS[:12])
            failed += side_check(run, "the answers of %s for %s" % (db, key),
                                 lambda: answers_agree(mpt, folder, db, key, env))
        if why:
            failed += 1
            line = "mpt " + " ".join(shlex.quote(x) for x in args)
            if stdin_name:
                line += " < " + shlex.quote(stdin_name)
            print("FAIL run %d: %s\n  %s" % (run, line, "; ".join(why)))
            if proc is not None:
                print("  stderr: %r" % proc.stderr.decode(errors="replace")[-400:])
            sys.stdout.flush()
    if not a.keep:
        shutil.rmtree(folder)
    print("cli_fuzz: %d runs (exit %s), %d failed" % (
        a.runs, ", ".join("%d: %d" % kv for kv in sorted(exits.items())), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Checks recorded eth_getProof exchanges with `mpt proof --verify`:
#
#   scripts/getproof-check.sh FOLDER [BUILD_DIR]   (FOLDER: execution-apis' tests/eth_getProof;
#                                                   BUILD_DIR defaults to build/)
#
# Each FOLDER/*.io file holds a ">> " request line and a "<< " response line (JSON-RPC). For
# each, the response must verify against the state root the exchange names (a "stateRoot"
# in it), or, where it names none, against itself (`mpt proof --verify` without --root,
# whose output must say so); the answer must be for the address and the slots the request
# asked for. Then every one of these changes must be refused (exit 1) against that same
# root: one hex digit changed at the start, the middle and the end of every account and
# storage proof node, in the address, nonce, balance, storageHash and codeHash, and in every
# storage key and value.
#
# Prints one line per file and "N passed, M failed". Exit 0 when all pass, 1 when a check
# fails, 2 when FOLDER or the binary is missing, or FOLDER holds no .io file.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "getproof-check: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/getproof-check.sh FOLDER [BUILD_DIR]"
dir=$1
build=${2:-$root/build}
mpt=$build/mpt
[ -d "$dir" ] || die "$dir: no such folder (FOLDER must be execution-apis' tests/eth_getProof)"
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v python3 >/dev/null || die "python3 not found (it writes the changed documents)"
shopt -s nullglob
files=("$dir"/*.io)
[ ${#files[@]} -gt 0 ] || die "$dir: no .io files"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# variants IO OUTDIR: writes OUTDIR/response.json (the "<<" line), OUTDIR/root (the state
# root the exchange names, or nothing), OUTDIR/asked (the address and slots the request
# asked for, one a line) and OUTDIR/change-N.json, one changed document each, with
# OUTDIR/change-N.what saying what was changed.
variants() {
    python3 - "$1" "$2" <<'EOF'
import json, re, sys
io, out = sys.argv[1], sys.argv[2]
request = response = None
for line in open(io):
    if line.startswith(">>"):
        request = line[2:].strip()
    elif line.startswith("<<"):
        response = line[2:].strip()
if request is None or response is None:
    sys.exit("no '>>' request and '<<' response lines")
open(out + "/response.json", "w").write(response + "\n")
named = re.findall(r'"stateRoot"\s*:\s*"(0x[0-9a-fA-F]{64})"', open(io).read())
open(out + "/root", "w").write(named[0] if named else "")
params = json.loads(request).get("params", [])
asked = [params[0]] + list(params[1]) if len(params) >= 2 else params[:1]
open(out + "/asked", "w").write("".join(a + "\n" for a in asked))

doc = json.loads(response)
result = doc["result"]
changes = []

def other(c):  # another hex digit
    return "0123456789abcdef"[(int(c, 16) + 1) % 16]

def flip(s, i):  # s with hex digit i (after "0x") changed
    i += 2
    return s[:i] + other(s[i]) + s[i + 1:]

def digits(s):
    return len(s) - 2

def add(what, set_value):
    changed = json.loads(response)
    set_value(changed["result"])
    changes.append((what, changed))

def at(path):  # a setter for a nested field
    def set_value(v):
        def apply(r):
            o = r
            for p in path[:-1]:
                o = o[p]
            o[path[-1]] = v
        return apply
    return set_value

for f in ("address", "nonce", "balance", "storageHash", "codeHash"):
    s = result[f]
    add(f + " " + flip(s, digits(s) - 1), at([f])(flip(s, digits(s) - 1)))
for name, nodes, path in [("account proof", result["accountProof"], ["accountProof"])] + [
        ("storage proof %d" % i, sp["proof"], ["storageProof", i, "proof"])
        for i, sp in enumerate(result["storageProof"])]:
    for n, node in enumerate(nodes):
        for i in sorted({0, digits(node) // 2, digits(node) - 1}):
            changed = list(nodes)
            changed[n] = flip(node, i)
            add("%s node %d, digit %d" % (name, n, i), at(path)(changed))
for i, sp in enumerate(result["storageProof"]):
    for f in ("key", "value"):
        s = sp[f]
        add("storage proof %d %s %s" % (i, f, flip(s, digits(s) - 1)),
            at(["storageProof", i, f])(flip(s, digits(s) - 1)))
for n, (what, changed) in enumerate(changes):
    open("%s/change-%d.json" % (out, n), "w").write(json.dumps(changed) + "\n")
    open("%s/change-%d.what" % (out, n), "w").write(what + "\n")
EOF
}

pass=0
fail=0
for io in "${files[@]}"; do
    name=$(basename "$io")
    work=$tmp/${name%.io}
    mkdir -p "$work"
    if ! why=$(variants "$io" "$work" 2>&1); then
        echo "FAIL $name: $(printf '%s' "$why" | tail -1)"
        fail=$((fail + 1))
        continue
    fi
    trusted=$(cat "$work/root")
    root_args=()
    [ -n "$trusted" ] && root_args=(--root "$trusted")
    out=$("$mpt" proof --verify "$work/response.json" "${root_args[@]}" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL $name: exit $rc: $out"
        fail=$((fail + 1))
        continue
    fi
    if [ -z "$trusted" ]; then
        # No trusted root: the output must say that the document was checked against itself,
        # and name the root it proves; the changes are checked against that root.
        if [[ $out != "valid against itself: "* ]]; then
            echo "FAIL $name: a check against itself must say so, got: $out"
            fail=$((fail + 1))
            continue
        fi
        trusted=$(printf '%s\n' "$out" | grep -oE 'own root 0x[0-9a-f]{64}' | cut -d' ' -f3)
        if [ -z "$trusted" ]; then
            echo "FAIL $name: no root named in: $out"
            fail=$((fail + 1))
            continue
        fi
        how="against itself (the exchange names no state root): $trusted"
    else
        how="against the exchange's state root $trusted"
    fi
    # The answer is for what was asked: its address and slots, as mpt reads them.
    json=$("$mpt" proof --verify "$work/response.json" --root "$trusted" --json)
    asked_ok=1
    while read -r item; do
        item_lc=$(printf '%s' "$item" | tr 'A-F' 'a-f')
        if [[ $item_lc =~ ^0x[0-9a-f]{40}$ ]]; then
            grep -q "\"account\":\"$item_lc\"" <<<"$json" || asked_ok=0
        fi
    done <"$work/asked"
    slots_asked=$(($(wc -l <"$work/asked") - 1))
    grep -q "\"storageProofs\":$slots_asked[,}]" <<<"$json" || asked_ok=0
    if [ $asked_ok -eq 0 ]; then
        echo "FAIL $name: the answer is not for what the request asked ($(tr '\n' ' ' <"$work/asked")): $json"
        fail=$((fail + 1))
        continue
    fi
    refused=0
    accepted=()
    for change in "$work"/change-*.json; do
        "$mpt" proof --verify "$change" --root "$trusted" >"$work/out" 2>&1
        rc=$?
        if [ $rc -eq 1 ] && grep -q '^invalid: ' "$work/out"; then
            refused=$((refused + 1))
        else
            accepted+=("$(cat "${change%.json}.what") (exit $rc: $(head -c 200 "$work/out"))")
        fi
    done
    if [ ${#accepted[@]} -gt 0 ]; then
        echo "FAIL $name: changed documents not refused: ${accepted[*]}"
        fail=$((fail + 1))
        continue
    fi
    echo "ok   $name: valid $how; $refused changed documents refused"
    pass=$((pass + 1))
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Runs the ethereum/tests RLP vectors through `mpt rlp`:
#   RLPTests/rlptest.json         each "in" (as mpt's JSON tree: text and integers written as
#                                 0x hex, "#N" big integers too) must encode to "out", and
#                                 `mpt rlp decode` of "out" must give that tree back;
#   RLPTests/invalidRLPTest.json  each "out" must be refused by `mpt rlp decode` (exit 2,
#                                 one error line naming a byte offset).
#
#   scripts/rlp-check.sh DIR [BUILD_DIR]    (DIR: an ethereum/tests checkout;
#                                            BUILD_DIR defaults to build/)
# Prints failures and "N passed, M failed". Exit 0 when all pass, 1 when a case fails, 2 when
# DIR, a vector file, python3 or the binary is missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "rlp-check: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/rlp-check.sh DIR [BUILD_DIR]"
dir=$1
build=${2:-$root/build}
mpt=$build/mpt
for f in rlptest.json invalidRLPTest.json; do
    [ -f "$dir/RLPTests/$f" ] || die "$dir/RLPTests/$f: missing (DIR must be an ethereum/tests checkout)"
done
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v python3 >/dev/null || die "python3 not found (it converts the vectors)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line per case: "valid<TAB>name<TAB>tree<TAB>out" or "invalid<TAB>name<TAB>out".
python3 - "$dir/RLPTests" >"$tmp/cases" <<'EOF' || die "cannot read the vectors"
import json, sys
d = sys.argv[1]

def tree(v):
    if isinstance(v, list):
        return [tree(x) for x in v]
    if isinstance(v, str) and v.startswith("#"):
        v = int(v[1:])
    if isinstance(v, int):
        return "0x" + (v.to_bytes((v.bit_length() + 7) // 8, "big").hex() if v else "")
    return "0x" + v.encode("utf-8").hex()

for name, case in json.load(open(d + "/rlptest.json")).items():
    print("valid\t%s\t%s\t%s" % (name, json.dumps(tree(case["in"]), separators=(",", ":")),
                                 case["out"].lower()))
for name, case in json.load(open(d + "/invalidRLPTest.json")).items():
    out = case["out"]  # some are written without 0x
    print("invalid\t%s\t%s" % (name, out if out.startswith("0x") else "0x" + out))
EOF

pass=0
fail=0
bad() {
    fail=$((fail + 1))
    echo "FAIL $*"
}
while IFS=$'\t' read -r kind name a b; do
    if [ "$kind" = valid ]; then
        got=$("$mpt" rlp encode "$a" 2>&1)
        if [ "$got" != "$b" ]; then
            bad "rlptest $name: encode gave ${got:0:120}, want ${b:0:120}"
            continue
        fi
        got=$("$mpt" rlp decode "$b" 2>&1)
        if [ "$got" != "$a" ]; then
            bad "rlptest $name: decode gave ${got:0:120}, want ${a:0:120}"
            continue
        fi
    else
        "$mpt" rlp decode "$a" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
            ! grep -qE '^mpt: error: .*: byte [0-9]+: ' "$tmp/err"; then
            bad "invalidRLPTest $name: want exit 2 and one error naming a byte, got exit $rc: $(head -c 200 "$tmp/out" "$tmp/err")"
            continue
        fi
    fi
    pass=$((pass + 1))
done <"$tmp/cases"
[ $((pass + fail)) -gt 0 ] || die "no cases read"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Runs the ethereum/tests vectors against a build:
#   TrieTests/*.json                       through `mpt root --vectors` (all six files)
#   BlockchainTests/ (when there)          through `mpt root --vectors` (the state roots of
#                                          every test's pre and postState; at least one test)
#   RLPTests/*.json, BasicTests/hexencodetest.json   through mpt_vectors
#
#   scripts/ethereum-tests.sh DIR [BUILD_DIR]    (DIR: an ethereum/tests checkout;
#                                                 BUILD_DIR defaults to build/)
# Prints failures and one summary line per runner. Exit 0 when everything passes, 1 when a
# vector fails, 2 when DIR, a vector file or a binary is missing (nothing is skipped).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "ethereum-tests: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/ethereum-tests.sh DIR [BUILD_DIR]"
dir=$1
build=${2:-$root/build}

[ -d "$dir/TrieTests" ] || die "$dir/TrieTests: no such folder (DIR must be an ethereum/tests checkout)"
mpt=$build/mpt
vectors=$build/mpt_vectors
for bin in "$mpt" "$vectors"; do
    [ -x "$bin" ] || die "$bin: not built (run scripts/setup.sh, or pass BUILD_DIR)"
done

# The six TrieTests files; each must be present, and any further file there runs too.
expected=(trietest.json trietest_secureTrie.json trieanyorder.json trieanyorder_secureTrie.json
    hex_encoded_securetrie_test.json trietestnextprev.json)
for f in "${expected[@]}"; do
    [ -f "$dir/TrieTests/$f" ] || die "$dir/TrieTests/$f: missing"
done
trie_files=("$dir"/TrieTests/*.json)

status=0

out=$("$mpt" root --vectors "${trie_files[@]}")
rc=$?
# Only failures and the summary; passing cases print "ok ..." lines.
printf '%s\n' "$out" | grep -v '^ok ' | sed 's/^/TrieTests: /'
if [ $rc -ne 0 ]; then
    [ $rc -eq 1 ] && status=1 || exit $rc
fi

if [ -d "$dir/BlockchainTests" ]; then
    out=$("$mpt" root --vectors "$dir/BlockchainTests")
    rc=$?
    printf '%s\n' "$out" | grep -v '^ok ' | sed 's/^/BlockchainTests: /'
    if [ $rc -ne 0 ]; then
        [ $rc -eq 1 ] && status=1 || exit $rc
    fi
    # A folder without tests passes nothing: that is a missing input, not a pass.
    if printf '%s\n' "$out" | grep -q '^0 passed, 0 failed$'; then
        die "$dir/BlockchainTests: no tests found"
    fi
fi

"$vectors" "$dir" | sed 's/^/RLP and hex-prefix: /'
rc=${PIPESTATUS[0]}
if [ $rc -ne 0 ]; then
    [ $rc -eq 1 ] && status=1 || exit $rc
fi

exit $status

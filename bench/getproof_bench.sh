#!/usr/bin/env bash
# Whole-process time of `mpt proof --verify` of an eth_getProof answer with 10 storage proofs
# against a trusted root, beside a bare process start (`mpt --version`), with hyperfine
# (goal: within 1.3x of the process start).
#
#   bench/getproof_bench.sh [BUILD_DIR]     (BUILD_DIR defaults to build/, which must be built)
#
# The answer is made by tests/make_getproof.sh in a state of 200,000 accounts, the account
# holding 20,000 slots: an account proof of 6 nodes and storage proofs of 5 or 6 (66 nodes,
# a 43 KB document), about what a mainnet answer holds (its account proofs are a few nodes
# deeper).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
mpt=$build/mpt
[ -x "$mpt" ] || {
    echo "getproof_bench: error: $mpt not built" >&2
    exit 2
}
command -v hyperfine >/dev/null || {
    echo "getproof_bench: error: hyperfine not found (scripts/setup.sh installs it)" >&2
    exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/tests/make_getproof.sh" "$mpt" 200000 20000 "$tmp/doc"
state_root=$(cat "$tmp/doc/root")
doc=$tmp/doc/response.json
"$mpt" proof --verify "$doc" --root "$state_root"
echo "document: $(wc -c <"$doc") bytes"

hyperfine -N --warmup 20 --runs 300 --style basic --export-csv "$tmp/times.csv" \
    -n "process start (mpt --version)" "$mpt --version" \
    -n "proof --verify with 10 storage proofs" "$mpt proof --verify $doc --root $state_root"
echo
awk -F, 'NR == 1 { next }
    NR == 2 { start = $4; start_min = $7 }
    { printf "%-36s median %6.3f ms  min %6.3f ms  %5.2fx (median), %5.2fx (min) a process start\n",
        $1, $4 * 1e3, $7 * 1e3, $4 / start, $7 / start_min }' "$tmp/times.csv"

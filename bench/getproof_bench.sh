#!/usr/bin/env bash
# Whole-process time of `mpt proof --verify` of an eth_getProof answer with 10 storage proofs
# against a trusted root, beside a bare process start (`mpt --version`), with hyperfine
# (goal: within 1.3x of the process start). The two are interleaved: ROUNDS rounds (default
# 20) of 15 runs of each, one after the other, so that a change in the machine's load falls on
# both; the medians and minima over all runs are compared.
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

rounds=${ROUNDS:-20}
for r in $(seq "$rounds"); do
    hyperfine -N --warmup 3 --runs 15 --style none --export-json "$tmp/round_$r.json" \
        -n "process start (mpt --version)" "$mpt --version" \
        -n "proof --verify with 10 storage proofs" "$mpt proof --verify $doc --root $state_root" \
        >/dev/null
done
echo
python3 - "$tmp" "$rounds" <<'PY'
import json, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
times = {}
for r in range(1, rounds + 1):
    for res in json.load(open("%s/round_%d.json" % (tmp, r)))["results"]:
        times.setdefault(res["command"], []).extend(res["times"])
names = list(times)
start_med, start_min = statistics.median(times[names[0]]), min(times[names[0]])
for n in names:
    med, low = statistics.median(times[n]), min(times[n])
    print("%-38s median %6.3f ms  min %6.3f ms  %5.2fx (median), %5.2fx (min) a process start"
          " (%d runs, interleaved)" % (n, med * 1e3, low * 1e3, med / start_med, low / start_min,
                                       len(times[n])))
ratio = statistics.median(times[names[1]]) / start_med
print("goal: within 1.3x of a process start (median): %s" % ("met" if ratio <= 1.3 else "NOT met"))
PY

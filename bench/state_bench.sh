#!/usr/bin/env bash
# State roots, timed as whole processes:
#  1. The ethereum/tests BlockchainTests fixtures (DIR/BlockchainTests/ValidBlocks): every
#     test's pre and postState state roots through `mpt root --vectors` in one process,
#     beside bench/state_roots.mjs doing the same conversions and roots with @ethereumjs/mpt
#     and @ethereumjs/rlp (both must pass every check); the two times and their ratio (goal:
#     mpt at least 10x faster).
#  2. A generated genesis of 10,000 accounts (mpt_gen_state --genesis, bench/gen_state.cpp: 64
#     bytes of code and 2 storage slots each, then 128 bytes and 4 slots) through
#     `mpt root --state` (goal: under 30 ms).
#
#   bench/state_bench.sh DIR        (DIR: an ethereum/tests checkout)
#   RUNS=N                          hyperfine runs of each mpt command (default 20)
#
# Needs node and npm (the @ethereumjs packages are installed into a temporary folder that is
# removed afterwards), python3 and hyperfine. Builds first through scripts/setup.sh. The
# times are hyperfine's mean and least wall time, and the CPU time (user + system) of the
# mean run: on a shared machine the wall time follows the load, the CPU time much less.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() {
    echo "state_bench: error: $*" >&2
    exit 2
}
[ $# -eq 1 ] || die "usage: bench/state_bench.sh DIR (an ethereum/tests checkout)"
fixtures=$1/BlockchainTests/ValidBlocks
[ -d "$fixtures" ] || die "$fixtures: no such folder"
for tool in node npm python3 hyperfine; do
    command -v "$tool" >/dev/null || die "$tool not found"
done
runs=${RUNS:-20}

"$root/scripts/setup.sh" >/dev/null
mpt=$root/build/mpt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "installing @ethereumjs/mpt and @ethereumjs/rlp into $tmp"
(cd "$tmp" && npm init -y >/dev/null &&
    npm install --no-audit --no-fund --loglevel=error @ethereumjs/mpt@10 @ethereumjs/rlp@10 \
        @ethereumjs/util@10 >/dev/null) || die "npm install failed"
cp "$root/bench/state_roots.mjs" "$tmp/"
version=$(node -p "require('$tmp/node_modules/@ethereumjs/mpt/package.json').version")

# hyperfine's numbers of one command: "mean min cpu" in seconds.
timed() {
    local n=$1
    shift
    hyperfine -N -w 2 -r "$n" --export-json "$tmp/h.json" "$@" >/dev/null 2>&1 ||
        die "failed: $*"
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r["mean"], r["min"], r["user"] + r["system"])' "$tmp/h.json"
}
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }

files=$(find "$fixtures" -name '*.json' | wc -l)
echo "fixtures: $fixtures ($files files)"
"$mpt" root --vectors "$fixtures" | tail -1 | sed 's/^/mpt:             /'
(cd "$tmp" && node state_roots.mjs "$fixtures") | tail -1 | sed "s/^/@ethereumjs\/mpt: /"
read -r m_mean m_min m_cpu < <(timed "$runs" "$mpt root --vectors $fixtures")
read -r e_mean e_min e_cpu < <(cd "$tmp" && timed 3 "node state_roots.mjs $fixtures")
echo "mpt root --vectors:  mean $(ms "$m_mean"), least $(ms "$m_min"), CPU $(ms "$m_cpu")"
echo "@ethereumjs/mpt $version (node $(node --version)): mean $(ms "$e_mean"), least $(ms "$e_min"), CPU $(ms "$e_cpu")"
awk -v a="$e_mean" -v b="$m_mean" -v c="$e_min" -v d="$m_min" -v e="$e_cpu" -v f="$m_cpu" 'BEGIN {
    printf "ratio: %.0fx (means), %.0fx (least), %.0fx (CPU) (goal: at least 10x)\n", a / b, c / d, e / f }'

for shape in "64 2" "128 4"; do
    read -r code slots <<<"$shape"
    genesis=$tmp/genesis_10000_${code}_${slots}.json
    "$root/build/mpt_gen_state" 10000 $((10000 * slots)) "$genesis" --every 1 --code "$code" --genesis
    echo "genesis: 10,000 accounts, $code bytes of code and $slots slots each ($(($(stat -c %s "$genesis") / 1000)) kB)"
    "$mpt" root --json --state "$genesis" | sed 's/^/  /'
    read -r g_mean g_min g_cpu < <(timed "$runs" "$mpt root --state $genesis")
    echo "  mpt root --state: mean $(ms "$g_mean"), least $(ms "$g_min"), CPU $(ms "$g_cpu") (goal: under 30 ms)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

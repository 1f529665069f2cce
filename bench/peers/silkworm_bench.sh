#!/usr/bin/env bash
# mpt root against silkworm's HashBuilder on the same generated pairs, side by side in one
# run: for each N (default 1,000,000 and 10,000,000), `mpt root` of the benchmark file (whole
# process: reading, parsing, sorting and hashing) and silkworm_root.cpp, which makes the same
# pairs in memory and times only silkworm's sort and HashBuilder build of them. The roots
# must be equal; the ratio of the times is printed (goals: at least 2x at 1M, 2.3x at 10M).
#
#   bench/peers/silkworm_bench.sh SILKWORM [N...]    (RUNS=k: best of k, default 3)
#
# SILKWORM is a checkout of silkworm's public repository (erigontech/silkworm) with its
# submodules (git clone --recurse-submodules); nothing is fetched here. Only silkworm's core
# trie, RLP and common files are compiled, with ethash's Keccak, intx and evmc from its
# third_party/ submodules, by g++ at -O3 -DNDEBUG as mpt's Release build is (C++23, for
# std::expected in place of the tl-expected package, bench/peers/shim/). mpt's data and
# binary come from bench/dataset.sh (DATA_DIR as there). Times are the best of RUNS.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() {
    echo "silkworm_bench: error: $*" >&2
    exit 2
}
[ $# -ge 1 ] || die "usage: bench/peers/silkworm_bench.sh SILKWORM [N...]"
sw=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such folder"
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000)
runs=${RUNS:-3}
for v in "${sizes[@]}" "$runs"; do
    case $v in
    '' | *[!0-9]* | 0) die "N and RUNS must be positive whole numbers, got '$v'" ;;
    esac
done
ethash=$sw/third_party/ethash/ethash
intx=$sw/third_party/intx/intx
evmc=$sw/third_party/evmone/evmone/evmc
for f in "$sw/silkworm/core/trie/hash_builder.cpp" "$ethash/lib/keccak/keccak.c" \
    "$intx/include/intx/intx.hpp" "$evmc/include/evmc/evmc.hpp"; do
    [ -f "$f" ] || die "$f not found: SILKWORM must be a silkworm checkout with its submodules"
done
command -v g++ >/dev/null || die "g++ not found"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "building silkworm_root against $sw ($(git -C "$sw" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout"))"
core=$sw/silkworm/core
g++ -std=c++23 -O3 -DNDEBUG -w -I"$sw" -I"$ethash/include" -I"$intx/include" -I"$evmc/include" \
    -I"$root/bench/peers/shim" -o "$tmp/silkworm_root" "$root/bench/peers/silkworm_root.cpp" \
    "$core/trie/hash_builder.cpp" "$core/trie/nibbles.cpp" "$core/trie/node.cpp" \
    "$core/rlp/encode.cpp" "$core/common/util.cpp" "$core/common/assert.cpp" \
    "$core/common/endian.cpp" -x c "$ethash/lib/keccak/keccak.c" ||
    die "silkworm_root did not build (see above)"

now() { date +%s.%N; }
printf '%10s %10s %10s %10s %10s %8s\n' pairs "mpt s" "sw sort s" "sw build s" "sw total s" ratio
for n in "${sizes[@]}"; do
    # shellcheck source=bench/dataset.sh
    . "$root/bench/dataset.sh" >/dev/null # sets mpt and data
    cat "$data" >/dev/null # warm the page cache
    best=
    for _ in $(seq "$runs"); do
        start=$(now)
        "$mpt" root "$data" >"$tmp/mpt.out"
        s=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')
        best=$(awk -v x="$s" -v y="${best:-$s}" 'BEGIN { print (x < y ? x : y) }')
    done
    read -r _ sw_root _ sort _ build _ total < <("$tmp/silkworm_root" "$n" "$runs")
    mpt_root=$(cat "$tmp/mpt.out")
    [ "$mpt_root" = "$sw_root" ] || {
        echo "silkworm_bench: error: $n pairs: mpt's root $mpt_root, silkworm's $sw_root" >&2
        exit 1
    }
    awk -v n="$n" -v m="$best" -v s="$sort" -v b="$build" -v t="$total" \
        'BEGIN { printf "%10d %10.3f %10.3f %10.3f %10.3f %7.2fx\n", n, m, s, b, t, t / m }'
done

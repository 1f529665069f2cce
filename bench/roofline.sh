#!/usr/bin/env bash
# The roofline of `mpt root` and `mpt build`: how far each whole process is above the floor
# that hashing and parsing alone set on this machine, for each N given (default 1,000,000).
#
#   floor = permutations x (time of one) / cores  +  input bytes / (parse rate) / cores
#
# The permutations and input bytes are counted by `mpt root --stats` on the file; the time of
# one permutation is the time a hash of 64 bytes (one permutation) takes on the fastest batch
# kernel of this CPU (mpt_micro_bench BM_keccak256_batch_<kernel>/64), and the parse rate is
# the key/value reader's on the same file, its arena's page faults included (mpt_micro_bench
# --kv_file FILE, file/parse). The floor leaves out what no hashing or
# parsing needs but every root does (the sort, the encoding of nodes, process start, page
# faults) and, for build, the writing of the file.
#
#   bench/roofline.sh [N...]     (RUNS=k: k runs of each, default 3; the least is printed)
#
# The data comes from bench/dataset.sh (DATA_DIR=DIR for the large ones); the build's file is
# written beside it and removed. Needs Google Benchmark (scripts/setup.sh installs it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -gt 0 ] || set -- 1000000
for n in "$@"; do
    case $n in
    '' | *[!0-9]*)
        echo "roofline: error: N must be a non-negative integer, got '$n'" >&2
        exit 2
        ;;
    esac
done
runs=${RUNS:-3}
case $runs in
'' | *[!0-9]* | 0)
    echo "roofline: error: RUNS must be a positive integer, got '$runs'" >&2
    exit 2
    ;;
esac
command -v python3 >/dev/null || {
    echo "roofline: error: python3 not found" >&2
    exit 2
}
[ -x /usr/bin/time ] || {
    echo "roofline: error: /usr/bin/time not found (scripts/setup.sh installs it)" >&2
    exit 2
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ns=("$@")
n=${ns[0]}
# shellcheck source=bench/dataset.sh
. "$root/bench/dataset.sh"
bench=$root/build/mpt_micro_bench
[ -x "$bench" ] || {
    echo "roofline: error: $bench not built (Google Benchmark: scripts/setup.sh installs it)" >&2
    exit 2
}
"$bench" --benchmark_filter='^BM_keccak256_batch_[a-z0-9]+/64$' \
    --benchmark_repetitions="$runs" --benchmark_format=json >"$tmp/micro.json" 2>/dev/null

for n in "${ns[@]}"; do
    # shellcheck source=bench/dataset.sh
    . "$root/bench/dataset.sh"
    cat "$data" >/dev/null # warm the page cache
    "$mpt" root --stats --json -q "$data" >"$tmp/stats_$n.json"
    "$bench" --kv_file="$data" --benchmark_filter='^file/parse' --benchmark_format=json \
        >"$tmp/parse_$n.json" 2>/dev/null
    db=$data.roofline.db
    # Each command's runs in a row after an untimed one: in a virtual machine, a process that
    # touches more memory than the one before it pays for backing the difference anew.
    for what in root root1 build; do
        case $what in
        root) args=(root "$data") ;;
        root1) args=(root --threads 1 "$data") ;;
        build) args=(build "$data" -o "$db") ;;
        esac
        for ((r = -1; r < runs; ++r)); do
            out=$tmp/${what}_$n
            [ "$r" -ge 0 ] || out=/dev/null
            rm -f "$db"
            /usr/bin/time -f '%e' -a -o "$out" "$mpt" "${args[@]}" >/dev/null
        done
    done
    rm -f "$db"
done

python3 - "$tmp" "$(nproc)" "${ns[@]}" <<'EOF'
import json, sys

tmp, cores, ns = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
micro = json.load(open(f"{tmp}/micro.json"))["benchmarks"]
per_hash = {}  # kernel -> least seconds a 64-byte hash (one permutation)
for b in micro:
    if b.get("run_type") != "iteration":
        continue
    name = b["name"]
    if name.startswith("BM_keccak256_batch_"):
        kernel = name[len("BM_keccak256_batch_"):].split("/")[0]
        t = b["time_per_hash"]
        per_hash[kernel] = min(per_hash.get(kernel, t), t)
best = min(per_hash, key=per_hash.get)
print("one permutation (64-byte hash): " +
      ", ".join(f"{k} {v * 1e9:.0f} ns" for k, v in sorted(per_hash.items(), key=lambda kv: -kv[1])))
print(f"cores: {cores}; times: the least of each")
print()
print(f"| pairs | input MB | parse rate (MB/s) | permutations | floor (s): hashing + parsing | root, {cores} threads (s) | "
      "x floor | root, 1 thread (s) | x floor x cores | build (s) | x floor |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for n in ns:
    s = json.load(open(f"{tmp}/stats_{n}.json"))["stats"]
    parse_rate = json.load(open(f"{tmp}/parse_{n}.json"))["benchmarks"][0]["bytes_per_second"]
    hashing = s["permutations"] * per_hash[best] / cores
    parsing = s["inputBytes"] / parse_rate / cores
    floor = hashing + parsing
    least = lambda what: min(float(x) for x in open(f"{tmp}/{what}_{n}").read().split())
    root, root1, build = least("root"), least("root1"), least("build")
    print(f"| {int(n):,} | {s['inputBytes'] / 1e6:,.0f} | {parse_rate / 1e6:,.0f} | {s['permutations']:,} | "
          f"{floor:.3f} = {hashing:.3f} + {parsing:.3f} | {root:.2f} | {root / floor:.2f}x | "
          f"{root1:.2f} | {root1 / (floor * cores):.2f}x | {build:.2f} | {build / floor:.2f}x |")
EOF

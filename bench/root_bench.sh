#!/usr/bin/env bash
# Times `mpt root` on N generated pairs (default 1,000,000) beside the time to merely read
# the same file: on one thread (--threads 1) and by default (one thread per CPU), each with
# its CPU time and peak RSS. When mpt_micro_bench was built (Google Benchmark installed), the
# reader's parse throughput on the same kind of document is printed too.
#
#   bench/root_bench.sh [N]
#
# The data (key i = keccak256(uint64 big-endian i), value = keccak256(key), 32 bytes each, a
# JSON object of 0x hex strings) is generated once by mpt_gen_kv into bench/data/ and reused.
# Builds first through scripts/setup.sh. One run each, page cache warm.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-1000000}
case $n in
'' | *[!0-9]*)
    echo "root_bench: error: N must be a non-negative integer, got '$n'" >&2
    exit 2
    ;;
esac
[ -x /usr/bin/time ] || {
    echo "root_bench: error: /usr/bin/time not found (scripts/setup.sh installs it)" >&2
    exit 2
}

"$root/scripts/setup.sh" >/dev/null
mpt=$root/build/mpt
gen=$root/build/mpt_gen_kv

data_dir=$root/bench/data
data=$data_dir/kv_$n.json
mkdir -p "$data_dir"
if [ ! -s "$data" ]; then
    echo "generating $n pairs into $data"
    # Write beside and rename, so an interrupted run never leaves a truncated cache.
    "$gen" "$n" "$data.tmp"
    mv "$data.tmp" "$data"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat "$data" >/dev/null # warm the page cache
/usr/bin/time -f '%e %M' -o "$tmp/read" cat "$data" >/dev/null
/usr/bin/time -f '%e %U %S %M' -o "$tmp/one" "$mpt" root --threads 1 "$data" >"$tmp/out1"
/usr/bin/time -f '%e %U %S %M' -o "$tmp/all" "$mpt" root "$data" >"$tmp/out"
if ! cmp -s "$tmp/out1" "$tmp/out"; then
    echo "root_bench: error: the roots on one thread and by default differ" >&2
    exit 1
fi

read -r read_s _ <"$tmp/read"
size_mb=$(($(stat -c %s "$data") / 1000000))
cpus=$(nproc)
echo "data:      $data ($n pairs, $size_mb MB)"
echo "root:      $(cat "$tmp/out")"
echo "read file: ${read_s} s (cat > /dev/null)"
if [ -x "$root/build/mpt_micro_bench" ]; then
    # Bytes of JSON per second over a 100k-pair document of this shape, in memory.
    parse=$("$root/build/mpt_micro_bench" --benchmark_filter='^BM_parse_kv/' \
        --benchmark_min_time=0.2 2>/dev/null | awk '/^BM_parse_kv/ { for (i = 1; i <= NF; ++i) if ($i ~ /^bytes_per_second=/) { sub("bytes_per_second=", "", $i); print $i } }')
    echo "parse:     ${parse:-?} (JSON bytes per second, mpt_micro_bench BM_parse_kv)"
fi
while read -r label file; do
    read -r wall user sys kb <"$file"
    printf '%-10s %s s wall, %s s user + %s s sys, peak RSS %d MiB\n' "$label" "$wall" "$user" \
        "$sys" $((kb / 1024))
done <<LIST
1-thread: $tmp/one
$cpus-thread: $tmp/all
LIST

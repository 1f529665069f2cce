#!/usr/bin/env bash
# Times `mpt root` on N generated pairs (default 1,000,000) beside the time to merely read
# the same file: on one thread (--threads 1) and by default (one thread per CPU), each with
# its CPU time and peak RSS. When mpt_micro_bench was built (Google Benchmark installed), it
# also prints the floor of that work measured in parts on the same file (mapping and
# touching it, parsing it, and keccak256 of every node of its trie, CPU time) and how far
# the one-thread run is above it.
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
floor_s=
if [ -x "$root/build/mpt_micro_bench" ]; then
    "$root/build/mpt_micro_bench" --kv_file="$data" --benchmark_filter='^file/' \
        --benchmark_format=csv >"$tmp/floor.csv" 2>/dev/null
    # Columns: name, iterations, real_time, cpu_time, time_unit (ms), bytes_per_second, ...
    read -r read_ms parse_ms keccak_ms parse_rate < <(awk -F, '
        $1 ~ /^"file\/read/ { r = $4 } $1 ~ /^"file\/parse/ { p = $4; rate = $6 }
        $1 ~ /^"file\/keccak/ { k = $4 }
        END { printf "%.0f %.0f %.0f %.0f\n", r, p, k, rate / 1e6 }' "$tmp/floor.csv")
    floor_s=$(awk -v r="$read_ms" -v p="$parse_ms" -v k="$keccak_ms" 'BEGIN { printf "%.2f", (r + p + k) / 1000 }')
    echo "parse:     $parse_ms ms, $parse_rate MB/s (mpt_micro_bench file/parse)"
    echo "floor:     $floor_s s CPU = map+touch $read_ms ms + parse $parse_ms ms + keccak of every node $keccak_ms ms"
fi
while read -r label file; do
    read -r wall user sys kb <"$file"
    printf '%-10s %s s wall, %s s user + %s s sys, peak RSS %d MiB\n' "$label" "$wall" "$user" \
        "$sys" $((kb / 1024))
done <<LIST
1-thread: $tmp/one
$cpus-thread: $tmp/all
LIST
if [ -n "$floor_s" ]; then
    read -r _ user sys _ <"$tmp/one"
    awk -v u="$user" -v s="$sys" -v f="$floor_s" \
        'BEGIN { printf "1-thread CPU / floor: %.2f (goal: at most 1.3)\n", (u + s) / f }'
fi

#!/usr/bin/env bash
# Times `mpt root` on N generated pairs (default 1,000,000) beside the time to merely read
# the same file: on one thread (--threads 1) and by default (one thread per CPU), each with
# its CPU time and peak RSS. When mpt_micro_bench was built (Google Benchmark installed), it
# also prints the floor of that work measured in parts on the same file (mapping and
# touching it, parsing it, and keccak256 of every node of its trie, CPU time) and how far
# the one-thread run is above it: the least of each, and the ratio within each round (the
# two measured seconds apart), whose median and range show how much the machine drifted.
#
#   bench/root_bench.sh [N]          (RUNS=k: k rounds, default 5)
#
# The data (key i = keccak256(uint64 big-endian i), value = keccak256(key), 32 bytes each, a
# JSON object of 0x hex strings) is generated once by mpt_gen_kv into bench/data/ and reused.
# Builds first through scripts/setup.sh. Page cache warm. The measurements are interleaved
# over RUNS rounds and the least of each is printed: on a shared machine the speed of the
# same work varies by up to 2x from one second to the next, and the least is the run that
# was disturbed least.
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

# shellcheck source=bench/dataset.sh
. "$root/bench/dataset.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

runs=${RUNS:-5}
case $runs in
'' | *[!0-9]* | 0)
    echo "root_bench: error: RUNS must be a positive integer, got '$runs'" >&2
    exit 2
    ;;
esac
bench=$root/build/mpt_micro_bench
[ -x "$bench" ] || bench=

cat "$data" >/dev/null # warm the page cache
/usr/bin/time -f '%e %M' -o "$tmp/read" cat "$data" >/dev/null
for ((r = 0; r < runs; ++r)); do
    /usr/bin/time -f '%e %U %S %M' -a -o "$tmp/one" "$mpt" root --threads 1 "$data" >"$tmp/out1"
    /usr/bin/time -f '%e %U %S %M' -a -o "$tmp/all" "$mpt" root "$data" >"$tmp/out"
    if ! cmp -s "$tmp/out1" "$tmp/out"; then
        echo "root_bench: error: the roots on one thread and by default differ" >&2
        exit 1
    fi
    if [ -n "$bench" ]; then
        "$bench" --kv_file="$data" --benchmark_filter='^file/' --benchmark_format=csv \
            2>/dev/null | tail -n +2 | sed "s/^/$r,/" >>"$tmp/floor.csv"
    fi
done

read -r read_s _ <"$tmp/read"
size_mb=$(($(stat -c %s "$data") / 1000000))
cpus=$(nproc)
echo "data:      $data ($n pairs, $size_mb MB)"
echo "root:      $(cat "$tmp/out")"
echo "read file: ${read_s} s (cat > /dev/null)"
echo "rounds:    $runs (the least of each measurement)"
floor_s=
if [ -n "$bench" ]; then
    # Columns: round, name, iterations, real_time, cpu_time, time_unit (ms), ...
    read -r read_ms parse_ms keccak_ms < <(awk -F, '
        function least(v, m) { return m == "" || v < m ? v : m }
        $2 ~ /^"file\/read/ { r = least($5, r) } $2 ~ /^"file\/parse/ { p = least($5, p) }
        $2 ~ /^"file\/keccak/ { k = least($5, k) }
        END { printf "%.1f %.1f %.1f\n", r, p, k }' "$tmp/floor.csv")
    floor_s=$(awk -v r="$read_ms" -v p="$parse_ms" -v k="$keccak_ms" \
        'BEGIN { printf "%.2f", (r + p + k) / 1000 }')
    # The floor of each round beside the 1-thread run of the same round: the two measured
    # seconds apart, so that the machine's drift between rounds cancels in their ratio.
    awk -F, '$2 ~ /^"file\// { f[$1] += $5 / 1000 }
        END { for (r in f) printf "%d %.4f\n", r, f[r] }' "$tmp/floor.csv" | sort -n >"$tmp/floor.round"
    awk '{ printf "%.4f\n", $2 + $3 }' "$tmp/one" | paste -d' ' "$tmp/floor.round" - |
        awk '{ printf "%.3f\n", $3 / $2 }' | sort -n >"$tmp/ratios"
    rate=$(awk -v p="$parse_ms" -v b="$(stat -c %s "$data")" 'BEGIN { printf "%.0f", b / p / 1000 }')
    echo "parse:     $parse_ms ms CPU, $rate MB/s (mpt_micro_bench file/parse)"
    echo "floor:     $floor_s s CPU = map+touch $read_ms ms + parse $parse_ms ms" \
        "+ keccak of every node $keccak_ms ms"
fi
# The least wall time, the least user + sys (with its parts), the largest peak RSS.
summary() {
    awk '{ cpu = $2 + $3 }
        NR == 1 || $1 < w { w = $1 }
        NR == 1 || cpu < c { c = cpu; u = $2; s = $3 }
        $4 > kb { kb = $4 }
        END { printf "%s %.2f %s %s %d\n", w, c, u, s, kb / 1024 }' "$1"
}
read -r one_wall one_cpu one_user one_sys one_mib < <(summary "$tmp/one")
read -r all_wall _ all_user all_sys all_mib < <(summary "$tmp/all")
printf '%-10s %s s wall, %s s user + %s s sys, peak RSS %d MiB\n' "1-thread:" "$one_wall" \
    "$one_user" "$one_sys" "$one_mib"
printf '%-10s %s s wall, %s s user + %s s sys, peak RSS %d MiB\n' "$cpus-thread:" "$all_wall" \
    "$all_user" "$all_sys" "$all_mib"
if [ -n "$floor_s" ]; then
    awk -v c="$one_cpu" -v f="$floor_s" \
        'BEGIN { printf "1-thread CPU / floor: %.2f, the least of each\n", c / f }'
    awk '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "1-thread CPU / floor of the same round: median %.2f, from %.2f to %.2f (goal: at most 1.3)\n", m, v[1], v[NR] }' "$tmp/ratios"
fi

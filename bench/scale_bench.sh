#!/usr/bin/env bash
# Scale benchmark: `mpt root` and `mpt build` of N pairs (key_i = keccak256(uint64 big-endian
# i), value_i = keccak256(key_i); bench/data/ as the other benchmarks make it) under a fixed
# memory budget, for each N given: whether the cost per key holds as the input outgrows the
# budget and spills to temporary files.
#
#   bench/scale_bench.sh [--big] [N...]
#       N...       the sizes (default: 1000000 10000000); --big adds 100000000, which needs
#                  about 40 GB of disk (14 GB of input in DATA_DIR, up to 20 GB of runs in TMP
#                  or $TMPDIR, a 13.5 GB trie file in $TMPDIR) and is refused with less free
#       MEMORY=512M the --memory given (default 512M); MEMORY=default gives none: the
#                  default budget
#       TMP=DIR    --tmp; DATA_DIR=DIR the inputs (e.g. a disk with room for 14 GB at 100M)
#       CHECK=1    also runs each unbounded (--memory 64G) and compares the roots and the
#                  files byte for byte (needs about 2.7 GB of memory a 10M pairs)
#       RUNS=k     each size is run k times (default 3) and its least wall time taken, with
#                  that run's peak RSS and CPU time: a single run of 1M varies by 10% here,
#                  one of 100M by 15% (with how much of its input the page cache still
#                  holds), which moves every ratio; the least of each compares like with
#                  like. At 100M a run of root takes about a minute and one of build about
#                  a minute and a half here.
#
# Prints one row per command and size: wall seconds, nanoseconds per key, CPU (user plus
# system) nanoseconds per key, peak RSS (/usr/bin/time %M) against the budget, bytes written
# to temporary files (--json's tempBytes; 0 when nothing spilled), the trie file's size
# (build), and the wall and the CPU time per key against the first size's for the same
# command; then whether root and build gave the same root for each size. Wall time on a
# shared machine is noisy, and at 100M it moves with how much of the input is still in the
# page cache; CPU time per key is what the code sets. Compare rows of one run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() {
    echo "usage: bench/scale_bench.sh [--big] [N...] (MEMORY=512M|default TMP=DIR DATA_DIR=DIR CHECK=1 RUNS=k)" >&2
    exit 2
}
big=0
sizes=()
for a in "$@"; do
    case $a in
    --big) big=1 ;;
    -h | --help) usage ;;
    '' | *[!0-9]* | 0)
        echo "scale_bench: N must be a positive integer or --big, got '$a'" >&2
        exit 2
        ;;
    *) sizes+=("$a") ;;
    esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000)
if [ $big = 1 ]; then
    sizes+=(100000000)
    # Free space where the input, the runs and the trie file go, in GB.
    free_gb() { df -P -B1G "$1" | awk 'NR == 2 { print $4 }'; }
    data_dir=${DATA_DIR:-$root/bench/data}
    mkdir -p "$data_dir"
    need=40
    [ -s "$data_dir/kv_100000000.json" ] && need=26
    have=$(free_gb "${TMP:-${TMPDIR:-/tmp}}")
    [ "$(free_gb "$data_dir")" -lt "$have" ] && have=$(free_gb "$data_dir")
    if [ "$have" -lt "$need" ]; then
        echo "scale_bench: --big needs about $need GB free (input, runs, trie file); $have GB free" >&2
        exit 2
    fi
fi
set -- "${sizes[@]}"
memory=${MEMORY:-512M}
memory_args=(--memory "$memory")
[ "$memory" = default ] && memory_args=()
tmp_args=()
[ -n "${TMP:-}" ] && tmp_args=(--tmp "$TMP")
[ -x /usr/bin/time ] || {
    echo "scale_bench: /usr/bin/time not found (the time package)" >&2
    exit 2
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

declare -A roots
runs=${RUNS:-3}
case $runs in '' | *[!0-9]* | 0)
    echo "scale_bench: RUNS must be a positive integer, got '$runs'" >&2
    exit 2
    ;;
esac
# measure K CMD...: runs CMD under /usr/bin/time K times; sets wall (s), cpu (user plus
# system, s) and rss (KB) of the fastest run, and json (the last run's stdout; every run gives
# the same).
measure() {
    local k=$1 i w r u s
    shift
    wall=
    for ((i = 0; i < k; i++)); do
        rm -f "$out"/t.db*
        /usr/bin/time -f '%e %M %U %S' -o "$out/time" "$@" >"$out/stdout"
        read -r w r u s <"$out/time"
        if [ -z "$wall" ] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
            wall=$w
            rss=$r
            cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
        fi
    done
    json=$(cat "$out/stdout")
}
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" <<<"$json"; }
root_field() { sed -n 's/.*"root":"\(0x[0-9a-f]*\)".*/\1/p' <<<"$json"; }
# ratio A B: A/B to two places, or - when B is 0 (a run too short for /usr/bin/time to see).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'; }

printf '%-6s %10s %8s %9s %9s %9s %9s %10s %10s %8s %9s\n' cmd pairs wall_s ns/key cpu_ns/key \
    rss_MB budget temp_MB file_MB ratio cpu_ratio
declare -A first first_cpu
for n in "$@"; do
    # shellcheck source=bench/dataset.sh
    source "$root/bench/dataset.sh"
    for cmd in root build; do
        k=$runs
        if [ $cmd = root ]; then
            measure $k "$mpt" root --json "${memory_args[@]}" "${tmp_args[@]}" "$data"
        else
            measure $k "$mpt" build --json "${memory_args[@]}" "${tmp_args[@]}" "$data" -o "$out/t.db"
        fi
        got_root=$(root_field)
        roots[$cmd,$n]=$got_root
        temp=$(field tempBytes)
        temp=${temp:-0}
        ns=$(awk -v w="$wall" -v n="$n" 'BEGIN { printf "%.0f", w * 1e9 / n }')
        cpu_ns=$(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.0f", c * 1e9 / n }')
        [ -n "${first[$cmd]:-}" ] || first[$cmd]=$ns
        [ -n "${first_cpu[$cmd]:-}" ] || first_cpu[$cmd]=$cpu_ns
        wall_ratio=$(ratio "$ns" "${first[$cmd]}")
        cpu_ratio=$(ratio "$cpu_ns" "${first_cpu[$cmd]}")
        file_mb=-
        [ $cmd = build ] && file_mb=$(($(stat -c %s "$out/t.db") / 1000000))
        printf '%-6s %10s %8s %9s %9s %9s %9s %10s %10s %8s %9s\n' $cmd "$n" "$wall" "$ns" \
            "$cpu_ns" $((rss / 1024)) "$memory" $((temp / 1000000)) "$file_mb" "$wall_ratio" "$cpu_ratio"
        if [ "${CHECK:-0}" = 1 ]; then
            if [ $cmd = root ]; then
                want=$("$mpt" root --memory 64G "$data")
                [ "$want" = "$got_root" ] && echo "       root matches the unbounded run" ||
                    echo "       ROOT DIFFERS: $got_root, unbounded $want"
            else
                "$mpt" build --memory 64G "$data" -o "$out/u.db" >/dev/null
                cmp -s "$out/t.db" "$out/u.db" && echo "       file identical to the unbounded run's" ||
                    echo "       FILES DIFFER"
                rm -f "$out/u.db"
            fi
        fi
    done
done
for n in "$@"; do
    if [ "${roots[root,$n]}" = "${roots[build,$n]}" ]; then
        echo "$n pairs: root and build agree: ${roots[root,$n]}"
    else
        echo "$n pairs: ROOTS DIFFER: root ${roots[root,$n]}, build ${roots[build,$n]}"
        exit 1
    fi
done

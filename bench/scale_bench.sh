#!/usr/bin/env bash
# Scale benchmark: `mpt root` and `mpt build` of N pairs (key_i = keccak256(uint64 big-endian
# i), value_i = keccak256(key_i); bench/data/ as the other benchmarks make it) under a fixed
# memory budget, for each N given: whether the cost per key holds as the input outgrows the
# budget and spills to temporary files.
#
#   bench/scale_bench.sh N...      (MEMORY=512M the --memory given, MEMORY=default none:
#                                   the default budget; TMP=DIR for --tmp; DATA_DIR=DIR for
#                                   the inputs, e.g. a disk with room for 14 GB at 100M;
#                                   the trie file goes to $TMPDIR, as do the runs without
#                                   TMP;
#                                   CHECK=1 also runs each unbounded (--memory 64G) and
#                                   compares the roots and the files byte for byte)
#
# Prints one row per command and size: wall seconds, nanoseconds per key, peak RSS
# (/usr/bin/time %M) against the budget, bytes written to temporary files (--json's
# temp_bytes; 0 when nothing spilled), the trie file's size (build), and the time per key
# against the first size's for the same command. Wall time on a shared machine is noisy:
# compare rows of one run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 1 ] || {
    echo "usage: bench/scale_bench.sh N... (MEMORY=512M|default TMP=DIR DATA_DIR=DIR CHECK=1)" >&2
    exit 2
}
for n in "$@"; do
    case $n in
    '' | *[!0-9]* | 0)
        echo "scale_bench: N must be a positive integer, got '$n'" >&2
        exit 2
        ;;
    esac
done
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

# Runs "$@" under /usr/bin/time; sets wall (s), rss (KB) and json (its stdout).
measure() {
    /usr/bin/time -f '%e %M' -o "$out/time" "$@" >"$out/stdout"
    read -r wall rss <"$out/time"
    json=$(cat "$out/stdout")
}
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" <<<"$json"; }
root_field() { sed -n 's/.*"root":"\(0x[0-9a-f]*\)".*/\1/p' <<<"$json"; }

printf '%-6s %10s %8s %9s %9s %9s %10s %10s %8s\n' cmd pairs wall_s ns/key rss_MB budget temp_MB file_MB ratio
declare -A first
for n in "$@"; do
    # shellcheck source=bench/dataset.sh
    source "$root/bench/dataset.sh"
    for cmd in root build; do
        rm -f "$out"/t.db*
        if [ $cmd = root ]; then
            measure "$mpt" root --json "${memory_args[@]}" "${tmp_args[@]}" "$data"
        else
            measure "$mpt" build --json "${memory_args[@]}" "${tmp_args[@]}" "$data" -o "$out/t.db"
        fi
        got_root=$(root_field)
        temp=$(field temp_bytes)
        temp=${temp:-0}
        ns=$(awk -v w="$wall" -v n="$n" 'BEGIN { printf "%.0f", w * 1e9 / n }')
        [ -n "${first[$cmd]:-}" ] || first[$cmd]=$ns
        ratio=$(awk -v a="$ns" -v b="${first[$cmd]}" 'BEGIN { printf "%.2f", a / b }')
        file_mb=-
        [ $cmd = build ] && file_mb=$(($(stat -c %s "$out/t.db") / 1000000))
        printf '%-6s %10s %8s %9s %9s %9s %10s %10s %8s\n' $cmd "$n" "$wall" "$ns" \
            $((rss / 1024)) "$memory" $((temp / 1000000)) "$file_mb" "$ratio"
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

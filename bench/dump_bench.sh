#!/usr/bin/env bash
# Whole-process times of `mpt dump` and `mpt dump --json` of a trie file of N keys (default
# 1,000,000), with hyperfine, and the ratio JSON/text (goal: under 1.5). Both forms stream: the
# JSON form writes the same pairs with other punctuation, so it should cost about what the text
# form costs. Also `mpt diff --json` against `mpt diff` of that file against the empty trie
# (every key added), the other streamed JSON document.
#
#   bench/dump_bench.sh [N]          (RUNS=k: k rounds, default 5)
#
# The rounds interleave the commands (each round times each command over 3 runs, one after
# the other), so that the machine's drift hits all alike; the ratio printed is the median of
# the rounds' ratios of medians, with its range. Output goes to /dev/null (hyperfine's default):
# what is measured is the walk and the formatting, not a terminal. The data (key i =
# keccak256(uint64 big-endian i), value = keccak256(key)) and the trie file are made once into
# bench/data/ and reused.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-1000000}
case $n in
'' | *[!0-9]*)
    echo "dump_bench: error: N must be a whole number, got '$n'" >&2
    exit 2
    ;;
esac
runs=${RUNS:-5}
case $runs in
'' | *[!0-9]* | 0)
    echo "dump_bench: error: RUNS must be a positive integer, got '$runs'" >&2
    exit 2
    ;;
esac
command -v hyperfine >/dev/null || {
    echo "dump_bench: error: hyperfine not found (scripts/setup.sh installs it)" >&2
    exit 2
}

# shellcheck source=bench/dataset.sh
. "$root/bench/dataset.sh"
db=$root/bench/data/kv_$n.db
if [ ! -s "$db" ]; then
    rm -f "$db.tmp"*
    "$mpt" build "$data" -o "$db.tmp" >/dev/null
    mv "$db.tmp" "$db"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo '{}' >"$tmp/empty.json"

# Both forms hold the same pairs.
text_pairs=$("$mpt" dump "$db" | wc -l)
json_pairs=$("$mpt" dump --json "$db" | tr ',' '\n' | wc -l)
if [ "$text_pairs" -ne "$n" ] || [ "$json_pairs" -ne "$n" ]; then
    echo "dump_bench: error: dump gave $text_pairs lines, dump --json $json_pairs pairs, want $n" >&2
    exit 1
fi

for ((r = 0; r < runs; ++r)); do
    hyperfine -N --warmup 1 --runs 3 --style none --export-csv "$tmp/round$r.csv" \
        -n "dump" "$mpt dump $db" -n "dump --json" "$mpt dump --json $db" \
        -n "diff" "$mpt diff $tmp/empty.json $db" -n "diff --json" "$mpt diff --json $tmp/empty.json $db" \
        -i >/dev/null 2>&1
done

echo "mpt dump of $n keys, $runs interleaved rounds of 3 runs (hyperfine medians)"
# Columns of hyperfine's CSV: command, mean, stddev, median, user, system, min, max.
awk -F, 'FNR == 1 { next } {
        m[$1] = $4
        if (!($1 in best) || $7 < best[$1]) best[$1] = $7
        if (FNR == 5) {
            rd[++k] = m["dump --json"] / m["dump"]
            rf[k] = m["diff --json"] / m["diff"]
        }
    }
    function sort(a, n,  i, j, t) {
        for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    }
    function median(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END {
        sort(rd, k); sort(rf, k)
        printf "%-14s %10s\n", "command", "least"
        split("dump|dump --json|diff|diff --json", names, "|")
        for (i = 1; i <= 4; ++i) printf "%-14s %8.3f s\n", names[i], best[names[i]]
        printf "dump --json / dump: %.2fx (median of rounds; range %.2f-%.2f)\n", median(rd, k), rd[1], rd[k]
        printf "diff --json / diff: %.2fx (median of rounds; range %.2f-%.2f)\n", median(rf, k), rf[1], rf[k]
    }' "$tmp"/round*.csv

#!/usr/bin/env bash
# Times `mpt root` on N generated pairs (default 1,000,000) beside the time to merely read
# the same file, and reports its peak RSS.
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
/usr/bin/time -f '%e %M' -o "$tmp/root" "$mpt" root "$data" >"$tmp/out"

read -r read_s _ <"$tmp/read"
read -r root_s root_kb <"$tmp/root"
size_mb=$(($(stat -c %s "$data") / 1000000))
echo "data:      $data ($n pairs, $size_mb MB)"
echo "root:      $(cat "$tmp/out")"
echo "read file: ${read_s} s (cat > /dev/null)"
echo "mpt root:  ${root_s} s, peak RSS $((root_kb / 1024)) MiB"

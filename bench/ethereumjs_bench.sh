#!/usr/bin/env bash
# Times `mpt root` against @ethereumjs/mpt on the same N generated pairs (default 100,000):
# both compute the root of the same file, the roots must be equal, and the ratio of the
# two times is printed (mpt's goal: at least 100x).
#
#   bench/ethereumjs_bench.sh [N]
#
# @ethereumjs/mpt (and @ethereumjs/util for hex decoding) are installed from npm into a
# temporary folder that is removed afterwards; node and npm must be installed. The
# ethereumjs side reads the JSON, inserts every pair with `await trie.put(hexToBytes(k),
# hexToBytes(v))` into a fresh in-memory trie, and prints the root. Both times are whole
# processes (start, read, parse, hash, print), one run each, page cache warm. Builds first
# through scripts/setup.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-100000}
case $n in
'' | *[!0-9]*)
    echo "ethereumjs_bench: error: N must be a non-negative integer, got '$n'" >&2
    exit 2
    ;;
esac
for tool in node npm; do
    command -v "$tool" >/dev/null || {
        echo "ethereumjs_bench: error: $tool not found (install Node.js 20 or later)" >&2
        exit 2
    }
done

# shellcheck source=bench/dataset.sh
. "$root/bench/dataset.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "installing @ethereumjs/mpt into $tmp"
(cd "$tmp" && npm init -y >/dev/null &&
    npm install --no-audit --no-fund --loglevel=error @ethereumjs/mpt@10 @ethereumjs/util@10 >/dev/null) || {
    echo "ethereumjs_bench: error: npm install @ethereumjs/mpt failed" >&2
    exit 2
}
version=$(node -p "require('$tmp/node_modules/@ethereumjs/mpt/package.json').version")

cat >"$tmp/root.mjs" <<'EOF'
// The root of a {"0x..": "0x.."} file by @ethereumjs/mpt: every pair inserted in file order.
import { readFileSync } from 'node:fs'
import { createMPT } from '@ethereumjs/mpt'
import { bytesToHex, hexToBytes } from '@ethereumjs/util'

const doc = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const trie = await createMPT()
for (const [k, v] of Object.entries(doc)) {
    await trie.put(hexToBytes(k), hexToBytes(v))
}
console.log(bytesToHex(trie.root()))
EOF

cat "$data" >/dev/null # warm the page cache
now() { date +%s.%N; }
start=$(now)
"$mpt" root "$data" >"$tmp/mpt.out"
mpt_s=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')
start=$(now)
node "$tmp/root.mjs" "$data" >"$tmp/ejs.out"
ejs_s=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')

mpt_root=$(cat "$tmp/mpt.out")
ejs_root=$(cat "$tmp/ejs.out")
size_mb=$(($(stat -c %s "$data") / 1000000))
echo "data:             $data ($n pairs, $size_mb MB)"
echo "mpt root:         $mpt_root"
echo "@ethereumjs/mpt:  $ejs_root (version $version, node $(node --version))"
if [ "$mpt_root" != "$ejs_root" ]; then
    echo "ethereumjs_bench: error: the roots differ" >&2
    exit 1
fi
printf 'mpt:              %.3f s\n' "$mpt_s"
printf '@ethereumjs/mpt:  %.3f s\n' "$ejs_s"
awk -v e="$ejs_s" -v m="$mpt_s" 'BEGIN { printf "ratio:            %.1fx (goal: at least 100x)\n", e / m }'

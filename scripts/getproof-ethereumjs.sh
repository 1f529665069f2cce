#!/usr/bin/env bash
# The eth_getProof answers of `mpt proof --account` over the ethereum/tests BlockchainTests
# postStates (made and checked against the fixtures by scripts/getproof_fixture_docs.py, as
# scripts/getproof-roundtrip.sh does), verified by another implementation: @ethereumjs/mpt's
# verifyMerkleProof, under the stateRoot of each test's last block header.
#
#   scripts/getproof-ethereumjs.sh DIR [BUILD_DIR]   (DIR: an ethereum/tests checkout;
#                                                     BUILD_DIR defaults to build/)
#
# For each answer: verifyMerkleProof(address, accountProof, {root: stateRoot, useKeyHashing})
# must give the RLP of [nonce, balance, storageHash, codeHash] of the answer, or null for an
# absent account (whose answer must then be nonce and balance 0x0 and zero hashes); each
# storage proof, under the answer's storageHash, must give RLP(value), or null for 0x0; an
# account without storage (the empty root) must answer each slot 0x0 without nodes. Then one
# changed hex digit in the middle account proof node must make verifyMerkleProof throw or
# give another value, and so must one in a storage proof node where the answer has one.
#
# @ethereumjs/mpt, @ethereumjs/rlp and @ethereumjs/util (version 10) are installed with npm
# into a temporary folder outside the repository, removed afterwards; node and npm must be
# installed (Debian: nodejs npm). Prints failures and "N passed, M failed". Exit 0 when all
# pass, 1 when a check fails, 2 when DIR, node, npm, python3 or the binary is missing, npm
# cannot install the packages, or no fixture is found.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "getproof-ethereumjs: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/getproof-ethereumjs.sh DIR [BUILD_DIR]"
dir=$1
build=${2:-$root/build}
mpt=$build/mpt
[ -d "$dir/BlockchainTests/ValidBlocks" ] || die "$dir/BlockchainTests/ValidBlocks: no such folder (DIR must be an ethereum/tests checkout)"
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
for tool in python3 node npm; do
    command -v "$tool" >/dev/null || die "$tool not found (Debian: apt-get install nodejs npm python3)"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/js" "$tmp/out"

npm install --prefix "$tmp/js" --no-audit --no-fund --loglevel=error --no-save \
    @ethereumjs/mpt@10 @ethereumjs/rlp@10 @ethereumjs/util@10 >"$tmp/npm.log" 2>&1 ||
    die "npm install @ethereumjs/mpt failed: $(tail -3 "$tmp/npm.log")"
version=$(node -p "require('$tmp/js/node_modules/@ethereumjs/mpt/package.json').version")
echo "getproof-ethereumjs: @ethereumjs/mpt $version, node $(node --version)"

python3 "$root/scripts/getproof_fixture_docs.py" "$dir/BlockchainTests" "$mpt" "$tmp/out"
docs_rc=$?
[ $docs_rc -le 1 ] || die "no answers were made (exit $docs_rc)"

cat >"$tmp/js/verify.mjs" <<'JS'
// Verifies each answer of OUT/index.tsv with @ethereumjs/mpt (see getproof-ethereumjs.sh).
import { readFileSync } from 'node:fs'
import { verifyMerkleProof } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bytesToBigInt, bytesToHex, hexToBytes } from '@ethereumjs/util'

const out = process.argv[2]
const EMPTY_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'
const ZERO = '0x' + '0'.repeat(64)
let passed = 0
let failed = 0
const fail = (where, why) => {
  failed++
  console.log(`FAIL ${where}: ${why}`)
}
const word = (quantity) => hexToBytes('0x' + BigInt(quantity).toString(16).padStart(64, '0'))
const changed = (proof) => {
  const j = Math.floor(proof.length / 2)
  const node = proof[j]
  const at = Math.floor(node.length / 2)
  const d = '0123456789abcdef'
  const c = proof.slice()
  c[j] = node.slice(0, at) + d[(d.indexOf(node[at]) + 1) % 16] + node.slice(at + 1)
  return c
}
const prove = (key, proof, root) =>
  verifyMerkleProof(key, proof.map(hexToBytes), { root: hexToBytes(root), useKeyHashing: true })
// True when the changed proof is refused: an exception, or another value than the true one.
const refused = async (key, proof, root, truth) => {
  try {
    const v = await prove(key, proof, root)
    return (v === null ? 'null' : bytesToHex(v)) !== truth
  } catch {
    return true
  }
}

for (const line of readFileSync(`${out}/index.tsv`, 'utf8').split('\n')) {
  if (line === '') continue
  const [name, stateRoot, presence, test] = line.split('\t')
  const doc = JSON.parse(readFileSync(`${out}/docs/${name}`, 'utf8'))
  const where = `${test} ${doc.address}`
  const address = hexToBytes(doc.address)
  let account
  try {
    account = await prove(address, doc.accountProof, stateRoot)
  } catch (e) {
    fail(where, `account proof refused: ${e.message}`)
    continue
  }
  let ok = true
  if (account === null) {
    ok = presence === 'absent' && doc.nonce === '0x0' && doc.balance === '0x0' &&
      doc.codeHash === ZERO && doc.storageHash === ZERO
    if (!ok) fail(where, `proven absent, answered ${presence} ${doc.nonce} ${doc.balance}`)
  } else {
    const [nonce, balance, storageRoot, codeHash] = RLP.decode(account)
    ok = presence === 'present' && bytesToBigInt(nonce) === BigInt(doc.nonce) &&
      bytesToBigInt(balance) === BigInt(doc.balance) &&
      bytesToHex(storageRoot) === doc.storageHash && bytesToHex(codeHash) === doc.codeHash
    if (!ok) fail(where, 'the proven account differs from the answer')
  }
  for (const s of doc.storageProof) {
    if (!ok) break
    if (doc.storageHash === EMPTY_ROOT || doc.storageHash === ZERO) {
      ok = s.value === '0x0' && s.proof.length === 0
      if (!ok) fail(where, `slot ${s.key}: a value or nodes without storage`)
      continue
    }
    try {
      const v = await prove(word(s.key), s.proof, doc.storageHash)
      const value = v === null ? 0n : bytesToBigInt(RLP.decode(v))
      ok = value === BigInt(s.value)
      if (!ok) fail(where, `slot ${s.key}: proven ${value}, answered ${s.value}`)
    } catch (e) {
      ok = false
      fail(where, `slot ${s.key}: storage proof refused: ${e.message}`)
    }
  }
  if (!ok) continue
  passed++
  const truth = account === null ? 'null' : bytesToHex(account)
  if (await refused(address, changed(doc.accountProof), stateRoot, truth)) {
    passed++
  } else {
    fail(where, 'a changed account proof node was accepted')
  }
  const s = doc.storageProof.find((x) => x.proof.length > 0)
  if (s !== undefined) {
    const v = await prove(word(s.key), s.proof, doc.storageHash)
    const t = v === null ? 'null' : bytesToHex(v)
    if (await refused(word(s.key), changed(s.proof), doc.storageHash, t)) {
      passed++
    } else {
      fail(where, `slot ${s.key}: a changed storage proof node was accepted`)
    }
  }
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
JS

node "$tmp/js/verify.mjs" "$tmp/out"
rc=$?
if [ $docs_rc -ne 0 ]; then
    echo "getproof-ethereumjs: the answers differ from the fixtures (above)" >&2
    exit 1
fi
exit $rc

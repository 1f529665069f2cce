// The ethereum/tests BlockchainTests state roots by @ethereumjs/mpt, for bench/state_bench.sh:
// the same conversions and checks as `mpt root --vectors DIR`. Every *.json under DIR is read;
// per test, the state root of pre must be genesisBlockHeader.stateRoot, and that of postState
// the stateRoot of the last block with a blockHeader. A state root: each account's storage
// trie (keccak256 of the slot left-padded to 32 bytes -> rlp(value without leading zeros),
// zero values skipped), then the account trie (keccak256(address) -> rlp([nonce, balance,
// storageRoot, keccak256(code)])), every put awaited as the library requires.
//
//   node bench/state_roots.mjs DIR      (prints "N passed, M failed", exit 1 on a failure)
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createMPT } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bigIntToUnpaddedBytes, bytesToHex, hexToBytes, setLengthLeft, unpadBytes } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'

function jsonFiles(dir) {
    const out = []
    for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name)
        if (e.isDirectory()) out.push(...jsonFiles(p))
        else if (e.name.endsWith('.json')) out.push(p)
    }
    return out.sort()
}

async function stateRoot(alloc) {
    const state = await createMPT({ useKeyHashing: true })
    for (const [address, account] of Object.entries(alloc)) {
        const storage = await createMPT({ useKeyHashing: true })
        for (const [slot, value] of Object.entries(account.storage ?? {})) {
            const v = unpadBytes(hexToBytes(value))
            if (v.length === 0) continue
            await storage.put(setLengthLeft(hexToBytes(slot), 32), RLP.encode(v))
        }
        const rlp = RLP.encode([
            bigIntToUnpaddedBytes(BigInt(account.nonce ?? 0)),
            bigIntToUnpaddedBytes(BigInt(account.balance)),
            storage.root(),
            keccak_256(hexToBytes(account.code ?? '0x')),
        ])
        await state.put(hexToBytes(address), rlp)
    }
    return bytesToHex(state.root())
}

let passed = 0
let failed = 0
for (const file of jsonFiles(process.argv[2])) {
    const doc = JSON.parse(readFileSync(file, 'utf8'))
    for (const [name, t] of Object.entries(doc)) {
        const check = async (what, alloc, expected) => {
            const root = await stateRoot(alloc)
            if (root === expected) {
                passed++
            } else {
                failed++
                console.log(`FAIL ${file}:${name}:${what}: state root ${root}, expected ${expected}`)
            }
        }
        await check('pre', t.pre, t.genesisBlockHeader.stateRoot)
        if (t.postState) {
            const headers = t.blocks.filter((b) => b.blockHeader)
            const last = headers.length ? headers[headers.length - 1].blockHeader : t.genesisBlockHeader
            await check('postState', t.postState, last.stateRoot)
        }
    }
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)

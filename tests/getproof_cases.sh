# Cases of `mpt proof --account` (eth_getProof answers from a state file) and of several keys
# per call (`get`/`proof` KEY..., --keys FILE|-), for cli_test.sh; sourced after
# cli_state_cases.sh. The state is fixtures/state_alloc.json, root $S; its accounts:
#   0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b  balance 0x16345785d8a0000, no code, no storage
#   0x000f3df6d732807ef1319fb7b8bb8522d0beac02  nonce 1, code, slots 0x3b6 and 0x2 (0x1 zero)
#   0x00000000000000000000000000000000000000aa  nonce 2^64-1, slot 0x0 = 0x1
GP_S=0x0e2696d33d4f6ee17fa14c7517560db2eaf621f9c39181b095b8606325452c59
GP_Z=0x0000000000000000000000000000000000000000000000000000000000000000
GP_EMPTY_ROOT=0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421
GP_EMPTY_CODE=0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470
GP_A1=0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b
GP_A2=0x000F3DF6D732807EF1319FB7B8BB8522D0BEAC02
GP_A3=0x00000000000000000000000000000000000000aa
GP_NONE=0x00000000000000000000000000000000000000bb
"$MPT" build --state "$FIX/state_alloc.json" -o "$tmp/gp_state.db" >/dev/null || echo "FAIL build --state for getproof_cases"

# The answer's fields, in go-ethereum's order and encodings.
expect "proof --account: no storage, field order" 0 "^\{\"address\":\"$GP_A1\",\"accountProof\":\[\"0x[0-9a-f]+\"(,\"0x[0-9a-f]+\")*\],\"balance\":\"0x16345785d8a0000\",\"codeHash\":\"$GP_EMPTY_CODE\",\"nonce\":\"0x0\",\"storageHash\":\"$GP_EMPTY_ROOT\",\"storageProof\":\[\]\}\$" '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A1"
expect "proof --account: address in lower case, no 0x given" 0 '^\{"address":"0x000f3df6d732807ef1319fb7b8bb8522d0beac02","accountProof":\[.*"nonce":"0x1",' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account 000F3DF6D732807EF1319FB7B8BB8522D0BEAC02
expect "proof --account: a nonce of 64 bits, a balance of 70" 0 '"balance":"0x3635c9adc5dea00000",.*"nonce":"0xffffffffffffffff",' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A3"
expect "proof --account: slot values, the key as a quantity" 0 '"storageProof":\[\{"key":"0x3b6","value":"0x3b6","proof":\["0x[0-9a-f]+".*\]\},\{"key":"0x2","value":"0xff00000000000000000000000000000000000000000000000000000000000001","proof":\[' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A2" --slot 0x0003B6 --slot 02
expect "proof --account: a 32-byte key echoed whole, in lower case" 0 '"storageProof":\[\{"key":"0x00000000000000000000000000000000000000000000000000000000000003b6","value":"0x3b6",' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A2" --slot 0X00000000000000000000000000000000000000000000000000000000000003B6
expect "proof --account: an absent slot is 0x0 with a proof" 0 '"storageProof":\[\{"key":"0x1","value":"0x0","proof":\["0x[0-9a-f]+' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A2" --slot 0x01
expect "proof --account: slot 0x (empty) is slot 0" 0 '"storageProof":\[\{"key":"0x0","value":"0x1","proof":\["0x' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A3" --slot 0x
expect "proof --account: no storage, a slot has no nodes" 0 '"storageHash":"0x56e81f17[0-9a-f]{56}","storageProof":\[\{"key":"0x5","value":"0x0","proof":\[\]\}\]\}$' '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A1" --slot 5
expect "proof --account: absent account" 0 "^\{\"address\":\"$GP_NONE\",\"accountProof\":\[\"0x[0-9a-f]+\"(,\"0x[0-9a-f]+\")*\],\"balance\":\"0x0\",\"codeHash\":\"$GP_Z\",\"nonce\":\"0x0\",\"storageHash\":\"$GP_Z\",\"storageProof\":\[\{\"key\":\"0x1\",\"value\":\"0x0\",\"proof\":\[\]\}\]\}\$" '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_NONE" --slot 1

# Round trips through proof --verify against the state root; one changed digit fails.
"$MPT" proof "$tmp/gp_state.db" --account "$GP_A2" --slot 0x3b6 --slot 0x1 --slot 0x2 >"$tmp/gp_a2.json"
expect "proof --account, then --verify --root" 0 "^valid: account 0x000f3df6d732807ef1319fb7b8bb8522d0beac02 present, 3 storage proofs, under the trusted root $GP_S\$" '^$' -- "$MPT" proof --verify "$tmp/gp_a2.json" --root "$GP_S"
"$MPT" proof "$tmp/gp_state.db" --account "$GP_NONE" --slot 0x3b6 >"$tmp/gp_none.json"
expect "proof --account absent, then --verify --root" 0 "^valid: account $GP_NONE absent, 1 storage proof, under the trusted root $GP_S\$" '^$' -- "$MPT" proof --verify "$tmp/gp_none.json" --root "$GP_S"
sed 's/"value":"0x3b6"/"value":"0x3b7"/' "$tmp/gp_a2.json" >"$tmp/gp_a2_value.json"
expect "proof --account, a changed value fails" 1 '^invalid: storage proof 1 \(key 0x3b6\): value mismatch$' '^$' -- "$MPT" proof --verify "$tmp/gp_a2_value.json" --root "$GP_S"
sed 's/"nonce":"0x1"/"nonce":"0x2"/' "$tmp/gp_a2.json" >"$tmp/gp_a2_nonce.json"
expect "proof --account, a changed nonce fails" 1 '^invalid: account proof: the proven account differs in nonce' '^$' -- "$MPT" proof --verify "$tmp/gp_a2_nonce.json" --root "$GP_S"

# Several accounts: one answer each, in order, one a line; --json one array.
expect "proof --account twice: two lines" 0 "^\{\"address\":\"$GP_NONE\",.*\"storageProof\":\[\{\"key\":\"0x1\"" '^$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A1" --account "$GP_NONE" --slot 1
"$MPT" proof "$tmp/gp_state.db" --account "$GP_A1" "$GP_A3" "$GP_NONE" --slot 0 >"$tmp/gp_three.jsonl"
"$MPT" proof "$tmp/gp_state.db" --account "$GP_A3" --slot 0 >"$tmp/gp_a3.json"
expect "proof --account, three: three lines" 0 '^3$' '^$' -- sh -c "wc -l < '$tmp/gp_three.jsonl' | tr -d ' '"
expect "proof --account, three: the second is the single answer" 0 '^same$' '^$' -- sh -c "sed -n 2p '$tmp/gp_three.jsonl' | cmp -s - '$tmp/gp_a3.json' && echo same"
expect "proof --account --json of two: an array" 0 "^\[\{\"address\":\"$GP_A1\",.*\},\$" '^$' -- "$MPT" proof --json "$tmp/gp_state.db" --account "$GP_A1" "$GP_NONE"
expect "proof --account --json of two: the array closes" 0 "^\{\"address\":\"$GP_NONE\",.*\}\]\$" '^$' -- "$MPT" proof --json "$tmp/gp_state.db" --account "$GP_A1" "$GP_NONE"
expect "proof --account --json of one: the answer alone" 0 "^\{\"address\":\"$GP_A1\",.*\]\}\$" '^$' -- "$MPT" proof --json "$tmp/gp_state.db" --account "$GP_A1"

# Bad arguments: one line, exit 2; the wrong kind of trie, exit 3.
expect "proof --account: not 20 bytes" 2 '^$' '^mpt: error: bad hex: address 0x00: 1 bytes, want 20$' -- "$MPT" proof "$tmp/gp_state.db" --account 0x00
expect "proof --account: a 33-byte slot" 2 '^$' '^mpt: error: bad hex: slot 0x0{66}: a storage key longer than 32 bytes$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A1" --slot "0x$(printf '%066d' 0)"
expect "proof --account: a slot not hex" 2 '^$' '^mpt: error: bad hex: slot 0xzz: not a hex digit$' -- "$MPT" proof "$tmp/gp_state.db" --account "$GP_A1" --slot 0xzz
expect "proof --slot without --account" 2 '^$' '^mpt: error: usage: proof: --slot goes with --account$' -- "$MPT" proof "$tmp/gp_state.db" 0x01 --slot 1
expect "proof KEY and --account" 2 '^$' '^mpt: error: usage: proof: give KEY or --account ADDR, not both$' -- "$MPT" proof "$tmp/gp_state.db" 0x01 --account "$GP_A1"
expect "proof --account --key-hashed" 2 '^$' '^mpt: error: usage: proof: --key-hashed does not go with --account' -- "$MPT" proof "$tmp/gp_state.db" --key-hashed --account "$GP_A1"
expect "proof --account --range" 2 '^$' '^mpt: error: usage: proof: --range and its flags do not go with --account$' -- "$MPT" proof "$tmp/gp_state.db" --range 0x00 --account "$GP_A1"
"$MPT" build "$FIX/dogs.json" -o "$tmp/gp_plain.db" >/dev/null
expect "proof --account on a plain trie" 3 '^$' '^mpt: error: .*gp_plain\.db: trie main is plain, not an account trie' -- "$MPT" proof "$tmp/gp_plain.db" --account "$GP_A1"
expect "proof --account: no such file" 2 '^$' 'no-such\.db' -- "$MPT" proof "$tmp/no-such.db" --account "$GP_A1"

# Several keys per call: get and proof KEY..., --keys FILE|-.
GP_DOG='{"root":"0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3","key":"0x646f67","value":"0x7075707079","proof":\["0xe583'
"$MPT" proof "$tmp/gp_plain.db" doge >"$tmp/gp_doge.json"
"$MPT" proof "$tmp/gp_plain.db" dog doge nope >"$tmp/gp_keys.jsonl"
expect "proof of three keys: three lines" 0 '^3$' '^$' -- sh -c "wc -l < '$tmp/gp_keys.jsonl' | tr -d ' '"
expect "proof of three keys: the second is the single answer" 0 '^same$' '^$' -- sh -c "sed -n 2p '$tmp/gp_keys.jsonl' | cmp -s - '$tmp/gp_doge.json' && echo same"
expect "proof of three keys: in order" 0 "^$GP_DOG" '^$' -- sh -c "head -1 '$tmp/gp_keys.jsonl'"
printf 'dog\ndoge\nnope\n' >"$tmp/gp_keys.txt"
expect "proof --keys FILE: as KEY..." 0 '^same$' '^$' -- sh -c "'$MPT' proof '$tmp/gp_plain.db' --keys '$tmp/gp_keys.txt' | cmp -s - '$tmp/gp_keys.jsonl' && echo same"
expect "proof --keys - (CRLF lines)" 0 '^same$' '^$' -- sh -c "printf 'dog\r\ndoge\r\nnope\r\n' | '$MPT' proof '$tmp/gp_plain.db' --keys - | cmp -s - '$tmp/gp_keys.jsonl' && echo same"
expect "proof KEY then --keys: KEY first" 0 "^$GP_DOG" '^$' -- sh -c "printf 'nope\n' | '$MPT' proof '$tmp/gp_plain.db' dog --keys - | head -1"
expect "proof --json of keys: an array, one document a line" 0 "^\[$GP_DOG" '^$' -- "$MPT" proof --json "$tmp/gp_plain.db" dog nope
expect "proof --json of keys: valid JSON of two" 0 '^2$' '^$' -- sh -c "'$MPT' proof --json '$tmp/gp_plain.db' dog nope | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'"
expect "proof --keys of an empty file: --json []" 0 '^\[\]$' '^$' -- sh -c "'$MPT' proof --json '$tmp/gp_plain.db' --keys - </dev/null"
expect "proof one KEY: --json changes nothing" 0 '^same$' '^$' -- sh -c "'$MPT' proof --json '$tmp/gp_plain.db' doge | cmp -s - '$tmp/gp_doge.json' && echo same"
expect "proof --keys: an empty line" 2 '^$' '^mpt: error: bad input: -: line 2: an empty line, not a key$' -- sh -c "printf 'dog\n\nnope\n' | '$MPT' proof '$tmp/gp_plain.db' --keys - >/dev/null"
expect "proof --keys: a bad key names its line" 2 '^$' "^mpt: error: bad hex: $tmp/gp_bad_keys.txt: line 2: key 0xzz" -- sh -c "printf 'dog\n0xzz\n' >'$tmp/gp_bad_keys.txt'; '$MPT' proof '$tmp/gp_plain.db' --keys '$tmp/gp_bad_keys.txt' >/dev/null"
expect "proof --keys: no such file" 2 '^$' "^mpt: error: bad input: $tmp/gp_no_keys.txt: No such file" -- "$MPT" proof "$tmp/gp_plain.db" --keys "$tmp/gp_no_keys.txt"
expect "get of three keys: a line each, empty when absent" 1 '^0x7075707079$' '^$' -- "$MPT" get "$tmp/gp_plain.db" dog nope doe
expect "get of three keys: the lines in order" 0 '^0x7075707079,,0x7265696e64656572$' '^$' -- sh -c "'$MPT' get '$tmp/gp_plain.db' dog nope doe | paste -sd, -"
expect "get of two present keys: exit 0" 0 '^0x7265696e64656572$' '^$' -- "$MPT" get "$tmp/gp_plain.db" dog doe
expect "get --keys -: as KEY..." 0 '^0x7075707079,,0x7265696e64656572$' '^$' -- sh -c "printf 'dog\nnope\ndoe\n' | '$MPT' get '$tmp/gp_plain.db' --keys - | paste -sd, -"
expect "get --keys -: exit 1 when one is absent" 1 '^$' '^$' -- sh -c "printf 'dog\nnope\n' | '$MPT' get '$tmp/gp_plain.db' --keys - >/dev/null"
expect "get --json of keys: an array" 1 '^\[\{"key":"0x646f67","value":"0x7075707079","trie":"main"\},$' '^$' -- "$MPT" get --json "$tmp/gp_plain.db" dog nope
expect "get --json of keys: null when absent, the array closes" 1 '^\{"key":"0x6e6f7065","value":null,"trie":"main"\}\]$' '^$' -- "$MPT" get --json "$tmp/gp_plain.db" dog nope
expect "get one KEY --json: the object alone" 0 '^\{"key":"0x646f67","value":"0x7075707079","trie":"main"\}$' '^$' -- "$MPT" get --json "$tmp/gp_plain.db" dog
expect "get --keys: an empty line" 2 '^$' '^mpt: error: bad input: -: line 1: an empty line, not a key$' -- sh -c "printf '\n' | '$MPT' get '$tmp/gp_plain.db' --keys -"
expect "get --keys and --account" 2 '^$' '^mpt: error: usage: get: give KEY or --account ADDR, not both$' -- "$MPT" get "$tmp/gp_state.db" --keys - --account "$GP_A1"

# root --vectors on BlockchainTests: each block with an rlp and a blockHeader has its
# transactions and withdrawals roots checked (case "file:test:block N"). The block is
# cli_cases.sh's $tmp/block.hex (2 transactions, 1 withdrawal; roots $tx_root, $w_root), the
# state cli_state_cases.sh's ($S, $alloc).
gp_block=$(cat "$tmp/block.hex")
gp_bc() {  # TRANSACTIONS_TRIE WITHDRAWALS_MEMBER: a test whose one block is $gp_block
    printf '{"t": {"blocks": [{"blockHeader": {"stateRoot": "%s", "transactionsTrie": "%s"%s}, "rlp": "%s"}],\n "genesisBlockHeader": {"stateRoot": "%s"}, "pre": %s, "postState": %s}}\n' \
        "$S" "$1" "$2" "$gp_block" "$S" "$alloc" "$alloc"
}
gp_bc "$tx_root" ", \"withdrawalsRoot\": \"$w_root\"" >"$tmp/gp_bc_block.json"
expect "vectors: a block's roots" 0 '^3 passed, 0 failed$' '^$' -- "$MPT" root --vectors "$tmp/gp_bc_block.json"
expect "vectors: the block case named" 0 '^ok   gp_bc_block.json:t:block 0$' '^$' -- "$MPT" root --vectors "$tmp/gp_bc_block.json"
gp_bc "$w_root" ", \"withdrawalsRoot\": \"$w_root\"" >"$tmp/gp_bc_tx.json"
expect "vectors: another transactionsTrie" 1 "^FAIL gp_bc_tx.json:t:block 0: header transactionsRoot $tx_root, the fixture's transactionsTrie $w_root\$" '^$' -- "$MPT" root --vectors "$tmp/gp_bc_tx.json"
gp_bc "$tx_root" "" >"$tmp/gp_bc_no_w.json"
expect "vectors: a header without withdrawalsRoot in the fixture" 1 "^FAIL gp_bc_no_w.json:t:block 0: header withdrawalsRoot $w_root, the fixture's none\$" '^$' -- "$MPT" root --vectors "$tmp/gp_bc_no_w.json"
sed 's/"rlp": "0x/"rlp": "0xzz/' "$tmp/gp_bc_block.json" >"$tmp/gp_bc_bad_rlp.json"
expect "vectors: a block whose rlp is not hex" 1 '^FAIL gp_bc_bad_rlp.json:t:block 0: rlp: ' '^$' -- "$MPT" root --vectors "$tmp/gp_bc_bad_rlp.json"
expect "vectors: counts with the block" 1 '^2 passed, 1 failed$' '^$' -- "$MPT" root --vectors "$tmp/gp_bc_bad_rlp.json"

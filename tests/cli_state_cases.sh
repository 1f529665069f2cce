# Cases of `mpt root --state` and of BlockchainTests under `mpt root --vectors`, for
# cli_test.sh; sourced after cli_cases.sh. The fixtures/state_* files hold one state in five
# shapes; its root is checked by a second route in tests/state_root_test.cpp.
S=0x0e2696d33d4f6ee17fa14c7517560db2eaf621f9c39181b095b8606325452c59

for f in state_alloc.json state_genesis.json state_geth_dump.json state_geth_dump_lines.jsonl state_reth_dump.jsonl; do
    expect "root --state $f" 0 "^$S\$" '^$' -- "$MPT" root --state "$FIX/$f"
done
expect "root --state from stdin" 0 "^$S\$" '^$' -- sh -c "'$MPT' root --state - < '$FIX/state_genesis.json'"
expect "root --state --json names the shape" 0 "^\{\"root\":\"$S\",\"shape\":\"genesis\",\"accounts\":3,\"slots\":3,\"tries\":3\}\$" '^$' -- "$MPT" root --json --state "$FIX/state_genesis.json"
size=$(wc -c <"$FIX/state_genesis.json")
expect "root --state --json --stats: the bytes of the document" 0 "^\\{\"root\":\"$S\",\"shape\":\"genesis\",.*,\"stats\":\\{\"inputBytes\":$size,\"threads\":[0-9]+,\"keccak\":\"[a-z0-9]+\",\"hashes\":[1-9][0-9]*," '^mpt: stats: ' -- "$MPT" root --json --stats --state "$FIX/state_genesis.json"
expect "root --state --json of a dump: its root matched" 0 '"shape":"geth-dump",.*"claimedRoot":"0x0e2696d3.*","matched":true' '^$' -- "$MPT" root --json --state "$FIX/state_geth_dump.json"
expect "root --state of several: one line each" 0 "^$S  $FIX/state_reth_dump.jsonl\$" '^$' -- "$MPT" root --state "$FIX/state_alloc.json" "$FIX/state_reth_dump.jsonl"
expect "root --state --threads 1" 0 "^$S\$" '^$' -- "$MPT" root --threads 1 --state "$FIX/state_geth_dump_lines.jsonl"

# A state document is told by its shape where a key/value file goes (root, build, diff):
# --state is needed only on stdin, where nothing can be looked at twice.
for f in state_alloc.json state_genesis.json state_geth_dump.json state_geth_dump_lines.jsonl state_reth_dump.jsonl; do
    expect "root $f, no --state" 0 "^$S\$" '^$' -- "$MPT" root "$FIX/$f"
done
expect "root DOC --json, no --state: the shape" 0 "^\{\"root\":\"$S\",\"shape\":\"genesis\"," '^$' -- "$MPT" root --json "$FIX/state_genesis.json"
expect "root of a state document and a key/value file" 0 "^$S  $FIX/state_alloc.json\$" '^$' -- "$MPT" root "$FIX/state_alloc.json" "$FIX/dogs.json"
expect "build DOC, no --state: a state file" 0 "^$S\$" '^$' -- "$MPT" build "$FIX/state_geth_dump.json" -o "$tmp/shape_state.db"
expect "build DOC, no --state: the account trie is a state trie" 0 "^main state $S " '^$' -- sh -c "'$MPT' tries '$tmp/shape_state.db' | grep '^main'"
expect "diff of two state documents, no --state" 1 '^~ 0x2000000000000000000000000000000000000002 nonce 0x0 -> 0x1' '^$' -- "$MPT" diff "$FIX/state_a.json" "$FIX/state_b.json"
expect "root --secure DOC: key/value input, insisted on" 2 '^$' 'value is an object, not a string or null \(a state document or a test file\? --state and --vectors read them\)$' -- "$MPT" root --secure "$FIX/state_alloc.json"
expect "root of a state document on stdin: --state is needed" 2 '^$' 'a state document or a test file\? --state and --vectors read them' -- sh -c "'$MPT' root - < '$FIX/state_genesis.json'"
expect "root of a test file: not a state document" 2 '^$' 'a state document or a test file\? --state and --vectors read them' -- "$MPT" root "$FIX/trie_vectors.json"

# A dump whose own root is not its accounts' root: exit 1 with the computed root.
sed 's/"root": "0e26/"root": "1e26/' "$FIX/state_geth_dump.json" >"$tmp/dump_wrong_root.json"
expect "root --state of a dump with a wrong root" 1 "^$S\$" '^mpt: root mismatch: .*dump_wrong_root.json: the document gives root 0x1e2696d3.*, computed 0x0e2696d3' -- "$MPT" root --state "$tmp/dump_wrong_root.json"
expect "root --state --json of a dump with a wrong root" 1 '"matched":false' '.*' -- "$MPT" root --json --state "$tmp/dump_wrong_root.json"

# Bad state documents: one line naming the place, the account and the field; exit 2.
printf '{\n  "0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b": {"balance": "0x1g"}\n}\n' >"$tmp/st_bad_balance.json"
expect "state: bad balance" 2 '^$' '^mpt: error: bad input: .*st_bad_balance.json: line 2, column 61: account 0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b: field "balance": not a hex digit$' -- "$MPT" root --state "$tmp/st_bad_balance.json"
printf '{"alloc": {"a94f5374fce5edbc8e2a8697c15331677e6ebf0b": {"balance": "1", "code": "0x123"}}}' >"$tmp/st_odd_code.json"
expect "state: odd code" 2 '^$' 'field "code": odd number of hex digits$' -- "$MPT" root --state "$tmp/st_odd_code.json"
printf '{"a94f5374fce5edbc8e2a8697c15331677e6ebf0b": {"balance": "1", "storage": {"0x%066d": "0x01"}}}' 0 >"$tmp/st_long_slot.json"
expect "state: 33-byte slot" 2 '^$' 'field "storage": key 0x0+: more than 64 hex digits$' -- "$MPT" root --state "$tmp/st_long_slot.json"
printf '{"a94f5374fce5edbc8e2a8697c15331677e6ebf0b": {"nonce": "1"}}' >"$tmp/st_no_balance.json"
expect "state: no balance" 2 '^$' 'field "balance": missing' -- "$MPT" root --state "$tmp/st_no_balance.json"
printf '{"config": {}}' >"$tmp/st_no_alloc.json"
expect "state: neither alloc nor addresses" 2 '^$' 'member "config" is not an address' -- "$MPT" root --state "$tmp/st_no_alloc.json"
expect "state: not JSON" 2 '^$' '^mpt: error: malformed JSON: .*trunc.json: line 2' -- "$MPT" root --state "$tmp/trunc.json"
expect "state: missing file" 2 '^$' 'no-such-state.json: No such file' -- "$MPT" root --state "$tmp/no-such-state.json"
expect "state: a missing file among several" 2 "^$S  $FIX/state_alloc.json\$" 'no-such-state.json: No such file' -- "$MPT" root --state "$tmp/no-such-state.json" "$FIX/state_alloc.json"
expect "state: --secure" 2 '^$' '^mpt: error: usage: root: --secure applies to key/value input' -- "$MPT" root --secure --state "$FIX/state_alloc.json"
# --state is a flag: the documents are operands, before or after it, with other options
# between.
expect "root --state --threads 1 DOC" 0 '^0x0e2696d3' '^$' -- "$MPT" root --state --threads 1 "$FIX/state_alloc.json"
expect "root DOC --state" 0 '^0x0e2696d3' '^$' -- "$MPT" root "$FIX/state_alloc.json" --state
expect "root --state without a document" 2 '^$' '^mpt: error: usage: root: --state needs INPUT \(a state document, or - for stdin\)$' -- "$MPT" root --state
expect "root --state with --vectors" 2 '^$' '^mpt: error: usage: root: --state does not go with --vectors$' -- "$MPT" root --state --vectors "$FIX/trie_vectors.json"
expect "state and INPUT: every input a state document" 2 "^0x0e2696d3[0-9a-f]{56}  .*state_alloc.json\$" '^mpt: error: bad input: .*dogs.json: line 2, column 3: member "dogglesworth" is not an address' -- "$MPT" root "$FIX/dogs.json" --state "$FIX/state_alloc.json"

# Several key/value inputs: one line each, sha256sum's layout; --json an array.
expect "root of two k/v files" 0 "^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3  $FIX/dogs.json\$" '^$' -- "$MPT" root "$FIX/empty.json" "$FIX/dogs.json"
expect "root of two k/v files, the first line" 0 "^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421  $FIX/empty.json\$" '^$' -- "$MPT" root "$FIX/empty.json" "$FIX/dogs.json"
expect "root --json of two k/v files" 0 '^\[\{"file":".*empty.json","root":"0x56e8.*","trie":null,"keys":0\},\{"file":".*dogs.json","root":"0x8aad.*","trie":null,"keys":3\}\]$' '^$' -- "$MPT" root --json "$FIX/empty.json" "$FIX/dogs.json"

# BlockchainTests: pre against the genesis header's stateRoot, postState against the last
# block header's; a test with only postStateHash counts its pre alone.
alloc=$(cat "$FIX/state_alloc.json")
printf '{"t": {"_info": {}, "blocks": [{"blockHeader": {"stateRoot": "%s"}}, {"rlp": "0x00", "expectException": "x"}],\n "genesisBlockHeader": {"stateRoot": "%s"}, "pre": %s, "postState": {}},\n "u": {"blocks": [], "genesisBlockHeader": {"stateRoot": "%s"}, "pre": %s, "postStateHash": "%s"}}\n' \
    0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421 $S "$alloc" $S "$alloc" $S >"$tmp/bc.json"
expect "blockchain vectors" 0 '^3 passed, 0 failed$' '^$' -- "$MPT" root --vectors "$tmp/bc.json"
expect "blockchain vectors: one skipped" 0 '^1 skipped \(postStateHash only' '^$' -- "$MPT" root --vectors "$tmp/bc.json"
expect "blockchain vectors: cases named" 0 '^ok   bc.json:t:postState$' '^$' -- "$MPT" root --vectors "$tmp/bc.json"
expect "blockchain vectors --json" 0 '"passed":3,"failed":0,"skipped":1\}$' '^$' -- "$MPT" root --json --vectors "$tmp/bc.json"
sed 's/"genesisBlockHeader": {"stateRoot": "0x0e26/"genesisBlockHeader": {"stateRoot": "0x0f26/' "$tmp/bc.json" >"$tmp/bc_wrong.json"
expect "blockchain vector failing" 1 "^1 passed, 2 failed$" '^$' -- "$MPT" root --vectors "$tmp/bc_wrong.json"
expect "blockchain vector failing named" 1 '^FAIL bc_wrong.json:t:pre: state root 0x0e2696d3.*, expected 0x0f2696d3' '^$' -- "$MPT" root --vectors "$tmp/bc_wrong.json"
sed 's/"balance": "0"/"balance": "0xq"/' "$tmp/bc.json" >"$tmp/bc_bad.json"
expect "blockchain vector with a bad account" 2 '^$' 'bc_bad.json: line 4, column [0-9]+: test t: pre: account 000F3DF6D732807EF1319FB7B8BB8522D0BEAC02: field "balance"' -- "$MPT" root --vectors "$tmp/bc_bad.json"
# A folder is walked for *.json, trie vectors and blockchain tests alike.
mkdir -p "$tmp/vecdir/sub"
cp "$tmp/bc.json" "$tmp/vecdir/sub/"
cp "$FIX/trie_vectors.json" "$tmp/vecdir/"
echo 'not json' >"$tmp/vecdir/notes.txt"
expect "vectors of a folder" 0 "^$(($("$MPT" root --vectors "$FIX/trie_vectors.json" | grep -c '^ok') + 3)) passed, 0 failed\$" '^$' -- "$MPT" root --vectors "$tmp/vecdir"

# CLI cases of the state commands and of the key rule (sourced by cli_test.sh: uses MPT, FIX,
# tmp and expect).

# The key rule: in a secure trie a key on the command line is the user's key and is hashed;
# --key-hashed says it is the trie key. get, proof KEY, dump --from and proof --range agree.
dog_hash=0x41791102999c339c844880b23950704cc43aa840f3739e365323cda4dfa89e7a
"$MPT" build --secure "$FIX/dogs.json" -o "$tmp/secure.db" >/dev/null
expect "key rule: get hashes" 0 '^0x7075707079$' '^$' -- "$MPT" get "$tmp/secure.db" dog
expect "key rule: get --key-hashed" 0 '^0x7075707079$' '^$' -- "$MPT" get --key-hashed "$tmp/secure.db" "$dog_hash"
expect "key rule: get --key-hashed takes the key as given" 1 '^$' '^$' -- "$MPT" get --key-hashed "$tmp/secure.db" dog
expect "key rule: dump --from hashes" 0 "^$dog_hash 0x7075707079\$" '^$' -- "$MPT" dump --from dog "$tmp/secure.db"
expect "key rule: dump --from hashed, one line" 0 '^$' '^$' -- sh -c "test \$('$MPT' dump --from dog '$tmp/secure.db' | wc -l) -eq 1"
expect "key rule: dump --from --key-hashed" 0 '^0x28313e95' '^$' -- "$MPT" dump --key-hashed --from 0x20 --limit 1 "$tmp/secure.db"
expect "key rule: dump --from --key-hashed past every key" 0 '^$' '^$' -- "$MPT" dump --key-hashed --from dog "$tmp/secure.db"
expect "key rule: proof KEY hashes" 0 "\"key\":\"$dog_hash\"" '^$' -- "$MPT" proof "$tmp/secure.db" dog
expect "key rule: proof --key-hashed" 0 '"value":"0x7075707079"' '^$' -- "$MPT" proof --key-hashed "$tmp/secure.db" "$dog_hash"
expect "key rule: proof --range hashes FROM" 0 "\"first\":\"$dog_hash\",\"keys\":\\[\"$dog_hash\"\\]" '^$' -- "$MPT" proof "$tmp/secure.db" --range dog
expect "key rule: proof --range --to hashes" 0 '"keys":\["0x1abac7d9[0-9a-f]*","0x28313e95[0-9a-f]*"\]' '^$' -- "$MPT" proof "$tmp/secure.db" --range 0x --key-hashed --to 0x28313e952395ac9853409609f1fcda61dda6ff98e62b5ea787b62e08d8b61e9e
expect "key rule: proof --range round trip" 0 '^valid more=false$' '^$' -- sh -c "'$MPT' proof '$tmp/secure.db' --range doge | '$MPT' verify-range -"
# Plain tries are unchanged: keys are trie keys, with or without --key-hashed.
"$MPT" build "$FIX/dogs.json" -o "$tmp/plain.db" >/dev/null
expect "key rule: plain dump --from" 0 '^0x646f67 0x7075707079$' '^$' -- "$MPT" dump --from dog --limit 1 "$tmp/plain.db"
expect "key rule: plain get --key-hashed" 0 '^0x7075707079$' '^$' -- "$MPT" get --key-hashed "$tmp/plain.db" dog

# get --account and dump --accounts: bad input and the wrong kind of trie.
expect "get --account: not 20 bytes" 2 '^$' '^mpt: error: bad hex: address 0x00: 1 bytes, want 20$' -- "$MPT" get "$tmp/plain.db" --account 0x00
expect "get --account: odd hex" 2 '^$' '^mpt: error: bad hex: address 0x123: odd number of hex digits$' -- "$MPT" get "$tmp/plain.db" --account 0x123
expect "get --account: not hex" 2 '^$' '^mpt: error: bad hex: address 0xzz00000000000000000000000000000000000000: not a hex digit: z$' -- "$MPT" get "$tmp/plain.db" --account 0xzz00000000000000000000000000000000000000
expect "get --slot: over 32 bytes" 2 '^$' '^mpt: error: bad hex: slot 0x(00){33}: a storage key longer than 32 bytes$' -- "$MPT" get "$tmp/plain.db" --account 0x0000000000000000000000000000000000000000 --slot 0x$(printf '00%.0s' $(seq 33))
expect "get --slot without --account" 2 '^$' '^mpt: error: usage: get: --slot goes with --account$' -- "$MPT" get "$tmp/plain.db" --slot 0x01
expect "get KEY and --account" 2 '^$' '^mpt: error: usage: get: give KEY or --account ADDR, not both$' -- "$MPT" get "$tmp/plain.db" dog --account 0x0000000000000000000000000000000000000000
expect "get --account on a plain trie" 3 '^$' '^mpt: error: .*plain\.db: trie main is plain, not an account trie' -- "$MPT" get "$tmp/plain.db" --account 0x0000000000000000000000000000000000000000
expect "dump --accounts on a plain trie" 3 '^$' '^mpt: error: .*plain\.db: trie main is plain, not an account trie' -- "$MPT" dump --accounts "$tmp/plain.db"
expect "dump --storage without --accounts" 2 '^$' '^mpt: error: usage: dump: --storage goes with --accounts$' -- "$MPT" dump --storage "$tmp/plain.db"

# build --state, get --account, dump --accounts and diff of states, on fixtures/state_*.json.
a1=0x1000000000000000000000000000000000000001
expect "build --state" 0 '^0xf5bf7efc173bb3d4f2d73eebdbe96919a53721972397fc6a05af955ae0efac45$' '^$' -- "$MPT" build --state "$FIX/state_a.json" -o "$tmp/state_a.db"
expect "build --state into an existing state" 2 '^$' '^mpt: error: .*state_a\.db: .*--replace' -- "$MPT" build --state "$FIX/state_b.json" -o "$tmp/state_a.db"
expect "build --state of a k/v file" 2 '^$' '^mpt: error: .*dogs\.json' -- "$MPT" build --state "$FIX/dogs.json" -o "$tmp/state_bad.db"
expect "build --state --secure" 2 '^$' '^mpt: error: usage: build: --state' -- "$MPT" build --state --secure "$FIX/state_a.json" -o "$tmp/state_bad.db"
expect "get --account" 0 '^\{"nonce":"0x1","balance":"0xde0b6b3a7640000","storageRoot":"0x9c1b6e59[0-9a-f]{56}","codeHash":"0x0dd9fc23[0-9a-f]{56}"\}$' '^$' -- "$MPT" get "$tmp/state_a.db" --account "$a1"
expect "get --account: no 0x, upper case" 0 '"nonce":"0x1"' '^$' -- "$MPT" get "$tmp/state_a.db" --account 1000000000000000000000000000000000000001
expect "get --account absent" 1 '^$' '^$' -- "$MPT" get "$tmp/state_a.db" --account 0x4000000000000000000000000000000000000004
expect "get --account absent --json: null" 1 '^null$' '^$' -- "$MPT" get --json "$tmp/state_a.db" --account 0x4000000000000000000000000000000000000004
expect "get --account --key-hashed" 0 '"nonce":"0x1"' '^$' -- "$MPT" get "$tmp/state_a.db" --key-hashed --account 0x3ed02be1e351ddbcc2bf3ffafc25fb42a533df024b33c85f9805e17b60f7230c
expect "get --account --key-hashed takes a hash" 2 '^$' '^mpt: error: bad hex: address hash' -- "$MPT" get "$tmp/state_a.db" --key-hashed --account "$a1"
expect "get --slot" 0 '^0x2a$' '^$' -- "$MPT" get "$tmp/state_a.db" --account "$a1" --slot 0x01
expect "get --slot left-padded, 32 bytes" 0 '^0x2a$' '^$' -- "$MPT" get "$tmp/state_a.db" --account "$a1" --slot 0x0000000000000000000000000000000000000000000000000000000000000001
expect "get --slot absent" 1 '^0x1$' '^$' -- "$MPT" get "$tmp/state_a.db" --account "$a1" --slot 00 --slot 0x05
expect "get --slot --json" 1 '^\{"00":"0x1","0x05":null\}$' '^$' -- "$MPT" get --json "$tmp/state_a.db" --account "$a1" --slot 00 --slot 0x05
# Slots as proof --slot reads them: an odd digit count, no 0x, no digit at all (slot 0).
for s in 0x1 1 0X01; do
    expect "get --slot $s, as proof --slot reads it" 0 '^0x2a$' '^$' -- "$MPT" get "$tmp/state_a.db" --account "$a1" --slot $s
done
expect "get --slot 0x, slot 0" 0 '^0x1$' '^$' -- "$MPT" get "$tmp/state_a.db" --account "$a1" --slot 0x
expect "get --slot not hex" 2 '^$' '^mpt: error: bad hex: slot 0xzz: not a hex digit$' -- "$MPT" get "$tmp/state_a.db" --account "$a1" --slot 0xzz
expect "dump --accounts: a line per account" 0 '^$' '^$' -- sh -c "test \$('$MPT' dump --accounts '$tmp/state_a.db' | wc -l) -eq 2"
expect "dump --accounts --storage" 0 '"storage":\{"0x[0-9a-f]{64}":"0x1","0x[0-9a-f]{64}":"0x2a"\}\}$' '^$' -- "$MPT" dump --accounts --storage "$tmp/state_a.db"
expect "dump --accounts --from an address" 0 '"nonce":"0x1"' '^$' -- "$MPT" dump --accounts --from "$a1" --limit 1 "$tmp/state_a.db"
expect "diff of a state file and its document" 0 '^$' '^$' -- "$MPT" diff "$tmp/state_a.db" "$FIX/state_a.json"
expect "diff of states" 1 "^~ $a1 slot 0x0{64} 0x1 -> 0x2\$" '^$' -- "$MPT" diff "$tmp/state_a.db" "$FIX/state_b.json"
expect "diff of states: an account added" 1 '^\+ 0x3000000000000000000000000000000000000003 nonce 0x0, balance 0x5, ' '^$' -- "$MPT" diff --state "$FIX/state_a.json" "$FIX/state_b.json"
expect "diff of states --json" 1 '^\{"change":"changed","address":"0x2000000000000000000000000000000000000002","nonce":\["0x0","0x1"\],"balance":\["0x3e8","0x3e7"\]\}$' '^$' -- "$MPT" diff --state --json "$FIX/state_a.json" "$FIX/state_b.json"
expect "diff of states --stats" 1 '.*' '^mpt: stats: nodes read: A [0-9]+, B [0-9]+$' -- "$MPT" diff --stats "$tmp/state_a.db" "$FIX/state_b.json"
expect "diff --state of a k/v file" 2 '^$' '^mpt: error: .*dogs\.json' -- "$MPT" diff --state "$FIX/dogs.json" "$FIX/state_a.json"

# The key rule on a state trie: without --accounts, dump --from takes the user's key (hashed);
# --accounts --from takes an address, or with --key-hashed its hash.
a1_hash=0x3ed02be1e351ddbcc2bf3ffafc25fb42a533df024b33c85f9805e17b60f7230c
expect "key rule: state dump --from an address, hashed" 0 "^$a1_hash 0x" '^$' -- "$MPT" dump --limit 1 --from "$a1" "$tmp/state_a.db"
expect "key rule: state dump --accounts --from --key-hashed" 0 "^\\{\"address\":\"$a1\"" '^$' -- "$MPT" dump --accounts --key-hashed --from "$a1_hash" --limit 1 "$tmp/state_a.db"
expect "key rule: state get KEY hashes" 0 '^0xf8' '^$' -- "$MPT" get "$tmp/state_a.db" "$a1"
expect "get --account on a secure trie" 3 '^$' '^mpt: error: .*secure\.db: trie main is secure, not an account trie' -- "$MPT" get "$tmp/secure.db" --account "$a1"
expect "storage trie of an account is named by its hash" 0 '^0x2a$' '^$' -- "$MPT" get --trie "$a1_hash" "$tmp/state_a.db" 0x0000000000000000000000000000000000000000000000000000000000000001
# The printed root of build --state is the state root mpt root --state computes.
expect "build --state root equals root --state" 0 '^$' '^$' -- sh -c "rm -f '$tmp/sb.db' && test \"\$('$MPT' build --state '$FIX/state_b.json' -o '$tmp/sb.db')\" = \"\$('$MPT' root --state '$FIX/state_b.json' | cut -d' ' -f1)\""

# Contract code (schema version 3): build --state keeps each code under its hash, in a new
# file and through the store alike; check reads every account's code and every row.
genesis_root=0x0e2696d33d4f6ee17fa14c7517560db2eaf621f9c39181b095b8606325452c59
rm -f "$tmp/codes.db"
expect "codes: a new file keeps them" 0 "^\\{\"root\":\"$genesis_root\",.*\"preimages\":[0-9]+,\"codes\":2,\"rowsWritten\"" '^$' -- "$MPT" build --state --json "$FIX/state_genesis.json" -o "$tmp/codes.db"
expect "codes: check reads each account's" 0 '"codes":2,"codesNotHeld":0,"problems":\[\]' '^$' -- "$MPT" check --json "$tmp/codes.db"
rm -f "$tmp/codes_store.db"
"$MPT" build "$FIX/dogs.json" -o "$tmp/codes_store.db" --trie dogs >/dev/null
expect "codes: through the store too" 0 '"codes":2,' '^$' -- "$MPT" build --state --json "$FIX/state_genesis.json" -o "$tmp/codes_store.db"
expect "codes: the same rows either way" 0 '^$' '^$' -- sh -c "test \"\$(sqlite3 '$tmp/codes.db' 'SELECT hex(hash), hex(code) FROM codes')\" = \"\$(sqlite3 '$tmp/codes_store.db' 'SELECT hex(hash), hex(code) FROM codes')\""
# A dump that names code by its hash alone: no code kept, counted on a note line.
rm -f "$tmp/codes_dump.db"
"$MPT" build --state "$FIX/state_geth_dump.json" -o "$tmp/codes_dump.db" >/dev/null
expect "codes: a code named by hash alone is a note" 0 '^note: 1 account whose code the file does not hold$' '^$' -- "$MPT" check "$tmp/codes_dump.db"
# Damage: a code that does not hash to its key, named by an account or by no one.
cp "$tmp/codes.db" "$tmp/codes_bad.db"
sqlite3 "$tmp/codes_bad.db" "UPDATE codes SET code = x'6000' WHERE hash = (SELECT min(hash) FROM codes)"
expect "codes: a changed code is damage" 3 ': codeHash 0x[0-9a-f]{64}: the code recorded for 0x[0-9a-f]{64} does not hash to it$' '^mpt: error: damaged trie file: .*codes_bad\.db: 1 problem, listed in the report$' -- "$MPT" check "$tmp/codes_bad.db"
cp "$tmp/codes.db" "$tmp/codes_stray.db"
sqlite3 "$tmp/codes_stray.db" "INSERT INTO codes VALUES(x'$(printf '11%.0s' $(seq 32))', x'6000')"
expect "codes: a stray code row is damage" 3 '^codes row 0x(11){32}: the code does not hash to it$' '^mpt: error: damaged trie file: ' -- "$MPT" check "$tmp/codes_stray.db"
cp "$tmp/codes.db" "$tmp/codes_gone.db"
sqlite3 "$tmp/codes_gone.db" "DELETE FROM codes WHERE hash = (SELECT min(hash) FROM codes)"
expect "codes: a code not held is a note" 0 '"codes":1,"codesNotHeld":1,' '^$' -- "$MPT" check --json "$tmp/codes_gone.db"

# dump --accounts --code, and mpt's own dump by lines read back as a state document (shape
# mpt-dump): the same root, and a file with the same tries.
expect "dump --accounts --code prints the code" 0 '"codeHash":"0x[0-9a-f]{64}","code":"0x[0-9a-f]+"' '^$' -- "$MPT" dump --accounts --code "$tmp/codes.db"
expect "dump --code without --accounts" 2 '^$' '^mpt: error: usage: dump: --code goes with --accounts$' -- "$MPT" dump --code "$tmp/codes.db"
"$MPT" dump --accounts --storage --code "$tmp/codes.db" >"$tmp/codes_dump.jsonl"
expect "mpt-dump: root --state of a dump gives the state root" 0 "^\\{\"root\":\"$genesis_root\",\"shape\":\"mpt-dump\",\"accounts\":3,\"slots\":3,\"tries\":3\\}\$" '^$' -- sh -c "'$MPT' dump --accounts --storage --code '$tmp/codes.db' | '$MPT' root --state --json -"
expect "mpt-dump: told by its shape without --state" 0 '"shape":"mpt-dump"' '^$' -- "$MPT" root --json "$tmp/codes_dump.jsonl"
rm -f "$tmp/codes_again.db"
expect "mpt-dump: build --state from it" 0 '"codes":2,' '^$' -- sh -c "'$MPT' build --state --json - -o '$tmp/codes_again.db' <'$tmp/codes_dump.jsonl'"
expect "mpt-dump: the rebuilt file dumps the same" 0 '^$' '^$' -- sh -c "'$MPT' dump --accounts --storage --code '$tmp/codes_again.db' | cmp - '$tmp/codes_dump.jsonl'"
# Without preimages the dump names accounts and slots by hash (key, pre(0x...)): read back
# the same.
rm -f "$tmp/nopre_state.db"
"$MPT" build --state --no-preimages "$FIX/state_genesis.json" -o "$tmp/nopre_state.db" >/dev/null
expect "mpt-dump: by hashes, the same root" 0 "^$genesis_root\$" '^$' -- sh -c "'$MPT' dump --accounts --storage --code '$tmp/nopre_state.db' | '$MPT' root --state - | grep -o '^0x[0-9a-f]*'"
expect "mpt-dump: a key/value file with a key named address stays one" 0 '"keys":1' '^$' -- sh -c "printf '{\"address\":\"0x01\"}' | '$MPT' root --json -"

# mpt update: a block's changes applied to a state file in one write. state_a.json to
# state_b.json as mpt's changes, as a prestateTracer diff and as a block's list of them.
a_addr1=0x1000000000000000000000000000000000000001
a_addr2=0x2000000000000000000000000000000000000002
a_addr3=0x3000000000000000000000000000000000000003
b_root=$("$MPT" root --state "$FIX/state_b.json" | cut -d' ' -f1)
cat >"$tmp/ab_changes.json" <<JSON
{"$a_addr1": {"storage": {"0x00": "0x02", "0x01": "0x00", "0x02": "0x07"}},
 "$a_addr2": {"balance": "0x3e7", "nonce": "0x1"},
 "$a_addr3": {"balance": "0x05"}}
JSON
rm -f "$tmp/upd.db"
"$MPT" build --state "$FIX/state_a.json" -o "$tmp/upd.db" >/dev/null
cp "$tmp/upd.db" "$tmp/upd_a.db"
expect "update: state_a to state_b" 0 "^$b_root\$" '^$' -- "$MPT" update "$tmp/upd.db" --changes "$tmp/ab_changes.json"
expect "update: the file is state_b's" 0 '^$' '^$' -- "$MPT" diff "$tmp/upd.db" "$FIX/state_b.json"
expect "update: check" 0 '^ok: state, 3 accounts, 1 storage trie, 2 slots' '^$' -- "$MPT" check "$tmp/upd.db"
cp "$tmp/upd_a.db" "$tmp/upd_json.db"
expect "update --json" 0 "^\\{\"root\":\"$b_root\",\"shape\":\"changes\",\"accounts\":3,\"deleted\":0,\"slots\":3,\"codes\":0,\"rowsWritten\":[0-9]+,\"rowsDeleted\":[0-9]+\\}\$" '^$' -- "$MPT" update --json "$tmp/upd_json.db" --changes "$tmp/ab_changes.json"
# Refused, the file unchanged: another root expected; a tracer's pre not the file's.
cp "$tmp/upd_a.db" "$tmp/upd_refused.db"
expect "update --expect-root another: refused" 1 '^$' "^mpt: update refused: the changes give root $b_root, not 0x(11){32}; .*upd_refused\\.db is unchanged\$" -- "$MPT" update "$tmp/upd_refused.db" --changes "$tmp/ab_changes.json" --expect-root "0x$(printf '11%.0s' $(seq 32))"
expect "update refused: the file unchanged" 0 '^$' '^$' -- cmp "$tmp/upd_refused.db" "$tmp/upd_a.db"
expect "update --expect-root the root" 0 "^$b_root\$" '^$' -- "$MPT" update "$tmp/upd_refused.db" --changes "$tmp/ab_changes.json" --expect-root "$b_root"
# The same block as geth's prestateTracer diff: pre as state_a holds the accounts.
slot() { printf '0x%064x' "$1"; }
cat >"$tmp/ab_diff.json" <<JSON
{"jsonrpc": "2.0", "id": 1, "result": {
 "pre": {"$a_addr1": {"balance": "0xde0b6b3a7640000", "nonce": 1, "code": "0x600160005500",
          "storage": {"$(slot 0)": "$(slot 1)", "$(slot 1)": "$(slot 42)"}},
         "$a_addr2": {"balance": "0x3e8"}},
 "post": {"$a_addr1": {"storage": {"$(slot 0)": "$(slot 2)", "$(slot 2)": "$(slot 7)"}},
          "$a_addr2": {"balance": "0x3e7", "nonce": 1},
          "$a_addr3": {"balance": "0x5"}}}}
JSON
cp "$tmp/upd_a.db" "$tmp/upd_diff.db"
expect "update: a prestateTracer diff gives the same root" 0 "^\\{\"root\":\"$b_root\",\"shape\":\"prestate-diff\"," '^$' -- "$MPT" update --json "$tmp/upd_diff.db" --changes "$tmp/ab_diff.json"
# As a block's list: the first transaction the balance and nonce, the second the rest.
cat >"$tmp/ab_list.json" <<JSON
[{"txHash": "0x01", "result": {"pre": {"$a_addr2": {"balance": "0x3e8"}},
                               "post": {"$a_addr2": {"balance": "0x3e7", "nonce": 1}}}},
 {"txHash": "0x02", "result": {
   "pre": {"$a_addr1": {"balance": "0xde0b6b3a7640000", "nonce": 1, "code": "0x600160005500",
            "storage": {"$(slot 0)": "$(slot 1)", "$(slot 1)": "$(slot 42)"}}},
   "post": {"$a_addr1": {"storage": {"$(slot 0)": "$(slot 2)", "$(slot 2)": "$(slot 7)"}},
            "$a_addr3": {"balance": "0x5"}}}}]
JSON
cp "$tmp/upd_a.db" "$tmp/upd_list.db"
expect "update: a block's list of diffs gives the same root" 0 "^\\{\"root\":\"$b_root\",\"shape\":\"prestate-list\"," '^$' -- "$MPT" update --json "$tmp/upd_list.db" --changes "$tmp/ab_list.json"
cp "$tmp/upd.db" "$tmp/upd_stale.db"
expect "update: a pre that is not the file's is refused" 1 '^$' "^mpt: update refused: the changes' pre is not the file's state: account $a_addr1: slot 0x0{64} 0x1 before, 0x2 in the file; .*upd_stale\\.db is unchanged\$" -- "$MPT" update "$tmp/upd_stale.db" --changes "$tmp/ab_diff.json"
expect "update: refused, unchanged" 0 '^$' '^$' -- cmp "$tmp/upd_stale.db" "$tmp/upd.db"
# Deletion, code, and a code named by a hash that is not its own.
cp "$tmp/upd.db" "$tmp/upd_del.db"
expect "update: null deletes the account and its storage" 0 '"accounts":0,"deleted":1,' '^$' -- sh -c "echo '{\"$a_addr1\": null}' | '$MPT' update --json '$tmp/upd_del.db' --changes -"
expect "update: deleted, no storage trie left" 0 '^ok: state, 2 accounts, 0 storage tries' '^$' -- "$MPT" check "$tmp/upd_del.db"
expect "update: a new contract's code is kept" 0 '"codes":1,' '^$' -- sh -c "echo '{\"0x4000000000000000000000000000000000000004\": {\"nonce\": 1, \"code\": \"0x6001\"}}' | '$MPT' update --json '$tmp/upd_del.db' --changes -"
expect "update: its code read back" 0 '"code":"0x6001"' '^$' -- "$MPT" dump --accounts --code "$tmp/upd_del.db"
# Bad input: one line, exit 2, the file unchanged.
cp "$tmp/upd.db" "$tmp/upd_bad.db"
expect "update: malformed document" 2 '^$' '^mpt: error: malformed JSON: .*bad\.json' -- sh -c "printf '{\"$a_addr1\": ' >'$tmp/bad.json'; '$MPT' update '$tmp/upd_bad.db' --changes '$tmp/bad.json'"
expect "update: an address of the wrong length" 2 '^$' '^mpt: error: bad hex: .*: field "0x1234" \(line 1, column 12\): an address is 20 bytes, not 2$' -- sh -c "echo '{\"0x1234\": {}}' | '$MPT' update '$tmp/upd_bad.db' --changes -"
expect "update: a slot over 32 bytes" 2 '^$' 'more than 32 bytes: 66 hex digits$' -- sh -c "echo '{\"$a_addr1\": {\"storage\": {\"0x$(printf '1%.0s' $(seq 66))\": \"0x1\"}}}' | '$MPT' update '$tmp/upd_bad.db' --changes -"
expect "update: a codeHash not of the code" 2 '^$' 'codeHash" \(line 1, column [0-9]+\): not keccak256 of the code' -- sh -c "echo '{\"$a_addr1\": {\"code\": \"0x60\", \"codeHash\": \"0x$(printf '22%.0s' $(seq 32))\"}}' | '$MPT' update '$tmp/upd_bad.db' --changes -"
expect "update: bad input leaves the file unchanged" 0 '^$' '^$' -- cmp "$tmp/upd_bad.db" "$tmp/upd.db"
expect "update of a plain trie file" 3 '^$' '^mpt: error: .*dogs_upd\.db' -- sh -c "rm -f '$tmp/dogs_upd.db'; '$MPT' build '$FIX/dogs.json' -o '$tmp/dogs_upd.db' >/dev/null; '$MPT' update '$tmp/dogs_upd.db' --changes '$tmp/ab_changes.json'"

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
expect "get --slot: over 32 bytes" 2 '^$' '^mpt: error: bad hex: slot 0x(00){33}: 33 bytes, more than 32$' -- "$MPT" get "$tmp/plain.db" --account 0x0000000000000000000000000000000000000000 --slot 0x$(printf '00%.0s' $(seq 33))
expect "get --slot without --account" 2 '^$' '^mpt: error: usage: get: --slot goes with --account$' -- "$MPT" get "$tmp/plain.db" --slot 0x01
expect "get KEY and --account" 2 '^$' '^mpt: error: usage: get: give KEY or --account ADDR, not both$' -- "$MPT" get "$tmp/plain.db" dog --account 0x0000000000000000000000000000000000000000
expect "get --account on a plain trie" 3 '^$' '^mpt: error: .*plain\.db: trie main is plain, not an account trie' -- "$MPT" get "$tmp/plain.db" --account 0x0000000000000000000000000000000000000000
expect "dump --accounts on a plain trie" 3 '^$' '^mpt: error: .*plain\.db: trie main is plain, not an account trie' -- "$MPT" dump --accounts "$tmp/plain.db"
expect "dump --storage without --accounts" 2 '^$' '^mpt: error: usage: dump: --storage goes with --accounts$' -- "$MPT" dump --storage "$tmp/plain.db"

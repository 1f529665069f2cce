# Cases for cli_test.sh; sourced. $MPT is the binary, $FIX the fixtures folder, $GEN the
# mpt_gen_kv generator.

# mpt root
expect "root of dogs" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- "$MPT" root "$FIX/dogs.json"
expect "root from stdin" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- sh -c "'$MPT' root - < '$FIX/dogs.json'"
expect "root --json" 0 '"root":"0x8aad789d' '^$' -- "$MPT" root --json "$FIX/dogs.json"
expect "root of empty object" 0 '^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421$' '^$' -- "$MPT" root "$FIX/empty.json"
expect "root of ordered pairs with deletes" 0 '^0x5991bb8c6514148a29db676a14ac506cd2cd5775ace63c30a4fe457715e9ac84$' '^$' -- "$MPT" root "$FIX/empty_values.json"
expect "fixture vectors" 0 'passed, 0 failed' '^$' -- "$MPT" root --vectors "$FIX/trie_vectors.json"
expect "secure vectors" 0 'passed, 0 failed' '^$' -- "$MPT" root --vectors "$FIX/trie_vectors_secure.json"
expect "next/prev vectors" 0 '12 passed, 0 failed' '^$' -- "$MPT" root --vectors "$FIX/nextprev.json"
expect "vectors --json" 0 '"failed":0,"passed":3' '^$' -- "$MPT" root --json --vectors "$FIX/trie_vectors_secure.json"

# The same content by another route must give the same root: the dogs fixture as ordered
# pairs with an overwrite, and as an object with a repeated key (the last write wins).
printf '[["dog","kitten"],["doe","reindeer"],["dogglesworth","cat"],["dog","puppy"]]' >"$tmp/dogs_pairs.json"
expect "root of dogs as pairs with an overwrite" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- "$MPT" root "$tmp/dogs_pairs.json"
printf '{"dog":"kitten","doe":"reindeer","dogglesworth":"cat","dog":"puppy"}' >"$tmp/dogs_dup.json"
expect "root of dogs with a repeated key" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- "$MPT" root "$tmp/dogs_dup.json"
# ethereum/tests trieanyorder_secureTrie.json, case "dogs".
expect "secure root of dogs" 0 '^0xd4cd937e4a4368d7931a9cf51686b7e10abb3dce38a39000fd7902a092b64585$' '^$' -- "$MPT" root --secure "$FIX/dogs.json"

# A vector whose expected root is wrong must fail with exit 1 (the runner can say no).
printf '{"wrong":{"in":{"dog":"puppy"},"root":"0x%064d"}}' 0 >"$tmp/wrong_vector.json"
expect "failing vector" 1 '^0 passed, 1 failed$' '^$' -- "$MPT" root --vectors "$tmp/wrong_vector.json"
expect "failing vector named" 1 '^FAIL wrong_vector.json:wrong' '^$' -- "$MPT" root --vectors "$tmp/wrong_vector.json"

# 10,000 generated pairs (key i = keccak256(uint64 big-endian i), value = keccak256(key)):
# a known root.
expect "generate 10k pairs" 0 '^$' '^$' -- "$GEN" 10000 "$tmp/kv10k.json"
expect "root of 10k generated pairs" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" root "$tmp/kv10k.json"
expect "root of 10k --json" 0 '"keys":10000' '^$' -- "$MPT" root --json "$tmp/kv10k.json"
# The same root on one thread and with the subtries split over several.
expect "root of 10k --threads 1" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" root --threads 1 "$tmp/kv10k.json"
expect "root of 10k --threads 3" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" root --threads 3 "$tmp/kv10k.json"
expect "root --threads 0" 2 '^$' '^mpt: error: .*--threads' -- "$MPT" root --threads 0 "$tmp/kv10k.json"
expect "generator bad N" 2 '^$' '^mpt_gen_kv: error: N must be' -- "$GEN" ten "$tmp/x.json"

# Bad input: one line, exit 2.
echo '{"a": "0x123"}' >"$tmp/odd.json"
expect "odd hex" 2 '^$' '^mpt: error: .*odd.json.*entry 0 value.*odd number of hex digits' -- "$MPT" root "$tmp/odd.json"
echo '{"a": "0xzz"}' >"$tmp/nonhex.json"
expect "non-hex" 2 '^$' '^mpt: error: .*not a hex digit' -- "$MPT" root "$tmp/nonhex.json"
echo '{"a": 5}' >"$tmp/num.json"
expect "non-string value" 2 '^$' '^mpt: error: .*line 1, column 7: value is not a string' -- "$MPT" root "$tmp/num.json"
printf '{"a": "b",\n' >"$tmp/trunc.json"
expect "malformed JSON" 2 '^$' '^mpt: error: .*malformed JSON: line 2' -- "$MPT" root "$tmp/trunc.json"
: >"$tmp/empty_file.json"
expect "empty file" 2 '^$' '^mpt: error: .*empty_file.json: malformed JSON: line 1, column 1' -- "$MPT" root "$tmp/empty_file.json"
printf '{"a": "b"} x' >"$tmp/trailing.json"
expect "data after the document" 2 '^$' '^mpt: error: .*unexpected data after the document' -- "$MPT" root "$tmp/trailing.json"
expect "no input" 2 '^$' '^mpt: error: root: INPUT is required' -- "$MPT" root
expect "input and --vectors" 2 '^$' '^mpt: error: root: give INPUT or --vectors, not both' -- "$MPT" root "$FIX/dogs.json" --vectors "$FIX/nextprev.json"
expect "missing vectors file" 2 '^$' '^mpt: error: .*no-such-vectors.json: No such file' -- "$MPT" root --vectors "$tmp/no-such-vectors.json"
expect "missing file" 2 '^$' '^mpt: error: .*no-such-file.json: No such file' -- "$MPT" root "$tmp/no-such-file.json"
expect "unknown flag" 2 '^$' '^mpt: error: .*--bogus' -- "$MPT" root --bogus "$FIX/dogs.json"
expect "no subcommand" 2 '^$' '^mpt: error: ' -- "$MPT"
expect "unknown subcommand" 2 '^$' '^mpt: error: ' -- "$MPT" frobnicate
expect "version" 0 '^mpt [0-9]+\.[0-9]+\.[0-9]+$' '^$' -- "$MPT" --version
expect "help" 0 'root' '^$' -- "$MPT" --help
expect "root help" 0 'secure' '^$' -- "$MPT" root --help

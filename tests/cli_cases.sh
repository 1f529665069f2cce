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
expect "vectors --json" 0 '"passed":3,"failed":0' '^$' -- "$MPT" root --json --vectors "$FIX/trie_vectors_secure.json"
expect "vectors --json: a pass has no detail" 0 '^\{"cases":\[\{"name":"trie_vectors_secure.json:dogs","passed":true\},' '^$' -- "$MPT" root --json --vectors "$FIX/trie_vectors_secure.json"

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
expect "failing vector --json: its detail" 1 '^\{"cases":\[\{"name":"wrong_vector.json:wrong","passed":false,"detail":"' '^$' -- "$MPT" root --json --vectors "$tmp/wrong_vector.json"
# Vectors that are no JSON: where, as every other JSON reader says it; a trie file named one.
printf 'x{}' >"$tmp/not_vectors.json"
expect "vectors not JSON: line and column" 2 '^$' '^mpt: error: malformed JSON: .*not_vectors.json: line 1, column 1: ' -- "$MPT" root --vectors "$tmp/not_vectors.json"
"$MPT" build "$FIX/dogs.json" -o "$tmp/vectors.db" >/dev/null
expect "vectors that are a trie file" 2 '^$' '^mpt: error: malformed JSON: .*vectors.db: an SQLite database \(a trie file\?\), not a document$' -- "$MPT" root --vectors "$tmp/vectors.db"

# 10,000 generated pairs (key i = keccak256(uint64 big-endian i), value = keccak256(key)):
# a known root.
expect "generate 10k pairs" 0 '^$' '^$' -- "$GEN" 10000 "$tmp/kv10k.json"
expect "root of 10k generated pairs" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" root "$tmp/kv10k.json"
expect "root of 10k --json" 0 '"keys":10000' '^$' -- "$MPT" root --json "$tmp/kv10k.json"
# The same root on one thread and with the subtries split over several.
expect "root of 10k --threads 1" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" root --threads 1 "$tmp/kv10k.json"
expect "root of 10k --threads 3" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" root --threads 3 "$tmp/kv10k.json"
# --stats: dogs.json's trie hashes three nodes (the extension at the root, and the two
# branches under it, each of 32 bytes or more). The 10k pairs take the same hashing on one
# thread as on three (the hashes of every thread counted) and with the one-at-a-time kernel.
expect "root --stats --json" 0 '^\{"root":"0x8aad789d[^}]*,"stats":\{"inputBytes":67,"threads":1,"keccak":"[a-z0-9]+","hashes":3,"hashedBytes":136,"permutations":3,"seconds":[0-9.e-]+\}\}$' '^mpt: stats: .*dogs.json: read 67 bytes; hashed 3 inputs, 136 bytes, 3 permutations \(keccak [a-z0-9]+, threads 1\); [0-9.]+ s$' -- "$MPT" root --stats --json --threads 1 "$FIX/dogs.json"
expect "root --stats with --vectors" 2 '^$' '^mpt: error: usage: root: --stats applies to key/value input and --state$' -- "$MPT" root --stats --vectors "$FIX/trie_vectors_secure.json"
stats_of() { "$@" 2>&1 >/dev/null | sed -n 's/^mpt: stats: .*hashed \([^(]*\) (.*/\1/p'; }
if [ -z "${CASE_LIST:-}" ]; then
    one=$(stats_of "$MPT" root --stats --threads 1 "$tmp/kv10k.json")
    three=$(stats_of "$MPT" root --stats --threads 3 "$tmp/kv10k.json")
    scalar=$(stats_of env MPT_KECCAK=scalar "$MPT" root --stats --threads 3 "$tmp/kv10k.json")
fi
[ -n "${one:-}" ] && [ "$one" = "${three:-}" ] && [ "$one" = "${scalar:-}" ]
case_result "root --stats: the same hashing on 1 and 3 threads, batched or not" $? \
    "1 thread: ${one:-}; 3: ${three:-}; scalar: ${scalar:-}"
expect "root - -: standard input once" 2 '^$' '^mpt: error: usage: root: - \(standard input\) given twice$' -- sh -c "'$MPT' root - - < '$FIX/dogs.json'"
expect "root --threads 0" 2 '^$' '^mpt: error: .*--threads' -- "$MPT" root --threads 0 "$tmp/kv10k.json"
EXPECT_ERROR_PREFIX='mpt_gen_kv: error: ' expect "generator bad N" 2 '^$' '^mpt_gen_kv: error: N must be' -- "$GEN" ten "$tmp/x.json"

# Bad input: one line, exit 2.
echo '{"a": "0x123"}' >"$tmp/odd.json"
expect "odd hex" 2 '^$' '^mpt: error: .*odd.json.*entry 1 value.*odd number of hex digits' -- "$MPT" root "$tmp/odd.json"
echo '{"a": "0xzz"}' >"$tmp/nonhex.json"
expect "non-hex" 2 '^$' '^mpt: error: .*not a hex digit' -- "$MPT" root "$tmp/nonhex.json"
echo '{"a": 5}' >"$tmp/num.json"
expect "non-string value" 2 '^$' '^mpt: error: .*line 1, column 7: value is not a string' -- "$MPT" root "$tmp/num.json"
printf '{"a": "b",\n' >"$tmp/trunc.json"
expect "malformed JSON" 2 '^$' '^mpt: error: malformed JSON: .*trunc.json: line 2' -- "$MPT" root "$tmp/trunc.json"
: >"$tmp/empty_file.json"
expect "empty file: the empty trie's text dump" 0 '^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421$' '^mpt: note: .*empty_file.json: an empty file, read as no key/value pairs' -- "$MPT" root "$tmp/empty_file.json"
printf '{"a": "b"} x' >"$tmp/trailing.json"
expect "data after the document" 2 '^$' '^mpt: error: .*unexpected data after the document' -- "$MPT" root "$tmp/trailing.json"
expect "root --trie with key/value input" 2 '^$' '^mpt: error: usage: root: --trie applies to a trie file' -- "$MPT" root --trie main "$FIX/dogs.json"
expect "no input" 2 '^$' '^mpt: error: usage: root: INPUT is required' -- "$MPT" root
# --vectors is a flag: the files are operands, before or after it.
expect "input and --vectors: every input a vector file" 2 '^$' '^mpt: error: bad input: .*dogs.json: dogglesworth: expected an object with "in"$' -- "$MPT" root "$FIX/dogs.json" --vectors "$FIX/nextprev.json"
expect "root FILE --vectors" 0 'passed, 0 failed$' '^$' -- "$MPT" root "$FIX/nextprev.json" --vectors
expect "root --vectors --json FILE" 0 '"passed":' '^$' -- "$MPT" root --vectors --json "$FIX/nextprev.json"
expect "root --vectors without a file" 2 '^$' '^mpt: error: usage: root: --vectors needs INPUT \(ethereum/tests files, or folders of \*\.json\)$' -- "$MPT" root --vectors
expect "missing vectors file" 2 '^$' '^mpt: error: .*no-such-vectors.json: No such file' -- "$MPT" root --vectors "$tmp/no-such-vectors.json"
expect "missing file" 2 '^$' '^mpt: error: .*no-such-file.json: No such file' -- "$MPT" root "$tmp/no-such-file.json"
expect "unknown flag" 2 '^$' '^mpt: error: .*--bogus' -- "$MPT" root --bogus "$FIX/dogs.json"
expect "no subcommand" 2 '^$' '^mpt: error: ' -- "$MPT"
expect "unknown subcommand" 2 '^$' '^mpt: error: ' -- "$MPT" frobnicate
expect "version" 0 '^mpt [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown), SQLite 3\.[0-9]+\.[0-9]+, Keccak (scalar|avx2|avx512)\)$' '^$' -- "$MPT" --version
expect "--commands: name, page, summary" 0 '^get-node	mpt-get-node\.1	Fetch nodes by path' '^$' -- "$MPT" --commands
expect "--commands, one line a command of --help" 0 '^$' '^$' -- bash -c "diff <('$MPT' --commands | cut -f1) <('$MPT' --help | awk '/^Subcommands:/ { s = 1; next } s && /^  [a-z]/ { print \$1 }')"
expect "--commands takes nothing else" 2 '^$' '^mpt: error: usage: --commands takes nothing else: root$' -- "$MPT" --commands root
expect "help" 0 'root' '^$' -- "$MPT" --help
expect "root help" 0 'secure' '^$' -- "$MPT" root --help

# count-allocs: a reopened trie answers gets with at most the returned value allocated.
expect "count-allocs json" 0 '"op":"get_miss"' '^$' -- "$MPT" count-allocs --leaves 200 --samples 8 --json
expect "count-allocs table" 0 'get_hit' '^$' -- "$MPT" count-allocs --leaves 100,300 --samples 4
expect "count-allocs bad leaves" 2 '^$' '^mpt: error: usage: count-allocs: --leaves: must be a whole number \(1 or more\), got 0$' -- "$MPT" count-allocs --leaves 0
expect "count-allocs leaves past the most, refused before measuring" 2 '^$' '^mpt: error: usage: count-allocs: --leaves: is at most 10000000, got 10000001$' -- "$MPT" count-allocs --leaves 100,10000001
expect "count-allocs negative leaves" 2 '^$' '^mpt: error: usage: count-allocs: --leaves: must be a whole number \(1 or more\), got -1$' -- "$MPT" count-allocs --leaves 5,-1
expect "count-allocs empty leaves item" 2 '^$' '^mpt: error: usage: count-allocs: --leaves: has an empty item: 1,,2$' -- "$MPT" count-allocs --leaves 1,,2
expect "count-allocs trailing comma" 2 '^$' '^mpt: error: usage: count-allocs: --leaves: has an empty item: 3,$' -- "$MPT" count-allocs --leaves 3,
# mpt diff (key/value files)
expect "diff lines in key order" 1 '^~ 0x646f67 0x7075707079 0x6b697474656e - 0x646f6765 0x636f696e \+ 0x646f67676c6573776f727468 0x636174 $' '^$' -- bash -c "set -o pipefail; '$MPT' diff '$FIX/diff_a.json' '$FIX/diff_b.json' | tr '\n' ' '"
expect "diff reversed" 1 '^~ 0x646f67 0x6b697474656e 0x7075707079 \+ 0x646f6765 0x636f696e - 0x646f67676c6573776f727468 0x636174 $' '^$' -- bash -c "set -o pipefail; '$MPT' diff '$FIX/diff_b.json' '$FIX/diff_a.json' | tr '\n' ' '"
expect "diff --json" 1 '^\{"added":\{"0x646f67676c6573776f727468":"0x636174"\},"removed":\{"0x646f6765":"0x636f696e"\},"changed":\{"0x646f67":\["0x7075707079","0x6b697474656e"\]\}\}$' '^$' -- "$MPT" diff --json "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff identical" 0 '^$' '^$' -- "$MPT" diff "$FIX/dogs.json" "$FIX/dogs.json"
expect "diff identical --json" 0 '^\{"added":\{\},"removed":\{\},"changed":\{\}\}$' '^$' -- "$MPT" diff --json "$FIX/diff_a.json" "$FIX/diff_a.json"
expect "diff identical reads nothing" 0 '^$' '^mpt: stats: nodes read: A 0, B 0$' -- "$MPT" diff --stats "$FIX/dogs.json" "$FIX/dogs.json"
expect "diff --stats" 1 '^~ 0x646f67 ' '^mpt: stats: nodes read: A [1-9][0-9]*, B [1-9][0-9]*$' -- "$MPT" diff --stats "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff -q --stats: no stats line, as root" 1 '^~ 0x646f67 ' '^$' -- "$MPT" -q diff --stats "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff from empty" 1 '^\+ 0x646f65 0x7265696e64656572$' '^$' -- "$MPT" diff "$FIX/empty.json" "$FIX/dogs.json"
expect "diff to empty" 1 '^- 0x646f67 0x7075707079$' '^$' -- "$MPT" diff "$FIX/dogs.json" "$FIX/empty.json"
expect "diff --secure" 1 '^\+ 0x41791102999c339c844880b23950704cc43aa840f3739e365323cda4dfa89e7a 0x7075707079$' '^$' -- "$MPT" diff --secure "$FIX/empty.json" "$FIX/dogs.json"
expect "diff A from stdin" 1 '^\+ 0x646f67676c6573776f727468 0x636174$' '^$' -- sh -c "'$MPT' diff - '$FIX/diff_b.json' < '$FIX/diff_a.json'"
expect "diff --nodes" 1 '^write 0x00$' '^$' -- "$MPT" diff --nodes "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff --nodes to empty deletes the root" 1 '^delete 0x00$' '^$' -- "$MPT" diff --nodes "$FIX/dogs.json" "$FIX/empty.json"
expect "diff --nodes --json" 1 '^\{"write":\["0x00",.*\],"delete":\[\]\}$' '^$' -- "$MPT" diff --nodes --json "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff --nodes identical" 0 '^$' '^$' -- "$MPT" diff --nodes "$FIX/diff_b.json" "$FIX/diff_b.json"
expect "diff bad JSON" 2 '^$' '^mpt: error: malformed JSON: .*trunc.json: line 2, column 1: ' -- "$MPT" diff "$FIX/dogs.json" "$tmp/trunc.json"
expect "diff missing file" 2 '^$' '^mpt: error: .*no-such-file.json' -- "$MPT" diff "$tmp/no-such-file.json" "$FIX/dogs.json"
expect "diff both stdin" 2 '^$' '^mpt: error: usage: diff: A and B cannot both be stdin$' -- "$MPT" diff - -
expect "diff one operand" 2 '^$' '^mpt: error: ' -- "$MPT" diff "$FIX/dogs.json"
expect "diff help" 0 'nodes' '^$' -- "$MPT" diff --help

# get-node and diff on trie files.
"$MPT" build "$FIX/diff_a.json" -o "$tmp/diff_a.db" >/dev/null
"$MPT" build "$FIX/diff_b.json" -o "$tmp/diff_b.db" >/dev/null
"$MPT" diff "$FIX/diff_a.json" "$FIX/diff_b.json" >"$tmp/diff_kv.txt"
expect "diff of trie files equals diff of their k/v files" 0 '^$' '^$' -- sh -c "'$MPT' diff '$tmp/diff_a.db' '$tmp/diff_b.db' | cmp - '$tmp/diff_kv.txt'"
expect "diff of a trie file against itself" 0 '^$' '^$' -- "$MPT" diff "$tmp/diff_a.db" "$tmp/diff_a.db"
expect "diff trie file against k/v file" 0 '^$' '^$' -- "$MPT" diff "$tmp/diff_a.db" "$FIX/diff_a.json"
expect "diff unknown trie" 3 '^$' '^mpt: error: .*no trie named nope' -- "$MPT" diff --trie nope "$tmp/diff_a.db" "$tmp/diff_b.db"
"$MPT" build "$FIX/dogs.json" -o "$tmp/dogs.db" >/dev/null
cp "$tmp/dogs.db" "$tmp/replaced.db"
printf '{"dog": "puppy"}' >"$tmp/one.json"
expect "build --replace --json: fields in order, the old rows counted" 0 '^\{"root":"0x[0-9a-f]{64}","trie":"main","created":true,"rowsWritten":1,"rowsDeleted":[1-9][0-9]*\}$' '^$' -- "$MPT" build --replace --json "$tmp/one.json" -o "$tmp/replaced.db"
expect "get-node root" 0 '"status":"found"' '^$' -- "$MPT" get-node --json "$tmp/dogs.db" 0x00
expect "get-node unknown trie" 3 '^$' '^mpt: error: no such trie: .*dogs\.db: no trie named nope; the file holds 1: main$' -- "$MPT" get-node --trie nope "$tmp/dogs.db" 0x00
expect "dump negative limit" 2 '^$' '^mpt: error: usage: dump: --limit: must be a whole number \(0 or more\), got -1$' -- "$MPT" dump --limit -1 "$tmp/dogs.db"
expect "get-node negative max-bytes" 2 '^$' '^mpt: error: usage: get-node: --max-bytes: must be a whole number' -- "$MPT" get-node --max-bytes -5 "$tmp/dogs.db" 0x00
expect "get-node root text" 0 '^0x[0-9a-f]+$' '^$' -- "$MPT" get-node "$tmp/dogs.db" 0x00
expect "get-node absent" 0 '"status":"absent"' '^$' -- "$MPT" get-node --json "$tmp/dogs.db" 0x1f
expect "get-node bad path set" 2 '^$' '^mpt: error: ' -- "$MPT" get-node "$tmp/dogs.db" 0xzz
expect "get-node not a trie file" 3 '^$' '^mpt: error: ' -- "$MPT" get-node "$FIX/dogs.json" 0x00
# mpt proof --verify and mpt verify-range, on documents of the trie in proof_trie.json
# (fixtures/README-proofs.md). The invalid and malformed documents are derived with sed.
expect "proof trie root" 0 '^0xbe43842c8b1d58bbcae0c669211221642f7e6dcd9cfac66ff74f038f0637937b$' '^$' -- "$MPT" root "$FIX/proof_trie.json"
expect "proof: present key" 0 '^valid$' '^$' -- "$MPT" proof --verify "$FIX/proof_present.json"
expect "proof: absent key" 0 '^valid$' '^$' -- "$MPT" proof --verify "$FIX/proof_absent.json"
expect "proof: --json" 0 '^\{"valid":true,"error":null\}$' '^$' -- "$MPT" proof --verify "$FIX/proof_present.json" --json
expect "proof: from stdin" 0 '^valid$' '^$' -- sh -c "'$MPT' proof --verify - < '$FIX/proof_present.json'"
sed 's/"value": "0xcc/"value": "0xcd/' "$FIX/proof_present.json" >"$tmp/p_wrong_value.json"
expect "proof: wrong value" 1 '^invalid: value mismatch$' '^$' -- "$MPT" proof --verify "$tmp/p_wrong_value.json"
expect "proof: wrong value --json" 1 '^\{"valid":false,"error":"value mismatch"\}$' '^$' -- "$MPT" proof --verify "$tmp/p_wrong_value.json" --json
sed 's/"value": "0xcc*"/"value": null/' "$FIX/proof_present.json" >"$tmp/p_claims_absent.json"
expect "proof: present key claimed absent" 1 '^invalid: key is present but the document claims absence$' '^$' -- "$MPT" proof --verify "$tmp/p_claims_absent.json"
sed 's/"value": null/"value": "0x01"/' "$FIX/proof_absent.json" >"$tmp/p_claims_value.json"
expect "proof: absent key claimed present" 1 '^invalid: the path diverges yet a value is claimed$' '^$' -- "$MPT" proof --verify "$tmp/p_claims_value.json"
sed 's/"proof": \["0xf5[0-9a-f]*", /"proof": [/' "$FIX/proof_present.json" >"$tmp/p_no_root.json"
expect "proof: root node dropped" 1 '^invalid: root node missing$' '^$' -- "$MPT" proof --verify "$tmp/p_no_root.json"
sed 's/"0xe230a0cc/"0xe230a0cd/' "$FIX/proof_present.json" >"$tmp/p_flipped.json"
expect "proof: flipped byte" 1 '^invalid: node for hash 0xdb64f38b[0-9a-f]{56} missing at depth 1$' '^$' -- "$MPT" proof --verify "$tmp/p_flipped.json"
# Malformed documents: exit 2, one line.
printf '{"root": "0x12",' >"$tmp/p_trunc.json"
expect "proof: malformed JSON" 2 '^$' '^mpt: error: malformed JSON: .*p_trunc.json: ' -- "$MPT" proof --verify "$tmp/p_trunc.json"
echo '[]' >"$tmp/p_array.json"
expect "proof: an empty array" 2 '^$' '^mpt: error: bad input: .*p_array.json: an empty array: no proof document$' -- "$MPT" proof --verify "$tmp/p_array.json"
sed '/"proof"/d; s/"value": \("0xc*"\),/"value": \1/' "$FIX/proof_present.json" >"$tmp/p_no_proof.json"
expect "proof: missing field" 2 '^$' '^mpt: error: .*missing field "proof"' -- "$MPT" proof --verify "$tmp/p_no_proof.json"
sed 's/"key": "0x30"/"key": "0x3"/' "$FIX/proof_present.json" >"$tmp/p_odd_key.json"
expect "proof: odd hex key" 2 '^$' '^mpt: error: .*field "key": odd number of hex digits' -- "$MPT" proof --verify "$tmp/p_odd_key.json"
sed 's/"key": "0x30"/"key": "30"/' "$FIX/proof_present.json" >"$tmp/p_no_prefix.json"
expect "proof: hex without 0x" 2 '^$' '^mpt: error: .*field "key": missing 0x prefix' -- "$MPT" proof --verify "$tmp/p_no_prefix.json"
sed 's/"root": "0xbe/"root": "0x/' "$FIX/proof_present.json" >"$tmp/p_short_root.json"
expect "proof: 31-byte root" 2 '^$' '^mpt: error: .*field "root": expected 32 bytes, got 31' -- "$MPT" proof --verify "$tmp/p_short_root.json"
sed 's/"0xe230a0cc*"/7/' "$FIX/proof_present.json" >"$tmp/p_item.json"
expect "proof: proof item not a string" 2 '^$' '^mpt: error: .*field "proof" item 2: not a hex string' -- "$MPT" proof --verify "$tmp/p_item.json"
sed 's/"0xe230a0cc/"0xe230a0zz/' "$FIX/proof_present.json" >"$tmp/p_nonhex.json"
expect "proof: non-hex proof item" 2 '^$' '^mpt: error: .*field "proof" item 2: not a hex digit' -- "$MPT" proof --verify "$tmp/p_nonhex.json"
expect "proof: --verify required" 2 '^$' '^mpt: error: .*--verify' -- "$MPT" proof
expect "proof: missing file" 2 '^$' '^mpt: error: .*no-such.json: No such file' -- "$MPT" proof --verify "$tmp/no-such.json"
# Without "value" nothing is claimed: the answer is what the proof proves.
sed '/"value"/d' "$FIX/proof_present.json" >"$tmp/p_no_value.json"
expect "proof: no value, present" 0 '^proves value 0xcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc$' '^$' -- "$MPT" proof --verify "$tmp/p_no_value.json"
sed '/"value"/d' "$FIX/proof_absent.json" >"$tmp/p_no_value_absent.json"
expect "proof: no value, absent" 0 '^proves absence$' '^$' -- "$MPT" proof --verify "$tmp/p_no_value_absent.json"
expect "proof: no value --json" 0 '^\{"valid":true,"error":null,"value":"0xcc' '^$' -- "$MPT" proof --verify "$tmp/p_no_value.json" --json
sed 's/"0xe230a0cc/"0xe230a0cd/' "$tmp/p_no_value.json" >"$tmp/p_no_value_flipped.json"
expect "proof: no value, flipped byte" 1 '^invalid: node for hash 0xdb64f38b' '^$' -- "$MPT" proof --verify "$tmp/p_no_value_flipped.json"
# --root: the document's root must be the trusted one.
expect "proof: --root, the document's" 0 '^valid$' '^$' -- "$MPT" proof --verify "$FIX/proof_present.json" --root 0xbe43842c8b1d58bbcae0c669211221642f7e6dcd9cfac66ff74f038f0637937b
expect "proof: --root, another" 1 '^invalid: the document.s root 0xbe43842c.* is not the trusted root 0x56e81f17' '^$' -- "$MPT" proof --verify "$FIX/proof_present.json" --root 0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421
expect "proof: --root not 32 bytes" 2 '^$' '^mpt: error: usage: proof: --root: not a 32-byte 0x hex root: 0x00$' -- "$MPT" proof --verify "$FIX/proof_present.json" --root 0x00
expect "proof: --root without --verify" 2 '^$' '^mpt: error: usage: proof: --root goes with --verify$' -- "$MPT" proof "$FIX/dogs.json" dog --root 0xbe43842c8b1d58bbcae0c669211221642f7e6dcd9cfac66ff74f038f0637937b

expect "verify-range: existent edges" 0 '^valid more=true$' '^$' -- "$MPT" verify-range "$FIX/range_valid.json"
expect "verify-range: absent first, to the end" 0 '^valid more=false$' '^$' -- "$MPT" verify-range "$FIX/range_tail.json"
expect "verify-range: whole trie, no proof" 0 '^valid more=false$' '^$' -- "$MPT" verify-range "$FIX/range_whole.json"
expect "verify-range: --json" 0 '^\{"valid":true,"more":true,"error":null\}$' '^$' -- "$MPT" verify-range --json "$FIX/range_valid.json"
expect "verify-range: gap" 1 '^invalid: root mismatch' '^$' -- "$MPT" verify-range "$FIX/range_gap.json"
expect "verify-range: gap --json" 1 '^\{"valid":false,"more":null,"error":"root mismatch.*"\}$' '^$' -- "$MPT" verify-range --json "$FIX/range_gap.json"
sed 's/"proof": \[.*\]/"proof": null/' "$FIX/range_valid.json" >"$tmp/r_null_proof.json"
expect "verify-range: null proof, not the whole trie" 1 '^invalid: the pairs are not the whole trie' '^$' -- "$MPT" verify-range "$tmp/r_null_proof.json"
sed 's/"0x0b"/"0x"/' "$FIX/range_valid.json" >"$tmp/r_empty_value.json"
expect "verify-range: empty value" 1 '^invalid: value 2 is empty' '^$' -- "$MPT" verify-range "$tmp/r_empty_value.json"
sed 's/"0x0b"/"0x0c"/' "$FIX/range_valid.json" >"$tmp/r_wrong_value.json"
expect "verify-range: wrong value" 1 '^invalid: root mismatch' '^$' -- "$MPT" verify-range "$tmp/r_wrong_value.json"
sed 's/"keys": \["0x10", "0x20"\]/"keys": ["0x10", "0x2000"]/' "$FIX/range_valid.json" >"$tmp/r_lengths.json"
expect "verify-range: keys of unequal length" 1 '^invalid: range proofs require keys of equal length' '^$' -- "$MPT" verify-range "$tmp/r_lengths.json"
sed -e 's/"first": "0x10"/"first": "0x40"/' -e 's/"keys": \[.*\]/"keys": []/' -e 's/"values": \[.*\]/"values": []/' "$FIX/range_valid.json" >"$tmp/r_empty_end.json"
expect "verify-range: no pairs after the last key" 0 '^valid more=false$' '^$' -- "$MPT" verify-range "$tmp/r_empty_end.json"
sed 's/"0x40"/"0x15"/' "$tmp/r_empty_end.json" >"$tmp/r_empty_mid.json"
expect "verify-range: no pairs but entries right" 1 '^invalid: no pairs are given but entries exist right of first$' '^$' -- "$MPT" verify-range "$tmp/r_empty_mid.json"
sed 's/"values": \["0x0a", /"values": [/' "$FIX/range_valid.json" >"$tmp/r_counts.json"
expect "verify-range: keys and values differ in number" 2 '^$' '^mpt: error: .*"keys" has 2 items but "values" has 1' -- "$MPT" verify-range "$tmp/r_counts.json"
sed '/"first"/d' "$FIX/range_valid.json" >"$tmp/r_no_first.json"
expect "verify-range: missing first" 2 '^$' '^mpt: error: .*missing field "first"' -- "$MPT" verify-range "$tmp/r_no_first.json"
sed 's/"proof": \[.*\]/"proof": "0x00"/' "$FIX/range_valid.json" >"$tmp/r_proof_string.json"
expect "verify-range: proof not an array" 2 '^$' '^mpt: error: .*field "proof": not an array' -- "$MPT" verify-range "$tmp/r_proof_string.json"
expect "verify-range: input required" 2 '^$' '^mpt: error: ' -- "$MPT" verify-range
expect "verify-range help" 0 'equal length' '^$' -- "$MPT" verify-range --help

# Proofs from a trie file, round trips through the verifiers.
"$MPT" build "$tmp/kv10k.json" -o "$tmp/kv10k.db" >/dev/null
k10=$(sed -n 2p "$tmp/kv10k.json" | cut -d'"' -f2)
expect "proof of a present key verifies" 0 '^valid$' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' $k10 | '$MPT' proof --verify -"
expect "proof document shape" 0 '"proof":\["0x' '^$' -- "$MPT" proof "$tmp/kv10k.db" "$k10"
expect "proof of an absent key verifies" 0 '^valid$' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' 0x0000000000000000000000000000000000000000000000000000000000000001 | '$MPT' proof --verify -"
expect "absent key proof claims null" 0 '"value":null' '^$' -- "$MPT" proof "$tmp/kv10k.db" 0x0000000000000000000000000000000000000000000000000000000000000001
expect "tampered value fails" 1 '^invalid: ' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' $k10 | sed 's/\"value\":\"0x./\"value\":\"0x0/' | '$MPT' proof --verify -"
expect "range round trip, more=true" 0 '^valid more=true$' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' --range 0x00 --limit 100 | '$MPT' verify-range -"
expect "range round trip to the end" 0 '^valid more=false$' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' --range 0xff00000000000000000000000000000000000000000000000000000000000000 | '$MPT' verify-range -"
expect "range with --to" 0 '^valid more=true$' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' --range 0x10 --to 0x20 | '$MPT' verify-range -"
expect "range with a dropped pair fails" 1 '^invalid: ' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' --range 0x00 --limit 5 --json | sed 's/\"keys\":\[\"0x[0-9a-f]*\",/\"keys\":[/; s/\"values\":\[\"0x[0-9a-f]*\",/\"values\":[/' | '$MPT' verify-range -"
expect "proof without a key" 2 '^$' '^mpt: error: ' -- "$MPT" proof "$tmp/kv10k.db"
expect "proof of a missing file" 2 '^$' '^mpt: error: ' -- "$MPT" proof "$tmp/nope.db" 0x00
expect "proof --limit 0" 2 '^$' '^mpt: error: usage: proof: --limit: must be a whole number \(1 or more\), got 0$' -- "$MPT" proof "$tmp/kv10k.db" --range 0x00 --limit 0
expect "proof --limit -3, as --limit 0" 2 '^$' '^mpt: error: usage: proof: --limit: must be a whole number \(1 or more\), got -3$' -- "$MPT" proof "$tmp/kv10k.db" --range 0x00 --limit -3

# A storage trie named by account hash, in a file without a main trie.
acct=0x$(printf 'ab%.0s' $(seq 32))
"$MPT" build "$FIX/dogs.json" -o "$tmp/storage.db" --trie "$acct" >/dev/null
expect "get-node in a storage trie" 0 '"status":"found"' '^$' -- "$MPT" get-node --json "$tmp/storage.db" "$acct,0x00"
expect "get-node of a storage trie the file lacks" 0 '"status":"absent"' '^$' -- "$MPT" get-node --json "$tmp/storage.db" "0x$(printf 'cd%.0s' $(seq 32)),0x00"
expect "unknown command is named" 2 '^$' '^mpt: error: usage: unknown command: frobnicate$' -- "$MPT" frobnicate
expect "unknown option before a command is named" 2 '^$' '^mpt: error: usage: unknown option: --bogus ' -- "$MPT" --bogus
expect "no command" 2 '^$' '^mpt: error: usage: a command is required; `mpt help` lists them$' -- "$MPT"
# A write that fails part way through a build: the process may not grow a file beyond 32 KiB
# (ulimit -f; 64 blocks of 512 bytes in dash, of 1 KiB in bash, either is far too small for
# 10k pairs). Exit 3 with one line; the file keeps its previous root, checks clean and reads.
# (A full disk proper, SQLITE_FULL, is tested at the library level in tests/fault_test.cpp.)
expect "build before a failed write" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- "$MPT" build "$FIX/dogs.json" -o "$tmp/limited.db"
expect "build beyond a file-size limit" 3 '^$' '^mpt: error: .*limited\.db.*(I/O error|full)' -- sh -c "ulimit -f 64 && trap '' XFSZ && exec '$MPT' build '$tmp/kv10k.json' -o '$tmp/limited.db'"
expect "root kept after a failed write" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- "$MPT" root "$tmp/limited.db"
expect "root --threads with a trie file" 2 '^$' '^mpt: error: usage: root: --threads applies to key/value input' -- "$MPT" root --threads 2 "$tmp/limited.db"
expect "check clean after a failed write" 0 ' 0 problems$' '^$' -- "$MPT" check "$tmp/limited.db"
expect "get after a failed write" 0 '^0x7075707079$' '^$' -- "$MPT" get "$tmp/limited.db" dog
expect "build after a failed write" 0 '^0xb08e013562201a540ab01daebcc0d9c6d1cacef6b4730f8fa555015ee14b0867$' '^$' -- "$MPT" build --replace "$tmp/kv10k.json" -o "$tmp/limited.db"
# A new file is written whole and named only when complete: one that fails leaves no file.
expect "build of a new file beyond a file-size limit" 3 '^$' '^mpt: error: (storage I/O error|disk full): .*limited_new\.db: write: ' -- sh -c "ulimit -f 64 && trap '' XFSZ && exec '$MPT' build '$tmp/kv10k.json' -o '$tmp/limited_new.db'"
expect "no file after the failed build of a new one" 0 '^$' '^$' -- sh -c "! ls '$tmp'/limited_new.db* 2>/dev/null"
# The hashing threads change neither the root nor a byte of the file.
expect "build --threads 1" 0 '^0xb08e0135' '^$' -- "$MPT" build --threads 1 "$tmp/kv10k.json" -o "$tmp/threads1.db"
# A new file's pages go past the page cache where the file system allows it, or through it
# under MPT_DIRECT_WRITES=off: the same bytes either way, for a file of one write and for one
# of several (60k pairs make some 8 MB, written 4 MB at a time), and the same error past a
# file-size limit. Another value of the switch is refused.
expect "build through the page cache" 0 '^0xb08e0135' '^$' -- env MPT_DIRECT_WRITES=off "$MPT" build "$tmp/kv10k.json" -o "$tmp/cached.db"
expect "root without huge pages, the same root" 0 '^0xb08e0135' '^$' -- env MPT_HUGE_PAGES=off "$MPT" root "$tmp/kv10k.json"
expect "MPT_HUGE_PAGES of another value" 2 '^$' '^mpt: error: usage: MPT_HUGE_PAGES=yes: expected on or off$' -- env MPT_HUGE_PAGES=yes "$MPT" root "$tmp/kv10k.json"
expect "the file through the page cache is the same" 0 '^$' '^$' -- cmp "$tmp/cached.db" "$tmp/threads1.db"
expect "generate 60k pairs" 0 '^$' '^$' -- "$GEN" 60000 "$tmp/kv60k.json"
expect "build of 60k pairs" 0 '^0x' '^$' -- env MPT_DIRECT_WRITES=on "$MPT" build "$tmp/kv60k.json" -o "$tmp/kv60k_direct.db"
expect "build of 60k pairs through the page cache" 0 '^0x' '^$' -- env MPT_DIRECT_WRITES=off "$MPT" build "$tmp/kv60k.json" -o "$tmp/kv60k_cached.db"
expect "the 60k files are the same" 0 '^$' '^$' -- cmp "$tmp/kv60k_direct.db" "$tmp/kv60k_cached.db"
expect "the 60k file checks clean" 0 ' 0 problems$' '^$' -- "$MPT" check "$tmp/kv60k_cached.db"
expect "build through the page cache beyond a file-size limit" 3 '^$' '^mpt: error: (storage I/O error|disk full): .*limited_cached\.db: write: ' -- sh -c "ulimit -f 64 && trap '' XFSZ && MPT_DIRECT_WRITES=off exec '$MPT' build '$tmp/kv10k.json' -o '$tmp/limited_cached.db'"
expect "MPT_DIRECT_WRITES unknown: refused" 2 '^$' '^mpt: error: usage: MPT_DIRECT_WRITES=yes: expected on or off$' -- env MPT_DIRECT_WRITES=yes "$MPT" root "$tmp/kv10k.json"
expect "build --threads 3" 0 '^0xb08e0135' '^$' -- "$MPT" build --threads 3 "$tmp/kv10k.json" -o "$tmp/threads3.db"
expect "files of 1 and 3 threads are the same" 0 '^$' '^$' -- cmp "$tmp/threads1.db" "$tmp/threads3.db"
expect "build --threads 0" 2 '^$' '^mpt: error: .*--threads' -- "$MPT" build --threads 0 "$tmp/kv10k.json" -o "$tmp/threads0.db"
expect "proof KEY with a range-only flag" 2 '^$' '^mpt: error: usage: proof: --to, --limit and --max-bytes go with --range$' -- "$MPT" proof "$tmp/kv10k.db" "$k10" --limit 5

# Inputs that are not regular files: a FIFO is read once (looking for a trie file's header
# must not consume it); an endless stream of bytes no JSON holds ends at the first one.
mkfifo "$tmp/kv.fifo"
(printf '{"dog": "puppy"}' >"$tmp/kv.fifo" &)
expect "root of a FIFO" 0 '^0xed6e08740e4a267eca9d4740f71f573e9aabbcc739b16a2fa6c1baed5ec21278$' '^$' -- timeout 20 "$MPT" root "$tmp/kv.fifo"
# The reader first, the writer later: the FIFO must be read from the descriptor that first
# met the writer (opened twice, the second open waited for a writer that had gone).
mkfifo "$tmp/late.fifo"
printf '(sleep 0.3; printf %s > "%s") &\nexec timeout 20 "%s" root "%s"\n' \
    "'{\"dog\": \"puppy\"}'" "$tmp/late.fifo" "$MPT" "$tmp/late.fifo" >"$tmp/late.sh"
expect "root of a FIFO whose writer comes later" 0 '^0xed6e08740e4a267eca9d4740f71f573e9aabbcc739b16a2fa6c1baed5ec21278$' '^$' -- sh "$tmp/late.sh"
expect "root of /dev/zero ends" 2 '^$' '^mpt: error: malformed JSON: /dev/zero: line 1, column 1: ' -- timeout 5 "$MPT" root /dev/zero
expect "proof --verify of an endless stream ends" 2 '^$' '^mpt: error: malformed JSON: -: line 1, column 1: expected a value$' -- timeout 5 sh -c "yes | '$MPT' proof --verify -"
expect "diff names the kind once" 2 '^$' '^mpt: error: malformed JSON: /dev/zero: line 1, column 1: expected an object' -- timeout 5 "$MPT" diff /dev/zero "$FIX/dogs.json"
# A trie file where a document goes is named as one, by every reader of documents.
sqlite_doc='^mpt: error: malformed JSON: [^ ]*dogs.db: an SQLite database \(a trie file\?\), not a document$'
expect "build of a trie file" 2 '^$' "$sqlite_doc" -- "$MPT" build "$tmp/dogs.db" -o "$tmp/from-trie.db"
expect "root --state of a trie file" 2 '^$' "$sqlite_doc" -- "$MPT" root --state "$tmp/dogs.db"
expect "proof --verify of a trie file" 2 '^$' "$sqlite_doc" -- "$MPT" proof --verify "$tmp/dogs.db"
expect "verify-range of a trie file from stdin" 2 '^$' '^mpt: error: malformed JSON: -: an SQLite database' -- sh -c "'$MPT' verify-range - < '$tmp/dogs.db'"
expect "root --block of a trie file" 2 '^$' '^mpt: error: bad input: [^ ]*dogs.db: an SQLite database \(a trie file\?\), not RLP$' -- "$MPT" root --block "$tmp/dogs.db"
expect "rlp decode of a trie file from stdin" 2 '^$' '^mpt: error: bad input: -: an SQLite database \(a trie file\?\), not RLP$' -- sh -c "'$MPT' rlp decode - < '$tmp/dogs.db'"
expect "witness check of a trie file" 2 '^$' '^mpt: error: bad input: [^ ]*dogs.db: an SQLite database \(a trie file\?\), not a witness$' -- "$MPT" witness check "$tmp/dogs.db"
# Trie file names are file names: not SQLite URIs, not ":memory:", not a device.
expect "build -o file:NAME writes the file of that name" 0 '^0x8aad789d' '^$' -- sh -c "cd '$tmp' && '$MPT' build '$FIX/dogs.json' -o file:uri.db && test -s 'file:uri.db' && test ! -e uri.db"
expect "build -o :memory: writes a file" 0 '^0x8aad789d' '^$' -- sh -c "cd '$tmp' && '$MPT' build '$FIX/dogs.json' -o :memory: && test -s ./:memory:"
expect "build -o a device" 3 '^$' '^mpt: error: cannot open trie file: /dev/null: not a regular file$' -- "$MPT" build "$FIX/dogs.json" -o /dev/null

# count-allocs stopped by a signal removes its temporary trie file. Files another run left in
# $TMPDIR before this one, or made there by another run at the same time, are not its own:
# it gets a folder of its own.
mkdir "$tmp/allocs-tmp"
temp_files() { find "$tmp/allocs-tmp" -maxdepth 1 -name "mpt-count-allocs-*" 2>/dev/null | sort; }
temp_before=$(temp_files)
TMPDIR="$tmp/allocs-tmp" "$MPT" count-allocs --leaves 400000 --samples 1 >/dev/null 2>&1 &
allocs_pid=$!
for _ in $(seq 100); do
    comm -13 <(echo "$temp_before") <(temp_files) | grep -q -- '-wal$' && break
    sleep 0.05
done
started=$(comm -13 <(echo "$temp_before") <(temp_files) | wc -l)
kill -INT "$allocs_pid"
rc=0
wait "$allocs_pid" || rc=$?
left=$(comm -13 <(echo "$temp_before") <(temp_files) | wc -l)
[ "$started" -gt 0 ] && [ "$rc" -eq 130 ] && [ "$left" -eq 0 ]
case_result "count-allocs interrupted: exit 130, its temporary files gone" $? \
    "$started files made, exit $rc, $left left"

# mpt keccak: the key/value rule for the argument and for stdin (--raw: stdin's bytes).
expect "keccak of nothing" 0 '^0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470$' '^$' -- "$MPT" keccak 0x
expect "keccak of text" 0 '^0x41791102999c339c844880b23950704cc43aa840f3739e365323cda4dfa89e7a$' '^$' -- "$MPT" keccak dog
expect "keccak of hex" 0 '^0x41791102999c339c844880b23950704cc43aa840f3739e365323cda4dfa89e7a$' '^$' -- "$MPT" keccak 0x646f67
expect "keccak of stdin" 0 '^0x41791102999c339c844880b23950704cc43aa840f3739e365323cda4dfa89e7a$' '^$' -- sh -c "printf dog | '$MPT' keccak -"
expect "keccak of stdin by default" 0 '^0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470$' '^$' -- "$MPT" keccak
# Binary stdin, NUL bytes included: keccak256(0x00) and of 32 zero bytes.
expect "keccak of a NUL byte" 0 '^0xbc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a$' '^$' -- sh -c "printf '\\000' | '$MPT' keccak -"
expect "keccak of 32 zero bytes" 0 '^0x290decd9548b62a8d60345a988386fc84ba6bc95484008f6362f93160ef3e563$' '^$' -- sh -c "head -c 32 /dev/zero | '$MPT' keccak -"
# Standard input that is 0x hex text is the bytes it spells, as the argument is: a pipe from
# rlp encode hashes the item, not its text (keccak256(0xc101)); --raw hashes the text itself.
expect "keccak of hex text on stdin" 0 '^0x6c36223290bd3b7c85d6080354199709dfdd05c42756ae6f8edba873ae2adcd1$' '^$' -- sh -c "'$MPT' rlp encode '[\"0x01\"]' | '$MPT' keccak -"
expect "keccak --raw of hex text on stdin" 0 '^0xcb70abda8154f737a3d0e843dcd64d3cdb3c657a58e364236e1a5ba6b7b84e00$' '^$' -- sh -c "printf '0xc101\\n' | '$MPT' keccak --raw -"
expect "keccak of 0x and white space on stdin" 0 '^0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470$' '^$' -- sh -c "printf ' 0x \\n' | '$MPT' keccak -"
expect "keccak of stdin, odd hex" 2 '^$' '^mpt: error: bad hex: -: byte 5: an odd number of hex digits \(standard input that starts with 0x is hex; --raw hashes its bytes as they are\)$' -- sh -c "printf '0xc10' | '$MPT' keccak -"
expect "keccak of stdin, 0x and then text" 2 '^$' '^mpt: error: bad hex: -: byte 2: not a hex digit: z ' -- sh -c "printf '0xzz' | '$MPT' keccak -"
expect "keccak of stdin, text after the hex" 2 '^$' '^mpt: error: bad hex: -: byte 7: more after the hex text ' -- sh -c "printf '0xc101 x' | '$MPT' keccak -"
expect "keccak of digits that are no 0x text" 0 '^0x3eb0fa86b29ff88ffdd4458cd1f554dd6ad43237a86e38c862ab6c440a387964$' '^$' -- sh -c "printf '0123' | '$MPT' keccak -"
expect "keccak --json" 0 '^\{"keccak256":"0x41791102' '^$' -- "$MPT" keccak --json dog
expect "keccak odd hex" 2 '^$' '^mpt: error: bad hex: argument 0x123: odd number of hex digits$' -- "$MPT" keccak 0x123

# mpt rlp: decode and encode, by hand (the ethereum/tests vectors: scripts/rlp-check.sh).
expect "rlp decode list" 0 '^\["0x636174","0x646f67"\]$' '^$' -- "$MPT" rlp decode 0xc88363617483646f67
expect "rlp decode nesting" 0 '^\[\[\],\[\[\]\],\[\[\],\[\[\]\]\]\]$' '^$' -- "$MPT" rlp decode 0xc7c0c1c0c3c0c1c0
expect "rlp decode long string" 0 '^"0x(61){56}"$' '^$' -- "$MPT" rlp decode "0xb838$(printf '61%.0s' $(seq 56))"
expect "rlp decode binary stdin" 0 '^\["0x01","0x02"\]$' '^$' -- sh -c "printf '\\302\\001\\002' | '$MPT' rlp decode -"
expect "rlp decode hex stdin" 0 '^\[\]$' '^$' -- sh -c "echo 0xc0 | '$MPT' rlp decode -"
expect "rlp encode" 0 '^0xc88363617483646f67$' '^$' -- "$MPT" rlp encode '["cat","dog"]'
expect "rlp encode bytes and lists" 0 '^0xc780c0c1c07f8180$' '^$' -- "$MPT" rlp encode '["0x",[],[[]],"0x7f","0x80"]'
expect "rlp encode stdin" 0 '^0x83646f67$' '^$' -- sh -c "echo '\"dog\"' | '$MPT' rlp encode -"
expect "rlp round trip" 0 '^\["0x",\[\],\["0x7f","0x80"\]\]$' '^$' -- sh -c "'$MPT' rlp encode '[\"0x\",[],[\"0x7f\",\"0x80\"]]' | '$MPT' rlp decode -"
expect "rlp decode non-canonical byte" 2 '^$' '^mpt: error: non-canonical RLP: argument: byte 2: single byte below 0x80 with a string header$' -- "$MPT" rlp decode 0xc3c28101
expect "rlp decode long form for short" 2 '^$' '^mpt: error: non-canonical RLP: argument: byte 0: long form for a short payload$' -- "$MPT" rlp decode 0xb80161
expect "rlp decode truncated list" 2 '^$' '^mpt: error: RLP truncated: argument: byte 0: the item runs past the end of the input$' -- "$MPT" rlp decode 0xc5010203
expect "rlp decode item past its list" 2 '^$' '^mpt: error: RLP truncated: argument: byte 1: the item runs past the end of its list$' -- "$MPT" rlp decode 0xc28201
expect "rlp decode trailing bytes" 2 '^$' '^mpt: error: trailing bytes after RLP item: argument: byte 1: 1 bytes after the item$' -- "$MPT" rlp decode 0x0102
expect "rlp decode empty" 2 '^$' '^mpt: error: RLP truncated: argument: byte 0: no item' -- "$MPT" rlp decode 0x
expect "rlp decode without 0x" 2 '^$' '^mpt: error: usage: rlp decode: HEX must be 0x hex \(or - for stdin\), got c0$' -- "$MPT" rlp decode c0
expect "rlp decode of an empty argument" 2 '^$' '^mpt: error: usage: rlp decode: HEX must be 0x hex \(or - for stdin\), got nothing$' -- "$MPT" rlp decode ''
expect "rlp encode a number" 2 '^$' '^mpt: error: bad input: argument: value\[1\] \(line 1, column 7\): not a string or an array' -- "$MPT" rlp encode '["a", 5]'
expect "rlp encode bad JSON" 2 '^$' '^mpt: error: malformed JSON: argument: line 1' -- "$MPT" rlp encode '["a",'
expect "rlp unknown action" 2 '^$' '^mpt: error: usage: ' -- "$MPT" rlp frob 0x
# JSON where RLP goes, and RLP hex where JSON goes: the message says which was given.
expect "rlp decode of JSON" 2 '^$' '^mpt: error: bad input: -: JSON, not RLP: rlp decode reads RLP \(0x hex, or bytes on stdin\); rlp encode reads a JSON tree$' -- sh -c "echo '[\"0x01\"]' | '$MPT' rlp decode -"
expect "rlp decode of one byte that is a JSON text's" 0 '^"0x7b"$' '^$' -- sh -c "printf '{' | '$MPT' rlp decode -"
expect "rlp encode of RLP hex" 2 '^$' '^mpt: error: malformed JSON: argument: 0x hex, not JSON: rlp encode reads a JSON tree of 0x strings' -- "$MPT" rlp encode 0xc20102
echo 0xc20102 >"$tmp/one_item.hex"
expect "proof --verify of RLP hex" 2 '^$' '^mpt: error: malformed JSON: .*one_item.hex: one 0x hex item \(RLP\?\), not JSON: a JSON document goes here; mpt rlp decode reads RLP$' -- "$MPT" proof --verify "$tmp/one_item.hex"
expect "verify-range of RLP hex" 2 '^$' '^mpt: error: malformed JSON: .*one_item.hex: one 0x hex item \(RLP\?\), not JSON' -- "$MPT" verify-range "$tmp/one_item.hex"

# mpt slot: Solidity's storage layout. Known values: keccak256 of one and of two zero words
# (the first element of an array at slot 0, the entry of key 0 in a mapping at slot 0), of the
# word 1; the rest against mpt keccak of the words written out.
zero_word=$(printf '0%.0s' $(seq 64))
word() { printf '%064x' "$1"; }
expect "slot: an array at slot 0, element 0" 0 '^0x290decd9548b62a8d60345a988386fc84ba6bc95484008f6362f93160ef3e563$' '^$' -- "$MPT" slot 0 --index 0
expect "slot: an array at slot 1, element 0" 0 '^0xb10e2d527612073b26eecdfd717e6a320cf44b4afac2b0732d9fcbe2b7fa0cf6$' '^$' -- "$MPT" slot 1 --index 0
expect "slot: element 1 of 2-slot elements" 0 '^0x290decd9548b62a8d60345a988386fc84ba6bc95484008f6362f93160ef3e565$' '^$' -- "$MPT" slot 0 --index 1 --element-slots 2
expect "slot: a mapping at slot 0, key 0" 0 '^0xad3228b676f7d3cd4284a5443f17f1962b36e491b30a40b2405849e597ba5fb5$' '^$' -- "$MPT" slot 0 --key uint256:0
addr=a94f5374fce5edbc8e2a8697c15331677e6ebf0b
expect "slot: an address key" 0 "^$("$MPT" keccak "0x000000000000000000000000$addr$(word 9)")\$" '^$' -- "$MPT" slot 9 --key "address:0x$addr"
expect "slot: a hex position is the same" 0 "^$("$MPT" keccak "0x000000000000000000000000$addr$(word 9)")\$" '^$' -- "$MPT" slot 0x9 --key "address:0x$addr"
inner=$("$MPT" keccak "0x000000000000000000000000$addr$(word 3)")
expect "slot: a mapping in a mapping, outer key first" 0 "^$("$MPT" keccak "0x$(word 5)${inner#0x}")\$" '^$' -- "$MPT" slot 3 --key "address:0x$addr" --key uint8:5
expect "slot: a string key, unpadded" 0 "^$("$MPT" keccak "0x$(printf name | od -An -tx1 | tr -d ' \n')$(word 2)")\$" '^$' -- "$MPT" slot 2 --key string:name
expect "slot: a negative int key, sign-extended" 0 "^$("$MPT" keccak "0x$(printf 'f%.0s' $(seq 64))$(word 0)")\$" '^$' -- "$MPT" slot 0 --key int8:-1
expect "slot: a bytes4 key, padded on the right" 0 "^$("$MPT" keccak "0xdeadbeef$(printf '0%.0s' $(seq 56))$(word 0)")\$" '^$' -- "$MPT" slot 0 --key bytes4:0xdeadbeef
expect "slot: a bool key" 0 "^$("$MPT" keccak "0x$(word 1)$(word 4)")\$" '^$' -- "$MPT" slot 4 --key bool:true
expect "slot: an array in a mapping" 0 "^$("$MPT" slot "$("$MPT" slot 0 --key uint256:0)" --index 0)\$" '^$' -- "$MPT" slot 0 --key uint256:0 --index 0
expect "slot --json" 0 '^\{"slot":"0x290decd9548b62a8d60345a988386fc84ba6bc95484008f6362f93160ef3e563"\}$' '^$' -- "$MPT" slot --json 0 --index 0
expect "slot: the position alone" 0 "^0x$(word 10)\$" '^$' -- "$MPT" slot 10
expect "slot: int8 -128 fits" 0 '^0x' '^$' -- "$MPT" slot 0 --key int8:-128
expect "slot: int8 -129 does not" 2 '^$' '^mpt: error: usage: slot: --key: int8 key: out of range: "-129"$' -- "$MPT" slot 0 --key int8:-129
expect "slot: uint8 256 does not" 2 '^$' '^mpt: error: usage: slot: --key: uint8 key: out of range: "256"$' -- "$MPT" slot 0 --key uint8:256
expect "slot: an address of 19 bytes" 2 '^$' '^mpt: error: usage: slot: --key: address key: expected 20 bytes, got 19$' -- "$MPT" slot 0 --key address:0x${addr:2}
expect "slot: a key without a type" 2 '^$' '^mpt: error: usage: slot: --key: a key is TYPE:VALUE' -- "$MPT" slot 0 --key 5
expect "slot: an unknown type" 2 '^$' '^mpt: error: usage: slot: --key: no such key type: uint7' -- "$MPT" slot 0 --key uint7:1
expect "slot: a position past 2^256" 2 '^$' '^mpt: error: usage: slot: POSITION: not a number' -- "$MPT" slot "0x1$zero_word"
expect "slot: --slot of get reads it back" 0 '^0x' '^$' -- sh -c "'$MPT' slot 0 --key uint256:0 | grep -q '^0x[0-9a-f]\{64\}\$' && '$MPT' slot 0 --key uint256:0"

# mpt root --list: the trie of rlp(index) keys, against mpt root of the same pairs written out
# (0x80 is rlp(0), 0x01 rlp(1), 0x8180 rlp(128)).
printf '["0xaa","0xbbbb","0x%s"]' "$(printf 'cc%.0s' $(seq 40))" >"$tmp/list3.json"
printf '{"0x80":"0xaa","0x01":"0xbbbb","0x02":"0x%s"}' "$(printf 'cc%.0s' $(seq 40))" >"$tmp/list3_kv.json"
list3_root=$("$MPT" root "$tmp/list3_kv.json")
expect "root --list" 0 "^$list3_root\$" '^$' -- "$MPT" root --list "$tmp/list3.json"
expect "root --list from stdin, --json" 0 "^\\{\"root\":\"$list3_root\",\"items\":3\\}\$" '^$' -- sh -c "'$MPT' root --list - --json < '$tmp/list3.json'"
python_free_list=$(printf '"0x%02x",' $(seq 1 129) | sed 's/,$//')
printf '[%s]' "$python_free_list" >"$tmp/list129.json"
{ printf '{"0x80":"0x01"'; for i in $(seq 2 127); do printf ',"0x%02x":"0x%02x"' $((i - 1)) "$i"; done; printf ',"0x7f":"0x80","0x8180":"0x81"}'; } >"$tmp/list129_kv.json"
expect "root --list of 129 items" 0 "^$("$MPT" root "$tmp/list129_kv.json")\$" '^$' -- "$MPT" root --list "$tmp/list129.json"
expect "root --list of nothing" 0 '^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421$' '^$' -- sh -c "echo '[]' | '$MPT' root --list -"
echo '["0x01", 5]' >"$tmp/list_bad.json"
expect "root --list non-string item" 2 '^$' '^mpt: error: bad input: .*list_bad.json: item 2 \(line 1, column 10\): not a 0x hex string or an object$' -- "$MPT" root --list "$tmp/list_bad.json"
expect "root --list empty item" 2 '^$' '^mpt: error: bad input: .*: item 1 is empty$' -- sh -c "echo '[\"0x\"]' | '$MPT' root --list -"
expect "root --list with two inputs" 2 '^$' '^mpt: error: usage: root: --list takes one INPUT \(a JSON array of encoded items, or - for stdin\)$' -- "$MPT" root --list "$tmp/list3.json" "$FIX/dogs.json"
expect "root --list without an input" 2 '^$' '^mpt: error: usage: root: --list takes one INPUT' -- "$MPT" root --list
expect "root FILE --list, options between" 0 '^\{' '^$' -- "$MPT" root "$tmp/list3.json" --json --list
expect "root --block with --secure" 2 '^$' '^mpt: error: usage: root: --block takes no --vectors, --state, --trie, --secure or --threads$' -- "$MPT" root --block --secure "$FIX/dogs.json"

# mpt root --block: a block made with mpt rlp encode, whose header (17 fields) commits to a
# legacy transaction (a list) and a typed one (0x02 || payload, carried as a string), and to
# one withdrawal.
legacy='["0x01","0xaabbcc"]'
legacy_rlp=$("$MPT" rlp encode "$legacy")
typed=0x02$("$MPT" rlp encode '["0x0102","0x03"]' | cut -c3-)
withdrawal='["0x01","0x02","0x1111111111111111111111111111111111111111","0x64"]'
printf '["%s","%s"]' "$legacy_rlp" "$typed" >"$tmp/block_txs.json"
tx_root=$("$MPT" root --list "$tmp/block_txs.json")
printf '["%s"]' "$("$MPT" rlp encode "$withdrawal")" >"$tmp/block_ws.json"
w_root=$("$MPT" root --list "$tmp/block_ws.json")
block_of() {  # TX_ROOT W_ROOT: a block's hex
    "$MPT" rlp encode "[[\"0x01\",\"0x02\",\"0x03\",\"0x04\",\"$1\",\"0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421\",\"0x07\",\"0x08\",\"0x09\",\"0x0a\",\"0x0b\",\"0x0c\",\"0x0d\",\"0x0e\",\"0x0f\",\"0x10\",\"$2\"],[$legacy,\"$typed\"],[],[$withdrawal]]"
}
block_of "$tx_root" "$w_root" >"$tmp/block.hex"
expect "root --block" 0 "^transactionsRoot $tx_root computed $tx_root \\(2 transactions\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block.hex"
expect "root --block withdrawals" 0 "^withdrawalsRoot  $w_root computed $w_root \\(1 withdrawal\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block.hex"
expect "root --block binary stdin" 0 "\"match\":true\\}\$" '^$' -- sh -c "perl -ne 'chomp; s/^0x//; print pack(q(H*), \$_)' '$tmp/block.hex' | '$MPT' root --block - --json"
# JSON where a block's RLP goes, and RLP where the JSON array of items goes, are named so.
echo '{"jsonrpc":"2.0","id":1,"result":{"number":"0x1","transactions":[]}}' >"$tmp/block_rpc.json"
expect "root --block of JSON without roots" 2 '^$' '^mpt: error: bad input: .*block_rpc.json: missing field "result.transactionsRoot" \(object at line 1, column 34\)$' -- "$MPT" root --block "$tmp/block_rpc.json"
expect "root --block of a JSON array" 2 '^$' '^mpt: error: bad input: -: not a block: --block reads a block.s RLP \(raw bytes or 0x hex\), debug_getRawBlock.s answer, a block as JSON' -- sh -c "echo '[]' | '$MPT' root --block -"
expect "root --list of a block's RLP" 2 '^$' '^mpt: error: bad input: .*block.hex: RLP, not JSON: --list reads a JSON array of the encoded items' -- "$MPT" root --list "$tmp/block.hex"
expect "root --list of binary RLP" 2 '^$' '^mpt: error: bad input: -: RLP, not JSON' -- sh -c "printf '\\300' | '$MPT' root --list -"
# A JSON-RPC response is read for its result: debug_getRawBlock's block, debug_getRawReceipts'
# list; an error answer is refused with the node's message.
printf '{"jsonrpc":"2.0","id":1,"result":"%s"}' "$(cat "$tmp/block.hex")" >"$tmp/block_raw_rpc.json"
expect "root --block of a debug_getRawBlock answer" 0 "^transactionsRoot $tx_root computed $tx_root \\(2 transactions\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block_raw_rpc.json"
printf '{"jsonrpc":"2.0","id":1,"result":%s}' "$(cat "$tmp/block_txs.json")" >"$tmp/list_rpc.json"
expect "root --list of a JSON-RPC answer" 0 "^$tx_root\$" '^$' -- "$MPT" root --list "$tmp/list_rpc.json"
echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid argument 0"}}' >"$tmp/rpc_error.json"
expect "root --block of an error answer" 2 '^$' '^mpt: error: bad input: .*rpc_error.json: the JSON-RPC response carries an error \(line 1, column 33\): "invalid argument 0"$' -- "$MPT" root --block "$tmp/rpc_error.json"
expect "root --list of an error answer" 2 '^$' 'the JSON-RPC response carries an error' -- "$MPT" root --list "$tmp/rpc_error.json"
block_of "$w_root" "$w_root" >"$tmp/block_bad_tx.hex"
expect "root --block, another transactionsRoot" 1 "^transactionsRoot $w_root computed $tx_root \\(2 transactions\\) MISMATCH\$" '^$' -- "$MPT" root --block "$tmp/block_bad_tx.hex"
expect "root --block --json, another transactionsRoot" 1 '^\{"transactionsRoot":\{"header":"0x[0-9a-f]{64}","computed":"0x[0-9a-f]{64}","count":2,"match":false\},"withdrawalsRoot":\{.*"match":true\},"match":false\}$' '^$' -- "$MPT" root --block "$tmp/block_bad_tx.hex" --json
expect "root --block not a block" 2 '^$' '^mpt: error: bad input: -: the block is not a list \(byte 0\)$' -- sh -c "echo 0x80 | '$MPT' root --block -"
expect "root --block truncated" 2 '^$' '^mpt: error: RLP truncated: .*block_cut.hex: block: the item runs past the end of the input \(byte 0\)$' -- sh -c "head -c 40 '$tmp/block.hex' > '$tmp/block_cut.hex'; '$MPT' root --block '$tmp/block_cut.hex'"

# mpt root --block of a block as JSON (eth_getBlockByNumber's answer with full transactions):
# its transactions encoded from their fields, each one's "hash" checked against its encoding;
# receipts beside it (RLP hex or eth_getBlockReceipts' objects) against its receiptsRoot. Real
# blocks and receipts: scripts/jsonblocks-check.sh.
empty_root=0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421
tx1559='{"type":"0x2","chainId":"0x1","nonce":"0x0","maxPriorityFeePerGas":"0x1","maxFeePerGas":"0x2","gas":"0x5208","to":"0x1111111111111111111111111111111111111111","value":"0x1","input":"0x","accessList":[],"yParity":"0x0","r":"0x1","s":"0x2"}'
json_tx_root=$(echo "[$tx1559]" | "$MPT" root --list -)
tx_hash=$("$MPT" keccak "0x02$("$MPT" rlp encode '["0x01","0x","0x01","0x02","0x5208","0x1111111111111111111111111111111111111111","0x01","0x",[],"0x","0x01","0x02"]' | cut -c3-)")
printf '{"jsonrpc":"2.0","id":1,"result":{"transactionsRoot":"%s","receiptsRoot":"%s","transactions":[%s]}}' "$json_tx_root" "$empty_root" "$(echo "$tx1559" | jq -c ".hash = \"$tx_hash\"")" >"$tmp/block_json.json"
expect "root --block of a JSON block" 0 "^transactionsRoot $json_tx_root computed $json_tx_root \\(1 transaction\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block_json.json"
jq -c ".result.transactions[0].hash = \"0x$(printf '00%.0s' $(seq 32))\"" "$tmp/block_json.json" >"$tmp/block_json_badhash.json"
expect "root --block of a JSON block, a wrong transaction hash" 1 "^suspect: transaction 0 \\(from 0\\) is given hash 0x0{64}, but its fields encode to one with hash $tx_hash\$" '^$' -- "$MPT" root --block "$tmp/block_json_badhash.json"
expect "root --block --json, a wrong transaction hash" 1 "\"suspect\":\\{\"index\":0,\"hash\":\"0x0{64}\",\"computed\":\"$tx_hash\"\\},\"match\":false\\}\$" '^$' -- "$MPT" root --block "$tmp/block_json_badhash.json" --json
jq -c '.result.transactions[0].value = "0x2"' "$tmp/block_json.json" >"$tmp/block_json_changed.json"
expect "root --block of a JSON block, a changed transaction" 1 "MISMATCH" '^$' -- "$MPT" root --block "$tmp/block_json_changed.json"
jq -c '.result.transactions = ["0x'"$(printf 'ab%.0s' $(seq 32))"'"]' "$tmp/block_json.json" >"$tmp/block_json_hashes.json"
expect "root --block of a block with transaction hashes" 2 '^$' 'result.transactions\[0\] \(line 1, column [0-9]+\): the block lists its transactions by hash only; ask for full transactions' -- "$MPT" root --block "$tmp/block_json_hashes.json"
echo '{"jsonrpc":"2.0","id":1,"result":null}' >"$tmp/block_null.json"
expect "root --block of a null result" 2 '^$' '^mpt: error: bad input: .*block_null.json: the answer.s result is null: the node has no such block$' -- "$MPT" root --block "$tmp/block_null.json"
jq -c '.result.transactions[0].type = "0x7e"' "$tmp/block_json.json" >"$tmp/block_json_type.json"
expect "root --block of an unknown transaction type" 2 '^$' 'field "result.transactions\[0\].type" \(line 1, column [0-9]+\): transaction type 126 is none of legacy, EIP-2930, EIP-1559, EIP-4844 and EIP-7702$' -- "$MPT" root --block "$tmp/block_json_type.json"
jq -c 'del(.result.transactions[0].maxFeePerGas)' "$tmp/block_json.json" >"$tmp/block_json_field.json"
expect "root --block of a transaction without a field" 2 '^$' 'missing field "result.transactions\[0\].maxFeePerGas"' -- "$MPT" root --block "$tmp/block_json_field.json"
echo '[]' >"$tmp/receipts_none.json"
expect "root --block BLOCK RECEIPTS" 0 "^receiptsRoot     $empty_root computed $empty_root \\(0 receipts\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block_json.json" "$tmp/receipts_none.json"
receipt='{"type":"0x2","status":"0x1","cumulativeGasUsed":"0x5208","logsBloom":"0x'"$(printf '00%.0s' $(seq 256))"'","logs":[{"address":"0x1111111111111111111111111111111111111111","topics":[],"data":"0x"}]}'
echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[$receipt]}" >"$tmp/receipts_one.json"
expect "root --block BLOCK RECEIPTS, another receiptsRoot" 1 "^receiptsRoot     $empty_root computed 0x[0-9a-f]{64} \\(1 receipt\\) MISMATCH\$" '^$' -- "$MPT" root --block "$tmp/block_json.json" "$tmp/receipts_one.json"
expect "root --list of receipt objects and their RLP" 0 "^$(echo "[$receipt]" | "$MPT" root --list -)\$" '^$' -- sh -c "echo '[\"0x02$("$MPT" rlp encode '["0x01","0x5208","0x'"$(printf '00%.0s' $(seq 256))"'",[["0x1111111111111111111111111111111111111111",[],"0x"]]]' | cut -c3-)\"]' | '$MPT' root --list -"
expect "root --list of a receipt without a bloom" 2 '^$' 'missing field "item 1.logsBloom"' -- sh -c "echo '[{\"status\":\"0x1\",\"cumulativeGasUsed\":\"0x1\",\"logs\":[]}]' | '$MPT' root --list -"
expect "root --block of an RLP block, receipts beside" 1 "^receiptsRoot     $empty_root computed 0x[0-9a-f]{64} \\(1 receipt\\) MISMATCH\$" '^$' -- "$MPT" root --block "$tmp/block.hex" "$tmp/receipts_one.json"
expect "root --block with three inputs" 2 '^$' '^mpt: error: usage: root: --block takes a BLOCK \(its RLP or JSON, or - for stdin\) and optionally its RECEIPTS$' -- "$MPT" root --block "$tmp/block.hex" "$tmp/receipts_one.json" "$tmp/receipts_one.json"
expect "root --block - -" 2 '^$' '^mpt: error: usage: root: - \(standard input\) given twice$' -- "$MPT" root --block - -
# A JSON-RPC batch response: one answer each, after "id ID: " (--json: an array, each with its id).
printf '[%s,%s]' "$(sed 's/"id":1/"id":7/' "$tmp/block_raw_rpc.json")" "$(jq -c '.id = "b"' "$tmp/block_json.json")" >"$tmp/block_batch.json"
expect "root --block of a batch" 0 "^id 7: transactionsRoot $tx_root computed $tx_root \\(2 transactions\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block_batch.json"
expect "root --block of a batch: the second answer" 0 "^id \"b\": transactionsRoot $json_tx_root computed $json_tx_root \\(1 transaction\\) ok\$" '^$' -- "$MPT" root --block "$tmp/block_batch.json"
expect "root --block --json of a batch" 0 '^\[\{"id":7,"transactionsRoot":.*\},\{"id":"b","transactionsRoot":.*"match":true\}\]$' '^$' -- "$MPT" root --block --json "$tmp/block_batch.json"
printf '[%s,%s]' "$(cat "$tmp/block_raw_rpc.json")" "$(jq -c '.id = 2' "$tmp/block_json_changed.json")" >"$tmp/block_batch_bad.json"
expect "root --block of a batch, one block differs" 1 '^id 2: transactionsRoot .* MISMATCH$' '^$' -- "$MPT" root --block "$tmp/block_batch_bad.json"
printf '[%s,%s]' "$(cat "$tmp/block_raw_rpc.json")" "$(sed 's/"id":1/"id":2/' "$tmp/rpc_error.json")" >"$tmp/block_batch_err.json"
expect "root --block of a batch with an error answer" 2 '^$' '^mpt: error: bad input: .*block_batch_err.json: response 2: the JSON-RPC response carries an error \(line 1, column [0-9]+\): "invalid argument 0"$' -- "$MPT" root --block "$tmp/block_batch_err.json"
expect "root --block of a batch, receipts beside" 2 '^$' '^mpt: error: usage: root: --block of a batch of 2 answers takes no RECEIPTS$' -- "$MPT" root --block "$tmp/block_batch.json" "$tmp/receipts_none.json"
printf '[%s,%s]' "$(cat "$tmp/list_rpc.json")" "$(sed 's/"id":1/"id":2/' "$tmp/receipts_one.json")" >"$tmp/list_batch.json"
expect "root --list of a batch" 0 "^id 1: $tx_root\$" '^$' -- "$MPT" root --list "$tmp/list_batch.json"
expect "root --list --json of a batch" 0 "^\\[\\{\"id\":1,\"root\":\"$tx_root\",\"items\":2\\},\\{\"id\":2,\"root\":\"0x[0-9a-f]{64}\",\"items\":1\\}\\]\$" '^$' -- "$MPT" root --list --json "$tmp/list_batch.json"
expect "root --list and --block" 2 '^$' '^mpt: error: usage: root: give --list or --block, not both$' -- "$MPT" root --list "$tmp/list3.json" --block "$tmp/block.hex"

# mpt proof --verify of eth_getProof answers made with mpt (tests/make_getproof.sh): an
# account with 10 storage proofs (one of an empty slot) in a state of 300 accounts, and an
# account the state lacks.
"$(dirname "$0")/make_getproof.sh" "$MPT" 300 40 "$tmp/gp" || echo "FAIL make_getproof.sh"
gp_root=$(cat "$tmp/gp/root")
expect "getproof: valid against the root" 0 "^valid: account 0x000000000000000000000000000000000000012c present, 10 storage proofs, under the trusted root $gp_root\$" '^$' -- "$MPT" proof --verify "$tmp/gp/response.json" --root "$gp_root"
expect "getproof: against itself says so" 0 "^valid against itself: account 0x0+12c present, 10 storage proofs, under its own root $gp_root \\(the hash of its first account proof node; no trusted --root given\\)\$" '^$' -- "$MPT" proof --verify "$tmp/gp/response.json"
expect "getproof: --json" 0 "^\\{\"valid\":true,\"error\":null,\"root\":\"$gp_root\",\"trusted\":true,\"account\":\"0x0+12c\",\"exists\":true,\"storageProofs\":10\\}\$" '^$' -- "$MPT" proof --verify "$tmp/gp/response.json" --root "$gp_root" --json
expect "getproof: from stdin" 0 '^valid: ' '^$' -- sh -c "'$MPT' proof --verify - --root '$gp_root' < '$tmp/gp/response.json'"
expect "getproof: another root" 1 '^invalid: account proof: the first node hashes to 0x[0-9a-f]{64}, not to the trusted root 0x1{64} \(another block\?\)$' '^$' -- "$MPT" proof --verify "$tmp/gp/response.json" --root 0x1111111111111111111111111111111111111111111111111111111111111111
expect "getproof: the empty root" 1 '^invalid: account proof: proves the account absent, yet' '^$' -- "$MPT" proof --verify "$tmp/gp/response.json" --root 0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421
sed 's/"value":"0x109"/"value":"0x10a"/' "$tmp/gp/response.json" >"$tmp/gp_value.json"
expect "getproof: changed storage value" 1 '^invalid: storage proof 10 \(key 0x9\): value mismatch$' '^$' -- "$MPT" proof --verify "$tmp/gp_value.json" --root "$gp_root"
# Batches: documents one after another, arrays of them, JSON-RPC batch responses; one verdict
# each, in order, exit 1 when any is invalid.
expect "verify a batch of proof lines" 0 '^valid valid $' '^$' -- bash -c "set -o pipefail; '$MPT' proof '$tmp/dogs.db' dog doe | '$MPT' proof --verify - | tr '\n' ' '"
expect "verify a batch, one invalid" 1 '^valid invalid: value mismatch $' '^$' -- bash -c "{ '$MPT' proof '$tmp/dogs.db' dog; '$MPT' proof '$tmp/dogs.db' doe | sed 's/\"value\":\"0x./\"value\":\"0x0/'; } | '$MPT' proof --verify - | tr '\n' ' '; exit \${PIPESTATUS[1]}"
expect "verify a batch --json: an array of verdicts" 0 '^\[\{"valid":true,"error":null\}, \{"valid":true,"error":null\}\] $' '^$' -- bash -c "set -o pipefail; '$MPT' proof '$tmp/dogs.db' dog doe --json | '$MPT' proof --verify - --json | tr '\n' ' '"
"$MPT" proof "$tmp/dogs.db" dog doe --json >"$tmp/two_proofs.json"
expect "verify an array of documents --json" 0 '^\[\{"valid":true,"error":null\},$' '^$' -- "$MPT" proof --verify "$tmp/two_proofs.json" --json
expect "verify a JSON-RPC batch response" 0 "^valid: account 0x0+12c present, 10 storage proofs, under the trusted root $gp_root valid: account 0x0+12c present" '^$' -- bash -c "set -o pipefail; { echo '['; cat '$tmp/gp/response.json'; echo ','; cat '$tmp/gp/response.json'; echo ']'; } | '$MPT' proof --verify - --root $gp_root | tr '\n' ' '"
expect "verify a JSON-RPC batch, one another state's" 1 "^valid: .* invalid: storage proof 10 \\(key 0x9\\): value mismatch \$" '^$' -- bash -c "{ echo '['; cat '$tmp/gp/response.json'; echo ','; cat '$tmp/gp_value.json'; echo ']'; } | '$MPT' proof --verify - --root $gp_root | tr '\n' ' '; exit \${PIPESTATUS[1]}"
expect "verify a batch with a number in it: nothing printed" 2 '^$' '^mpt: error: bad input: -: document 2 \(line 2, column 1\): not a proof document \(an object\)$' -- sh -c "{ '$MPT' proof '$tmp/dogs.db' dog; echo 5; } | '$MPT' proof --verify -"
sed 's/"value":"0x0"/"value":"0x102"/' "$tmp/gp/response.json" >"$tmp/gp_empty_slot.json"
expect "getproof: value for an empty slot" 1 '^invalid: storage proof 3 \(key 0x2\): the path diverges yet a value is claimed$' '^$' -- "$MPT" proof --verify "$tmp/gp_empty_slot.json" --root "$gp_root"
sed 's/"balance":"0x76"/"balance":"0x77"/' "$tmp/gp/response.json" >"$tmp/gp_balance.json"
expect "getproof: changed balance" 1 '^invalid: account proof: the proven account differs in balance \(proven 0x76, claimed 0x77\)$' '^$' -- "$MPT" proof --verify "$tmp/gp_balance.json" --root "$gp_root"
expect "getproof: absent account" 0 '^valid: account 0xf{40} absent, 1 storage proof, under the trusted root ' '^$' -- "$MPT" proof --verify "$tmp/gp/absent.json" --root "$gp_root"
sed -E 's/"(codeHash|storageHash)":"0x[0-9a-f]{64}"/"\1":"0x0000000000000000000000000000000000000000000000000000000000000000"/g' "$tmp/gp/absent.json" >"$tmp/gp_absent_zero.json"
expect "getproof: absent account, zero hashes" 0 '^valid: account 0xf{40} absent' '^$' -- "$MPT" proof --verify "$tmp/gp_absent_zero.json" --root "$gp_root"
sed 's/"nonce":"0x0"/"nonce":"0x1"/' "$tmp/gp/absent.json" >"$tmp/gp_absent_nonce.json"
expect "getproof: absent account with a nonce" 1 '^invalid: account proof: proves the account absent, yet the document gives it nonce 0x1' '^$' -- "$MPT" proof --verify "$tmp/gp_absent_nonce.json" --root "$gp_root"
sed 's/"nonce":"0x1"/"nonce":"1"/' "$tmp/gp/response.json" >"$tmp/gp_nonce.json"
expect "getproof: nonce without 0x" 2 '^$' '^mpt: error: bad hex: .*gp_nonce.json: field "result.nonce" \(line 1, column [0-9]+\): not a 0x quantity: "1"$' -- "$MPT" proof --verify "$tmp/gp_nonce.json"
echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}' >"$tmp/gp_error.json"
expect "getproof: a JSON-RPC error" 2 '^$' '^mpt: error: bad input: .*gp_error.json: the JSON-RPC response carries an error \(line 1, column 33\): "header not found"$' -- "$MPT" proof --verify "$tmp/gp_error.json"

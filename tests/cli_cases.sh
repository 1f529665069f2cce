# Cases for cli_test.sh; sourced. $MPT is the binary, $FIX the fixtures folder.

# mpt root
expect "root of dogs" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- "$MPT" root "$FIX/dogs.json"
expect "root from stdin" 0 '^0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3$' '^$' -- sh -c "'$MPT' root - < '$FIX/dogs.json'"
expect "root --json" 0 '"root":"0x8aad789d' '^$' -- "$MPT" root --json "$FIX/dogs.json"
expect "root of empty object" 0 '^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421$' '^$' -- "$MPT" root "$FIX/empty.json"
expect "root of ordered pairs with deletes" 0 '^0x5991bb8c6514148a29db676a14ac506cd2cd5775ace63c30a4fe457715e9ac84$' '^$' -- "$MPT" root "$FIX/empty_values.json"
expect "fixture vectors" 0 'passed, 0 failed' '^$' -- "$MPT" root --vectors "$FIX/trie_vectors.json"
expect "secure vectors" 0 'passed, 0 failed' '^$' -- "$MPT" root --vectors "$FIX/trie_vectors_secure.json"
expect "next/prev vectors" 0 '12 passed, 0 failed' '^$' -- "$MPT" root --vectors "$FIX/nextprev.json"

# Bad input: one line, exit 2.
echo '{"a": "0x123"}' >"$tmp/odd.json"
expect "odd hex" 2 '^$' '^mpt: error: .*odd.json.*entry 0 value.*odd number of hex digits' -- "$MPT" root "$tmp/odd.json"
echo '{"a": "0xzz"}' >"$tmp/nonhex.json"
expect "non-hex" 2 '^$' '^mpt: error: .*not a hex digit' -- "$MPT" root "$tmp/nonhex.json"
echo '{"a": 5}' >"$tmp/num.json"
expect "non-string value" 2 '^$' '^mpt: error: .*line 1, column 7: value is not a string' -- "$MPT" root "$tmp/num.json"
printf '{"a": "b",\n' >"$tmp/trunc.json"
expect "malformed JSON" 2 '^$' '^mpt: error: .*malformed JSON: line 2' -- "$MPT" root "$tmp/trunc.json"
expect "missing file" 2 '^$' '^mpt: error: .*no-such-file.json: No such file' -- "$MPT" root "$tmp/no-such-file.json"
expect "unknown flag" 2 '^$' '^mpt: error: .*--bogus' -- "$MPT" root --bogus "$FIX/dogs.json"
expect "no subcommand" 2 '^$' '^mpt: error: ' -- "$MPT"
expect "unknown subcommand" 2 '^$' '^mpt: error: ' -- "$MPT" frobnicate
expect "version" 0 '^mpt [0-9]+\.[0-9]+\.[0-9]+$' '^$' -- "$MPT" --version
expect "help" 0 'root' '^$' -- "$MPT" --help
expect "root help" 0 'secure' '^$' -- "$MPT" root --help

# mpt diff (key/value files)
expect "diff lines in key order" 1 '^~ 0x646f67 0x7075707079 0x6b697474656e - 0x646f6765 0x636f696e \+ 0x646f67676c6573776f727468 0x636174 $' '^$' -- bash -c "set -o pipefail; '$MPT' diff '$FIX/diff_a.json' '$FIX/diff_b.json' | tr '\n' ' '"
expect "diff reversed" 1 '^~ 0x646f67 0x6b697474656e 0x7075707079 \+ 0x646f6765 0x636f696e - 0x646f67676c6573776f727468 0x636174 $' '^$' -- bash -c "set -o pipefail; '$MPT' diff '$FIX/diff_b.json' '$FIX/diff_a.json' | tr '\n' ' '"
expect "diff --json" 1 '^\{"added":\{"0x646f67676c6573776f727468":"0x636174"\},"removed":\{"0x646f6765":"0x636f696e"\},"changed":\{"0x646f67":\["0x7075707079","0x6b697474656e"\]\}\}$' '^$' -- "$MPT" diff --json "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff identical" 0 '^$' '^$' -- "$MPT" diff "$FIX/dogs.json" "$FIX/dogs.json"
expect "diff identical --json" 0 '^\{"added":\{\},"removed":\{\},"changed":\{\}\}$' '^$' -- "$MPT" diff --json "$FIX/diff_a.json" "$FIX/diff_a.json"
expect "diff identical reads nothing" 0 '^$' '^nodes read: A 0, B 0$' -- "$MPT" diff --stats "$FIX/dogs.json" "$FIX/dogs.json"
expect "diff --stats" 1 '^~ 0x646f67 ' '^nodes read: A [1-9][0-9]*, B [1-9][0-9]*$' -- "$MPT" diff --stats "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff from empty" 1 '^\+ 0x646f65 0x7265696e64656572$' '^$' -- "$MPT" diff "$FIX/empty.json" "$FIX/dogs.json"
expect "diff to empty" 1 '^- 0x646f67 0x7075707079$' '^$' -- "$MPT" diff "$FIX/dogs.json" "$FIX/empty.json"
expect "diff --secure" 1 '^\+ 0x41791102999c339c844880b23950704cc43aa840f3739e365323cda4dfa89e7a 0x7075707079$' '^$' -- "$MPT" diff --secure "$FIX/empty.json" "$FIX/dogs.json"
expect "diff A from stdin" 1 '^\+ 0x646f67676c6573776f727468 0x636174$' '^$' -- sh -c "'$MPT' diff - '$FIX/diff_b.json' < '$FIX/diff_a.json'"
expect "diff --nodes" 1 '^write 0x00$' '^$' -- "$MPT" diff --nodes "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff --nodes to empty deletes the root" 1 '^delete 0x00$' '^$' -- "$MPT" diff --nodes "$FIX/dogs.json" "$FIX/empty.json"
expect "diff --nodes --json" 1 '^\{"write":\["0x00",.*\],"delete":\[\]\}$' '^$' -- "$MPT" diff --nodes --json "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff --nodes identical" 0 '^$' '^$' -- "$MPT" diff --nodes "$FIX/diff_b.json" "$FIX/diff_b.json"
expect "diff bad JSON" 2 '^$' '^mpt: error: .*trunc.json.*malformed JSON' -- "$MPT" diff "$FIX/dogs.json" "$tmp/trunc.json"
expect "diff missing file" 2 '^$' '^mpt: error: .*no-such-file.json' -- "$MPT" diff "$tmp/no-such-file.json" "$FIX/dogs.json"
expect "diff both stdin" 2 '^$' '^mpt: error: diff: A and B cannot both be stdin$' -- "$MPT" diff - -
expect "diff one operand" 2 '^$' '^mpt: error: ' -- "$MPT" diff "$FIX/dogs.json"
expect "diff help" 0 'nodes' '^$' -- "$MPT" diff --help

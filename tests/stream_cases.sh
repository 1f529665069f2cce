# Cases of streamed output (dump --json, diff --json), of reading back what dump writes (the
# text form as key/value input, a byte order mark), and of diff --verify, for cli_test.sh;
# sourced after cli_cases.sh (uses $MPT, $FIX, $GEN, $tmp and expect).
sd=$tmp/stream
mkdir -p "$sd"

# A trie of 3000 random pairs (keys of 1 to 40 bytes, so that branches hold values and keys
# share prefixes), another with some changed, removed and added, and a secure one.
awk -v seed=11 'function h(k,  s, i) { s = ""; for (i = 0; i < k; i++) s = s sprintf("%02x", int(rand() * 256)); return s }
BEGIN { srand(seed); printf "{"; for (i = 0; i < 3000; i++) printf "%s\"0x%s\":\"0x%s\"", (i ? "," : ""), h(1 + int(rand() * 40)), h(1 + int(rand() * 40)); print "}" }' >"$sd/a.json"
"$MPT" build "$sd/a.json" -o "$sd/a.db" >"$sd/a.root"
"$MPT" dump "$sd/a.db" >"$sd/a.dump"
{
    echo '['
    awk 'NR % 7 == 0 { printf "[\"%s\", \"0x%02x\"],\n", $1, NR % 256 } NR % 11 == 0 { printf "[\"%s\", null],\n", $1 }' "$sd/a.dump"
    echo '["0x00ff00ff", "0x01"], ["0x", "0xee"]]'
} >"$sd/changes.json"
cp "$sd/a.db" "$sd/b.db"
"$MPT" build "$sd/changes.json" -o "$sd/b.db" >"$sd/b.root"
"$MPT" build --secure "$sd/a.json" -o "$sd/s.db" >"$sd/s.root"

# dump --json is the text dump with other punctuation: the same pairs, in the same order.
awk 'BEGIN { printf "{" } { printf "%s\"%s\":\"%s\"", (NR > 1 ? "," : ""), $1, $2 } END { print "}" }' "$sd/a.dump" >"$sd/a.dump.want.json"
expect "dump --json: the text dump's pairs" 0 '^$' '^$' -- sh -c "'$MPT' dump --json '$sd/a.db' | cmp - '$sd/a.dump.want.json'"
expect "dump --json --limit" 0 '^\{"0x[0-9a-f]+":"0x[0-9a-f]+","0x[0-9a-f]+":"0x[0-9a-f]+"\}$' '^$' -- "$MPT" dump --json --limit 2 "$sd/a.db"
expect "dump --json to a full disk" 3 '.*' '^mpt: error: write: ' -- sh -c "'$MPT' dump --json '$sd/a.db' >/dev/full"

# diff --json holds what the text lines hold, grouped: added, removed, changed.
"$MPT" diff "$sd/a.db" "$sd/b.db" >"$sd/ab.diff"
awk 'function group(sign, name,  i, n, s) { s = "\"" name "\":{"; n = 0
        for (i = 1; i <= NR; ++i) if (l[i, 1] == sign) s = s (n++ ? "," : "") "\"" l[i, 2] "\":" (sign == "~" ? "[\"" l[i, 3] "\",\"" l[i, 4] "\"]" : "\"" l[i, 3] "\"")
        return s "}" }
    { for (f = 1; f <= NF; ++f) l[NR, f] = $f }
    END { print "{" group("+", "added") "," group("-", "removed") "," group("~", "changed") "}" }' "$sd/ab.diff" >"$sd/ab.want.json"
expect "diff: some of each kind" 0 '^$' '^$' -- sh -c "grep -q '^+ ' '$sd/ab.diff' && grep -q '^- ' '$sd/ab.diff' && grep -q '^~ ' '$sd/ab.diff'"
expect "diff --json: the lines' changes, grouped" 0 '^$' '^$' -- sh -c "'$MPT' diff --json '$sd/a.db' '$sd/b.db' >'$sd/ab.json'; [ \$? -eq 1 ] && cmp '$sd/ab.json' '$sd/ab.want.json'"
expect "diff --json --stats counts one walk" 1 '.*' '^mpt: stats: nodes read: A [1-9][0-9]*, B [1-9][0-9]*$' -- "$MPT" diff --json --stats "$sd/a.db" "$sd/b.db"
"$MPT" diff --stats "$sd/a.db" "$sd/b.db" 2>"$sd/stats.text" >/dev/null
expect "diff --json --stats: as many nodes as the lines" 1 '.*' "^$(cat "$sd/stats.text")\$" -- "$MPT" diff --json --stats "$sd/a.db" "$sd/b.db"
expect "diff --json of additions only" 1 '^\{"added":\{"0x[0-9a-f]+":"0x[0-9a-f]+",.*\},"removed":\{\},"changed":\{\}\}$' '^$' -- "$MPT" diff --json "$FIX/empty.json" "$sd/a.db"
expect "diff --json to a full disk" 3 '.*' '^mpt: error: write: ' -- sh -c "'$MPT' diff --json '$sd/a.db' '$sd/b.db' >/dev/full"
expect "diff --nodes --json" 1 '^\{"write":\["0x00"(,"0x[0-9a-f]+")*\],"delete":\[("0x[0-9a-f]+",?)*\]\}$' '^$' -- "$MPT" diff --nodes --json "$sd/a.db" "$sd/b.db"
"$MPT" diff --nodes "$sd/a.db" "$sd/b.db" >"$sd/ab.nodes"
awk 'BEGIN { w = ""; d = "" } $1 == "write" { w = w (w == "" ? "" : ",") "\"" $2 "\"" } $1 == "delete" { d = d (d == "" ? "" : ",") "\"" $2 "\"" }
    END { print "{\"write\":[" w "],\"delete\":[" d "]}" }' "$sd/ab.nodes" >"$sd/ab.nodes.want.json"
expect "diff --nodes --json: the lines' paths" 0 '^$' '^$' -- sh -c "'$MPT' diff --nodes --json '$sd/a.db' '$sd/b.db' | cmp - '$sd/ab.nodes.want.json'"

# The text dump is key/value input: dump, then build or root, gives the same root.
a_root=$(cat "$sd/a.root")
b_root=$(cat "$sd/b.root")
s_root=$(cat "$sd/s.root")
expect "root of a text dump" 0 "^$a_root\$" '^$' -- "$MPT" root "$sd/a.dump"
expect "build from a text dump" 0 "^$a_root\$" '^$' -- "$MPT" build "$sd/a.dump" -o "$sd/a2.db"
expect "dump of the rebuilt trie: the same bytes" 0 '^$' '^$' -- sh -c "'$MPT' dump '$sd/a2.db' | cmp - '$sd/a.dump'"
"$MPT" dump --json "$sd/b.db" >"$sd/b.dump.json"
expect "root of a JSON dump" 0 "^$b_root\$" '^$' -- "$MPT" root "$sd/b.dump.json"
expect "build from a JSON dump" 0 "^$b_root\$" '^$' -- "$MPT" build "$sd/b.dump.json" -o "$sd/b2.db"
expect "root of a text dump from stdin" 0 "^$b_root\$" '^$' -- sh -c "'$MPT' dump '$sd/b.db' | '$MPT' root -"
expect "build from a text dump on stdin" 0 "^$b_root\$" '^$' -- sh -c "'$MPT' dump '$sd/b.db' | '$MPT' build - -o '$sd/b3.db'"
# A secure trie's dump holds the hashed keys: read as a plain trie's pairs, the same root.
expect "root of a secure trie's dump" 0 "^$s_root\$" '^$' -- sh -c "'$MPT' dump '$sd/s.db' | '$MPT' root -"
expect "root of a secure trie's JSON dump" 0 "^$s_root\$" '^$' -- sh -c "'$MPT' dump --json '$sd/s.db' | '$MPT' root -"
# The empty trie: its text dump is empty.
"$MPT" build "$FIX/empty.json" -o "$sd/e.db" >/dev/null
"$MPT" dump "$sd/e.db" >"$sd/e.dump"
"$MPT" dump --json "$sd/e.db" >"$sd/e.dump.json"
empty_root=0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421
expect "the empty trie's text dump is empty" 0 '^$' '^$' -- cat "$sd/e.dump"
expect "root of the empty trie's text dump" 0 "^$empty_root\$" '^mpt: note: .*e.dump: an empty file' -- "$MPT" root "$sd/e.dump"
expect "root of the empty trie's JSON dump" 0 "^$empty_root\$" '^$' -- "$MPT" root "$sd/e.dump.json"
expect "build from the empty trie's text dump" 0 "^$empty_root\$" '^$' -- "$MPT" build "$sd/e.dump" -o "$sd/e2.db"
expect "root of an empty stdin" 0 "^$empty_root\$" '^$' -- sh -c "'$MPT' dump '$sd/e.db' | '$MPT' root -"
# Long keys and values, and the empty key.
{
    printf '{"0x%s": "0x%s", "0x%s": "0x01", "0x": "0x02"}\n' "$(printf 'ab%.0s' $(seq 3000))" "$(printf '5a%.0s' $(seq 2000))" "$(printf 'ab%.0s' $(seq 2999))"
} >"$sd/long.json"
"$MPT" build "$sd/long.json" -o "$sd/long.db" >"$sd/long.root"
"$MPT" dump "$sd/long.db" >"$sd/long.dump"
expect "the long keys' dump has three lines" 0 '^3$' '^$' -- sh -c "wc -l <'$sd/long.dump' | tr -d ' '"
expect "root of a dump with long keys" 0 "^$(cat "$sd/long.root")\$" '^$' -- "$MPT" root "$sd/long.dump"
expect "root of a JSON dump with long keys" 0 "^$(cat "$sd/long.root")\$" '^$' -- sh -c "'$MPT' dump --json '$sd/long.db' | '$MPT' root -"
# diff reads dumps too.
"$MPT" dump "$sd/b.db" >"$sd/b.dump"
expect "diff of two text dumps: the trie files' diff" 0 '^$' '^$' -- sh -c "'$MPT' diff '$sd/a.dump' '$sd/b.dump' | cmp - '$sd/ab.diff'"
expect "diff of a trie file against its own dump" 0 '^$' '^$' -- "$MPT" diff "$sd/a.db" "$sd/a.dump"
expect "diff of a JSON dump against a text dump on stdin" 0 '^$' '^$' -- sh -c "'$MPT' diff '$sd/b.dump.json' - <'$sd/b.dump'"
expect "root --trie of a text dump is a usage error" 2 '^$' '^mpt: error: usage: root: --trie applies to a trie file' -- "$MPT" root --trie main "$sd/a.dump"

# A byte order mark before a JSON document, or a dump, is skipped.
printf '\357\273\277' >"$sd/bom.json"
cat "$FIX/dogs.json" >>"$sd/bom.json"
dogs_root=$("$MPT" root "$FIX/dogs.json")
expect "root of a JSON file with a byte order mark" 0 "^$dogs_root\$" '^$' -- "$MPT" root "$sd/bom.json"
expect "build from a JSON file with a byte order mark" 0 "^$dogs_root\$" '^$' -- "$MPT" build "$sd/bom.json" -o "$sd/bom.db"
expect "root of a JSON stream with a byte order mark" 0 "^$dogs_root\$" '^$' -- sh -c "'$MPT' root - <'$sd/bom.json'"
expect "diff of a JSON file with a byte order mark" 0 '^$' '^$' -- "$MPT" diff "$sd/bom.json" "$FIX/dogs.json"
# A text dump after a byte order mark, from a file and through a pipe, read whole or in pieces
# (one stream-stop rule for both readers of pipes).
printf '\357\273\277' >"$sd/bom.dump"
cat "$sd/a.dump" >>"$sd/bom.dump"
expect "root of a text dump with a byte order mark" 0 "^$a_root\$" '^$' -- "$MPT" root "$sd/bom.dump"
expect "root of a piped text dump with a byte order mark" 0 "^$a_root\$" '^$' -- sh -c "cat '$sd/bom.dump' | '$MPT' root -"
expect "root of a piped text dump with a byte order mark, in pieces" 0 "^$a_root\$" '^$' -- sh -c "cat '$sd/bom.dump' | '$MPT' root --memory 1M -"
expect "root of a piped JSON document with a byte order mark, in pieces" 0 "^$dogs_root\$" '^$' -- sh -c "cat '$sd/bom.json' | '$MPT' root --memory 1M -"
# State and proof documents too.
printf '\357\273\277' >"$sd/bom_state.json"
cat "$FIX/state_alloc.json" >>"$sd/bom_state.json"
expect "root --state of a document with a byte order mark" 0 '^0x0e2696d33d4f6ee17fa14c7517560db2eaf621f9c39181b095b8606325452c59$' '^$' -- "$MPT" root --state "$sd/bom_state.json"
printf '\357\273\277' >"$sd/bom_proof.json"
cat "$FIX/proof_present.json" >>"$sd/bom_proof.json"
expect "proof --verify of a document with a byte order mark" 0 '^valid$' '^$' -- sh -c "'$MPT' proof --verify - <'$sd/bom_proof.json'"
printf '\357\273\277{"a": 1}' >"$sd/bom_bad.json"
expect "a byte order mark: columns count after it" 2 '^$' '^mpt: error: malformed JSON: .*bom_bad.json: line 1, column 7: value is not a string or null$' -- "$MPT" root "$sd/bom_bad.json"

# Errors in a text dump name the line and column, one line, exit 2.
printf '0x01 0x02\n0x0g 0x03\n' >"$sd/bad1.dump"
expect "text dump: not a hex digit" 2 '^$' "^mpt: error: bad hex: .*bad1.dump: line 2, column 4: key: not a hex digit \('g'\)\$" -- "$MPT" root "$sd/bad1.dump"
printf '0x01 0x02\n0x03 0x045\n' >"$sd/bad2.dump"
expect "text dump: odd digits" 2 '^$' "^mpt: error: bad hex: .*bad2.dump: line 2, column 6: value: odd number of hex digits\$" -- "$MPT" build "$sd/bad2.dump" -o "$sd/bad.db"
expect "text dump: a refused build writes no file" 0 '^$' '^$' -- test ! -e "$sd/bad.db"
printf '0x01 0x02\n0x03\n' >"$sd/bad3.dump"
expect "text dump: no value" 2 '^$' "^mpt: error: bad input: .*bad3.dump: line 2, column 5: expected a blank and 0x<value> after the key\$" -- "$MPT" diff "$sd/bad3.dump" "$sd/a.dump"
printf '0x01 0x02 0x03\n' >"$sd/bad4.dump"
expect "text dump: a third column" 2 '^$' "^mpt: error: bad input: -: line 1, column 11: expected the end of the line after the value\$" -- sh -c "'$MPT' root - <'$sd/bad4.dump'"
expect "text dump: an endless stream ends at its first bad byte" 2 '^$' "^mpt: error: bad hex: -: line 1, column 3: key: not a hex digit \('z'\)\$" -- timeout 5 sh -c "yes 0xzz | '$MPT' root -"
expect "text dump: an endless stream ends at its first bad byte past the first block" 2 '^$' "^mpt: error: bad hex: -: line 10001, column 3: key: not a hex digit \('z'\)\$" -- timeout 5 sh -c "(yes '0x00 0x01' | head -c 100000; yes 0xzz) | '$MPT' root -"
# A writer that stays after its bad byte: the reader must stop there, not wait for the end.
expect "text dump: a stream that stays open ends at its first bad byte" 2 '^$' "^mpt: error: bad hex: -: line 2, column 3: key: not a hex digit \('z'\)\$" -- timeout 5 sh -c "(printf '0x00 0x01\n0xzz\n'; sleep 1; printf x; sleep 30) | '$MPT' root -"
expect "state document: a stream that stays open ends at a first byte that opens nothing" 2 '^$' "^mpt: error: malformed JSON: -: line 1, column 1: expected a value\$" -- timeout 5 sh -c "(printf x; sleep 1; printf x; sleep 30) | '$MPT' root --state -"
expect "state document past --memory: a stream that stays open ends at its first control byte" 2 '^$' "^mpt: error: .*-: line 1, column 3: " -- timeout 5 sh -c "(printf '{ \001'; sleep 1; printf x; sleep 30) | '$MPT' root --state --memory 1M -"
expect "text dump: an endless stream of zeros ends" 2 '^$' "^mpt: error: .*-: line 1, column 3: " -- timeout 5 sh -c "(printf '0x'; cat /dev/zero) | '$MPT' root -"

# diff trusts the stored hashes: damage under a hash both sides hold goes unseen, unless
# --verify reads every node. The damage: one byte of a leaf's value (a text value, found in
# the file by its bytes) changed in place.
printf '{"0x01": "marker-value-XYZZY-0123456789abcdef", "0x02": "other-value-0123456789abcdefghijkl", "0x1234": "third-value-0123456789abcdefghijkl"}' >"$sd/v.json"
"$MPT" build "$sd/v.json" -o "$sd/good.db" >/dev/null
cp "$sd/good.db" "$sd/bad.db"
off=$(LC_ALL=C grep -obUa XYZZY "$sd/bad.db" | head -1 | cut -d: -f1)
printf 'Q' | dd of="$sd/bad.db" bs=1 seek="$off" conv=notrunc 2>/dev/null
printf '[["0x1234", "changed-value-0123456789abcdefghi"]]' >"$sd/v_change.json"
cp "$sd/good.db" "$sd/good2.db"
"$MPT" build "$sd/v_change.json" -o "$sd/good2.db" >/dev/null
expect "the damaged file: check finds it" 3 '^hash mismatch at path 01$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$sd/bad.db"
expect "diff of a damaged file against its copy: identical" 0 '^$' '^$' -- "$MPT" diff "$sd/bad.db" "$sd/good.db"
expect "diff of a damaged subtree that did not change: unseen" 1 '^~ 0x1234 ' '^$' -- "$MPT" diff "$sd/bad.db" "$sd/good2.db"
expect "diff --verify: damage on A" 3 '^$' "^mpt: error: node hash mismatch: .*bad.db: A: trie main, path 01\$" -- "$MPT" diff --verify "$sd/bad.db" "$sd/good.db"
expect "diff --verify: damage on B" 3 '^$' "^mpt: error: node hash mismatch: .*bad.db: B: trie main, path 01\$" -- "$MPT" diff --verify "$sd/good.db" "$sd/bad.db"
expect "diff --verify: damage on B, a k/v file on A" 3 '^$' "^mpt: error: node hash mismatch: .*bad.db: B: trie main, path 01\$" -- "$MPT" diff --verify "$sd/v.json" "$sd/bad.db"
expect "diff --verify --json" 3 '.*' "^mpt: error: node hash mismatch: .*bad.db: A: trie main, path 01\$" -- "$MPT" diff --verify --json "$sd/bad.db" "$sd/good2.db"
expect "diff --verify --nodes" 3 '^$' "^mpt: error: node hash mismatch: .*bad.db: A: trie main, path 01\$" -- "$MPT" diff --verify --nodes "$sd/bad.db" "$sd/good.db"
expect "diff --verify of sound files: the same answer" 0 '^$' '^$' -- sh -c "'$MPT' diff --verify '$sd/a.db' '$sd/b.db' | cmp - '$sd/ab.diff'"
expect "diff --verify --json of sound files: the same answer" 0 '^$' '^$' -- sh -c "'$MPT' diff --verify --json '$sd/a.db' '$sd/b.db' | cmp - '$sd/ab.want.json'"
expect "diff --verify of a file against itself" 0 '^$' '^$' -- "$MPT" diff --verify "$sd/a.db" "$sd/a.db"
a_rows=$("$MPT" stats --json "$sd/a.db" | sed 's/.*"pairs":[0-9]*,"rows":\([0-9]*\).*/\1/')
expect "diff --verify --stats reads every row" 0 '^$' "^mpt: stats: nodes read: A $a_rows, B $a_rows\$" -- "$MPT" diff --verify --stats "$sd/a.db" "$sd/a.db"
# States: the same, in a storage trie of an account that did not change.
z=$(printf '5a%.0s' $(seq 32))
printf '{"0x1000000000000000000000000000000000000001": {"balance": "0x1", "storage": {"0x01": "0x%s"}}, "0x2000000000000000000000000000000000000002": {"balance": "0x5"}}' "$z" >"$sd/sa.json"
sed 's/"0x5"/"0x6"/' "$sd/sa.json" >"$sd/sb.json"
"$MPT" build --state "$sd/sa.json" -o "$sd/sa.db" >/dev/null
cp "$sd/sa.db" "$sd/sbad.db"
off=$(LC_ALL=C grep -obUa ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ "$sd/sbad.db" | head -1 | cut -d: -f1)
printf 'Q' | dd of="$sd/sbad.db" bs=1 seek="$off" conv=notrunc 2>/dev/null
expect "state diff of a damaged storage trie that did not change: unseen" 1 '^~ 0x2000000000000000000000000000000000000002 balance 0x5 -> 0x6$' '^$' -- "$MPT" diff "$sd/sbad.db" "$sd/sb.json"
expect "state diff --verify: damage on A" 3 '^$' '^mpt: error: node hash mismatch: .*sbad.db: trie 0x[0-9a-f]{64}, path \(root\)$' -- "$MPT" diff --verify "$sd/sbad.db" "$sd/sb.json"
expect "state diff --verify: damage on B" 3 '^$' '^mpt: error: node hash mismatch: .*sbad.db: trie 0x[0-9a-f]{64}, path \(root\)$' -- "$MPT" diff --verify --json "$sd/sa.json" "$sd/sbad.db"
expect "state diff --verify of sound states: the same answer" 1 '^~ 0x2000000000000000000000000000000000000002 balance 0x5 -> 0x6$' '^$' -- "$MPT" diff --verify "$sd/sa.db" "$sd/sb.json"

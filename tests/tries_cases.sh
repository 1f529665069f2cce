# Cases of the tries of a file (canonical names, tries, drop, copy, vacuum, the rows of the
# tries table checked where read) and of mpt tree, for cli_test.sh. Needs sqlite3 and dot
# (graphviz).
for tool in sqlite3 dot; do
    command -v $tool >/dev/null
    case_result "tries: $tool installed" $? "$tool not found (scripts/setup.sh installs it)"
done

dogs_root=0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3
upper=0x$(printf 'AB%.0s' $(seq 32))
lower=0x$(printf 'ab%.0s' $(seq 32))

# Canonical names: 0x<64 hex> is written and read in lowercase.
"$MPT" build "$FIX/dogs.json" -o "$tmp/names.db" >/dev/null
expect "build --trie 0xABAB...: the name is written lowercase" 0 "\"trie\":\"$lower\"" '^$' -- "$MPT" build --json "$FIX/dogs.json" -o "$tmp/names.db" --trie "$upper"
expect "tries lists the lowercase name" 0 "^$lower plain $dogs_root 3 147\$" '^$' -- "$MPT" tries "$tmp/names.db"
expect "get-node finds the trie by its account hash" 0 '"status":"found"' '^$' -- "$MPT" get-node --json "$tmp/names.db" "$upper,0x00"
expect "get-node finds the trie by its lowercase hash" 0 '"status":"found"' '^$' -- "$MPT" get-node --json "$tmp/names.db" "$lower,0x00"
for name in "$upper" "$lower"; do
    expect "get --trie ${name:0:6}..." 0 '^0x7265696e64656572$' '^$' -- "$MPT" get "$tmp/names.db" --trie "$name" doe
    expect "check --trie ${name:0:6}..." 0 '^ok: 3 rows' '^$' -- "$MPT" check "$tmp/names.db" --trie "$name"
    expect "get-node --trie ${name:0:6}..." 0 '"status":"found"' '^$' -- "$MPT" get-node --json "$tmp/names.db" --trie "$name" 0x00
    expect "stats --trie ${name:0:6}... names it lowercase" 0 "^trie $lower \(plain\)" '^$' -- "$MPT" stats "$tmp/names.db" --trie "$name"
    expect "root --json --trie ${name:0:6}... names it lowercase" 0 "\"trie\":\"$lower\"" '^$' -- "$MPT" root --json "$tmp/names.db" --trie "$name"
    expect "check --json --trie ${name:0:6}... names it lowercase" 0 "\"trie\":\"$lower\"" '^$' -- "$MPT" check --json "$tmp/names.db" --trie "$name"
done
expect "build into 0xabab... updates the 0xABAB... trie" 0 "\"created\":false" '^$' -- "$MPT" build --json "$FIX/dogs.json" -o "$tmp/names.db" --trie "$lower"
expect "tries: still two" 0 "^main plain $dogs_root 3 147\$" '^$' -- sh -c "'$MPT' tries '$tmp/names.db' | sed -n 2p; test \$('$MPT' tries '$tmp/names.db' | wc -l) -eq 2"
# A new file, written whole, stores the name as every other write does.
rm -f "$tmp/names_new.db"
"$MPT" build "$FIX/dogs.json" -o "$tmp/names_new.db" --trie "$upper" >/dev/null
expect "build --trie 0xABAB... of a new file: the name is written lowercase" 0 "^$lower\$" '^$' -- "$MPT" tries --names "$tmp/names_new.db"
expect "build into the new file's 0xabab... updates it" 0 '"created":false' '^$' -- "$MPT" build --json "$FIX/dogs.json" -o "$tmp/names_new.db" --trie "$lower"

# An unknown name lists what the file holds: the first five and the count.
for c in get dump check stats proof tree; do
    key=
    case $c in get | proof) key=dog ;; esac
    expect "$c of an unknown trie lists the names" 3 '^$' "^mpt: error: no such trie: .*names.db: no trie named nope; the file holds 2: $lower, main\$" -- "$MPT" $c --trie nope "$tmp/names.db" $key
done
cp "$tmp/names.db" "$tmp/many.db"
for n in t1 t2 t3 t4 t5; do "$MPT" build "$FIX/dogs.json" -o "$tmp/many.db" --trie $n >/dev/null; done
expect "unknown trie among seven: five named, the count" 3 '^$' "no trie named nope; the file holds 7: $lower, main, t1, t2, t3, \.\.\.\$" -- "$MPT" get --trie nope "$tmp/many.db" dog
expect "get-node of an unknown trie lists the names" 3 '^$' "no trie named nope; the file holds 7: " -- "$MPT" get-node --trie nope "$tmp/many.db" 0x00
for c in get dump check proof tree get-node copy drop; do
    args=
    case $c in get | proof) args=dog ;; get-node) args=0x00 ;; copy) args="--to x" ;; esac
    expect "$c --trie '' is a usage error, not an unknown trie" 2 '^$' "^mpt: error: bad input: .*many.db: a trie name cannot be empty\$" -- "$MPT" $c --trie '' "$tmp/many.db" $args
done
expect "diff --trie-b with a control character" 2 '^$' "^mpt: error: bad input: .*trie name holds a control character \(byte 9 at offset 1\)" -- "$MPT" diff --trie-b "$(printf 'a\tb')" "$tmp/many.db" "$tmp/many.db"

# tries
expect "tries --json" 0 "^\[\{\"name\":\"$lower\",\"kind\":\"plain\",\"root\":\"$dogs_root\",\"rows\":3,\"bytes\":147\},\{\"name\":\"main\"," '^$' -- "$MPT" tries --json "$tmp/names.db"
expect "tries --names" 0 "^main\$" '^$' -- "$MPT" tries --names "$tmp/names.db"
expect "tries --names --json: an array of the names" 0 "^\[\"$lower\",\"main\"\]\$" '^$' -- "$MPT" tries --names --json "$tmp/names.db"
expect "tries of a missing file" 2 '^$' '^mpt: error: bad input: .*no-such.db: No such file or directory$' -- "$MPT" tries "$tmp/no-such.db"
expect "tries of a key/value file" 3 '^$' '^mpt: error: not an mpt trie file: .*dogs.json: not an SQLite database \(a JSON document\?\)$' -- "$MPT" tries "$FIX/dogs.json"
"$MPT" build --state "$FIX/state_genesis.json" -o "$tmp/kinds.db" >/dev/null
expect "tries: a state file's kinds" 0 '^main state 0x0e2696d3[0-9a-f]{56} 4 464$' '^$' -- "$MPT" tries "$tmp/kinds.db"
expect "tries: its storage tries are secure" 0 '^0x37d65eaa[0-9a-f]{56} secure 0x09cf0d8f[0-9a-f]{56} 3 192$' '^$' -- "$MPT" tries "$tmp/kinds.db"

# drop
cp "$tmp/names.db" "$tmp/drop.db"
expect "drop" 0 "^dropped $lower: 3 rows\$" '^$' -- "$MPT" drop "$tmp/drop.db" --trie "$upper"
expect "drop: the trie is gone" 0 "^main plain $dogs_root 3 147\$" '^$' -- "$MPT" tries "$tmp/drop.db"
expect "drop: its rows are gone" 0 '^0$' '^$' -- sqlite3 "$tmp/drop.db" "SELECT count(*) FROM nodes WHERE trie NOT IN (SELECT id FROM tries)"
expect "drop: the other trie is whole" 0 '^ok: 3 rows, 3 reachable, 0 problems$' '^$' -- "$MPT" check "$tmp/drop.db"
expect "drop again" 3 '^$' "^mpt: error: no such trie: .*drop.db: no trie named $lower; the file holds 1: main\$" -- "$MPT" drop "$tmp/drop.db" --trie "$lower"
expect "drop without --trie" 2 '^$' '^mpt: error: usage: .*--trie is required' -- "$MPT" drop "$tmp/drop.db"
expect "drop --json" 0 '^\{"dropped":"main","rows":3\}$' '^$' -- "$MPT" drop --json "$tmp/drop.db" --trie main
expect "drop: the last trie gone" 0 '^$' '^$' -- "$MPT" tries "$tmp/drop.db"
chmod a-w "$tmp/names.db"
if [ "$(id -u)" -ne 0 ]; then
    expect "drop from a read-only file" 3 '^$' '^mpt: error: trie file is read-only: ' -- "$MPT" drop "$tmp/names.db" --trie main
fi
chmod u+w "$tmp/names.db"

# copy: independent of the trie it copies.
cp "$tmp/names.db" "$tmp/copy.db"
expect "copy" 0 "^$dogs_root\$" '^$' -- "$MPT" copy "$tmp/copy.db" --to backup
printf '{"dog": "wolf", "doge": "coin", "doe": null}' >"$tmp/copy_change.json"
"$MPT" build "$tmp/copy_change.json" -o "$tmp/copy.db" --trie backup >/dev/null
expect "copy: an update of the copy leaves the trie" 0 '^0x7075707079$' '^$' -- "$MPT" get "$tmp/copy.db" dog
expect "copy: the copy is updated" 0 '^0x776f6c66$' '^$' -- "$MPT" get "$tmp/copy.db" --trie backup dog
expect "copy: the trie still checks" 0 '^ok: 3 rows, 3 reachable' '^$' -- "$MPT" check "$tmp/copy.db"
expect "copy: the copy checks" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/copy.db" --trie backup
"$MPT" build "$tmp/copy_change.json" -o "$tmp/copy.db" >/dev/null
expect "copy: an update of the trie leaves the copy" 1 '^$' '^$' -- "$MPT" get "$tmp/copy.db" --trie backup doe
expect "copy onto an existing trie" 2 '^$' "^mpt: error: bad input: .*copy.db: trie backup exists already \(--replace drops it first\)\$" -- "$MPT" copy "$tmp/copy.db" --trie "$lower" --to backup
expect "copy onto an existing trie changed nothing" 0 '^0x776f6c66$' '^$' -- "$MPT" get "$tmp/copy.db" --trie backup dog
expect "copy --replace" 0 "^\{\"from\":\"$lower\",\"to\":\"backup\",\"kind\":\"plain\",\"root\":\"$dogs_root\",\"rows\":3,\"replaced\":true\}\$" '^$' -- "$MPT" copy --json "$tmp/copy.db" --trie "$upper" --to backup --replace
expect "copy --replace: the old copy is gone" 0 '^0x7075707079$' '^$' -- "$MPT" get "$tmp/copy.db" --trie backup dog
expect "copy onto itself" 2 '^$' 'cannot be copied onto itself' -- "$MPT" copy "$tmp/copy.db" --to main --replace
expect "copy of an unknown trie" 3 '^$' 'no trie named nope; the file holds 3: ' -- "$MPT" copy "$tmp/copy.db" --trie nope --to x
expect "copy to a bad name" 2 '^$' '^mpt: error: bad input: .*a trie name cannot be empty' -- "$MPT" copy "$tmp/copy.db" --to ''
expect "copy without --to" 2 '^$' '^mpt: error: usage: .*--to is required' -- "$MPT" copy "$tmp/copy.db"
expect "copy of a state trie keeps its kind" 0 '^\{"from":"main","to":"s","kind":"state",' '^$' -- "$MPT" copy --json "$tmp/kinds.db" --to s
expect "copy: the state copy reads accounts" 0 '"balance":"0x16345785d8a0000"' '^$' -- "$MPT" get "$tmp/kinds.db" --trie s --account 0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b

# vacuum: smaller after a drop, the same tries; a kill leaves the old or the new file.
"$GEN" 10000 "$tmp/kv10k.json"
"$MPT" build "$tmp/kv10k.json" -o "$tmp/vac.db" --trie big >/dev/null
"$MPT" build "$FIX/dogs.json" -o "$tmp/vac.db" >/dev/null
"$MPT" drop "$tmp/vac.db" --trie big >/dev/null
before=$(($(stat -c %s "$tmp/vac.db") + $(stat -c %s "$tmp/vac.db-wal" 2>/dev/null || echo 0)))
expect "vacuum" 0 "^$before bytes before, [0-9]+ after\$" '^$' -- "$MPT" vacuum "$tmp/vac.db"
after=$(stat -c %s "$tmp/vac.db")
[ "$after" -lt $((before / 4)) ] && [ ! -s "$tmp/vac.db-wal" ]
case_result "vacuum: a quarter of the size or less, the log folded" $? \
    "$before bytes before, $after after, log $(stat -c %s "$tmp/vac.db-wal" 2>/dev/null)"
expect "vacuum: the trie checks" 0 '^ok: 3 rows, 3 reachable, 0 problems$' '^$' -- "$MPT" check "$tmp/vac.db"
expect "vacuum --json" 0 "^\{\"bytesBefore\":$after,\"bytesAfter\":$after,\"logFolded\":true\}\$" '^$' -- "$MPT" vacuum --json "$tmp/vac.db"
expect "vacuum of a key/value file" 3 '^$' '^mpt: error: not an mpt trie file: ' -- "$MPT" vacuum "$FIX/dogs.json"
# Kills at 24 points spread over a vacuum's measured time (the window in which a vacuum
# that wrote the file in place would break it is a few percent of that).
"$GEN" 30000 "$tmp/kv30k.json"
"$MPT" build "$tmp/kv30k.json" -o "$tmp/vac_kill.db" --trie a >/dev/null
"$MPT" copy "$tmp/vac_kill.db" --trie a --to b >/dev/null
kill_root=$("$MPT" drop "$tmp/vac_kill.db" --trie a >/dev/null && "$MPT" root --trie b "$tmp/vac_kill.db")
fresh_copy() {
    rm -f "$tmp/vk.db" "$tmp/vk.db-wal" "$tmp/vk.db-shm"
    cp "$tmp/vac_kill.db" "$tmp/vk.db"
    if [ -f "$tmp/vac_kill.db-wal" ]; then cp "$tmp/vac_kill.db-wal" "$tmp/vk.db-wal"; fi
}
fresh_copy
start=$(date +%s%N)
"$MPT" vacuum "$tmp/vk.db" >/dev/null
took_us=$((($(date +%s%N) - start) / 1000))
killed=0
broken=0
broken_at=
for i in $(seq 1 24); do
    fresh_copy
    "$MPT" vacuum "$tmp/vk.db" >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk "BEGIN { print $took_us * $i / 20 / 1000000 }")"
    kill -9 $pid 2>/dev/null && killed=$((killed + 1))
    wait $pid 2>/dev/null
    if ! "$MPT" check "$tmp/vk.db" --trie b 2>&1 | grep -q '^ok: ' ||
        [ "$("$MPT" root --trie b "$tmp/vk.db" 2>&1)" != "$kill_root" ]; then
        broken=$((broken + 1))
        broken_at="$broken_at killed at $i/20 of ${took_us}us: $("$MPT" check "$tmp/vk.db" --trie b 2>&1 | tail -1);"
    fi
done
[ $broken -eq 0 ]
case_result "vacuum killed at 24 points: the old or the new file" $? "$broken broken:$broken_at"
# Some of the kills must land while vacuum runs, or the case above tests nothing.
[ $killed -gt 0 ]
case_result "vacuum kill: some kills land while vacuum runs" $? "every vacuum ended before its kill"

# Rows of the tries table are checked where they are read, not at open: a damaged storage
# trie's row stops the commands that read it, and only those.
cp "$tmp/kinds.db" "$tmp/damaged.db"
bad=0x528b55564e8518548e42b534da3a526179b820f264ee7c6929d00b0b6a31cfc2  # of account 0x...aa
sqlite3 "$tmp/damaged.db" "UPDATE tries SET root = zeroblob(32) WHERE name = '$bad'"
damaged="^mpt: error: damaged trie record: .*damaged.db: trie $bad: the row.s checksum does not match its id, name, kind and root\$"
expect "damaged row unread: get an account" 0 '"nonce":"0xffffffffffffffff"' '^$' -- "$MPT" get "$tmp/damaged.db" --account 0x00000000000000000000000000000000000000aa
expect "damaged row unread: a slot of another account" 0 '^0x3b6$' '^$' -- "$MPT" get "$tmp/damaged.db" --account 0x000F3DF6D732807EF1319FB7B8BB8522D0BEAC02 --slot 0x03b6
expect "damaged row unread: proof" 0 '"proof"' '^$' -- "$MPT" proof "$tmp/damaged.db" --key-hashed 0x$(printf '00%.0s' $(seq 32))
expect "damaged row read: a slot of its account" 3 '^$' "$damaged" -- "$MPT" get "$tmp/damaged.db" --account 0x00000000000000000000000000000000000000aa --slot 0x01
expect "damaged row read: get --trie" 3 '^$' "$damaged" -- "$MPT" get "$tmp/damaged.db" --trie "$bad" --key-hashed 0x$(printf '00%.0s' $(seq 32))
expect "damaged row read: get-node" 3 '^$' "$damaged" -- "$MPT" get-node "$tmp/damaged.db" "$bad,0x00"
expect "damaged row read: tries" 3 '^$' "$damaged" -- "$MPT" tries "$tmp/damaged.db"
expect "damaged row read: check of another trie reads every row" 3 '^$' "$damaged" -- "$MPT" check "$tmp/damaged.db"
expect "damaged row read: copy" 3 '^$' "$damaged" -- "$MPT" copy "$tmp/damaged.db" --trie "$bad" --to x
expect "damaged row read: drop" 3 '^$' "$damaged" -- "$MPT" drop "$tmp/damaged.db" --trie "$bad"

# tree
"$MPT" build "$FIX/dogs.json" -o "$tmp/tree.db" >/dev/null
cat >"$tmp/tree_want.txt" <<EOF
extension path (root) key 646f6 hash $dogs_root rlp 38
  branch path 646f6 hash 0xdb6ae1fda66890f6693f36560d36b4dca68b4d838f17016b151efe1d4c95c453 rlp 61
    [5] leaf path 646f65 key (none) embedded rlp 11 value 0x7265696e64656572
    [7] branch path 646f67 hash 0x37efd11993cb04a54048c25320e9f29c50a432d28afdf01598b2978ce1ca3068 rlp 37 value 0x7075707079
      [6] leaf path 646f676 key 76c6573776f727468 embedded rlp 15 value 0x636174
EOF
expect "tree of dogs" 0 '^$' '^$' -- sh -c "'$MPT' tree '$tmp/tree.db' | diff - '$tmp/tree_want.txt'"
expect "tree --from a branch" 0 '^\[7\] branch path 646f67 hash 0x37efd119' '^$' -- "$MPT" tree "$tmp/tree.db" --from 646f67
expect "tree --from inside an extension's key" 0 '^extension path \(root\) key 646f6 ' '^$' -- "$MPT" tree "$tmp/tree.db" --from 64
expect "tree --from inside a leaf's key" 0 '^\[6\] leaf path 646f676 key 76c6573776f727468 ' '^$' -- "$MPT" tree "$tmp/tree.db" --from 646f6767
expect "tree --from a path no key has" 1 '^$' '^mpt: .*tree.db: trie main: no node lies on path 646f68$' -- "$MPT" tree "$tmp/tree.db" --from 646f68
# --json: the same nodes, one object each, the values whole.
expect "tree --json of dogs: the nodes in order" 0 '^extension  646f6 0,branch 646f6 null 1,leaf 646f65  2,branch 646f67 null 2,leaf 646f676 76c6573776f727468 3$' '^$' -- sh -c "'$MPT' tree --json '$tmp/tree.db' | jq -r '[.nodes[] | \"\\(.kind) \\(.path) \\(.key) \\(.depth)\"] | join(\",\")'"
expect "tree --json: the fields of a node" 0 '^\{"depth":2,"slot":7,"kind":"branch","path":"646f67","key":null,"hash":"0x37efd11993cb04a54048c25320e9f29c50a432d28afdf01598b2978ce1ca3068","rlpBytes":37,"value":"0x7075707079","children":1,"cut":0\}$' '^$' -- sh -c "'$MPT' tree --json '$tmp/tree.db' | jq -c '.nodes[3]'"
expect "tree --json --depth 1: the cut" 0 '"cut":2\}\],"cutSubtrees":2\}$' '^$' -- "$MPT" tree --json --depth 1 "$tmp/tree.db"
expect "tree --json --dot" 2 '^$' '^mpt: error: usage: tree: give --json or --dot, not both$' -- "$MPT" tree --json --dot "$tmp/tree.db"
expect "tree --from not nibbles" 2 '^$' '^mpt: error: usage: tree: --from 0x12: a nibble path is hex digits, one per nibble$' -- "$MPT" tree "$tmp/tree.db" --from 0x12
expect "tree --depth 1: the cut said" 0 '^\.\.\. 2 subtrees not shown: below --depth 1$' '^$' -- "$MPT" tree "$tmp/tree.db" --depth 1
expect "tree --depth 1: on the node cut" 0 'rlp 61 \(2 children not shown\)$' '^$' -- "$MPT" tree "$tmp/tree.db" --depth 1
expect "tree --depth -1" 2 '^$' '^mpt: error: usage: tree: --depth: must be a whole number' -- "$MPT" tree "$tmp/tree.db" --depth -1
printf '{}' >"$tmp/tree_empty.json"
"$MPT" build "$tmp/tree_empty.json" -o "$tmp/tree_empty.db" >/dev/null
expect "tree of the empty trie" 0 '^empty trie$' '^$' -- "$MPT" tree "$tmp/tree_empty.db"
expect "tree --json of the empty trie" 0 '^\{"trie":"main","root":"0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421","nodes":\[\],"cutSubtrees":0\}$' '^$' -- "$MPT" tree --json "$tmp/tree_empty.db"
"$MPT" build "$tmp/kv10k.json" -o "$tmp/tree10k.db" >/dev/null
expect "tree of 10k pairs: 1000 nodes by default" 0 '^1001$' '^$' -- sh -c "'$MPT' tree '$tmp/tree10k.db' | wc -l"
expect "tree of 10k pairs: both limits said" 0 '^\.\.\. [0-9]+ subtrees not shown: below --depth 4 and past --limit 1000 nodes$' '^$' -- "$MPT" tree "$tmp/tree10k.db"
expect "tree --limit 3" 0 '^4$' '^$' -- sh -c "'$MPT' tree --limit 3 '$tmp/tree10k.db' | wc -l"
cp "$tmp/tree.db" "$tmp/tree_bad.db"
sqlite3 "$tmp/tree_bad.db" "UPDATE nodes SET rlp = rlp || x'00' WHERE path = x'0604060f06'"
expect "tree reads through the hash check" 3 '^$' '^mpt: error: node hash mismatch: .*tree_bad.db: trie main, path 646f6$' -- "$MPT" tree "$tmp/tree_bad.db"
# --dot: the same nodes, rendered by Graphviz.
"$MPT" tree --dot --depth 2 "$tmp/tree10k.db" >"$tmp/tree.dot"
expect "tree --dot renders" 0 '^$' '^$' -- dot -Tsvg -o "$tmp/tree.svg" "$tmp/tree.dot"
expect "tree --dot renders an SVG" 0 '^<svg ' '^$' -- cat "$tmp/tree.svg"
text_nodes=$("$MPT" tree --depth 2 "$tmp/tree10k.db" | grep -vc '^\.\.\. ')
dot_nodes=$(grep -c '^  n[0-9]* \[label=' "$tmp/tree.dot")
notes=$(grep -c '^  \(c[0-9]*\|cut\) \[label=' "$tmp/tree.dot")
svg_nodes=$(grep -c 'class="node"' "$tmp/tree.svg")
svg_edges=$(grep -c 'class="edge"' "$tmp/tree.svg")
[ "$text_nodes" -gt 16 ] && [ "$dot_nodes" -eq "$text_nodes" ] && [ "$svg_nodes" -eq $((dot_nodes + notes)) ] &&
    [ "$svg_edges" -eq $((dot_nodes - 1 + notes - 1)) ]
case_result "tree --dot: the text tree's nodes, rendered" $? \
    "$text_nodes text nodes, $dot_nodes dot nodes, $notes notes, svg $svg_nodes nodes, $svg_edges edges"
expect "tree --dot: a branch's edges carry its nibble" 0 '^  n0 -> n1 \[label="0"\];$' '^$' -- cat "$tmp/tree.dot"
expect "tree --dot of dogs renders" 0 '646f676' '^$' -- sh -c "'$MPT' tree --dot '$tmp/tree.db' | dot -Tsvg"

# Cases of `mpt root` and `mpt build` past --memory, for cli_test.sh: inputs larger than the
# budget lets the whole-file path hold spill sorted runs to temporary files (--tmp) and must
# give the in-memory path's root and file, the same errors, and leave no temporary file.
# 1M (the least budget) holds about 500 KB of input whole for a root, 400 KB for a build.
spill=$tmp/spill
mkdir -p "$spill/tmp"
# An array of 24,000 writes over 6,000 keys: every key written four times, most in different
# runs, and one write in seven a deletion (null, or "" every other time).
awk 'BEGIN {
    printf "[";
    for (i = 0; i < 24000; ++i) {
        if (i) printf ",\n";
        v = i % 7 == 3 ? (i % 2 ? "null" : "\"\"") : sprintf("\"0x%012x\"", i * 7919);
        printf "[\"0x%06x\", %s]", (i * 2654435761) % 6000, v;
    }
    printf "]\n";
}' >"$spill/ordered.json"
"$GEN" 6000 "$spill/object.json"
for f in ordered object; do
    want=$("$MPT" root "$spill/$f.json")
    expect "spill: root --memory 1M of $f input, as in memory" 0 "^$want\$" '^$' -- \
        "$MPT" root --memory 1M --tmp "$spill/tmp" "$spill/$f.json"
    expect "spill: root --json --memory 1M of $f input wrote runs" 0 \
        "^\{\"root\":\"$want\",\"trie\":null,\"keys\":[0-9]+,\"tempFiles\":[1-9][0-9]*,\"tempBytes\":[1-9][0-9]*\}\$" '^$' -- \
        "$MPT" root --json --memory 1M --tmp "$spill/tmp" "$spill/$f.json"
    expect "spill: root --secure --memory 1M of $f input" 0 "^$("$MPT" root --secure "$spill/$f.json")\$" '^$' -- \
        "$MPT" root --secure --memory 1M --tmp "$spill/tmp" "$spill/$f.json"
    expect "spill: root --memory 1M of $f input from a pipe" 0 "^$want\$" '^$' -- \
        sh -c "cat '$spill/$f.json' | '$MPT' root --memory 1M --tmp '$spill/tmp' -"
    for secure in "" --secure; do
        rm -f "$spill/mem.db" "$spill/spill.db"
        "$MPT" build $secure "$spill/$f.json" -o "$spill/mem.db" >/dev/null
        expect "spill: build $secure --memory 1M of $f input" 0 '^0x' '^$' -- \
            "$MPT" build $secure --memory 1M --tmp "$spill/tmp" "$spill/$f.json" -o "$spill/spill.db"
        cmp -s "$spill/mem.db" "$spill/spill.db"
        case_result "spill: build $secure --memory 1M of $f input: the in-memory build's file" $? \
            "build $secure --memory 1M of $f input is not the in-memory build's file"
    done
done
rm -f "$spill/spill.db"
TMPDIR=$spill/tmp expect "spill: build --json --memory 1M spills to \$TMPDIR" 0 '"tempFiles":[1-9]' '^$' -- \
    "$MPT" build --json --memory 1M "$spill/ordered.json" -o "$spill/spill.db"
[ -z "$(ls -A "$spill/tmp")" ]
case_result "spill: build --json --memory 1M leaves no temporary file" $? \
    "temporary files left in $spill/tmp: $(ls -A "$spill/tmp")"

# What dump prints reads back in pieces too: the text form (a piece ends after a line), CRLF
# lines, and a JSON document after a byte order mark, from a file and from a pipe.
"$MPT" build "$spill/object.json" -o "$spill/dumped.db" >/dev/null
"$MPT" dump "$spill/dumped.db" >"$spill/dump.txt"
sed 's/$/\r/' "$spill/dump.txt" >"$spill/dump_crlf.txt"
printf '\357\273\277' | cat - "$spill/object.json" >"$spill/bom.json"
want=$("$MPT" root "$spill/object.json")
for f in dump.txt dump_crlf.txt bom.json; do
    expect "spill: root --json --memory 1M of $f spills, as in memory" 0 \
        "^\{\"root\":\"$want\",\"trie\":null,\"keys\":6000,\"tempFiles\":[1-9]" '^$' -- \
        "$MPT" root --json --memory 1M --tmp "$spill/tmp" "$spill/$f"
    expect "spill: root --memory 1M of $f from a pipe" 0 "^$want\$" '^$' -- \
        sh -c "cat '$spill/$f' | '$MPT' root --memory 1M --tmp '$spill/tmp' -"
done
rm -f "$spill/spill.db"
expect "spill: build --memory 1M of a text dump" 0 '^0x' '^$' -- \
    "$MPT" build --memory 1M --tmp "$spill/tmp" "$spill/dump.txt" -o "$spill/spill.db"
cmp -s "$spill/dumped.db" "$spill/spill.db"
case_result "spill: build --memory 1M of a text dump: the in-memory build's file" $? \
    "build --memory 1M of a text dump is not the in-memory build's file"
# A bad line far into a text dump: its line, as in memory.
sed '5000 s/ 0x/ 0xzz/' "$spill/dump.txt" >"$spill/bad.txt"
expect "spill: a bad line in a text dump, as in memory" 2 '^$' \
    "^$("$MPT" root "$spill/bad.txt" 2>&1 | sed 's/[][\.*^$()]/\\&/g')\$" -- \
    "$MPT" root --memory 1M --tmp "$spill/tmp" "$spill/bad.txt"
rm -f "$spill/dumped.db" "$spill/spill.db" "$spill/dump_crlf.txt" "$spill/bom.json" "$spill/bad.txt"

# Errors: the same line as in memory for a bad entry near the end; a budget that is no size;
# a temporary folder that is not there; temporary files past a file size limit (as a full
# disk: exit 3, nothing left).
sed '$ s/]$/, ["0x01", 7]]/' "$spill/ordered.json" >"$spill/bad.json"
expect "spill: a bad entry at the end, as in memory" 2 '^$' \
    "^$("$MPT" root "$spill/bad.json" 2>&1 | sed 's/[][\.*^$()]/\\&/g')\$" -- \
    "$MPT" root --memory 1M --tmp "$spill/tmp" "$spill/bad.json"
expect "spill: --memory 12X" 2 '^$' '^mpt: error: usage: .*--memory' -- "$MPT" root --memory 12X "$spill/ordered.json"
expect "spill: --memory below 1M" 2 '^$' '^mpt: error: usage: .*at least 1M' -- "$MPT" build --memory 100K "$spill/ordered.json" -o "$spill/x.db"
expect "spill: root --memory with --vectors" 2 '^$' '^mpt: error: usage: root: --memory, --tmp and --max-input apply to key/value input and --state$' -- "$MPT" root --memory 1M --vectors "$FIX/trie_vectors.json"
expect "spill: --tmp no such folder, before reading" 2 '^$' "^mpt: error: usage: root: --tmp: $spill/none: no such folder\$" -- \
    "$MPT" root --memory 1M --tmp "$spill/none" "$spill/ordered.json"
expect "spill: --tmp a file, though nothing spills" 2 '^$' "^mpt: error: usage: build: --tmp: $FIX/dogs.json: not a folder\$" -- \
    "$MPT" build --tmp "$FIX/dogs.json" "$FIX/dogs.json" -o "$spill/tmp_file.db"
[ ! -e "$spill/tmp_file.db" ]
case_result "spill: a build refused for its --tmp makes no file" $? "$spill/tmp_file.db was made"
expect "spill: build past a file size limit" 3 '^$' "^mpt: error: storage I/O error: $spill/tmp: cannot write a temporary file: File too large\$" -- \
    bash -c "trap '' XFSZ; ulimit -f 20; exec '$MPT' build --memory 1M --tmp '$spill/tmp' '$spill/ordered.json' -o '$spill/limited.db'"
[ ! -e "$spill/limited.db" ] && [ -z "$(ls -A "$spill/tmp")" ]
case_result "spill: a failed build leaves no file" $? \
    "a failed build left files behind"

# Killed while it spills (SIGKILL: no handler runs): the temporary files have no name, and the
# new trie file none until whole, so nothing is left.
"$GEN" 60000 "$spill/big.json"
"$MPT" build --memory 1M --tmp "$spill/tmp" "$spill/big.json" -o "$spill/killed.db" >/dev/null 2>&1 &
spill_pid=$!
sleep 0.3
kill -9 $spill_pid 2>/dev/null
wait $spill_pid 2>/dev/null
[ -z "$(ls -A "$spill/tmp")" ]
case_result "spill: a killed build leaves no temporary file" $? \
    "a killed build left temporary files: $(ls -A "$spill/tmp")"
[ ! -e "$spill/killed.db" ] || [ "$("$MPT" root "$spill/killed.db")" = "$("$MPT" root "$spill/big.json")" ]
case_result "spill: a killed build leaves no partial file" $? \
    "a killed build left a partial file"
rm -f "$spill/big.json" "$spill/killed.db"

# Into an existing file, past --memory: the pieces go through the store in one write. The
# trie is the one the whole input gives (the same root, and every row reachable with none
# left over), a new trie beside it or a replaced one too; a bad entry in a later piece leaves
# the file as it was.
rows_of() { sqlite3 "$1" "SELECT hex(path) || ' ' || hex(rlp) FROM nodes WHERE trie = (SELECT id FROM tries WHERE name = '${2:-main}') ORDER BY path" | md5sum; }
for secure in "" --secure; do
    rm -f "$spill/base.db" "$spill/upd_mem.db" "$spill/upd_spill.db"
    "$MPT" build $secure "$spill/object.json" -o "$spill/base.db" >/dev/null
    cp "$spill/base.db" "$spill/upd_mem.db"
    cp "$spill/base.db" "$spill/upd_spill.db"
    want=$("$MPT" build $secure "$spill/ordered.json" -o "$spill/upd_mem.db")
    expect "spill: build $secure --memory 1M into an existing file, as in memory" 0 "^$want\$" '^$' -- \
        "$MPT" build $secure --memory 1M --tmp "$spill/tmp" "$spill/ordered.json" -o "$spill/upd_spill.db"
    [ "$(rows_of "$spill/upd_spill.db")" = "$(rows_of "$spill/upd_mem.db")" ]
    case_result "spill: build $secure --memory 1M into an existing file: the in-memory update's rows" $? \
        "build $secure --memory 1M into an existing file: rows differ from the in-memory update's"
    [ "$(sqlite3 "$spill/upd_spill.db" 'SELECT count(*) FROM preimages')" = "$(sqlite3 "$spill/upd_mem.db" 'SELECT count(*) FROM preimages')" ]
    case_result "spill: build $secure --memory 1M into an existing file: the in-memory update's preimages" $? \
        "build $secure --memory 1M into an existing file: preimages differ"
    expect "spill: the file updated in pieces $secure checks" 0 '^ok: ([0-9]+) rows, \1 reachable, 0 problems$' '^$' -- \
        "$MPT" check "$spill/upd_spill.db"
done
want=$("$MPT" root "$spill/ordered.json")
rm -f "$spill/upd_spill.db"
"$MPT" build "$spill/object.json" -o "$spill/upd_spill.db" >/dev/null
expect "spill: build --trie other --memory 1M beside a trie" 0 "^$want\$" '^$' -- \
    "$MPT" build --trie other --memory 1M --tmp "$spill/tmp" "$spill/ordered.json" -o "$spill/upd_spill.db"
expect "spill: build --replace --memory 1M" 0 "^$want\$" '^$' -- \
    "$MPT" build --replace --memory 1M --tmp "$spill/tmp" "$spill/ordered.json" -o "$spill/upd_spill.db"
[ "$(rows_of "$spill/upd_spill.db" other)" = "$(rows_of "$spill/upd_spill.db")" ]
case_result "spill: a new trie and a replaced one from the same input: the same rows" $? \
    "a new trie and a replaced one from the same input hold different rows"
rm -f "$spill/upd_bad.db"
cp "$spill/base.db" "$spill/upd_bad.db"
before=$(rows_of "$spill/upd_bad.db")
expect "spill: a bad entry at the end of an update in pieces, as in memory" 2 '^$' \
    "^$("$MPT" build "$spill/bad.json" -o "$spill/upd_bad.db" 2>&1 | sed 's/[][\.*^$()]/\\&/g')\$" -- \
    "$MPT" build --memory 1M --tmp "$spill/tmp" "$spill/bad.json" -o "$spill/upd_bad.db"
[ "$(rows_of "$spill/upd_bad.db")" = "$before" ] && [ "$("$MPT" root "$spill/upd_bad.db")" = "$("$MPT" root "$spill/base.db")" ]
case_result "spill: a failed update in pieces leaves the file as it was" $? \
    "a failed update in pieces changed the file"
[ -z "$(ls -A "$spill/tmp")" ]
case_result "spill: a failed update leaves no temporary file" $? \
    "temporary files left in $spill/tmp: $(ls -A "$spill/tmp")"

# Cases of the command line itself (flag order, usage errors, help, global options), for
# cli_test.sh; sourced after the other cases. $MPT, $FIX, $tmp as there.

# 1. Flag order never matters: a flag after an option that takes values is not its value.
S=0x0e2696d33d4f6ee17fa14c7517560db2eaf621f9c39181b095b8606325452c59
expect "flags: root --state --json FILE" 0 "^\{\"root\":\"$S\",\"shape\":\"genesis\"" '^$' -- "$MPT" root --state --json "$FIX/state_genesis.json"
expect "flags: root --state FILE --json" 0 "^\{\"root\":\"$S\",\"shape\":\"genesis\"" '^$' -- "$MPT" root --state "$FIX/state_genesis.json" --json
expect "flags: root --vectors --json FILE" 0 '"passed":3,"failed":0' '^$' -- "$MPT" root --vectors --json "$FIX/trie_vectors_secure.json"
expect "flags: root --trie --json NAME DB" 0 '^\{"root":"0x8aad789d' '^$' -- "$MPT" root --trie --json main "$tmp/dogs.db"
expect "flags: proof --verify --json FILE" 0 '^\{"valid":true,"error":null\}$' '^$' -- "$MPT" proof --verify --json "$FIX/proof_present.json"
expect "flags: proof --json --verify FILE" 0 '^\{"valid":true,"error":null\}$' '^$' -- "$MPT" proof --json --verify "$FIX/proof_present.json"
expect "flags: dump --from --json KEY DB" 0 '^\{"0x646f67":' '^$' -- "$MPT" dump --from --json dog "$tmp/dogs.db"
expect "flags: get-node --max-bytes --json N DB PATH" 0 '"status":"found"' '^$' -- "$MPT" get-node --max-bytes --json 10 "$tmp/dogs.db" 0x00
expect "flags: an option without its value" 2 '^$' '^mpt: error: usage: proof: --verify needs a value$' -- "$MPT" proof --verify --json
expect "flags: a value that starts with a dash is a value" 2 '^$' '^mpt: error: usage: dump: --limit: must be a whole number \(0 or more\), got -1$' -- "$MPT" dump --limit -1 "$tmp/dogs.db"
expect "flags: after -- nothing is a flag" 1 '^$' '^$' -- "$MPT" get "$tmp/dogs.db" -- --json

# 2. Usage errors in the project's words, arguments named as --help names them.
expect "usage: unknown option" 2 '^$' '^mpt: error: usage: root: unknown option --bogus \(`mpt root --help` lists the options' -- "$MPT" root --bogus "$FIX/dogs.json"
expect "usage: unknown option, did you mean" 2 '^$' '^mpt: error: usage: root: unknown option --jsn \(did you mean --json\?\)$' -- "$MPT" root --jsn "$FIX/dogs.json"
expect "usage: unknown option after the operands" 2 '^$' '^mpt: error: usage: get: unknown option -v ' -- "$MPT" get "$tmp/dogs.db" -v
expect "usage: unknown command, did you mean" 2 '^$' '^mpt: error: usage: unknown command: buidl \(did you mean build\?\)$' -- "$MPT" buidl
expect "usage: an option of one value given twice" 2 '^$' '^mpt: error: usage: copy: --to takes one value, given 2$' -- "$MPT" copy "$tmp/dogs.db" --to a --to b
expect "usage: -o and --output both given" 2 '^$' '^mpt: error: usage: build: --output takes one value, given 2$' -- "$MPT" build "$FIX/dogs.json" -o "$tmp/o1.db" --output "$tmp/o2.db"
[ ! -e "$tmp/o1.db" ] && [ ! -e "$tmp/o2.db" ]
case_result "usage: a refused build with two outputs made no file" $? "a file was made"
expect "a trie file from stdin (-)" 2 '^$' '^mpt: error: bad input: -: a trie file is a file; - \(stdin\) cannot be one$' -- "$MPT" get - dog
expect "dump of - (stdin)" 2 '^$' '^mpt: error: bad input: -: a trie file is a file; - \(stdin\) cannot be one$' -- "$MPT" dump -
expect "an empty trie file name" 2 '^$' '^mpt: error: bad input: an empty file name$' -- "$MPT" check ''
expect "an empty input file name" 2 '^$' '^mpt: error: bad input: an empty file name$' -- "$MPT" root ''
expect "a trie file piped to root -" 2 '^$' '^mpt: error: malformed JSON: -: an SQLite database \(a trie file\?\), not a document$' -- sh -c "exec '$MPT' root - <'$tmp/dogs.db'"
expect "a trie file piped to root --state -" 2 '^$' '^mpt: error: malformed JSON: -: an SQLite database \(a trie file\?\), not a document$' -- sh -c "cat '$tmp/dogs.db' | exec '$MPT' root --state -"
expect "an empty --verify file name" 2 '^$' '^mpt: error: bad input: an empty file name$' -- "$MPT" proof --verify ''
expect "build -o of an empty name" 2 '^$' '^mpt: error: usage: build: -o: an empty file name$' -- "$MPT" build "$FIX/dogs.json" -o ''
expect "witness -o of an empty name" 2 '^$' '^mpt: error: usage: witness: -o: an empty file name$' -- "$MPT" witness "$tmp/dogs.db" 0x01 -o ''
expect "an empty --keys file name" 2 '^$' '^mpt: error: bad input: an empty file name$' -- "$MPT" get "$tmp/dogs.db" --keys ''
expect "usage: an option's value missing" 2 '^$' '^mpt: error: usage: get: --trie needs a value$' -- "$MPT" get "$tmp/dogs.db" dog --trie
expect "usage: DB is required" 2 '^$' '^mpt: error: usage: dump: DB is required$' -- "$MPT" dump
expect "usage: B is required" 2 '^$' '^mpt: error: usage: diff: B is required$' -- "$MPT" diff "$FIX/dogs.json"
expect "usage: an argument too many" 2 '^$' '^mpt: error: usage: dump: unexpected argument: extra$' -- "$MPT" dump "$tmp/dogs.db" extra
expect "usage: out of range" 2 '^$' '^mpt: error: usage: root: --threads: must be 1 to 1024, got 0$' -- "$MPT" root --threads 0 "$FIX/dogs.json"
expect "usage: not one of a set" 2 '^$' '^mpt: error: usage: rlp: ACTION: must be one of decode,encode, got frob$' -- "$MPT" rlp frob 0x
expect "mpt help" 0 '^Subcommands:$' '^$' -- "$MPT" help
expect "mpt help CMD" 0 '^Usage: mpt get \[OPTIONS\] DB \[KEY\.\.\.\]$' '^$' -- "$MPT" help get
expect "mpt help of an unknown command" 2 '^$' '^mpt: error: usage: unknown command: nope$' -- "$MPT" help nope
# Help: no CLI11 type tags, mpt as the program's name however it was run, one footer.
for cmd in $("$MPT" --help | awk '/^Subcommands:/ { s = 1; next } s && /^  [a-z]/ { print $1 }'); do
    expect "help of $cmd: no type tags" 0 '^$' '^$' -- sh -c "'$MPT' $cmd --help | grep -E '\\b(TEXT|UINT|INT|REQUIRED)\\b|:(COUNT|UINT)'"'; [ $? -eq 1 ]'
    expect "help of $cmd: every option's value named" 0 '^$' '^$' -- sh -c "'$MPT' $cmd --help | grep -E '^  -[^ ]* VALUE'"'; [ $? -eq 1 ]'
    expect "help of $cmd: program name" 0 "^Usage: mpt $cmd " '^$' -- "$MPT" "$cmd" --help
    expect "help of $cmd: the footer" 0 '^Exit codes: 0 success' '^$' -- "$MPT" "$cmd" --help
done

# 3. Global -q/--quiet, before or after the command; --version names commit, SQLite and the Keccak kernel.
sed 's/"root": "0e26/"root": "1e26/' "$FIX/state_geth_dump.json" >"$tmp/flags_wrong_root.json"
expect "quiet: no note" 1 "^$S\$" '^$' -- "$MPT" root -q --state "$tmp/flags_wrong_root.json"
expect "quiet: before the command" 1 "^$S\$" '^$' -- "$MPT" --quiet root --state "$tmp/flags_wrong_root.json"
expect "quiet: errors still" 2 '^$' '^mpt: error: .*no-such-file' -- "$MPT" -q root "$tmp/no-such-file.json"
expect "version: commit, SQLite and Keccak kernel" 0 '^mpt [0-9.]+ \(commit ([0-9a-f]{12}|unknown), SQLite 3\.[0-9]+\.[0-9]+, Keccak (scalar|avx2|avx512)\)$' '^$' -- "$MPT" --version
# MPT_KECCAK picks the batch Keccak kernel; scalar runs everywhere, and a name this CPU
# cannot run is refused rather than ignored.
expect "MPT_KECCAK=scalar: --version names it" 0 ', Keccak scalar\)$' '^$' -- env MPT_KECCAK=scalar "$MPT" --version
expect "MPT_KECCAK unknown: refused" 2 '^$' '^mpt: error: usage: MPT_KECCAK=sse: not a Keccak kernel this CPU runs \(it runs: scalar[a-z0-9, ]*\)$' -- env MPT_KECCAK=sse "$MPT" root --state "$FIX/state_genesis.json"

# 4. One rule per flag, one exit code per kind of input.
expect "vectors: --secure is a usage error" 2 '^$' '^mpt: error: usage: root: --secure does not go with --vectors' -- "$MPT" root --vectors "$FIX/trie_vectors.json" --secure
expect "vectors: --trie is a usage error" 2 '^$' '^mpt: error: usage: root: --trie applies to a trie file' -- "$MPT" root --vectors "$FIX/trie_vectors.json" --trie main
expect "diff --trie on key/value input" 2 '^$' '^mpt: error: usage: diff: --trie applies to a trie file A, not to key/value input$' -- "$MPT" diff --trie x "$FIX/diff_a.json" "$FIX/diff_b.json"
expect "diff --trie-b on key/value input" 2 '^$' '^mpt: error: usage: diff: --trie-b applies to a trie file B, not to key/value input$' -- "$MPT" diff --trie-b x "$tmp/diff_a.db" "$FIX/diff_b.json"
expect "diff --trie on a trie file still works" 0 '^$' '^$' -- "$MPT" diff --trie main --trie-b main "$tmp/diff_a.db" "$tmp/diff_a.db"
for cmd in get dump check stats get-node proof diff root tries drop copy vacuum tree; do
    case $cmd in
        drop) args="$tmp/flags-missing.db --trie main" ;;
        copy) args="$tmp/flags-missing.db --to other" ;;
        get | proof) args="$tmp/flags-missing.db 0x00" ;;
        get-node) args="$tmp/flags-missing.db 0x00" ;;
        diff) args="$tmp/flags-missing.db $tmp/dogs.db" ;;
        *) args="$tmp/flags-missing.db" ;;
    esac
    # shellcheck disable=SC2086
    expect "missing input file: $cmd exits 2" 2 '^$' '^mpt: error: bad input: .*flags-missing\.db: No such file or directory$' -- "$MPT" $cmd $args
done
# A file there but unreadable (its permissions) is exit 2 with the OS's reason, never "not an
# SQLite database" (which could get a sound file deleted). As root, the commands run without
# the capabilities that pass over file permissions.
unprivileged=()
[ "$(id -u)" -eq 0 ] && unprivileged=(setpriv --bounding-set=-dac_override,-dac_read_search)
cp "$tmp/dogs.db" "$tmp/flags-unreadable.db"
cp "$FIX/dogs.json" "$tmp/flags-unreadable.json"
chmod 000 "$tmp/flags-unreadable.db" "$tmp/flags-unreadable.json"
expect "unreadable: the file cannot be read" 1 '^$' 'Permission denied' -- "${unprivileged[@]}" cat "$tmp/flags-unreadable.db"
for cmd in get dump check stats get-node proof diff root tries drop copy vacuum tree; do
    case $cmd in
        drop) args="$tmp/flags-unreadable.db --trie main" ;;
        copy) args="$tmp/flags-unreadable.db --to other" ;;
        get | proof | get-node) args="$tmp/flags-unreadable.db 0x00" ;;
        diff) args="$tmp/dogs.db $tmp/flags-unreadable.db" ;;
        *) args="$tmp/flags-unreadable.db" ;;
    esac
    # shellcheck disable=SC2086
    expect "unreadable trie file: $cmd exits 2" 2 '^$' '^mpt: error: bad input: .*flags-unreadable\.db: Permission denied$' -- "${unprivileged[@]}" "$MPT" $cmd $args
done
for cmd in root build diff; do
    case $cmd in
        build) args="$tmp/flags-unreadable.json -o $tmp/flags-unreadable-out.db" ;;
        diff) args="$FIX/dogs.json $tmp/flags-unreadable.json" ;;
        *) args="$tmp/flags-unreadable.json" ;;
    esac
    # shellcheck disable=SC2086
    expect "unreadable key/value file: $cmd exits 2" 2 '^$' '^mpt: error: bad input: .*flags-unreadable\.json: Permission denied$' -- "${unprivileged[@]}" "$MPT" $cmd $args
done
chmod 600 "$tmp/flags-unreadable.db" "$tmp/flags-unreadable.json"
# A trie file to change that may be read but not written: a storage error, as where nothing
# may be written (below), with the OS's reason, for every command that writes into one.
chmod 444 "$tmp/flags-unreadable.db"
for cmd in build drop vacuum copy; do
    case $cmd in
        build) args="$FIX/dogs.json -o $tmp/flags-unreadable.db" ;;
        drop) args="$tmp/flags-unreadable.db --trie main" ;;
        copy) args="$tmp/flags-unreadable.db --to other" ;;
        *) args="$tmp/flags-unreadable.db" ;;
    esac
    # shellcheck disable=SC2086
    expect "write-protected trie file: $cmd exits 3" 3 '^$' '^mpt: error: trie file is read-only: .*flags-unreadable\.db: Permission denied$' -- "${unprivileged[@]}" "$MPT" $cmd $args
done
expect "write-protected trie file: still read" 0 '^0x7075707079$' '^$' -- "${unprivileged[@]}" "$MPT" get "$tmp/flags-unreadable.db" dog
chmod 600 "$tmp/flags-unreadable.db"
: >"$tmp/flags-empty.db"
expect "root of an empty file: the empty root, with a note" 0 '^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421$' '^mpt: note: .*flags-empty\.db: an empty file, read as no key/value pairs \(the empty root\)$' -- "$MPT" root "$tmp/flags-empty.db"
expect "root -q of an empty file: no note" 0 '^0x56e8' '^$' -- "$MPT" -q root "$tmp/flags-empty.db"
expect "build -o - is refused" 2 '^$' '^mpt: error: usage: build: -o: ' -- sh -c "cd '$tmp' && '$MPT' build '$FIX/dogs.json' -o -"
expect "build -o - makes no file" 0 '^$' '^$' -- test ! -e "$tmp/-"
expect "dump --limit 0 prints none" 0 '^$' '^$' -- "$MPT" dump --limit 0 "$tmp/dogs.db"
expect "dump --limit 0 --json" 0 '^\{\}$' '^$' -- "$MPT" dump --limit 0 --json "$tmp/dogs.db"
"$MPT" build --state "$FIX/state_genesis.json" -o "$tmp/flags_state.db" >/dev/null
expect "dump --limit 0 --accounts prints none" 0 '^$' '^$' -- "$MPT" dump --limit 0 --accounts "$tmp/flags_state.db"
expect "dump --limit 1 --accounts prints one" 0 '^\{"address":' '^$' -- sh -c "'$MPT' dump --limit 1 --accounts '$tmp/flags_state.db' | test \$(wc -l) -eq 1 && '$MPT' dump --limit 1 --accounts '$tmp/flags_state.db'"
expect "dump --limit 0 still opens the file" 2 '^$' 'flags-missing\.db' -- "$MPT" dump --limit 0 "$tmp/flags-missing.db"
expect "dump without --limit prints all" 0 '^0x646f67676c6573776f727468 ' '^$' -- "$MPT" dump "$tmp/dogs.db"
expect "proof --range on keys of several lengths" 2 '^$' '^mpt: error: bad input: .*dogs\.db: range proofs need keys of one length: key 0x646f65 has 3 bytes, key 0x646f67676c6573776f727468 has 12$' -- "$MPT" proof "$tmp/dogs.db" --range 0x00
expect "proof --range, one length in range but not in the trie" 2 '^$' 'range proofs need keys of one length' -- "$MPT" proof "$tmp/dogs.db" --range 0x646f6700 --limit 1
last10k=$("$MPT" dump "$tmp/kv10k.db" | tail -1 | cut -d' ' -f1)
expect "proof --range past the last key: first padded" 0 "\"first\":\"0xffffffff0{56}\",\"keys\":\[\]" '^$' -- "$MPT" proof "$tmp/kv10k.db" --range 0xffffffff
expect "proof --range past the last key verifies" 0 '^valid more=false$' '^$' -- sh -c "'$MPT' proof '$tmp/kv10k.db' --range 0xffffffff | '$MPT' verify-range -"
[ "${last10k:0:10}" != 0xffffffff ] || echo "FAIL kv10k's last key $last10k is past 0xffffffff"

# 6. Small shapes: plurals, one JSON shape per command, every answer saying where it is from.
expect "check: one problem, singular" 3 ' 1 problem$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- sh -c "cp '$tmp/dogs.db' '$tmp/flags_bad.db' && sqlite3 '$tmp/flags_bad.db' 'DELETE FROM nodes WHERE path = (SELECT max(path) FROM nodes)' && '$MPT' check '$tmp/flags_bad.db'"
expect "check: rows plural" 0 '^ok: 3 rows, 3 reachable, 0 problems$' '^$' -- "$MPT" check "$tmp/dogs.db"
expect "stats --json: depth rows" 0 '"rowsByDepth":\[\{"depth":0,"rows":1,"bytes":38\},\{"depth":1,"rows":0,"bytes":0\},' '^$' -- "$MPT" stats --json "$tmp/dogs.db"
expect "root --json: one shape, key/value" 0 '^\{"root":"0x8aad[0-9a-f]{60}","trie":null,"keys":3\}$' '^$' -- "$MPT" root --json "$FIX/dogs.json"
expect "root --json: one shape, trie file" 0 '^\{"root":"0x8aad[0-9a-f]{60}","trie":"main","keys":null\}$' '^$' -- "$MPT" root --json "$tmp/dogs.db"
expect "get --json names the trie" 0 '^\{"key":"0x646f67","value":"0x7075707079","trie":"main"\}$' '^$' -- "$MPT" get --json "$tmp/dogs.db" dog
expect "get-node --json names the account" 0 "^\[\{\"account\":\"$acct\",\"path\":\"0x00\",\"status\":\"found\"" '^$' -- "$MPT" get-node --json "$tmp/storage.db" "$acct,0x00"
expect "get-node --json: no account for a one-element set" 0 '^\[\{"account":null,"path":"0x00","status":"found"' '^$' -- "$MPT" get-node --json "$tmp/dogs.db" 0x00
expect "get-node text: embedded is not absent" 0 '^embedded 0xca20887265696e64656572$' '^$' -- "$MPT" get-node "$tmp/dogs.db" 0x00646f65
expect "get-node text: absent is an empty line" 0 '^$' '^$' -- sh -c "'$MPT' get-node '$tmp/dogs.db' 0x1646 | grep -qx '' && '$MPT' get-node '$tmp/dogs.db' 0x1646 | grep -v '^$'; [ \$? -eq 1 ]"

# 5. Places counted from 1: the first entry, item, path set and element are 1.
printf '{"a": "0x123"}' >"$tmp/flags_odd.json"
expect "places: entry 1" 2 '^$' '^mpt: error: bad hex: .*flags_odd\.json: entry 1 value \(line 1, column 7\): odd number of hex digits$' -- "$MPT" root "$tmp/flags_odd.json"
expect "places: path set and element" 2 '^$' '^mpt: error: bad input: path set 2: element 1: an account hash must be 32 bytes, got 2$' -- "$MPT" get-node "$tmp/dogs.db" 0x00 0xabab,0x00
expect "places: list item 1" 2 '^$' '^mpt: error: bad input: -: item 1 is empty$' -- sh -c "echo '[\"0x\"]' | '$MPT' root --list -"
expect "places: verify-range names keys from 1" 1 '^invalid: range proofs require keys of equal length \(key 2 has 2 bytes, key 1 has 1\)$' '^$' -- "$MPT" verify-range "$tmp/r_lengths.json"

# 6. A new file and an update where nothing may be written: one message. As root, on a
# tmpfs remounted read-only in a private mount namespace; otherwise in a folder and a file
# without write permission.
ro="$tmp/flags_ro"
mkdir -p "$ro"
ro_re='^mpt: error: trie file is read-only: .*flags_ro/(new|x)\.db: (Read-only file system|Permission denied)$'
if [ "$(id -u)" -eq 0 ]; then
    ro_in() {  # FILE: mpt build into FILE on the read-only file system holding x.db
        echo "mount -t tmpfs tmpfs '$ro' && '$MPT' build '$FIX/dogs.json' -o '$ro/x.db' >/dev/null && mount -o remount,ro '$ro' && exec '$MPT' build '$FIX/diff_b.json' -o '$ro/$1'"
    }
    expect "read-only: a new file" 3 '^$' "$ro_re" -- unshare -m sh -c "$(ro_in new.db)"
    expect "read-only: an update" 3 '^$' "$ro_re" -- unshare -m sh -c "$(ro_in x.db)"
else
    "$MPT" build "$FIX/dogs.json" -o "$ro/x.db" >/dev/null
    chmod 444 "$ro/x.db"
    chmod 555 "$ro"
    expect "read-only: a new file" 3 '^$' "$ro_re" -- "$MPT" build "$FIX/diff_b.json" -o "$ro/new.db"
    expect "read-only: an update" 3 '^$' "$ro_re" -- "$MPT" build "$FIX/diff_b.json" -o "$ro/x.db"
    chmod 755 "$ro"
fi

# 3. (continued) -q on a terminal: no progress. script(1) gives the build a terminal; the
# progress line ends with an erase (ESC [K), which only the run without -q may print
# (MPT_PROGRESS_AFTER_MS=0: drawn at once).
cat >"$tmp/flags_tty.sh" <<TTY
rm -f "$tmp/flags_tty.db"
MPT_PROGRESS_AFTER_MS=0 script -qec "'$MPT' \$1 build '$tmp/kv10k.json' -o '$tmp/flags_tty.db'" /dev/null | od -c | grep -c '033'
TTY
expect "terminal: progress without -q" 0 '^[1-9]' '^$' -- sh "$tmp/flags_tty.sh" ""
expect "terminal: none with -q" 1 '^0$' '^$' -- sh "$tmp/flags_tty.sh" -q

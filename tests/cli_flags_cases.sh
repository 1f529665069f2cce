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
expect "usage: an option's value missing" 2 '^$' '^mpt: error: usage: get: --trie needs a value$' -- "$MPT" get "$tmp/dogs.db" dog --trie
expect "usage: DB is required" 2 '^$' '^mpt: error: usage: dump: DB is required$' -- "$MPT" dump
expect "usage: B is required" 2 '^$' '^mpt: error: usage: diff: B is required$' -- "$MPT" diff "$FIX/dogs.json"
expect "usage: an argument too many" 2 '^$' '^mpt: error: usage: get: unexpected argument: extra$' -- "$MPT" get "$tmp/dogs.db" dog extra
expect "usage: out of range" 2 '^$' '^mpt: error: usage: root: --threads: must be 1 to 1024, got 0$' -- "$MPT" root --threads 0 "$FIX/dogs.json"
expect "usage: not one of a set" 2 '^$' '^mpt: error: usage: rlp: ACTION: must be one of decode,encode, got frob$' -- "$MPT" rlp frob 0x
expect "mpt help" 0 '^Subcommands:$' '^$' -- "$MPT" help
expect "mpt help CMD" 0 '^Usage: mpt get \[OPTIONS\] DB \[KEY\]$' '^$' -- "$MPT" help get
expect "mpt help of an unknown command" 2 '^$' '^mpt: error: usage: unknown command: nope$' -- "$MPT" help nope
# Help: no CLI11 type tags, mpt as the program's name however it was run, one footer.
for cmd in $("$MPT" --help | awk '/^Subcommands:/ { s = 1; next } s && /^  [a-z]/ { print $1 }'); do
    expect "help of $cmd: no type tags" 0 '^$' '^$' -- sh -c "'$MPT' $cmd --help | grep -E '\\b(TEXT|UINT|INT|REQUIRED)\\b|:(COUNT|UINT)'"'; [ $? -eq 1 ]'
    expect "help of $cmd: program name" 0 "^Usage: mpt $cmd " '^$' -- "$MPT" "$cmd" --help
    expect "help of $cmd: the footer" 0 '^Exit codes: 0 success' '^$' -- "$MPT" "$cmd" --help
done

# 3. Global -q/--quiet, before or after the command; --version names commit and SQLite.
sed 's/"root": "0e26/"root": "1e26/' "$FIX/state_geth_dump.json" >"$tmp/flags_wrong_root.json"
expect "quiet: no note" 1 "^$S\$" '^$' -- "$MPT" root -q --state "$tmp/flags_wrong_root.json"
expect "quiet: before the command" 1 "^$S\$" '^$' -- "$MPT" --quiet root --state "$tmp/flags_wrong_root.json"
expect "quiet: errors still" 2 '^$' '^mpt: error: .*no-such-file' -- "$MPT" -q root "$tmp/no-such-file.json"
expect "version: commit and SQLite" 0 '^mpt [0-9.]+ \(commit ([0-9a-f]{12}|unknown), SQLite 3\.[0-9]+\.[0-9]+\)$' '^$' -- "$MPT" --version

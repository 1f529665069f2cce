# Cases of `mpt root --state` and `mpt build --state` past --memory, for cli_test.sh: a state
# document larger than the budget lets the whole path hold is streamed an account at a time
# and sorted in runs spilled to temporary files (--tmp); it must give the whole path's root,
# JSON counts, file (byte for byte) and errors, and leave no temporary file. 1M (the least
# budget) holds about 230 KB of a document whole for a root, 150 KB for a build.
ss=$tmp/statespill
mkdir -p "$ss/tmp"
GENSTATE=$(dirname "$GEN")/mpt_gen_state
[ -x "$GENSTATE" ]
if case_result "statespill: the state generator" $? "no $GENSTATE (built beside mpt_gen_kv)"; then
    # 3,000 accounts, 60,000 slots over every third (2.7 MB), as an alloc and as a genesis.
    "$GENSTATE" 3000 60000 "$ss/alloc.json" --every 3
    "$GENSTATE" 3000 60000 "$ss/genesis.json" --every 3 --genesis --code 40
    # The same state as dumps: geth's by lines (a storage root of its own beside each
    # account, which counts only where no storage is listed), reth's, and geth's whole dump;
    # in the dumps by lines each account comes twice, the first time with other content.
    root=$("$MPT" root --state "$ss/alloc.json")
    sed -n 's/^"\(0x[0-9a-f]\{40\}\)":{\(.*\)},\{0,1\}$/{"address":"\1",\2}/p' "$ss/alloc.json" >"$ss/lines"
    {
        echo "{\"root\":\"$root\"}"
        sed 's/"balance":"[0-9]*"/"balance":"1"/; s/"storage":{[^}]*}/"storage":{"0x01":"0x02"}/; s/}$/,"root":"0x'"$(printf '%064d' 1)"'"}/' "$ss/lines"
        sed 's/}$/,"root":"0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"}/' "$ss/lines"
    } >"$ss/geth_lines.jsonl"
    {
        echo "{\"root\":\"$root\"}"
        sed 's/"balance":"[0-9]*"/"balance":"0x1"/' "$ss/lines"
        cat "$ss/lines"
    } >"$ss/reth_lines.jsonl"
    {
        echo "{\"root\":\"$root\",\"accounts\":{"
        sed '1d;$d' "$ss/alloc.json"
        echo "}}"
    } >"$ss/geth_dump.json"
    for f in alloc.json genesis.json geth_lines.jsonl reth_lines.jsonl geth_dump.json; do
        want=$("$MPT" root --json --state "$ss/$f")
        want_re=$(printf '%s' "$want" | sed 's/[][\.*^$()]/\\&/g; s/}$//')
        expect "statespill: root --state --memory 1M of $f, as in memory" 0 \
            "^$want_re,\"tempFiles\":[1-9][0-9]*,\"tempBytes\":[1-9][0-9]*\}\$" '^$' -- \
            "$MPT" root --json --memory 1M --tmp "$ss/tmp" --state "$ss/$f"
        rm -f "$ss/whole.mpt" "$ss/spilled.mpt"
        # The dumps by lines state roots their accounts do not give: built as they are.
        "$MPT" build --state --ignore-stated-roots "$ss/$f" -o "$ss/whole.mpt" >/dev/null
        expect "statespill: build --state --memory 1M of $f" 0 "^$(printf '%s' "$want" | sed 's/.*"root":"\(0x[0-9a-f]*\)".*/\1/')\$" '^$' -- \
            "$MPT" build --state --ignore-stated-roots --memory 1M --tmp "$ss/tmp" "$ss/$f" -o "$ss/spilled.mpt"
        cmp -s "$ss/whole.mpt" "$ss/spilled.mpt"
        case_result "statespill: build --state --memory 1M of $f: the whole path's file" $? "not the same file"
    done
    # mpt's own dump by lines, with code, past --memory: the root and the file of the whole
    # path, and a file that dumps the same.
    rm -f "$ss/whole.mpt" "$ss/spilled.mpt"
    "$MPT" build --state "$ss/genesis.json" -o "$ss/with_code.mpt" >/dev/null
    "$MPT" dump --accounts --storage --code "$ss/with_code.mpt" >"$ss/mpt_dump.jsonl"
    gen_root=$("$MPT" root --state "$ss/genesis.json")
    expect "statespill: root --state --memory 1M of mpt dump lines" 0 "^\{\"root\":\"$gen_root\",\"shape\":\"mpt-dump\",.*\"tempFiles\":[1-9]" '^$' -- \
        "$MPT" root --json --memory 1M --tmp "$ss/tmp" --state "$ss/mpt_dump.jsonl"
    "$MPT" build --state "$ss/mpt_dump.jsonl" -o "$ss/whole.mpt" >/dev/null
    expect "statespill: build --state --memory 1M of mpt dump lines keeps the codes" 0 '"codes":[1-9][0-9]*,.*"tempFiles":[1-9]' '^$' -- \
        "$MPT" build --state --json --memory 1M --tmp "$ss/tmp" "$ss/mpt_dump.jsonl" -o "$ss/spilled.mpt"
    cmp -s "$ss/whole.mpt" "$ss/spilled.mpt"
    case_result "statespill: mpt dump lines past --memory: the whole path's file" $? "not the same file"
    "$MPT" dump --accounts --storage --code "$ss/spilled.mpt" | cmp -s - "$ss/mpt_dump.jsonl"
    case_result "statespill: mpt dump lines: the rebuilt file dumps the same" $? "another dump"
    # 10,000 contracts with one slot each: the tries table, made in a temporary database a
    # batch of 4,096 tries at a time, is the one made in memory.
    "$GENSTATE" 10000 10000 "$ss/contracts.json" --every 1
    rm -f "$ss/whole.mpt" "$ss/spilled.mpt"
    "$MPT" build --state "$ss/contracts.json" -o "$ss/whole.mpt" >/dev/null
    expect "statespill: build --state --memory 1M of 10,000 contracts" 0 '^\{"root":"0x[0-9a-f]{64}","accounts":10000,"storageTries":10000,.*"tempFiles":[1-9]' '^$' -- \
        "$MPT" build --state --json --memory 1M --tmp "$ss/tmp" "$ss/contracts.json" -o "$ss/spilled.mpt"
    cmp -s "$ss/whole.mpt" "$ss/spilled.mpt"
    case_result "statespill: build --state --memory 1M of 10,000 contracts: the whole path's file" $? "not the same file"
    expect "statespill: root --state --memory 1M from a pipe" 0 "^$root\$" '^$' -- \
        bash -c "cat '$ss/alloc.json' | exec '$MPT' root --memory 1M --tmp '$ss/tmp' --state -"
    expect "statespill: build --state --json past --memory" 0 \
        '^\{"root":"'"$root"'","accounts":3000,"storageTries":1000,"slots":60000,"preimages":3060,"codes":0,"rowsWritten":[0-9]+,"tempFiles":[1-9][0-9]*,"tempBytes":[1-9][0-9]*\}$' '^$' -- \
        "$MPT" build --state --json --memory 1M --tmp "$ss/tmp" "$ss/alloc.json" -o "$ss/json.mpt"
    # Into an existing file: through the store, the document held whole, as without --memory.
    expect "statespill: build --state --replace --memory into an existing file" 0 "^$root\$" '^$' -- \
        "$MPT" build --state --replace --memory 1M "$ss/alloc.json" -o "$ss/json.mpt"
    [ -z "$(ls -A "$ss/tmp")" ]
    case_result "statespill: builds leave no temporary file" $? "temporary files left in --tmp"

    # A dump whose root is not the state's: exit 1, as in memory.
    sed "1 s/\"root\":\"0x./\"root\":\"0x0/" "$ss/reth_lines.jsonl" >"$ss/wrong_root.jsonl"
    want=$("$MPT" root --state "$ss/wrong_root.jsonl" 2>&1)
    expect "statespill: a dump's root that differs" 1 "^$(printf '%s' "$want" | head -1 | sed 's/[][\.*^$()]/\\&/g')\$" '^mpt: root mismatch: ' -- \
        "$MPT" root --memory 1M --state "$ss/wrong_root.jsonl"
    # build --state past --memory checks a dump's stated roots as the whole path does: its own,
    # and an account's storage root beside its slots. A dump that differs makes no file.
    one=0x$(printf '%064d' 1)
    sed "1 s/\"root\":\"0x[0-9a-f]*\"/\"root\":\"$one\"/" "$ss/geth_dump.json" >"$ss/bad_root.json"
    sed "0,/\"storage\"/ s/\"storage\":/\"root\":\"$one\",\"storage\":/" "$ss/geth_dump.json" >"$ss/bad_storage_root.json"
    rm -f "$ss/refused.mpt"
    expect "statespill: build --state --memory 1M of a dump with another root" 1 '^$' \
        "^mpt: root mismatch: .*bad_root.json: the document gives root $one, its accounts $root; no file written \(--ignore-stated-roots builds it anyway\)\$" -- \
        "$MPT" build --state --memory 1M --tmp "$ss/tmp" "$ss/bad_root.json" -o "$ss/refused.mpt"
    expect "statespill: build --state --memory 1M of a dump with another storage root" 1 '^$' \
        "^mpt: root mismatch: .*bad_storage_root.json: account 0x[0-9a-f]{40}: the document gives storage root $one, its slots 0x[0-9a-f]{64}; no file written" -- \
        "$MPT" build --state --memory 1M --tmp "$ss/tmp" "$ss/bad_storage_root.json" -o "$ss/refused.mpt"
    [ ! -e "$ss/refused.mpt" ]
    case_result "statespill: a refused dump leaves no file" $? "a refused dump left $ss/refused.mpt"
    expect "statespill: the whole path refuses the same dump" 1 '^$' 'the document gives storage root' -- \
        "$MPT" build --state "$ss/bad_storage_root.json" -o "$ss/refused.mpt"
    expect "statespill: build --state --memory 1M --ignore-stated-roots" 0 "^$root\$" '^$' -- \
        "$MPT" build --state --ignore-stated-roots --memory 1M --tmp "$ss/tmp" "$ss/bad_root.json" -o "$ss/refused.mpt"

    # Errors past the budget: the whole path's line, the same exit code.
    sed '$ s/^}}$/,"0x12": {"balance": "1"}}}/' "$ss/genesis.json" >"$ss/bad_address.json"
    sed '$ s/"balance":"[0-9]*"/"balance":"-1"/' "$ss/geth_lines.jsonl" >"$ss/bad_balance.jsonl"
    # A codeHash that is not that of the code near the start, and then an error near the end:
    # the one near the end is the one reported, as in memory.
    sed '2 s/}$/,"code":"0x01","codeHash":"0x'"$(printf '%064d' 2)"'"}/' "$ss/geth_lines.jsonl" >"$ss/bad_code_hash.jsonl"
    sed '$ s/"balance":"[0-9]*"/"balance":"0x"/' "$ss/bad_code_hash.jsonl" >"$ss/bad_code_hash_then_balance.jsonl"
    { cat "$ss/alloc.json"; echo '{"x": 1}'; } >"$ss/two_objects.json"
    head -c 2000000 "$ss/alloc.json" >"$ss/cut.json"
    for f in bad_address.json bad_balance.jsonl bad_code_hash.jsonl bad_code_hash_then_balance.jsonl two_objects.json cut.json; do
        rm -f "$ss/bad.mpt"
        want=$("$MPT" root --state "$ss/$f" 2>&1)
        code=$?
        [ $code -eq 2 ]
        case_result "statespill: root --state of $f in memory: exit 2" $? "exit $code"
        expect "statespill: root --state --memory 1M of $f, the whole path's error" 2 '^$' \
            "^$(printf '%s' "$want" | sed 's/[][\.*^$()]/\\&/g')\$" -- \
            "$MPT" root --memory 1M --tmp "$ss/tmp" --state "$ss/$f"
        expect "statespill: build --state --memory 1M of $f, the whole path's error" 2 '^$' \
            "^$(printf '%s' "$want" | sed 's/[][\.*^$()]/\\&/g')\$" -- \
            "$MPT" build --state --memory 1M --tmp "$ss/tmp" "$ss/$f" -o "$ss/bad.mpt"
        [ ! -e "$ss/bad.mpt" ]
        case_result "statespill: build --state --memory 1M of $f leaves no file" $? "it left a file"
    done
    [ -z "$(ls -A "$ss/tmp")" ]
    case_result "statespill: errors leave no temporary file" $? "temporary files left after errors"
    # One account larger than a quarter of the budget: refused, exit 2.
    {
        printf '{"0x1000000000000000000000000000000000000001": {"balance": "1", "code": "0x'
        head -c 300000 /dev/zero | tr '\0' 'a'
        printf '"}, '
        sed 's/^{//' "$ss/alloc.json"
    } >"$ss/big_account.json"
    expect "statespill: an account past a quarter of --memory" 2 '^$' \
        "^mpt: error: input too large: $ss/big_account.json: line 1, column 2: no account ends within [0-9]+ bytes, the most the memory budget holds at once \(--memory\)\$" -- \
        "$MPT" root --memory 1M --state "$ss/big_account.json"
    expect "statespill: --tmp no such folder" 2 '^$' \
        "^mpt: error: usage: root: --tmp: $ss/none: no such folder\$" -- \
        "$MPT" root --memory 1M --tmp "$ss/none" --state "$ss/alloc.json"
    # Below the budget: the whole path, no temporary file.
    expect "statespill: root --state within --memory stays in memory" 0 \
        '^\{"root":"0x[0-9a-f]{64}","shape":"alloc","accounts":[0-9]+,"slots":[0-9]+,"tries":[0-9]+\}$' '^$' -- \
        "$MPT" root --json --memory 1M --state "$FIX/state_alloc.json"
fi

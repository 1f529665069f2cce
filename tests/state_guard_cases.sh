# Writes that respect what a trie is (sourced by cli_test.sh: uses MPT, FIX, tmp and expect):
# key/value input writes no trie that holds state, and the file is left byte for byte as it
# was.
"$MPT" build --state "$FIX/state_alloc.json" -o "$tmp/guard.db" >/dev/null
guard_storage=0x$("$MPT" tries --json "$tmp/guard.db" | grep -o '"name":"0x[0-9a-f]\{64\}"' | head -1 | cut -d'"' -f4 | cut -c3-)
cp "$tmp/guard.db" "$tmp/guard.before"
guard_unchanged() {
    cmp -s "$tmp/guard.db" "$tmp/guard.before"
    case_result "$1: the state file unchanged" $? "the state file changed" ||
        cp "$tmp/guard.before" "$tmp/guard.db"
}
which='key/value input does not write it \(mpt build --state does\)$'
expect "guard: key/value into the account trie" 2 '^$' "^mpt: error: bad input: .*guard.db: trie main holds accounts: $which" -- \
    "$MPT" build "$FIX/dogs.json" -o "$tmp/guard.db"
guard_unchanged "key/value into the account trie"
expect "guard: key/value from stdin into the account trie" 2 '^$' "trie main holds accounts: $which" -- \
    sh -c "echo '{\"dog\":\"puppy\"}' | exec '$MPT' build - -o '$tmp/guard.db'"
guard_unchanged "key/value from stdin into the account trie"
expect "guard: --secure --replace of the account trie" 2 '^$' "trie main holds accounts: $which" -- \
    "$MPT" build --secure --replace "$FIX/dogs.json" -o "$tmp/guard.db"
guard_unchanged "--secure --replace of the account trie"
expect "guard: key/value past --memory into the account trie" 2 '^$' "trie main holds accounts: $which" -- \
    "$MPT" build --memory 1M "$FIX/dogs.json" -o "$tmp/guard.db"
guard_unchanged "key/value past --memory into the account trie"
expect "guard: key/value into a storage trie" 2 '^$' "trie $guard_storage is a storage trie of the state in this file: $which" -- \
    "$MPT" build --secure "$FIX/dogs.json" -o "$tmp/guard.db" --trie "$guard_storage"
guard_unchanged "key/value into a storage trie"
upper=0X$(echo "${guard_storage#0x}" | tr a-f A-F)
expect "guard: key/value into a storage trie named in capitals" 2 '^$' "is a storage trie of the state in this file: $which" -- \
    "$MPT" build --replace --secure "$FIX/dogs.json" -o "$tmp/guard.db" --trie "$upper"
guard_unchanged "key/value into a storage trie named in capitals"
expect "guard: a new trie named as a storage trie" 2 '^$' "trie 0x(ab){32} would be a storage trie of the state in this file: $which" -- \
    "$MPT" build "$FIX/dogs.json" -o "$tmp/guard.db" --trie "0x$(printf 'ab%.0s' $(seq 32))"
guard_unchanged "a new trie named as a storage trie"
expect "guard: a plain trie of another name is taken" 0 '^0x8aad789d' '^$' -- \
    "$MPT" build "$FIX/dogs.json" -o "$tmp/guard.db" --trie dogs
expect "guard: the state is as it was" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/guard.db"
"$MPT" build "$FIX/dogs.json" -o "$tmp/plain_guard.db" >/dev/null
expect "guard: a state write into a plain trie" 3 '^$' 'trie main is plain' -- \
    "$MPT" build --state --replace "$FIX/state_alloc.json" -o "$tmp/plain_guard.db"

# A preimage is checked as it is read: one changed byte of a stored address is a damaged file
# (exit 3), never another address.
cp "$tmp/guard.before" "$tmp/pre.db"
sqlite3 "$tmp/pre.db" "UPDATE preimages SET preimage = X'a94f5374fce5edbc8e2a8697c15331677e6ebf0c' WHERE preimage = X'a94f5374fce5edbc8e2a8697c15331677e6ebf0b'"
expect "preimage tampered: dump --accounts" 3 '.*' '^mpt: error: node hash mismatch: .*pre.db: the preimage recorded for 0x[0-9a-f]{64} does not hash to it$' -- \
    "$MPT" dump --accounts "$tmp/pre.db"
expect "preimage tampered: diff --state" 3 '.*' 'pre.db: the preimage recorded for 0x[0-9a-f]{64} does not hash to it$' -- \
    "$MPT" diff "$tmp/pre.db" "$FIX/state_b.json"
expect "preimage intact: dump --accounts" 0 '"address":"0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b"' '^$' -- \
    "$MPT" dump --accounts "$tmp/guard.before"

# One reading of every document read by field name: members that differ only in case are
# refused (a Go reader would take the other).
"$MPT" proof "$tmp/guard.before" --account 0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b >"$tmp/gp_case.json"
sed 's/"balance":"0x16345785d8a0000"/&,"Balance":"0x9"/' "$tmp/gp_case.json" >"$tmp/gp_case2.json"
printf '{"jsonrpc":"2.0","id":1,"result":%s}' "$(cat "$tmp/gp_case2.json")" >"$tmp/gp_case3.json"
expect "JSON-RPC response with balance and Balance" 2 '^$' '^mpt: error: bad input: .*gp_case3.json: the object at line 1, column 34: members "Balance" and "balance" differ only in case' -- \
    "$MPT" proof --verify "$tmp/gp_case3.json"
expect "eth_getProof answer with balance and Balance" 2 '^$' '^mpt: error: bad input: .*gp_case2.json: the object at line 1, column 1: members "Balance" and "balance" differ only in case' -- \
    "$MPT" proof --verify "$tmp/gp_case2.json"
expect "eth_getProof answer as made verifies" 0 '^valid ' '^$' -- "$MPT" proof --verify "$tmp/gp_case.json"
sed 's/"root":/"ROOT":"0x00","root":/' "$FIX/proof_present.json" >"$tmp/pp_case.json"
expect "proof document with root and ROOT" 2 '^$' 'members "ROOT" and "root" differ only in case' -- \
    "$MPT" proof --verify "$tmp/pp_case.json"
sed 's/"root":/"Root":"0x00","root":/' "$FIX/range_valid.json" >"$tmp/rv_case.json"
expect "range document with root and Root" 2 '^$' 'members "Root" and "root" differ only in case' -- \
    "$MPT" verify-range "$tmp/rv_case.json"

# Error lines are safe to print: a control byte from a document, a name or a message is
# written as \xNN.
printf '{"\\u001b[31mred": {"balance": "0x1"}}' >"$tmp/esc.json"
expect "an escape sequence in a member name" 2 '^$' 'member "\\x1b\[31mred" is not an address' -- \
    "$MPT" root --state "$tmp/esc.json"
expect "an escape sequence in a member name, never raw" 2 '^$' '^[^[:cntrl:]]*$' -- \
    "$MPT" root --state "$tmp/esc.json"
expect "a control byte in a trie name" 2 '^$' 'trie name holds a control character' -- \
    "$MPT" build "$FIX/dogs.json" -o "$tmp/esc.db" --trie $'\033[2J'
expect "a control byte in a file name" 2 '^$' '^mpt: error: bad input: .*nofile\\x07\\x0a\.json: No such file' -- \
    "$MPT" root "$tmp/nofile"$'\a\n'".json"

# copy and drop keep to the same rule: no storage trie of a state file written or dropped alone.
expect "guard: copy onto a storage trie" 2 '^$' "trie $guard_storage is a storage trie of the state in this file: mpt copy does not write it\$" -- \
    "$MPT" copy "$tmp/guard.db" --trie dogs --to "$guard_storage" --replace
expect "guard: drop of a storage trie" 2 '^$' "trie $guard_storage is a storage trie of the state in this file: mpt drop does not drop it\$" -- \
    "$MPT" drop "$tmp/guard.db" --trie "$guard_storage"

# check of a state file proves the whole state: every trie, every account's storageRoot
# against its storage trie, no storage trie without its account, the preimages read.
expect "check state: clean" 0 '^ok: state, 3 accounts, 2 storage tries, 3 slots, 8 rows, 0 problems$' '^$' -- "$MPT" check "$tmp/guard.before"
expect "check state --json" 0 '^\{"ok":true,"trie":"main",.*"state":true,"accounts":3,"storageTries":2,"slots":3,"rows":8,"preimages":6,"missingPreimages":0,"storageNotHeld":0,"codes":2,"codesNotHeld":0,"problems":\[\]\}$' '^$' -- "$MPT" check --json "$tmp/guard.before"
"$MPT" build --state --no-preimages "$FIX/state_alloc.json" -o "$tmp/nopre.db" >/dev/null
expect "check state: keys without preimages are a note" 0 '^note: 6 keys without a preimage, 0 accounts whose storage trie' '^$' -- "$MPT" check "$tmp/nopre.db"
# One account, its storage in two versions; and a second account with storage.
acct=0x00000000000000000000000000000000000000aa
other=0x00000000000000000000000000000000000000bb
printf '{"%s": {"balance": "0x1", "storage": {"0x01": "0x01"}}}' $acct >"$tmp/st1.json"
printf '{"%s": {"balance": "0x1", "storage": {"0x01": "0x02"}}}' $acct >"$tmp/st2.json"
printf '{"%s": {"balance": "0x1", "storage": {"0x01": "0x01"}}, "%s": {"balance": "0x1", "storage": {"0x01": "0x01"}}}' $acct $other >"$tmp/st3.json"
for i in 1 2 3; do rm -f "$tmp/st$i.db"; "$MPT" build --state "$tmp/st$i.json" -o "$tmp/st$i.db" >/dev/null; done
acct_trie=0x$("$MPT" keccak $acct | cut -c3-)
# graft DB FROM NAME: trie NAME of DB becomes FROM's (its tries row, checksum and rows).
graft() {
    sqlite3 "$1" "ATTACH '$2' AS b;
        UPDATE main.tries SET root = (SELECT root FROM b.tries WHERE name = '$3'),
            checksum = (SELECT checksum FROM b.tries WHERE name = '$3') WHERE name = '$3';
        DELETE FROM main.nodes WHERE trie = (SELECT id FROM main.tries WHERE name = '$3');
        INSERT INTO main.nodes SELECT (SELECT id FROM main.tries WHERE name = '$3'), path, rlp
            FROM b.nodes WHERE trie = (SELECT id FROM b.tries WHERE name = '$3');"
}
cp "$tmp/st1.db" "$tmp/graft1.db"
graft "$tmp/graft1.db" "$tmp/st2.db" "$acct_trie"
expect "check state: a storage trie its account does not name" 3 "^trie main, account $acct_trie: storageRoot 0x[0-9a-f]{64}, but trie $acct_trie has root 0x[0-9a-f]{64}\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/graft1.db"
expect "check --trie of that storage trie" 3 "^the account's storageRoot in trie main is 0x[0-9a-f]{64}, not this trie's root\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check --trie "$acct_trie" "$tmp/graft1.db"
expect "check --trie of a storage trie as its account names it" 0 '^ok: ' '^$' -- "$MPT" check --trie "$acct_trie" "$tmp/st1.db"
cp "$tmp/st3.db" "$tmp/graft3.db"
graft "$tmp/graft3.db" "$tmp/st1.db" main
expect "check state: a storage trie no account names" 3 "^trie 0x[0-9a-f]{64}: a storage trie that no account names\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/graft3.db"
cp "$tmp/st1.db" "$tmp/dmg.db"
sqlite3 "$tmp/dmg.db" "UPDATE nodes SET rlp = rlp || X'00' WHERE trie = (SELECT id FROM tries WHERE name = '$acct_trie') AND path = X''"
expect "check state: a damaged storage trie" 3 "^trie $acct_trie: hash mismatch at path \(root\)\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/dmg.db"
expect "check state: a tampered preimage" 3 '^the address of account 0x[0-9a-f]{64}: the preimage recorded for 0x[0-9a-f]{64} does not hash to it$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/pre.db"
[ "$(grep -c 'does not hash' "$tmp/out")" -eq 1 ]
case_result "check state: a tampered preimage told once" $? "told $(grep -c 'does not hash' "$tmp/out") times"
# A slot's preimage that two storage tries read is one problem, told by the first.
printf '{"0x%040d":{"balance":"1","storage":{"0x01":"0x02"}},"0x%040d":{"balance":"1","storage":{"0x01":"0x03"}}}' 1 2 >"$tmp/shared_slot.json"
"$MPT" build --state "$tmp/shared_slot.json" -o "$tmp/shared_slot.db" >/dev/null
sqlite3 "$tmp/shared_slot.db" "UPDATE preimages SET preimage = X'$(printf '%064d' 2)' WHERE preimage = X'$(printf '%064d' 1)'"
expect "check state: a tampered slot preimage two tries read" 3 '^the slot of key 0x[0-9a-f]{64}: the preimage recorded for 0x[0-9a-f]{64} does not hash to it$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/shared_slot.db"
[ "$(grep -c 'does not hash' "$tmp/out")" -eq 1 ]
case_result "check state: a tampered slot preimage told once" $? "told $(grep -c 'does not hash' "$tmp/out") times"

# A dump's own claims are checked: build --state of a dump whose root, or an account's storage
# root beside its slots, is not what its accounts give makes no file (exit 1, both roots).
sed 's/"root": "0e26/"root": "1e26/' "$FIX/state_geth_dump.json" >"$tmp/dump_bad_root.json"
rm -f "$tmp/dump_bad.db"
expect "build --state of a dump with another root" 1 '^$' "^mpt: root mismatch: .*dump_bad_root.json: the document gives root 0x1e2696d3[0-9a-f]{56}, its accounts 0x0e2696d3[0-9a-f]{56}; no file written \(--ignore-stated-roots builds it anyway\)\$" -- \
    "$MPT" build --state "$tmp/dump_bad_root.json" -o "$tmp/dump_bad.db"
[ ! -e "$tmp/dump_bad.db" ]
case_result "build --state of a dump with another root: no file" $? "the refused dump left a file"
expect "build --state --ignore-stated-roots" 0 '^0x0e2696d3' '^$' -- \
    "$MPT" build --state --ignore-stated-roots "$tmp/dump_bad_root.json" -o "$tmp/dump_bad.db"
cp "$tmp/guard.before" "$tmp/guard.db"
expect "build --state --replace of a dump with another root" 1 '^$' '^mpt: root mismatch: ' -- \
    "$MPT" build --state --replace "$tmp/dump_bad_root.json" -o "$tmp/guard.db"
guard_unchanged "build --state --replace of a dump with another root"
sed 's/"root": "0x09cf0d8f/"root": "0x19cf0d8f/' "$FIX/state_geth_dump.json" >"$tmp/dump_bad_storage.json"
rm -f "$tmp/dump_bad.db"
expect "build --state of a dump with another storage root" 1 '^$' "^mpt: root mismatch: .*dump_bad_storage.json: account 0x000f3df6d732807ef1319fb7b8bb8522d0beac02 \(line 4\): the document gives storage root 0x19cf0d8f[0-9a-f]{56}, its slots 0x09cf0d8f" -- \
    "$MPT" build --state "$tmp/dump_bad_storage.json" -o "$tmp/dump_bad.db"
[ ! -e "$tmp/dump_bad.db" ]
case_result "build --state of a dump with another storage root: no file" $? "the refused dump left a file"
expect "build --state of a dump as it is" 0 '^0x0e2696d3' '^$' -- "$MPT" build --state "$FIX/state_geth_dump.json" -o "$tmp/dump_ok.db"

# check reads the whole file: one cut short is damage.
page=$(sqlite3 "$tmp/guard.before" 'PRAGMA page_size')
for f in guard.before plain_guard.db; do
    cp "$tmp/$f" "$tmp/cut.db"
    truncate -s -100 "$tmp/cut.db"
    expect "check of $f cut inside a page" 3 "^the file is cut short: [0-9]+ bytes, not whole pages of $page\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/cut.db"
    cp "$tmp/$f" "$tmp/cut.db"
    truncate -s -"$page" "$tmp/cut.db"
    # A page short: named so, or refused as damage (SQLite's own reading of the header), never
    # ok.
    "$MPT" check "$tmp/cut.db" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    { [ $rc -eq 1 ] && grep -Eq "^the file is cut short: [0-9]+ bytes, where its header counts [0-9]+ pages of $page\$" "$tmp/out"; } ||
        { [ $rc -eq 3 ] && grep -q '^mpt: error: ' "$tmp/err"; }
    case_result "check of $f short of a page" $? \
        "exit $rc, $(head -c 200 "$tmp/out") $(head -c 200 "$tmp/err")"
done

# A missing preimage is marked: pre(0x<hash>) in dump's storage and diff's text, "key" and
# "slotKey" in JSON; never a hash where an address or a slot stands.
expect "dump --storage without preimages: slots marked" 0 '"storage":\{"pre\(0x[0-9a-f]{64}\)":"0xff0+1","pre\(0x[0-9a-f]{64}\)":"0x3b6"\}' '^$' -- \
    "$MPT" dump --accounts --storage "$tmp/nopre.db"
expect "dump --storage without preimages: accounts by key" 0 '^\{"key":"0x[0-9a-f]{64}",' '^$' -- \
    "$MPT" dump --accounts --storage "$tmp/nopre.db"
expect "diff without preimages: accounts marked" 1 '^- pre\(0x03601462[0-9a-f]{56}\) nonce 0x0' '^$' -- \
    "$MPT" diff "$tmp/nopre.db" "$FIX/state_b.json"
"$MPT" build --state --no-preimages "$FIX/state_b.json" -o "$tmp/nopre_b.db" >/dev/null
expect "diff without preimages: slots marked" 1 '^- pre\(0x[0-9a-f]{64}\) slot pre\(0x[0-9a-f]{64}\) ' '^$' -- \
    "$MPT" diff "$tmp/nopre.db" "$tmp/nopre_b.db"
expect "diff --json without preimages" 1 '"key":"0x[0-9a-f]{64}","slotKey":"0x[0-9a-f]{64}"' '^$' -- \
    "$MPT" diff --json "$tmp/nopre.db" "$tmp/nopre_b.db"

# check reads every preimage, whether a trie's check reaches it or not.
"$MPT" build --secure "$FIX/dogs.json" -o "$tmp/sec_pre.db" >/dev/null
expect "check of a secure trie, preimages whole" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/sec_pre.db"
sqlite3 "$tmp/sec_pre.db" "UPDATE preimages SET preimage = X'646f68' WHERE preimage = X'646f67'"
expect "check of a secure trie with a tampered preimage" 3 '^preimages row 0x41791102[0-9a-f]{56}: the preimage does not hash to it$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/sec_pre.db"

# A damaged state file, as bad_files_test.sh damages a trie file: every read that passes the
# damage is exit 3 naming the trie and the path, a read elsewhere still answers, and check
# names the damage (exit 1) or refuses a damaged tries row (exit 3).
dg_acct=0x000f3df6d732807ef1319fb7b8bb8522d0beac02
dg_slot=0x0000000000000000000000000000000000000000000000000000000000000002
dg_trie=0x$("$MPT" keccak $dg_acct | cut -c3-)
"$MPT" build --state "$FIX/state_geth_dump.json" -o "$tmp/dg.db" >/dev/null
dg_id=$(sqlite3 "$tmp/dg.db" "SELECT id FROM tries WHERE name = '$dg_trie'")
dg_damage() {
    cp "$tmp/dg.db" "$tmp/dg_$1.db"
    sqlite3 "$tmp/dg_$1.db" "$2"
}
flip="rlp = substr(rlp, 1, 4) || (CASE WHEN substr(rlp, 5, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(rlp, 6)"
dg_damage st_flip "UPDATE nodes SET $flip WHERE trie = $dg_id AND path = X''"
dg_damage st_gone "DELETE FROM nodes WHERE trie = $dg_id AND path = X''"
dg_damage acct_flip "UPDATE nodes SET $flip WHERE trie = 1 AND path = X''"
dg_damage st_record "UPDATE tries SET root = X'$(printf '%064d' 5)' WHERE id = $dg_id"
for d in st_flip:'node hash mismatch' st_gone:'missing node'; do
    f=${d%%:*}
    what=${d#*:}
    at="^mpt: error: $what: .*dg_$f.db: trie $dg_trie, path \\(root\\)\$"
    expect "state $f: get --account, not through the storage trie" 0 '^\{"nonce":"0x1"' '^$' -- "$MPT" get "$tmp/dg_$f.db" --account $dg_acct
    expect "state $f: get --slot" 3 '^$' "$at" -- "$MPT" get "$tmp/dg_$f.db" --account $dg_acct --slot $dg_slot
    expect "state $f: proof --slot" 3 '^$' "$at" -- "$MPT" proof "$tmp/dg_$f.db" --account $dg_acct --slot $dg_slot
    expect "state $f: dump --accounts --storage" 3 '.*' "$at" -- "$MPT" dump --accounts --storage "$tmp/dg_$f.db"
    expect "state $f: diff --verify" 3 '.*' "$at" -- "$MPT" diff --verify "$tmp/dg_$f.db" "$FIX/state_geth_dump.json"
    expect "state $f: check" 3 "^trie $dg_trie: " '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/dg_$f.db"
done
at="^mpt: error: node hash mismatch: .*dg_acct_flip.db: trie main, path \\(root\\)\$"
expect "state acct_flip: get --account" 3 '^$' "$at" -- "$MPT" get "$tmp/dg_acct_flip.db" --account $dg_acct
expect "state acct_flip: proof --account" 3 '^$' "$at" -- "$MPT" proof "$tmp/dg_acct_flip.db" --account $dg_acct
expect "state acct_flip: dump --accounts" 3 '^$' "$at" -- "$MPT" dump --accounts "$tmp/dg_acct_flip.db"
expect "state acct_flip: check" 3 '^trie main: hash mismatch at path \(root\)$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/dg_acct_flip.db"
at="^mpt: error: damaged trie record: .*dg_st_record.db: trie $dg_trie: "
expect "state st_record: get --account, not reading the storage trie's row" 0 '^\{"nonce":"0x1"' '^$' -- "$MPT" get "$tmp/dg_st_record.db" --account $dg_acct
expect "state st_record: get --slot" 3 '^$' "$at" -- "$MPT" get "$tmp/dg_st_record.db" --account $dg_acct --slot $dg_slot
expect "state st_record: check" 3 '^$' "$at" -- "$MPT" check "$tmp/dg_st_record.db"
expect "state st_record: tries" 3 '^$' "$at" -- "$MPT" tries "$tmp/dg_st_record.db"

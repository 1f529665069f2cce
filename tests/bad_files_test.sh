#!/usr/bin/env bash
# Files that are not trie files, or damaged ones: every command answers with its documented
# exit code and one error line naming the file (and, for a node, the trie and the path), never
# a crash; `mpt build` never changes a file it refuses.
#
# Usage: bad_files_test.sh MPT_BINARY [MAKE_BAD_FILES_BINARY]
#
# What each read command is expected to do, decided per command:
# - root: a file that is not SQLite is read as key/value input (exit 2, malformed JSON; an
#   empty file is the empty trie's text dump, exit 0);
#   damage below the root row leaves the stored root readable (exit 0: root reads only the
#   tries table).
# - get, dump: exit 3 when the lookup passes the bad row, naming trie and path; a lookup
#   elsewhere still answers (exit 0).
# - check: exit 1 with one stdout line per problem, naming the path; stderr stays empty.
# - stats: reports what is stored without verifying hashes (that is check's work): exit 0 for
#   a wrong hash or a missing row, exit 3 for a row that is no node.
# - any file that is not an mpt file, has another schema version, a bad tries row, or is
#   truncated: exit 3 from every command but root's key/value fallback.
set -u
MPT=$1
MAKE_BAD=${2:-$(dirname "$MPT")/mpt_make_bad_files}
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

. "$(dirname "$0")/expect.sh"

# A plain trie of 3000 random 32-byte keys: its rows at depth 2 are branches.
awk -v seed=3 'function h(k,  s, i) { s = ""; for (i = 0; i < k; i++) s = s sprintf("%02x", int(rand() * 256)); return s }
BEGIN { srand(seed); printf "{"; for (i = 0; i < 3000; i++) printf "%s\"0x%s\":\"0x%s\"", (i ? "," : ""), h(32), h(1 + int(rand() * 40)); print "}" }' >"$tmp/good.json"
"$MPT" build "$tmp/good.json" -o "$tmp/good.db" >"$tmp/out" 2>&1 || { echo "FAIL good build: $(cat "$tmp/out")"; exit 1; }
good_root=$(cat "$tmp/out")
"$MPT" dump "$tmp/good.db" >"$tmp/good.dump" || { echo "FAIL good dump"; exit 1; }
"$MAKE_BAD" "$tmp/good.db" "$tmp" >"$tmp/damage" || { echo "FAIL $MAKE_BAD"; exit 1; }
bad_path=$(awk '$1 == "flipped" { print $2 }' "$tmp/damage")
orphan_path=$(awk '$1 == "orphan" { print $2 }' "$tmp/damage")
# A key whose lookup passes the damaged row (plain trie: the key's hex digits are its path),
# and one that does not.
hit_key=$(grep -m1 "^0x$bad_path" "$tmp/good.dump" | cut -d' ' -f1)
miss_line=$(grep -v "^0x$bad_path" "$tmp/good.dump" | tail -1)
miss_key=${miss_line%% *}
miss_value=${miss_line##* }
if [ -z "$bad_path" ] || [ -z "$hit_key" ] || [ -z "$miss_key" ]; then
    echo "FAIL cannot pick keys around the damaged row (path '$bad_path')"
    exit 1
fi
echo "damaged row at path $bad_path; key through it $hit_key"
printf '[["%s", "0x01"], ["0x%s", null]]\n' "$hit_key" "$(printf '%064d' 7)" >"$tmp/update.json"

# 1. Files that are not trie files at all, or that mpt refuses whole.
not_sqlite='not an SQLite database'
for f in text random; do
    expect "root $f" 2 '^$' "^mpt: error: malformed JSON: .*$f.db: " -- "$MPT" root "$tmp/$f.db"
    expect "get $f" 3 '^$' "^mpt: error: .*$f.db: $not_sqlite" -- "$MPT" get "$tmp/$f.db" "$hit_key"
    expect "dump $f" 3 '^$' "^mpt: error: .*$f.db: $not_sqlite" -- "$MPT" dump "$tmp/$f.db"
    expect "check $f" 3 '^$' "^mpt: error: .*$f.db: $not_sqlite" -- "$MPT" check "$tmp/$f.db"
    expect "stats $f" 3 '^$' "^mpt: error: .*$f.db: $not_sqlite" -- "$MPT" stats "$tmp/$f.db"
done
# A JSON document (after a byte order mark and blanks) is named as one; text is not.
printf '\xef\xbb\xbf \n\t[["0x01", "0x02"]]\n' >"$tmp/doc.db"
printf '\n{"0x01": "0x02"}\n' >"$tmp/object.db"
for c in dump check stats; do
    expect "$c document" 3 '^$' "^mpt: error: not an mpt trie file: .*doc.db: $not_sqlite \\(a JSON document\\?\\)$" -- "$MPT" $c "$tmp/doc.db"
done
expect "get object" 3 '^$' "^mpt: error: not an mpt trie file: .*object.db: $not_sqlite \\(a JSON document\\?\\)$" -- "$MPT" get "$tmp/object.db" 0x01
expect "get text: no guess" 3 '^$' "^mpt: error: not an mpt trie file: .*text.db: $not_sqlite\$" -- "$MPT" get "$tmp/text.db" 0x01
expect "root empty: the empty trie's text dump" 0 '^0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421$' '^mpt: note: .*empty.db: an empty file, read as no key/value pairs \(the empty root\)$' -- "$MPT" root "$tmp/empty.db"
for c in dump check stats; do
    expect "$c empty" 3 '^$' '^mpt: error: .*empty.db: an empty file, not a trie file$' -- "$MPT" $c "$tmp/empty.db"
done
expect "get empty" 3 '^$' '^mpt: error: .*empty.db: an empty file, not a trie file$' -- "$MPT" get "$tmp/empty.db" "$hit_key"
expect "root missing" 2 '^$' '^mpt: error: .*missing.db: No such file' -- "$MPT" root "$tmp/missing.db"
expect "get missing" 2 '^$' '^mpt: error: .*missing.db: No such file' -- "$MPT" get "$tmp/missing.db" "$hit_key"
expect "check missing" 2 '^$' '^mpt: error: .*missing.db: No such file' -- "$MPT" check "$tmp/missing.db"
mkdir "$tmp/dir.db"
expect "check directory" 3 '^$' '^mpt: error: .*dir.db: is a directory' -- "$MPT" check "$tmp/dir.db"
expect "build into directory" 3 '^$' '^mpt: error: .*dir.db: is a directory' -- "$MPT" build "$tmp/update.json" -o "$tmp/dir.db"

# name: pattern of the one error line every command gives on it
declare -A refused=(
    [foreign]='foreign.db: an SQLite database not made by mpt$'
    [version99]='version99.db: schema version 99, this mpt reads versions 1 to 3$'
    [notables]='notables.db: tables missing$'
    [shortroot]='damaged trie record: .*shortroot.db: trie main: the stored root is not 32 bytes$'
    [badkind]="damaged trie record: .*badkind.db: trie main: the kind is 'secret', none of 'plain', 'secure', 'state'$"
    [swappedkind]='damaged trie record: .*swappedkind.db: trie main: the row.s checksum does not match its id, name, kind and root$'
    [rootbit]='damaged trie record: .*rootbit.db: trie main: the row.s checksum does not match its id, name, kind and root$'
    [v1two]='damaged trie record: .*v1two.db: trie main: the secure column holds 2, not 0 or 1$'
    [v1minus]='damaged trie record: .*v1minus.db: trie main: the secure column holds -1, not 0 or 1$'
    [v1half]='damaged trie record: .*v1half.db: trie main: the secure column holds 0.5, not 0 or 1$'
    [v1text]="damaged trie record: .*v1text.db: trie main: the secure column holds 'x', not 0 or 1$"
    [v1blob]="damaged trie record: .*v1blob.db: trie main: the secure column holds X'01', not 0 or 1$"
    [truncated]='truncated.db: .*corrupt'
)
for f in "${!refused[@]}"; do
    re="^mpt: error: .*${refused[$f]}"
    expect "root $f" 3 '^$' "$re" -- "$MPT" root "$tmp/$f.db"
    expect "get $f" 3 '^$' "$re" -- "$MPT" get "$tmp/$f.db" "$hit_key"
    expect "dump $f" 3 '^$' "$re" -- "$MPT" dump "$tmp/$f.db"
    expect "check $f" 3 '^$' "$re" -- "$MPT" check "$tmp/$f.db"
    expect "stats $f" 3 '^$' "$re" -- "$MPT" stats "$tmp/$f.db"
done

# Version-1 files are read as they are, and upgraded in place by a write.
expect "root v1" 0 "^$good_root\$" '^$' -- "$MPT" root "$tmp/v1.db"
expect "check v1" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/v1.db"
expect "get v1" 0 "^$miss_value\$" '^$' -- "$MPT" get "$tmp/v1.db" "$miss_key"
expect "stats v1 (plain)" 0 '^trie main \(plain\)' '^$' -- "$MPT" stats "$tmp/v1.db"
expect "stats v1 secure" 0 '^trie main \(secure\)' '^$' -- "$MPT" stats "$tmp/v1secure.db"
expect "build into v1" 0 '^0x[0-9a-f]{64}$' '^$' -- "$MPT" build "$tmp/update.json" -o "$tmp/v1.db"
v1_root=$(cat "$tmp/out")
cp "$tmp/good.db" "$tmp/v2copy.db"
"$MPT" build "$tmp/update.json" -o "$tmp/v2copy.db" >/dev/null 2>&1
expect "v1 updated like v2" 0 "^$v1_root\$" '^$' -- "$MPT" root "$tmp/v2copy.db"
expect "v1 upgraded" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/v1.db"
if command -v sqlite3 >/dev/null; then
    v=$(sqlite3 "$tmp/v1.db" "PRAGMA user_version" "SELECT kind FROM tries")
    [ "$v" = "$(printf '3\nplain')" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL v1 upgrade: $v"; }
fi

# A version-1 file's secure flag has no checksum: a plain trie marked secure (one flipped
# byte) is read as secure, but an upgrade first checks the flag against the trie's nodes, and
# refuses (the file not written) where a key does not end at 64 nibbles.
if command -v sqlite3 >/dev/null; then
    "$MPT" build "$FIX/dogs.json" -o "$tmp/v1flip.db" >/dev/null
    sqlite3 "$tmp/v1flip.db" "CREATE TABLE tries_v1(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, root BLOB NOT NULL, secure INTEGER NOT NULL);
        INSERT INTO tries_v1 SELECT id, name, root, 1 FROM tries; DROP TABLE tries; ALTER TABLE tries_v1 RENAME TO tries;
        DROP TABLE preimages; DROP TABLE codes; PRAGMA user_version=1"
    cp "$tmp/v1flip.db" "$tmp/v1flip.before"
    expect "v1 plain trie marked secure: no upgrade" 3 '^$' '^mpt: error: damaged trie record: .*v1flip.db: trie main: marked secure in a version-1 file, but a key ends at [0-9]+ nibbles, where a secure trie.s are 64; the file is not upgraded \(and so not written\)$' -- \
        "$MPT" build "$tmp/update.json" -o "$tmp/v1flip.db"
    cmp -s "$tmp/v1flip.db" "$tmp/v1flip.before" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL v1 flipped: the file changed"; }
    [ "$(sqlite3 "$tmp/v1flip.db" "PRAGMA user_version")" = 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL v1 flipped: upgraded"; }
    # A real secure trie of version 1 upgrades.
    "$MPT" build --secure "$FIX/dogs.json" -o "$tmp/v1sec.db" >/dev/null
    sqlite3 "$tmp/v1sec.db" "CREATE TABLE tries_v1(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, root BLOB NOT NULL, secure INTEGER NOT NULL);
        INSERT INTO tries_v1 SELECT id, name, root, 1 FROM tries; DROP TABLE tries; ALTER TABLE tries_v1 RENAME TO tries;
        DROP TABLE preimages; DROP TABLE codes; PRAGMA user_version=1"
    expect "v1 secure trie: upgraded by a write" 0 '^0x[0-9a-f]{64}$' '^$' -- "$MPT" build "$tmp/update.json" -o "$tmp/v1sec.db"
    [ "$(sqlite3 "$tmp/v1sec.db" "PRAGMA user_version" "SELECT kind FROM tries")" = "$(printf '3\nsecure')" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL v1 secure: not upgraded"; }
    # A version-2 file (no codes table) is read as it is, and a write adds the table.
    "$MPT" build "$FIX/dogs.json" -o "$tmp/v2.db" >/dev/null
    sqlite3 "$tmp/v2.db" "DROP TABLE codes; PRAGMA user_version=2"
    expect "v2 read as it is" 0 '^ok: 3 rows' '^$' -- "$MPT" check "$tmp/v2.db"
    [ "$(sqlite3 "$tmp/v2.db" "PRAGMA user_version")" = 2 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL v2: a read upgraded it"; }
    expect "v2 upgraded by a write" 0 '^0x[0-9a-f]{64}$' '^$' -- "$MPT" build "$tmp/update.json" -o "$tmp/v2.db"
    [ "$(sqlite3 "$tmp/v2.db" "PRAGMA user_version" "SELECT count(*) FROM sqlite_master WHERE name = 'codes'")" = "$(printf '3\n1')" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL v2: not upgraded"; }
    expect "v2 upgraded: check" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/v2.db"
fi

# root reads the root row and checks its hash before printing the stored root.
expect "root rootrow" 3 '^$' '^mpt: error: node hash mismatch: .*rootrow.db: trie main, path \(root\): ' -- "$MPT" root "$tmp/rootrow.db"
expect "check rootrow" 3 '^hash mismatch at path \(root\)$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/rootrow.db"
# --trie names a trie file: an empty or foreign one is a storage error about the file.
expect "root --trie empty" 3 '^$' '^mpt: error: .*empty.db: an empty file, not a trie file$' -- "$MPT" root --trie main "$tmp/empty.db"
expect "root --trie text" 3 '^$' "^mpt: error: .*text.db: $not_sqlite" -- "$MPT" root --trie main "$tmp/text.db"

# Rows of a trie id that the tries table does not have: check names them.
expect "check strayid" 3 '^rows of trie id 7, which is not in the tries table: 2$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/strayid.db"

# 2. Damaged rows below the root.
where="trie main, path $bad_path"
expect "root flipped" 0 "^$good_root\$" '^$' -- "$MPT" root "$tmp/flipped.db"
expect "get flipped" 3 '^$' "^mpt: error: node hash mismatch: .*flipped.db: $where\$" -- "$MPT" get "$tmp/flipped.db" "$hit_key"
expect "get flipped elsewhere" 0 "^$miss_value\$" '^$' -- "$MPT" get "$tmp/flipped.db" "$miss_key"
expect "dump flipped" 3 '.*' "^mpt: error: node hash mismatch: .*flipped.db: $where\$" -- "$MPT" dump "$tmp/flipped.db"
expect "check flipped" 3 "^hash mismatch at path $bad_path\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/flipped.db"
expect "check --json flipped" 3 "\"ok\":false.*\"hash mismatch at path $bad_path\"" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check --json "$tmp/flipped.db"
expect "stats flipped" 0 '^pairs 3000, rows ' '^$' -- "$MPT" stats "$tmp/flipped.db"

expect "root deleted" 0 "^$good_root\$" '^$' -- "$MPT" root "$tmp/deleted.db"
expect "get deleted" 3 '^$' "^mpt: error: missing node: .*deleted.db: $where\$" -- "$MPT" get "$tmp/deleted.db" "$hit_key"
expect "get deleted elsewhere" 0 "^$miss_value\$" '^$' -- "$MPT" get "$tmp/deleted.db" "$miss_key"
expect "dump deleted" 3 '.*' "^mpt: error: missing node: .*deleted.db: $where\$" -- "$MPT" dump "$tmp/deleted.db"
expect "check deleted" 3 "^missing row at path $bad_path\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/deleted.db"
expect "stats deleted" 0 '^pairs 3000, rows ' '^$' -- "$MPT" stats "$tmp/deleted.db"

bad_node="$where: malformed trie node"
expect "root garbled" 0 '^0x[0-9a-f]{64}$' '^$' -- "$MPT" root "$tmp/garbled.db"
expect "get garbled" 3 '^$' "^mpt: error: malformed stored node: .*garbled.db: $bad_node" -- "$MPT" get "$tmp/garbled.db" "$hit_key"
expect "get garbled elsewhere" 0 "^$miss_value\$" '^$' -- "$MPT" get "$tmp/garbled.db" "$miss_key"
expect "dump garbled" 3 '.*' "^mpt: error: malformed stored node: .*garbled.db: $bad_node" -- "$MPT" dump "$tmp/garbled.db"
expect "check garbled" 3 "^undecodable node .* at path $bad_path\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/garbled.db"
expect "stats garbled" 3 '^$' "^mpt: error: malformed stored node: .*garbled.db: $bad_node" -- "$MPT" stats "$tmp/garbled.db"
# Every reader makes the one choice between missing, wrong and undecodable rows.
bad_compact=$( [ $((${#bad_path} % 2)) -eq 0 ] && echo "0x00$bad_path" || echo "0x1$bad_path")
expect "proof garbled" 3 '^$' "^mpt: error: malformed stored node: .*garbled.db: $bad_node" -- "$MPT" proof "$tmp/garbled.db" "$hit_key"
expect "get-node garbled" 3 '^$' "^mpt: error: malformed stored node: .*garbled.db: $bad_node" -- "$MPT" get-node "$tmp/garbled.db" "$bad_compact"
expect "diff garbled" 3 '^$' "^mpt: error: malformed stored node: .*garbled.db: B: $bad_node" -- "$MPT" diff "$tmp/good.db" "$tmp/garbled.db"
expect "proof flipped" 3 '^$' "^mpt: error: node hash mismatch: .*flipped.db: $where\$" -- "$MPT" proof "$tmp/flipped.db" "$hit_key"
expect "get-node deleted" 3 '^$' "^mpt: error: missing node: .*deleted.db: $where\$" -- "$MPT" get-node "$tmp/deleted.db" "$bad_compact"

expect "root orphan" 0 "^$good_root\$" '^$' -- "$MPT" root "$tmp/orphan.db"
expect "get orphan" 0 '^0x' '^$' -- "$MPT" get "$tmp/orphan.db" "$hit_key"
expect "dump orphan" 0 '^0x' '^$' -- "$MPT" dump "$tmp/orphan.db"
expect "check orphan" 3 "^orphan row at path $orphan_path\$" '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/orphan.db"
expect "stats orphan" 0 '^pairs ' '^$' -- "$MPT" stats "$tmp/orphan.db"
expect "check stray" 3 '^rows at paths that are no nibble paths: 3$' '^mpt: error: damaged trie file: .*: [0-9]+ problems?, listed in the report$' -- "$MPT" check "$tmp/stray.db"
expect "get stray" 0 '^0x' '^$' -- "$MPT" get "$tmp/stray.db" "$hit_key"
n=$("$MPT" dump "$tmp/orphan.db" | wc -l)
[ "$n" -eq 3000 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL dump orphan: $n pairs, want 3000"; }

# 3. mpt build refuses, and leaves the file as it was (no byte changed, no log left over).
for f in text random foreign version99 notables shortroot badkind swappedkind rootbit v1two v1minus v1half v1text v1blob truncated flipped deleted garbled; do
    cp "$tmp/$f.db" "$tmp/before"
    case $f in
        text | random) re="$f.db: $not_sqlite" ;;
        flipped) re="node hash mismatch: .*flipped.db: $where\$" ;;
        deleted) re="missing node: .*deleted.db: $where\$" ;;
        garbled) re="malformed stored node: .*garbled.db: $bad_node" ;;
        *) re=${refused[$f]} ;;
    esac
    expect "build into $f" 3 '^$' "^mpt: error: .*$re" -- "$MPT" build "$tmp/update.json" -o "$tmp/$f.db"
    if cmp -s "$tmp/before" "$tmp/$f.db" && [ ! -s "$tmp/$f.db-wal" ] && [ ! -s "$tmp/$f.db-journal" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL build into $f changed the file"
    fi
done
# ... and takes an empty file as a new one.
expect "build into empty" 0 '^0x[0-9a-f]{64}$' '^$' -- "$MPT" build "$tmp/good.json" -o "$tmp/empty.db"
expect "root of built empty" 0 "^$good_root\$" '^$' -- "$MPT" root "$tmp/empty.db"

# 4. A file its user may not write: reads work, a build is refused and changes nothing.
# Root may write anything, so as root the commands run as nobody (setpriv, util-linux).
as_user=()
if [ "$(id -u)" -eq 0 ]; then
    if ! command -v setpriv >/dev/null; then
        echo "FAIL running as root without setpriv: cannot test a read-only file"
        exit 1
    fi
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 755 "$tmp"  # mktemp -d makes it 700
    cp "$MPT" "$tmp/mpt_bin"  # nobody may not reach the build folder
    chmod 755 "$tmp/mpt_bin"
    RO_MPT=$tmp/mpt_bin
else
    RO_MPT=$MPT
fi
for d in rodir rwdir; do
    mkdir "$tmp/$d"
    cp "$tmp/good.db" "$tmp/update.json" "$tmp/$d/"
    chmod 444 "$tmp/$d/good.db"
    chmod 644 "$tmp/$d/update.json"
done
chmod 555 "$tmp/rodir"  # not even -wal and -shm files can be made here
[ "$(id -u)" -eq 0 ] && chmod 777 "$tmp/rwdir"
for d in rodir rwdir; do
    db=$tmp/$d/good.db
    cp "$db" "$tmp/before"
    expect "root read-only ($d)" 0 "^$good_root\$" '^$' -- "${as_user[@]}" "$RO_MPT" root "$db"
    expect "get read-only ($d)" 0 "^$miss_value\$" '^$' -- "${as_user[@]}" "$RO_MPT" get "$db" "$miss_key"
    expect "check read-only ($d)" 0 '^ok: ' '^$' -- "${as_user[@]}" "$RO_MPT" check "$db"
    expect "build read-only ($d)" 3 '^$' "^mpt: error: trie file is read-only: .*$d/good.db: " -- \
        "${as_user[@]}" "$RO_MPT" build "$tmp/$d/update.json" -o "$db"
    if cmp -s "$tmp/before" "$db"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL build into read-only ($d) changed the file"
    fi
done
chmod 755 "$tmp/rodir"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

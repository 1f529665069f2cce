#!/usr/bin/env bash
# Torture cases for the command contract: every case asserts the exit code, the one error line,
# and that nothing was lost (the file answers as before, or as after the write).
#
# Usage: torture.sh MPT [--quick]
#
# Sections (--quick runs 1, 2, 5 and 6, which need no root and take seconds):
#  1. stdout and stderr at /dev/full and closed, for every command: a failed stdout write is
#     one line 'mpt: error: write: <reason>' and exit 3; a failed stderr write keeps the exit
#     code and the output; SIGPIPE is exit 141 with no line.
#  2. Slips: hex with a stray character, 0X in proof documents, --trie on a file that is no
#     trie file, trie names with control characters, rows of unknown trie ids.
#  3. A small tmpfs (as root, when one can be mounted; said so when not) filled to several
#     levels, for builds, updates and reads.
#  4. kill -9 at random moments of an update: the root is the old or the new one, check is
#     clean, and no -wal/-shm is left where the open failed.
#  5. Metadata bytes flipped in the tries table: the record-header byte of kind and a root bit.
#  6. Endless piped streams and huge declared lengths.
# Random choices print their seed; MPT_SEED replays them.
set -u
MPT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
quick=0
[ "${2:-}" = "--quick" ] && quick=1
here=$(cd "$(dirname "$0")" && pwd)
FIX=$here/../fixtures
tmp=$(mktemp -d)
mnt=""
cleanup() {
    [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
pass=0
fail=0
. "$here/expect.sh"
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $*"
}
seed=${MPT_SEED:-$(date +%s)}
echo "torture: seed $seed (set MPT_SEED to replay)"
RANDOM=$seed
start=$SECONDS

"$MPT" build "$FIX/dogs.json" -o "$tmp/dogs.db" >/dev/null || { echo "FAIL build dogs"; exit 1; }
"$MPT" build "$FIX/diff_a.json" -o "$tmp/a.db" >/dev/null || { echo "FAIL build a"; exit 1; }
dogs_root=$("$MPT" root "$FIX/dogs.json")

# --- 1. Output at /dev/full and closed -----------------------------------------------------
# out_cases NAME -- CMD...: CMD runs once as reference, then with stdout at /dev/full, stdout
# closed, stderr at /dev/full and stderr closed. A CMD that writes a file gets a fresh copy
# from its own setup (bash -c '...; exec mpt ...').
out_cases() {
    local name=$1
    shift 2
    "$@" >"$tmp/ref.out" 2>"$tmp/ref.err" </dev/null
    local rc0=$?
    [ "$rc0" -lt 128 ] || { bad "$name: reference run killed by signal $((rc0 - 128))"; return; }
    local how rc
    for how in full closed; do
        if [ $how = full ]; then
            "$@" >/dev/full 2>"$tmp/err" </dev/null
        else
            "$@" >&- 2>"$tmp/err" </dev/null
        fi
        rc=$?
        if [ ! -s "$tmp/ref.out" ]; then
            # Nothing to write: nothing fails.
            [ $rc -eq $rc0 ] && cmp -s "$tmp/err" "$tmp/ref.err" && ok ||
                bad "$name, stdout $how, no output: exit $rc (want $rc0), stderr $(head -c 200 "$tmp/err")"
        elif [ $rc0 -ge 2 ]; then
            # An error reported already: its code and line stay.
            [ $rc -eq $rc0 ] && cmp -s "$tmp/err" "$tmp/ref.err" && ok ||
                bad "$name, stdout $how after an error: exit $rc (want $rc0), stderr $(head -c 200 "$tmp/err")"
        else
            local want='No space left on device'
            [ $how = closed ] && want='Bad file descriptor'
            # The write error is the last line; what the command said before it stays.
            [ $rc -eq 3 ] && [ "$(tail -n 1 "$tmp/err")" = "mpt: error: write: $want" ] &&
                [ "$(head -n -1 "$tmp/err")" = "$(cat "$tmp/ref.err")" ] && ok ||
                bad "$name, stdout $how: exit $rc (want 3), stderr $(head -c 200 "$tmp/err")"
        fi
    done
    for how in full closed; do
        if [ $how = full ]; then
            "$@" >"$tmp/out" 2>/dev/full </dev/null
        else
            "$@" >"$tmp/out" 2>&- </dev/null
        fi
        rc=$?
        [ $rc -eq $rc0 ] && cmp -s "$tmp/out" "$tmp/ref.out" && ok ||
            bad "$name, stderr $how: exit $rc (want $rc0), stdout differs or signal"
    done
}

fresh_build() { echo "rm -f '$tmp/b.db' '$tmp/b.db-wal' '$tmp/b.db-shm'; exec '$MPT' build $* -o '$tmp/b.db'"; }
update_build() { echo "cp '$tmp/dogs.db' '$tmp/u.db'; rm -f '$tmp/u.db-wal' '$tmp/u.db-shm'; exec '$MPT' build $* -o '$tmp/u.db'"; }

out_cases "root json" -- "$MPT" root "$FIX/dogs.json"
out_cases "root --json" -- "$MPT" root --json "$FIX/dogs.json"
out_cases "root db" -- "$MPT" root "$tmp/dogs.db"
out_cases "root --vectors" -- "$MPT" root --vectors "$FIX/trie_vectors.json"
out_cases "root missing" -- "$MPT" root "$tmp/missing.json"
out_cases "root usage" -- "$MPT" root
out_cases "build new" -- bash -c "$(fresh_build "'$FIX/dogs.json'")"
out_cases "build --json" -- bash -c "$(fresh_build --json "'$FIX/dogs.json'")"
out_cases "build update" -- bash -c "$(update_build "'$FIX/diff_b.json'")"
out_cases "get" -- "$MPT" get "$tmp/dogs.db" dog
out_cases "get absent" -- "$MPT" get "$tmp/dogs.db" cat
out_cases "get no file" -- "$MPT" get "$tmp/missing.db" dog
out_cases "dump" -- "$MPT" dump "$tmp/dogs.db"
out_cases "dump --json" -- "$MPT" dump --json "$tmp/dogs.db"
out_cases "check" -- "$MPT" check "$tmp/dogs.db"
out_cases "check --json" -- "$MPT" check --json "$tmp/dogs.db"
out_cases "stats" -- "$MPT" stats "$tmp/dogs.db"
out_cases "diff" -- "$MPT" diff "$FIX/diff_a.json" "$FIX/diff_b.json"
out_cases "diff db" -- "$MPT" diff "$tmp/a.db" "$FIX/diff_b.json"
out_cases "diff --stats" -- "$MPT" diff --stats "$FIX/diff_a.json" "$FIX/diff_b.json"
out_cases "get-node" -- "$MPT" get-node "$tmp/dogs.db" 0x00
out_cases "proof" -- "$MPT" proof "$tmp/dogs.db" dog
out_cases "proof --verify" -- "$MPT" proof --verify "$FIX/proof_present.json"
out_cases "verify-range" -- "$MPT" verify-range "$FIX/range_valid.json"
out_cases "verify-range invalid" -- "$MPT" verify-range "$FIX/range_gap.json"
out_cases "count-allocs" -- "$MPT" count-allocs --leaves 20 --samples 2
out_cases "help" -- "$MPT" --help
out_cases "command help" -- "$MPT" dump --help
out_cases "version" -- "$MPT" --version
# The builds whose stdout failed still wrote their file whole.
bash -c "$(fresh_build "'$FIX/dogs.json'")" >/dev/full 2>/dev/null
expect "build at /dev/full kept its file" 0 "^$dogs_root\$" '^$' -- "$MPT" root "$tmp/b.db"
expect "build at /dev/full: check" 0 '^ok: ' '^$' -- "$MPT" check "$tmp/b.db"
# SIGPIPE: the reader goes away; the UNIX way is exit 141 and no line.
awk 'BEGIN { printf "{"; for (i = 0; i < 20000; i++) printf "%s\"k%d\":\"v%d\"", (i ? "," : ""), i, i; print "}" }' >"$tmp/big.json"
"$MPT" build "$tmp/big.json" -o "$tmp/big.db" >/dev/null
for c in "dump $tmp/big.db" "dump --json $tmp/big.db"; do
    rcs=$(bash -c "'$MPT' $c 2>'$tmp/err' | head -c 10 >/dev/null; echo \${PIPESTATUS[0]}")
    [ "$rcs" -eq 141 ] && [ ! -s "$tmp/err" ] && ok || bad "SIGPIPE $c: exit $rcs, stderr $(head -c 200 "$tmp/err")"
done

# --- 2. Slips --------------------------------------------------------------------------------
expect "hex with a trailing space" 2 '^$' '^mpt: error: bad hex: -: entry 0 key \(line 1, column 2\): not a hex digit at offset 2 \(a space\)$' -- \
    bash -c "echo '{\"0x01 \": \"0x02\"}' | exec '$MPT' root -"
expect "odd hex is odd" 2 '^$' '^mpt: error: bad hex: -: entry 0 value .*: odd number of hex digits$' -- \
    bash -c "echo '{\"0x01\": \"0x123\"}' | exec '$MPT' root -"
sed 's/"root": "0x/"root": "0X/' "$FIX/proof_present.json" >"$tmp/p0X.json"
expect "proof document with 0X" 2 '^$' '^mpt: error: bad hex: .*p0X.json: field "root": 0X prefix: hex strings start with a lowercase 0x$' -- \
    "$MPT" proof --verify "$tmp/p0X.json"
: >"$tmp/empty.db"
echo "not a trie" >"$tmp/text.db"
expect "root --trie empty file" 3 '^$' '^mpt: error: not an mpt trie file: .*empty.db: an empty file, not a trie file$' -- "$MPT" root --trie main "$tmp/empty.db"
expect "root --trie text file" 3 '^$' '^mpt: error: not an mpt trie file: .*text.db: not an SQLite database$' -- "$MPT" root --trie main "$tmp/text.db"
for name in $'a\nb' $'tab\tname' $'cr\r' ''; do
    rm -f "$tmp/n.db"
    expect "trie name $(printf %q "$name")" 2 '^$' '^mpt: error: bad input: .*n.db: .*trie name' -- "$MPT" build "$FIX/dogs.json" -o "$tmp/n.db" --trie "$name"
    [ ! -e "$tmp/n.db" ] && ok || bad "trie name $(printf %q "$name"): a file was left"
    cp "$tmp/dogs.db" "$tmp/n.db"
    expect "trie name $(printf %q "$name") in an existing file" 2 '^$' '^mpt: error: bad input: .*trie name' -- "$MPT" build "$FIX/dogs.json" -o "$tmp/n.db" --trie "$name"
    expect "existing file unchanged" 0 "^$dogs_root\$" '^$' -- "$MPT" root "$tmp/n.db"
done
expect "tries of the existing file" 0 '^trie main \(plain\)' '^$' -- "$MPT" stats "$tmp/n.db"

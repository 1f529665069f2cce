#!/usr/bin/env bash
# Torture cases for the command contract: every case asserts the exit code, the one error line,
# and that nothing was lost (the file answers as before, or as after the write).
#
# Usage: torture.sh MPT [--quick]
#
# Sections (--quick runs 1, 2, 5 and 6, which need no root and take seconds):
#  1. stdout and stderr at /dev/full and closed, for every command: a failed stdout write is
#     one line 'mpt: error: write: <reason>' and exit 3; a failed stderr write keeps the exit
#     code and the output; SIGPIPE is exit 141 with no line. A closed stdin, for every command
#     that reads one: exit 2, one line, no file changed.
#  2. Slips: hex with a stray character, 0X in proof documents, --trie on a file that is no
#     trie file, trie names with control characters, rows of unknown trie ids.
#  3. A small tmpfs (as root, when one can be mounted; said so when not) filled to several
#     levels, for builds, updates and reads.
#  4. kill -9 at random moments of an update: the root is the old or the new one, check is
#     clean, and no -wal/-shm is left where the open failed.
#  5. Metadata bytes flipped in the tries table: the record-header byte of kind and a root bit.
#  6. Endless piped streams and huge declared lengths.
#  4b. kill -9 at random moments of build --state, a new file and --replace.
#  4c. kill -9 at random moments of update --changes: the old state or the new one, whole.
#  7. Two builds into one new name at once: one makes the file, none loses it.
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
# kill_at MS CMD...: runs CMD in the background, its output dropped, and kills it with
# SIGKILL MS milliseconds later (if it still runs).
kill_at() {
    local at=$1 pid
    shift
    "$@" >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $((at / 1000)) $((at % 1000)))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
}
# two_writers CMD...: runs CMD twice at once, writer i's stdout and stderr to $tmp/r<i>.out and
# .err, its exit code to rc<i>.
two_writers() {
    local p1 p2
    "$@" >"$tmp/r1.out" 2>"$tmp/r1.err" &
    p1=$!
    "$@" >"$tmp/r2.out" 2>"$tmp/r2.err" &
    p2=$!
    wait $p1
    rc1=$?
    wait $p2
    rc2=$?
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

# With SIGPIPE ignored (as some parents leave it), the write fails with EPIPE instead.
rcs=$(bash -c "trap '' PIPE; '$MPT' dump '$tmp/big.db' 2>'$tmp/err' | head -c 10 >/dev/null; echo \${PIPESTATUS[0]}")
[ "$rcs" -eq 3 ] && [ "$(cat "$tmp/err")" = "mpt: error: write: Broken pipe" ] && ok || bad "SIGPIPE ignored: exit $rcs, stderr $(head -c 200 "$tmp/err")"
# So in every command, the state diff too (which handles the signal to remove its temporary
# files, and must leave it ignored).
awk 'BEGIN { printf "{"; for (i = 1; i <= 3000; i++) printf "%s\"0x%040x\":{\"balance\":\"0x1\"}", (i > 1 ? "," : ""), i; print "}" }' >"$tmp/st3000.json"
"$MPT" build --state "$tmp/st3000.json" -o "$tmp/st3000.db" >/dev/null
for c in "diff --state $tmp/st3000.json $FIX/state_a.json" "dump --accounts $tmp/st3000.db"; do
    rcs=$(bash -c "trap '' PIPE; '$MPT' $c 2>'$tmp/err' | head -c 10 >/dev/null; echo \${PIPESTATUS[0]}")
    [ "$rcs" -eq 3 ] && [ "$(cat "$tmp/err")" = "mpt: error: write: Broken pipe" ] && ok || bad "SIGPIPE ignored, $c: exit $rcs, stderr $(head -c 200 "$tmp/err")"
    rcs=$(bash -c "'$MPT' $c 2>'$tmp/err' | head -c 10 >/dev/null; echo \${PIPESTATUS[0]}")
    [ "$rcs" -eq 141 ] && [ ! -s "$tmp/err" ] && ok || bad "SIGPIPE, $c: exit $rcs, stderr $(head -c 200 "$tmp/err")"
done

# A closed stdin is an error wherever input is read, never an empty input: one line naming -,
# exit 2, and a file to be written left as it was (or not made).
cp "$tmp/dogs.db" "$tmp/in.db"
cp "$tmp/dogs.db" "$tmp/in.before"
closed_line='^mpt: error: bad input: -: standard input is closed$'
for c in "root -" "root --json -" "build - -o $tmp/in_new.db" "build - -o $tmp/in.db" \
    "build --replace - -o $tmp/in.db" "build --state - -o $tmp/in_new.db" "root --state -" \
    "root --vectors -" "root --block -" "diff - $FIX/dogs.json" "diff $tmp/dogs.db -" \
    "proof --verify -" "verify-range -" "rlp decode -" "rlp encode -" "keccak -" "keccak" \
    "get $tmp/dogs.db --keys -" "proof $tmp/dogs.db --keys -"; do
    expect "stdin closed: $c" 2 '^$' "$closed_line" -- bash -c "exec '$MPT' $c <&-"
done
[ ! -e "$tmp/in_new.db" ] && ok || bad "stdin closed: a build made $tmp/in_new.db"
cmp -s "$tmp/in.db" "$tmp/in.before" && ok || bad "stdin closed: a build changed $tmp/in.db"

# --- 2. Slips --------------------------------------------------------------------------------
expect "hex with a trailing space" 2 '^$' '^mpt: error: bad hex: -: entry 1 key \(line 1, column 2\): not a hex digit at offset 2 \(a space\)$' -- \
    bash -c "echo '{\"0x01 \": \"0x02\"}' | exec '$MPT' root -"
expect "odd hex is odd" 2 '^$' '^mpt: error: bad hex: -: entry 1 value .*: odd number of hex digits$' -- \
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

# Out of descriptors is the process's limit, not bad input: exit 3 naming it, at every limit
# from the least a process starts with; or the answer, where the limit allows it.
"$MPT" build --state "$FIX/state_alloc.json" -o "$tmp/fds.db" >/dev/null
# The limits start where the binary loads at all: a parent (ctest) may leave descriptors open.
# A sanitizer build's runtime needs descriptors of its own (it reads /proc/self/maps to check
# a vptr, and says "invalid vptr" when it cannot): the plain build runs these.
fd_limits="4 5 6 7 8 9 10 11 12 13 14"
if grep -qa -e __ubsan_handle -e __asan_init "$MPT"; then
    echo "torture: the ulimit -n cases not run: $MPT is a sanitizer build"
    fd_limits=""
fi
fd_limited=0
for n in $fd_limits; do
    (ulimit -n $n; exec "$MPT" --version) >/dev/null 2>&1 </dev/null || continue
    for c in "diff $tmp/fds.db $FIX/state_b.json" "diff $FIX/diff_a.json $FIX/diff_b.json" "get $tmp/fds.db --account 0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b" \
        "build $FIX/dogs.json -o $tmp/fdnew.db" "build --state $FIX/state_alloc.json -o $tmp/fdnew.db"; do
        rm -f "$tmp/fdnew.db" "$tmp/fdnew.db-wal" "$tmp/fdnew.db-shm" "$tmp/fdnew.db-journal"
        (ulimit -n $n; exec "$MPT" $c) >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        if [ $rc -le 1 ] && [ ! -s "$tmp/err" ]; then
            ok
        elif [ $rc -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'Too many open files' "$tmp/err"; then
            ok
            fd_limited=$((fd_limited + 1))
        else
            bad "ulimit -n $n, $c: exit $rc, $(head -c 200 "$tmp/err")"
        fi
    done
done
[ -z "$fd_limits" ] || [ $fd_limited -gt 0 ] && ok || bad "ulimit -n: no limit from 4 to 14 ran a command out of descriptors"

# --- 5. Metadata bytes flipped in the tries table ---------------------------------------------
# The record of tries row 1 in a file mpt built: header (size 6; id NULL, name TEXT(4),
# root BLOB(32), kind TEXT(5), checksum BLOB(32)) then "main", the root, "plain", the checksum.
header_at=$(LC_ALL=C grep -obUaP '\x06\x00\x15\x4c\x17\x4cmain' "$tmp/dogs.db" | head -1 | cut -d: -f1)
if [ -z "$header_at" ]; then
    bad "cannot find the tries row of dogs.db"
else
    flip() { # FILE OFFSET XOR
        local old
        old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
        printf "\\x$(printf %02x $((old ^ $3)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
    }
    # name: offset of the byte, xor mask
    declare -A flips=(
        [kind-header]="$((header_at + 4)) 2"   # TEXT(5) becomes TEXT(4): the fields shift
        [kind-type]="$((header_at + 4)) 22"    # serial type 1: the kind is an integer
        [root-bit]="$((header_at + 10)) 1"     # the first byte of the root
        [root-last-bit]="$((header_at + 41)) 128"
        [kind-byte]="$((header_at + 42)) 32"   # "plain" becomes "Plain"
        [checksum-bit]="$((header_at + 47)) 1"
    )
    for f in "${!flips[@]}"; do
        set -- ${flips[$f]}
        cp "$tmp/dogs.db" "$tmp/flip.db"
        flip "$tmp/flip.db" "$1" "$2"
        cp "$tmp/flip.db" "$tmp/flip.before"
        for c in "root" "get @ dog" "dump" "check" "stats" "build $FIX/diff_b.json -o"; do
            cmd=${c/@/$tmp/flip.db}
            [ "$cmd" = "$c" ] && cmd="$c $tmp/flip.db"
            expect "flipped $f: $c" 3 '^$' '^mpt: error: (damaged trie record: .*flip.db: trie main: |storage I/O error: .*flip.db: .*corrupt)' -- "$MPT" $cmd
        done
        cmp -s "$tmp/flip.db" "$tmp/flip.before" && ok || bad "flipped $f: a command changed the file"
    done
fi

# --- 6. Endless streams and huge declared lengths ---------------------------------------------
for c in "root -" "build - -o $tmp/s.db" "verify-range -" "proof --verify -" "diff - $FIX/dogs.json"; do
    expect "yes x | $c" 2 '^$' '^mpt: error: malformed JSON: -: line 1, column 1: ' -- timeout 20 bash -c "yes x | exec '$MPT' $c"
    expect "/dev/zero | $c" 2 '^$' '^mpt: error: malformed JSON: -: line 1, column 1: ' -- timeout 20 bash -c "exec '$MPT' $c </dev/zero"
done
# --max-input: a stated limit on input, piped or not.
for c in "root --max-input 1M -" "build --max-input 1M - -o $tmp/mi.db" "root --max-input 1M --state -"; do
    first='['
    line='["0x01","0x02"],'
    case $c in *--state*) first='{' line='"0x00000000000000000000000000000000000000aa":{"balance":"0x1"},' ;; esac
    expect "endless stream with $c" 2 '^$' '^mpt: error: input too large: -: more than 1048576 bytes of input, the limit --max-input sets$' -- \
        timeout 60 bash -c "(echo '$first'; yes '$line') | exec '$MPT' $c"
done
expect "a file past --max-input" 2 '^$' '^mpt: error: input too large: .*big.json: more than 1024 bytes of input, the limit --max-input sets$' -- "$MPT" root --max-input 1K "$tmp/big.json"
expect "a file within --max-input" 0 '^0x' '^$' -- "$MPT" root --max-input 1M "$tmp/big.json"
expect "--max-input of a file into a new trie file" 2 '^$' 'the limit --max-input sets' -- "$MPT" build --max-input 1K "$tmp/big.json" -o "$tmp/mi.db"
[ ! -e "$tmp/mi.db" ] && ok || bad "--max-input: a refused build made $tmp/mi.db"
# Into an existing file, where the document is held whole: the same limit, a stream read no
# further than it, and the file as it was.
"$MPT" build --state "$FIX/state_a.json" -o "$tmp/mi_state.db" >/dev/null
"$MPT" build "$FIX/dogs.json" -o "$tmp/mi_kv.db" >/dev/null
mi_state_root=$("$MPT" root "$tmp/mi_state.db")
mi_kv_root=$("$MPT" root "$tmp/mi_kv.db")
expect "endless stream with build --state --max-input 1M - into a state file" 2 '^$' '^mpt: error: input too large: -: more than 1048576 bytes of input, the limit --max-input sets$' -- \
    timeout 60 bash -c "(echo '{'; yes '\"0x00000000000000000000000000000000000000aa\":{\"balance\":\"0x1\"},') | exec '$MPT' build --state --max-input 1M - -o '$tmp/mi_state.db'"
expect "endless stream with build --max-input 1M - into a trie file" 2 '^$' '^mpt: error: input too large: -: more than 1048576 bytes of input, the limit --max-input sets$' -- \
    timeout 60 bash -c "(echo '['; yes '[\"0x01\",\"0x02\"],') | exec '$MPT' build --max-input 1M - -o '$tmp/mi_kv.db'"
expect "--max-input of a file into a state file" 2 '^$' '^mpt: error: input too large: .*state_b.json: more than 100 bytes of input, the limit --max-input sets$' -- "$MPT" build --state --max-input 100 "$FIX/state_b.json" -o "$tmp/mi_state.db"
expect "--max-input of standard input from a file, into a state file" 2 '^$' '^mpt: error: input too large: -: more than 100 bytes of input, the limit --max-input sets$' -- \
    bash -c "exec '$MPT' build --state --max-input 100 - -o '$tmp/mi_state.db' <'$FIX/state_b.json'"
[ "$("$MPT" root "$tmp/mi_state.db")" = "$mi_state_root" ] && ok || bad "--max-input: a refused build changed $tmp/mi_state.db"
[ "$("$MPT" root "$tmp/mi_kv.db")" = "$mi_kv_root" ] && ok || bad "--max-input: a refused build changed $tmp/mi_kv.db"
expect "a state file within --max-input" 0 '^0x' '^$' -- "$MPT" build --state --max-input 1M --replace "$FIX/state_b.json" -o "$tmp/mi_state.db"
# JSON all along: stopped at a quarter of the memory available (here bounded by ulimit -v). root
# and build, whose budget streams it, read on until no entry has ended within a quarter of it,
# and then say what is wrong in what they hold (a bracket where a key goes), as a parse of the
# whole would. A sanitizer build cannot start under ulimit -v (its shadow memory is reserved up
# front).
ulimit_ok=$( (ulimit -v 600000; "$MPT" --version >/dev/null 2>&1 && echo 1 || echo 0) 2>/dev/null)
[ $ulimit_ok -eq 1 ] || echo "torture: the ulimit -v cases not run: $MPT does not start under ulimit -v 600000 (a sanitizer build?)"
for opener in '[' '{'; do
    [ $ulimit_ok -eq 1 ] || break
    for c in "root -" "build - -o $tmp/s.db" "verify-range -" "proof --verify -"; do
        want='^mpt: error: input too large: -: a stream of more than [0-9]+ bytes, the limit for piped input'
        case $c in root* | build*) want='^mpt: error: malformed JSON: -: line [23], column 1: expected a string key$' ;; esac
        expect "yes '$opener' | $c (ulimit -v 600000)" 2 '^$' "$want" -- \
            timeout 60 bash -c "ulimit -v 600000; yes '$opener' | exec '$MPT' $c"
    done
done
[ ! -e "$tmp/s.db" ] && ok || bad "a refused stream left $tmp/s.db"
# A --memory past what the process may take is taken, with a note (none under -q).
if [ $ulimit_ok -eq 1 ]; then
    dogs_root=$("$MPT" root "$FIX/dogs.json")
    expect "root --memory 4G (ulimit -v 600000): a note" 0 "^$dogs_root\$" '^mpt: note: --memory 4G is more than the 0\.[56]G of memory this process may take; an input that needs it may run out$' -- \
        bash -c "ulimit -v 600000; exec '$MPT' root --memory 4G '$FIX/dogs.json'"
    expect "build -q --memory 4G (ulimit -v 600000): no note" 0 "^$dogs_root\$" '^$' -- \
        bash -c "ulimit -v 600000; exec '$MPT' build -q --memory 4G '$FIX/dogs.json' -o '$tmp/m4.db'"
    expect "root --memory 500M (ulimit -v 600000): no note" 0 "^$dogs_root\$" '^$' -- \
        bash -c "ulimit -v 600000; exec '$MPT' root --memory 500M '$FIX/dogs.json'"
fi
# A key/value file of 200,000 pairs given as trie vectors: refused at its first member, in
# time linear in its size (an object read member by member with a linear search took an hour
# for 1.5M pairs; 60 s is two hundred times what it takes).
awk 'BEGIN { printf "{"; for (i = 0; i < 200000; i++) printf "%s\"0x%032x\":\"0x%024x\"", (i ? "," : ""), i, i; print "}" }' >"$tmp/kv200k.json"
expect "root --vectors of a key/value file of 200,000 pairs" 2 '^$' '^mpt: error: bad input: .*kv200k.json: 0x0{32}: expected an object with "in"$' -- \
    timeout 60 "$MPT" root --vectors "$tmp/kv200k.json"
# diff builds a key/value side in memory, about eight bytes for each byte of text: a side past
# its share of the memory available (here bounded by ulimit -v) stops before it is read, or as
# soon as a stream passes the share, with one line (exit 2), never out of memory. 100 MB of
# text; the first 30 MB of it diff takes.
if [ $ulimit_ok -eq 1 ]; then
    awk 'BEGIN { printf "{"; for (i = 0; i < 1500000; i++) printf "%s\"0x%032x\":\"0x%024x\"", (i ? "," : ""), i, i; print "}" }' >"$tmp/kv100.json"
    head -c 30000000 "$tmp/kv100.json" | sed 's/,"[^,]*$/}/' >"$tmp/kv30.json"
    too_large='^mpt: error: input too large: .*: more than [0-9]+ bytes of key/value input, which diff cannot build into a trie in the memory available; build it into a trie file \(mpt build\) and diff that$'
    expect "diff of a 100 MB key/value file (ulimit -v 600000)" 2 '^$' "$too_large" -- \
        bash -c "ulimit -v 600000; exec '$MPT' diff '$tmp/kv100.json' '$FIX/dogs.json'"
    expect "diff - of a 100 MB key/value stream (ulimit -v 600000)" 2 '^$' "$too_large" -- \
        bash -c "ulimit -v 600000; cat '$tmp/kv100.json' | exec '$MPT' diff - '$FIX/dogs.json'"
    expect "diff - of a 30 MB key/value stream (ulimit -v 600000)" 1 '^- 0x0{32} 0x0{24}$' '^$' -- \
        bash -c "ulimit -v 600000; cat '$tmp/kv30.json' | exec '$MPT' diff - '$FIX/dogs.json'"
fi
# Proof nodes whose RLP declares lengths far past their bytes: invalid, never an allocation.
KECCAK=$(dirname "$MPT")/mpt_make_bad_files
if [ -x "$KECCAK" ]; then
    for node in bfffffffffffffffff fbffffffffffffffff f9ffff b8ff00 f8ffc0 c4bfffffffff; do
        n=$node$(printf '%064d' 0)
        r=$("$KECCAK" --keccak "0x$n")
        printf '{"root":"%s","key":"0x646f67","value":"0x01","proof":["0x%s"]}\n' "$r" "$n" >"$tmp/huge.json"
        expect "proof node declaring $node" 1 '^invalid: node RLP does not decode at depth 0: ' '^$' -- "$MPT" proof --verify "$tmp/huge.json"
        printf '{"root":"%s","first":"0x646f67","keys":["0x646f67"],"values":["0x01"],"proof":["0x%s"]}\n' "$r" "$n" >"$tmp/huge.json"
        expect "range proof node declaring $node" 1 '^invalid: ' '^$' -- "$MPT" verify-range "$tmp/huge.json"
    done
else
    bad "$KECCAK not built: the huge-length proofs cannot be made"
fi

if [ $quick -eq 1 ]; then
    echo "torture (quick): $pass passed, $fail failed in $((SECONDS - start)) s"
    [ $fail -eq 0 ]
    exit
fi

# A value past SQLite's length limit (10^9 bytes): refused before anything is written.
{ printf '{"k": "'; head -c 1000000001 /dev/zero | tr '\0' 'a'; printf '"}'; } >"$tmp/toolong.json"
rm -f "$tmp/t.db"
expect "value past the length limit, new file" 2 '^$' '^mpt: error: input too large: .*toolong.json: entry 1: value of 1000000001 bytes exceeds the limit of 1000000000 bytes' -- "$MPT" build "$tmp/toolong.json" -o "$tmp/t.db"
[ ! -e "$tmp/t.db" ] && ok || bad "a refused build left $tmp/t.db"
cp "$tmp/dogs.db" "$tmp/t.db"
expect "value past the length limit, existing file" 2 '^$' '^mpt: error: input too large: ' -- "$MPT" build "$tmp/toolong.json" -o "$tmp/t.db"
expect "existing file as it was" 0 "^$dogs_root\$" '^$' -- "$MPT" root "$tmp/t.db"
rm -f "$tmp/toolong.json"

# --- Out of memory: ulimit -v on a 100k-pair build -------------------------------------------
awk 'BEGIN { srand(5); printf "{"; for (i = 0; i < 100000; i++) printf "%s\"0x%08x%08x\":\"0x%064x\"", (i ? "," : ""), i * 7919, int(rand() * 1e9), i; print "}" }' >"$tmp/k100.json"
k100_root=$("$MPT" root "$tmp/k100.json")
k100_secure_root=$("$MPT" root --secure "$tmp/k100.json")
"$MPT" build "$FIX/dogs.json" -o "$tmp/base.db" >/dev/null
for v in 30000 40000 45000 50000 60000 100000; do
    [ $ulimit_ok -eq 1 ] || break
    # spilled: a secure build past --memory, its hashed keys of every first byte split two
    # nibbles down on two threads; it must end (timeout: no part left waiting) either way.
    for c in root build update spilled; do
        rm -f "$tmp/o.db" "$tmp/o.db-wal" "$tmp/o.db-shm"
        cp "$tmp/base.db" "$tmp/upd.db"
        case $c in
            root) cmd=(root "$tmp/k100.json") ;;
            build) cmd=(build "$tmp/k100.json" -o "$tmp/o.db") ;;
            update) cmd=(build "$tmp/k100.json" -o "$tmp/upd.db") ;;
            spilled) cmd=(build --secure --memory 16M --threads 2 "$tmp/k100.json" -o "$tmp/o.db") ;;
        esac
        (ulimit -v $v; exec timeout 120 "$MPT" "${cmd[@]}") >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        if [ $rc -eq 0 ]; then
            [ "$(cat "$tmp/out")" != "" ] && ok || bad "ulimit -v $v $c: exit 0 without a root"
            if [ $c = spilled ]; then
                [ "$(cat "$tmp/out")" = "$k100_secure_root" ] && ok || bad "ulimit -v $v spilled: root $(cat "$tmp/out"), want $k100_secure_root"
            fi
        elif [ $rc -eq 4 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^mpt: error: out of memory: ' "$tmp/err"; then
            ok
            if [ $c = build ] || [ $c = spilled ]; then
                [ ! -e "$tmp/o.db" ] && ok || bad "ulimit -v $v build: out of memory left $(ls "$tmp"/o.db* | tr '\n' ' ')"
            fi
            if [ $c = update ]; then
                r=$("$MPT" root "$tmp/upd.db")
                [ "$r" = "$dogs_root" ] && "$MPT" check "$tmp/upd.db" >/dev/null && ok || bad "ulimit -v $v update: file not as before ($r)"
            fi
        else
            bad "ulimit -v $v $c: exit $rc, stderr $(head -c 300 "$tmp/err")"
        fi
    done
done

# --- 3. A small tmpfs filled to several levels ------------------------------------------------
awk 'BEGIN { srand(7); printf "{"; for (i = 0; i < 8000; i++) printf "%s\"0x%08x%08x\":\"0x%040x\"", (i ? "," : ""), i * 7919, int(rand() * 1e9), i; print "}" }' >"$tmp/k8.json"
awk 'BEGIN { srand(8); printf "{"; for (i = 0; i < 3000; i++) printf "%s\"0x%08x%08x\":\"0x%040x\"", (i ? "," : ""), i * 31, int(rand() * 1e9), i + 1; print "}" }' >"$tmp/u3.json"
k8_root=$("$MPT" root "$tmp/k8.json")
"$MPT" build "$tmp/k8.json" -o "$tmp/k8.db" >/dev/null
cp "$tmp/k8.db" "$tmp/k8u.db"
k8_line=$("$MPT" dump "$tmp/k8.db" | sed -n 777p)
k8_key=${k8_line%% *}
k8_value=${k8_line##* }
k8u_root=$("$MPT" build "$tmp/u3.json" -o "$tmp/k8u.db")
mkdir "$tmp/mnt"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=4m tmpfs "$tmp/mnt" 2>/dev/null; then
    mnt=$tmp/mnt
    logs() { ls "$mnt" | grep -v '^fill$' | tr '\n' ' '; }
    for free in 0 8192 32768 65536 131072 262144 1048576; do
        rm -f "$mnt"/*
        cp "$tmp/k8.db" "$mnt/t.db"
        avail=$(($(stat -f -c '%a * %S' "$mnt")))
        [ $avail -gt $free ] && head -c $((avail - free)) /dev/zero >"$mnt/fill" 2>/dev/null
        before=$(logs)
        # Reads of a healthy file answer, whatever the space; they leave no log behind.
        expect "free $free: root" 0 "^$k8_root\$" '^$' -- "$MPT" root "$mnt/t.db"
        expect "free $free: check" 0 '^ok: ' '^$' -- "$MPT" check "$mnt/t.db"
        expect "free $free: get" 0 "^$k8_value\$" '^$' -- "$MPT" get "$mnt/t.db" "$k8_key"
        n=$("$MPT" dump "$mnt/t.db" 2>"$tmp/err" | wc -l)
        [ "$n" -eq 8000 ] && [ ! -s "$tmp/err" ] && ok || bad "free $free: dump gave $n pairs, $(head -c 200 "$tmp/err")"
        [ "$(logs)" = "$before" ] && ok || bad "free $free: reads left $(logs) (before: $before)"
        # An update: done, or refused for the space with a line that says so; the file holds
        # the old root or the new one and checks clean.
        "$MPT" build "$tmp/u3.json" -o "$mnt/t.db" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -eq 0 ]; then
            [ "$(cat "$tmp/out")" = "$k8u_root" ] && ok || bad "free $free: update printed $(cat "$tmp/out")"
        elif [ $rc -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^mpt: error: disk or database full: .*t.db: .*\(no space\|No space\)' "$tmp/err"; then
            ok
        else
            bad "free $free: update exit $rc: $(head -c 300 "$tmp/err")"
        fi
        grep -q 'not an SQLite database\|corrupt' "$tmp/err" && bad "free $free: a healthy file called corrupt: $(cat "$tmp/err")"
        r=$("$MPT" root "$mnt/t.db" 2>&1)
        { [ "$r" = "$k8_root" ] || [ "$r" = "$k8u_root" ]; } && "$MPT" check "$mnt/t.db" >/dev/null && ok ||
            bad "free $free: after the update, root $r"
        # A new file: built, or refused for the space with no file left.
        "$MPT" build "$tmp/k8.json" -o "$mnt/n.db" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -eq 0 ]; then
            expect "free $free: new file reads back" 0 "^$k8_root\$" '^$' -- "$MPT" root "$mnt/n.db"
        elif [ $rc -eq 3 ] && grep -q '^mpt: error: disk or database full: .*n.db: ' "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
            [ ! -e "$mnt/n.db" ] && [ ! -e "$mnt/n.db-wal" ] && [ ! -e "$mnt/n.db-shm" ] && ok ||
                bad "free $free: a refused build left $(logs)"
        else
            bad "free $free: new build exit $rc: $(head -c 300 "$tmp/err")"
        fi
    done
    # An endless piped stream spilled into a small temporary folder: stopped with one line
    # (exit 3) while the file system keeps its floor free, no file made, nothing left.
    rm -f "$mnt"/*
    for c in "root --memory 16M -" "build --memory 16M - -o $tmp/endless.db" "root --memory 16M --state -"; do
        opener='["0x01","0x02"],'
        [ "$c" = "root --memory 16M --state -" ] && opener='"0x00000000000000000000000000000000000000aa":{"balance":"0x1"},'
        first='['
        [ "$c" = "root --memory 16M --state -" ] && first='{'
        expect "endless stream into a small TMPDIR: $c" 3 '^$' "^mpt: error: disk or database full: $mnt: temporary files stopped with [0-9]+ KiB free: [0-9]+ KiB are kept free on this file system" -- \
            timeout 120 bash -c "(echo '$first'; yes '$opener') | TMPDIR='$mnt' exec '$MPT' $c"
        [ -z "$(ls -A "$mnt")" ] && ok || bad "endless stream, $c: left $(ls -A "$mnt" | tr '\n' ' ')"
    done
    [ ! -e "$tmp/endless.db" ] && ok || bad "endless stream: build made $tmp/endless.db"
    umount "$mnt" && mnt=""
else
    echo "torture: section 3 (small tmpfs) not run: cannot mount a tmpfs here (uid $(id -u)); CI runs it as root"
fi

# --- 4. kill -9 at random moments of an update ------------------------------------------------
awk 'BEGIN { srand(9); printf "{"; for (i = 0; i < 40000; i++) printf "%s\"0x%08x%08x\":\"0x%040x\"", (i ? "," : ""), i * 7, int(rand() * 1e9), i; print "}" }' >"$tmp/k40.json"
awk 'BEGIN { srand(10); printf "{"; for (i = 0; i < 20000; i++) printf "%s\"0x%08x%08x\":\"0x%040x\"", (i ? "," : ""), i * 13, int(rand() * 1e9), i + 7; print "}" }' >"$tmp/u20.json"
"$MPT" build "$tmp/k40.json" -o "$tmp/k40.db" >/dev/null
old_root=$("$MPT" root "$tmp/k40.db")
cp "$tmp/k40.db" "$tmp/k.db"
t0=$(date +%s%N)
new_root=$("$MPT" build "$tmp/u20.json" -o "$tmp/k.db")
span=$((($(date +%s%N) - t0) / 1000000))  # ms
echo "torture: an update takes $span ms; killing at random moments within it"
old_seen=0
new_seen=0
for round in $(seq 1 30); do
    rm -f "$tmp/k.db" "$tmp/k.db-wal" "$tmp/k.db-shm"
    cp "$tmp/k40.db" "$tmp/k.db"
    at=$((RANDOM % (span + span / 4 + 1)))
    kill_at $at "$MPT" build "$tmp/u20.json" -o "$tmp/k.db"
    r=$("$MPT" root "$tmp/k.db" 2>&1)
    if [ "$r" = "$old_root" ]; then
        old_seen=$((old_seen + 1))
    elif [ "$r" = "$new_root" ]; then
        new_seen=$((new_seen + 1))
    else
        bad "kill -9 after $at ms: root $r, neither old nor new"
        continue
    fi
    "$MPT" check "$tmp/k.db" >"$tmp/out" 2>&1 && ok || bad "kill -9 after $at ms: check: $(tail -1 "$tmp/out")"
    # The file takes the next update as if nothing had happened.
    if [ $((round % 5)) -eq 0 ]; then
        r2=$("$MPT" build "$tmp/u20.json" -o "$tmp/k.db" 2>&1)
        [ "$r2" = "$new_root" ] && ok || bad "kill -9 after $at ms: the next update gave $r2"
    fi
done
echo "torture: kill -9: $old_seen rounds left the old root, $new_seen the new one"
[ $((old_seen + new_seen)) -eq 30 ] && ok || bad "kill -9: $((30 - old_seen - new_seen)) rounds lost the file"

# --- 4b. kill -9 at random moments of build --state, new and --replace ---------------------
# A new state file is there whole (its root, check clean) or not at all; a replaced one holds
# the old state or the new one, and checks clean, storage tries and preimages included.
GENSTATE=$(dirname "$MPT")/mpt_gen_state
if [ -x "$GENSTATE" ]; then
    "$GENSTATE" 2000 20000 "$tmp/s_old.json" --every 2 >/dev/null
    "$GENSTATE" 2000 20000 "$tmp/s_new.json" 500 --every 2 >/dev/null
    s_old_root=$("$MPT" root --state "$tmp/s_old.json")
    s_new_root=$("$MPT" root --state "$tmp/s_new.json")
    "$MPT" build --state "$tmp/s_old.json" -o "$tmp/s_old.db" >/dev/null
    # state_prepare HOW: clears $tmp/s.db for a new file, or puts a copy of the old state there
    # to replace. It runs before the build starts, so that a kill at 0 ms finds the copy whole.
    state_prepare() {
        rm -f "$tmp/s.db" "$tmp/s.db-wal" "$tmp/s.db-shm" "$tmp"/.s.db.new-*
        [ "$1" = new ] || cp "$tmp/s_old.db" "$tmp/s.db"
    }
    state_args() {
        if [ "$1" = new ]; then
            echo "build --state $tmp/s_new.json -o $tmp/s.db"
        else
            echo "build --state --replace $tmp/s_new.json -o $tmp/s.db"
        fi
    }
    for how in new replace; do
        t0=$(date +%s%N)
        state_prepare $how
        "$MPT" $(state_args $how) >/dev/null
        span=$((($(date +%s%N) - t0) / 1000000 + 1))
        seen_old=0 seen_new=0 seen_none=0
        for round in $(seq 1 100); do
            at=$((RANDOM % (span + span / 4 + 1)))
            state_prepare $how
            kill_at $at "$MPT" $(state_args $how)
            if [ ! -e "$tmp/s.db" ]; then
                [ $how = new ] && seen_none=$((seen_none + 1)) && continue
                bad "kill -9 of build --state --replace after $at ms: the file is gone"
                continue
            fi
            r=$("$MPT" root "$tmp/s.db" 2>&1)
            if [ "$r" = "$s_old_root" ] && [ $how = replace ]; then
                seen_old=$((seen_old + 1))
            elif [ "$r" = "$s_new_root" ]; then
                seen_new=$((seen_new + 1))
            else
                bad "kill -9 of build --state ($how) after $at ms: root $r"
                continue
            fi
            "$MPT" check "$tmp/s.db" >"$tmp/out" 2>&1 && ok ||
                bad "kill -9 of build --state ($how) after $at ms: check: $(tail -1 "$tmp/out")"
        done
        echo "torture: kill -9 of build --state ($how, $span ms): $seen_none rounds left no file, $seen_old the old state, $seen_new the new one"
    done
else
    bad "$GENSTATE not built: the state files of section 4b cannot be made"
fi

# --- 4c. kill -9 at random moments of update --changes ---------------------------------------
# A block's changes to 2,000 accounts and their slots (every tenth account deleted): the file
# holds the old state or the new one, whole, and checks clean.
if [ -x "$GENSTATE" ]; then
    python3 - "$tmp/s_old.json" "$tmp/changes.json" <<'PY'
import json, sys
alloc = json.load(open(sys.argv[1]))
changes = {}
for i, (address, account) in enumerate(sorted(alloc.items())):
    if i % 10 == 0:
        changes[address] = None
        continue
    storage = {slot: hex(i + 1) for slot in account.get("storage", {})}
    storage[hex(1000 + i)] = hex(7)
    changes[address] = {"balance": hex(i + 5), "nonce": hex(i % 3), "storage": storage}
json.dump(changes, open(sys.argv[2], "w"))
PY
    cp "$tmp/s_old.db" "$tmp/u_new.db"
    u_new_root=$("$MPT" update "$tmp/u_new.db" --changes "$tmp/changes.json")
    t0=$(date +%s%N)
    cp "$tmp/s_old.db" "$tmp/u.db"
    "$MPT" update "$tmp/u.db" --changes "$tmp/changes.json" >/dev/null
    span=$((($(date +%s%N) - t0) / 1000000 + 1))
    seen_old=0 seen_new=0
    for round in $(seq 1 100); do
        at=$((RANDOM % (span + span / 4 + 1)))
        rm -f "$tmp/u.db-wal" "$tmp/u.db-shm"
        cp "$tmp/s_old.db" "$tmp/u.db"
        kill_at $at "$MPT" update "$tmp/u.db" --changes "$tmp/changes.json"
        r=$("$MPT" root "$tmp/u.db" 2>&1)
        if [ "$r" = "$s_old_root" ]; then
            seen_old=$((seen_old + 1))
        elif [ "$r" = "$u_new_root" ]; then
            seen_new=$((seen_new + 1))
        else
            bad "kill -9 of update after $at ms: root $r"
            continue
        fi
        "$MPT" check "$tmp/u.db" >"$tmp/out" 2>&1 && ok ||
            bad "kill -9 of update after $at ms: check: $(tail -1 "$tmp/out")"
    done
    echo "torture: kill -9 of update ($span ms): $seen_old rounds left the old state, $seen_new the new one"
    [ $((seen_old + seen_new)) -eq 100 ] && ok || bad "kill -9 of update: $((100 - seen_old - seen_new)) rounds lost the state"
fi

# --- 7. Two writers of one new name --------------------------------------------------------
# Each round, two builds of one input into a name that does not exist, through the store (a
# log left beside the name closes the whole-file way), or the whole-file way. Exactly one makes
# the file; the other writes into it (or fails with one line); the file is never lost.
k40_root=$old_root
for round in $(seq 1 30); do
    rm -f "$tmp/r.db" "$tmp/r.db-wal" "$tmp/r.db-shm"
    [ $((round % 3)) -eq 0 ] || : >"$tmp/r.db-wal"
    two_writers "$MPT" build "$tmp/k40.json" -o "$tmp/r.db"
    for i in 1 2; do
        rc=$rc1
        [ $i -eq 2 ] && rc=$rc2
        if [ $rc -eq 0 ]; then
            [ "$(cat "$tmp/r$i.out")" = "$k40_root" ] && ok || bad "two writers, round $round: writer $i printed $(cat "$tmp/r$i.out")"
        else
            [ "$(wc -l <"$tmp/r$i.err")" -eq 1 ] && grep -q '^mpt: error: ' "$tmp/r$i.err" && ok ||
                bad "two writers, round $round: writer $i exit $rc: $(head -c 300 "$tmp/r$i.err")"
        fi
    done
    [ $rc1 -eq 0 ] || [ $rc2 -eq 0 ] || bad "two writers, round $round: neither wrote the file"
    r=$("$MPT" root "$tmp/r.db" 2>&1)
    [ "$r" = "$k40_root" ] && "$MPT" check "$tmp/r.db" >/dev/null 2>&1 && ok ||
        bad "two writers, round $round: the file holds $r"
    left=$(ls -a "$tmp" | grep -c '^\.r\.db\.new-')
    [ "$left" -eq 0 ] && ok || bad "two writers, round $round: $left temporary files left"
done
# The same for two state builds: one makes the file; the other finds a state there and says
# so (--replace rebuilds it), or makes it first.
if [ -x "$GENSTATE" ]; then
    for round in $(seq 1 10); do
        rm -f "$tmp/r.db" "$tmp/r.db-wal" "$tmp/r.db-shm"
        [ $((round % 2)) -eq 0 ] || : >"$tmp/r.db-wal"
        two_writers "$MPT" build --state "$tmp/s_old.json" -o "$tmp/r.db"
        { [ $rc1 -eq 0 ] || [ $rc2 -eq 0 ]; } && ok || bad "two state writers, round $round: exit $rc1 and $rc2: $(cat "$tmp/r1.err" "$tmp/r2.err" | head -c 300)"
        for i in 1 2; do
            [ ! -s "$tmp/r$i.err" ] || { [ "$(wc -l <"$tmp/r$i.err")" -eq 1 ] && grep -q '^mpt: error: ' "$tmp/r$i.err"; } && ok ||
                bad "two state writers, round $round: writer $i: $(head -c 300 "$tmp/r$i.err")"
        done
        r=$("$MPT" root "$tmp/r.db" 2>&1)
        [ "$r" = "$s_old_root" ] && "$MPT" check "$tmp/r.db" >/dev/null 2>&1 && ok ||
            bad "two state writers, round $round: the file holds $r"
    done
fi

echo "torture: $pass passed, $fail failed in $((SECONDS - start)) s"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Crash safety of the trie file: `mpt build` killed with SIGKILL at random moments must leave
# the file with either the old root or the new one, fully readable and clean; readers running
# beside a writer must always see one of the two.
#
# Usage: crash_test.sh MPT_BINARY [ROUNDS]
# The expected roots come from a second route: `mpt root` of the merged key/value input (the
# streaming builder), never from the update path under test.
set -u
MPT=$1
ROUNDS=${2:-30}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
die() {
    echo "FAIL $*"
    fail=$((fail + 1))
}

# Data: base (12k pairs), update (12k changes: ~30% deletes, ~30% changes, ~40% new keys),
# merged = base then update as one ordered list of pairs. Keys 8..31 bytes, values 1..40.
seed=${MPT_SEED:-$(date +%s)}
echo "seed $seed (set MPT_SEED to repeat)"
awk -v seed="$seed" -v n=12000 -v m=12000 -v dir="$tmp" '
function h(k,  s, i) { s = ""; for (i = 0; i < k; i++) s = s sprintf("%02x", int(rand() * 256)); return s }
BEGIN {
    srand(seed)
    base = dir "/base.json"; upd = dir "/update.json"; all = dir "/merged.json"
    printf "[" > base; printf "[" > all
    for (i = 0; i < n; i++) {
        key[i] = "0x" h(8 + int(rand() * 24))
        line = sprintf("%s[\"%s\",\"0x%s\"]", (i ? "," : ""), key[i], h(1 + int(rand() * 40)))
        printf "%s", line > base; printf "%s", line > all
    }
    printf "]\n" > base
    printf "[" > upd
    for (j = 0; j < m; j++) {
        r = rand()
        if (r < 0.3) { k = key[int(rand() * n)]; v = "null" }
        else if (r < 0.6) { k = key[int(rand() * n)]; v = "\"0x" h(1 + int(rand() * 40)) "\"" }
        else { k = "0x" h(8 + int(rand() * 24)); v = "\"0x" h(1 + int(rand() * 40)) "\"" }
        line = sprintf("[\"%s\",%s]", k, v)
        printf "%s%s", (j ? "," : ""), line > upd; printf ",%s", line > all
    }
    printf "]\n" > upd; printf "]\n" > all
}' || { echo "FAIL cannot generate data"; exit 1; }

# "ROOT COUNT" of a key/value file by the streaming route.
root_count() {
    local j
    j=$("$MPT" root --json "$1") || return
    echo "$(echo "$j" | sed -n 's/.*"root":"\(0x[0-9a-f]*\)".*/\1/p') $(echo "$j" | sed -n 's/.*"keys":\([0-9]*\).*/\1/p')"
}
read -r old old_n < <(root_count "$tmp/base.json")
read -r new new_n < <(root_count "$tmp/merged.json")
if [ -z "${old:-}" ] || [ -z "${new:-}" ] || [ "$old" = "$new" ]; then
    echo "FAIL cannot compute the expected roots (old '${old:-}', new '${new:-}')"
    exit 1
fi
echo "old root $old ($old_n pairs), new root $new ($new_n pairs)"

"$MPT" build "$tmp/base.json" -o "$tmp/base.db" >"$tmp/out" 2>&1 || { echo "FAIL base build: $(cat "$tmp/out")"; exit 1; }
# A clean close checkpoints the log into the file: base.db alone is the whole trie.
[ ! -s "$tmp/base.db-wal" ] || { echo "FAIL base.db-wal not checkpointed at close"; exit 1; }
[ "$("$MPT" root "$tmp/base.db")" = "$old" ] || { echo "FAIL base build root"; exit 1; }

now_us() { echo $(($(date +%s%N) / 1000)); }
# Sleeps a number of microseconds (fractional sleep is GNU coreutils).
sleep_us() { sleep "$(awk -v u="$1" 'BEGIN { printf "%.6f", u / 1e6 }')"; }

# One uninterrupted update: its duration sets the range of kill times, so that kills land
# before, inside and after the write transaction on any machine.
cp "$tmp/base.db" "$tmp/copy.db"
t0=$(now_us)
"$MPT" build "$tmp/update.json" -o "$tmp/copy.db" >"$tmp/out" 2>&1 || die "uninterrupted update: $(cat "$tmp/out")"
t_update=$(($(now_us) - t0))
[ "$(cat "$tmp/out")" = "$new" ] || die "uninterrupted update printed $(cat "$tmp/out"), want $new"
echo "uninterrupted update: ${t_update} us"

# Asserts that DB holds exactly the trie with root $1 and $2 pairs, clean.
assert_trie() {
    local db=$1 want=$2 want_n=$3 what=$4
    local n
    "$MPT" check "$db" >"$tmp/check" 2>&1 || die "$what: check exit $?: $(head -c 300 "$tmp/check")"
    n=$("$MPT" dump "$db" 2>"$tmp/err" | wc -l)
    [ -s "$tmp/err" ] && die "$what: dump stderr: $(head -c 300 "$tmp/err")"
    [ "$n" -eq "$want_n" ] || die "$what: dump has $n pairs, root $want has $want_n"
}

# Kill delay for round i (microseconds after the start). Even rounds: uniform over
# [0, 1.3 t). Odd rounds: around an estimate of the commit point, which moves later after a
# kill that left the old root and earlier after one that left the new root; so kills land
# on both sides of the commit and near it (the commit itself, the checkpoint at close, exit)
# whatever the load of the machine.
kill_delay() {
    local i=$1 t=$2
    if [ $((i % 2)) -eq 0 ]; then
        echo $(((RANDOM * 32768 + RANDOM) % (t * 13 / 10 + 1)))
    else
        echo $((boundary * (80 + RANDOM % 41) / 100))
    fi
}
# Moves the estimate after round i ended old (1) or new (0).
move_boundary() {
    [ $(($1 % 2)) -eq 1 ] || return 0
    if [ "$2" -eq 1 ]; then boundary=$((boundary * 11 / 10)); else boundary=$((boundary * 9 / 10)); fi
}

# 1. Updates killed at random moments.
ended_old=0
ended_new_killed=0
ended_new_done=0
boundary=$((t_update * 85 / 100))
for i in $(seq 0 $((ROUNDS - 1))); do
    rm -f "$tmp"/copy.db*
    cp "$tmp/base.db" "$tmp/copy.db"
    d=$(kill_delay "$i" "$t_update")
    "$MPT" build "$tmp/update.json" -o "$tmp/copy.db" >/dev/null 2>&1 &
    pid=$!
    sleep_us "$d"
    kill -9 "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null  # without bash's "Killed" notice
    rc=$?
    got=$("$MPT" root "$tmp/copy.db" 2>"$tmp/err")
    root_rc=$?
    if [ $root_rc -ne 0 ]; then
        die "update round $i (kill at ${d} us): root exit $root_rc: $(cat "$tmp/err")"
        continue
    fi
    if [ "$got" = "$old" ]; then
        ended_old=$((ended_old + 1))
        move_boundary "$i" 1
        [ $rc -eq 137 ] || die "update round $i: exit $rc but the root is the old one"
        assert_trie "$tmp/copy.db" "$old" "$old_n" "update round $i (old)"
    elif [ "$got" = "$new" ]; then
        move_boundary "$i" 0
        if [ $rc -eq 137 ]; then ended_new_killed=$((ended_new_killed + 1)); else ended_new_done=$((ended_new_done + 1)); fi
        assert_trie "$tmp/copy.db" "$new" "$new_n" "update round $i (new)"
    else
        die "update round $i (kill at ${d} us): root $got is neither old nor new"
    fi
    # The file stays usable: the update applies (again) and lands on the new root.
    got=$("$MPT" build "$tmp/update.json" -o "$tmp/copy.db" 2>&1)
    [ "$got" = "$new" ] || die "update round $i: update after the crash gave $got"
done
echo "updates: $ROUNDS rounds: old root $ended_old, new root after kill $ended_new_killed, new root (finished before kill) $ended_new_done"
if [ $ended_old -eq 0 ] || [ $((ended_new_killed + ended_new_done)) -eq 0 ]; then
    echo "WARNING: the kills did not land on both sides of the commit; the rounds above prove less"
fi

# 2. A first build into a new file, killed: no file, an empty one, or a file without the
# trie are all "nothing yet"; anything readable must be the whole trie. Building again
# must then work.
nothing=0
full=0
t0=$(now_us)
"$MPT" build "$tmp/merged.json" -o "$tmp/fresh.db" >/dev/null 2>&1 || die "uninterrupted fresh build"
t_fresh=$(($(now_us) - t0))
echo "uninterrupted fresh build: ${t_fresh} us"
boundary=$((t_fresh * 85 / 100))
for i in $(seq 0 $((ROUNDS - 1))); do
    rm -f "$tmp"/fresh.db*
    d=$(kill_delay "$i" "$t_fresh")
    "$MPT" build "$tmp/merged.json" -o "$tmp/fresh.db" >/dev/null 2>&1 &
    pid=$!
    sleep_us "$d"
    kill -9 "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null
    if [ ! -s "$tmp/fresh.db" ]; then
        nothing=$((nothing + 1))
        move_boundary "$i" 1
    else
        "$MPT" check --json "$tmp/fresh.db" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -eq 3 ] && grep -Eq '^mpt: error: .*(no trie named main; the file holds none|an empty file, not a trie file)$' "$tmp/err" &&
            [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
            nothing=$((nothing + 1))
            move_boundary "$i" 1
        elif [ $rc -eq 0 ] && grep -q "\"root\":\"$new\"" "$tmp/out"; then
            full=$((full + 1))
            move_boundary "$i" 0
            assert_trie "$tmp/fresh.db" "$new" "$new_n" "fresh round $i"
        else
            die "fresh round $i (kill at ${d} us): check exit $rc: $(head -c 300 "$tmp/out") $(head -c 300 "$tmp/err")"
        fi
    fi
    got=$("$MPT" build "$tmp/merged.json" -o "$tmp/fresh.db" 2>&1)
    [ "$got" = "$new" ] || die "fresh round $i (kill at ${d} us): build after the crash gave: $got"
done
echo "fresh builds: $ROUNDS rounds: nothing yet $nothing, whole trie $full"
if [ $nothing -eq 0 ] || [ $full -eq 0 ]; then
    echo "WARNING: the kills did not land on both sides of the commit; the rounds above prove less"
fi

# 3. Readers beside a writer that flips the trie between old and new.
"$MPT" dump "$tmp/base.db" --limit 5 >"$tmp/head_old"
"$MPT" dump "$tmp/copy.db" --limit 5 >"$tmp/head_new"
cmp -s "$tmp/head_old" "$tmp/head_new" && echo "note: old and new share their first 5 pairs"
# The root node of each side, as get-node answers it, and a key to prove.
cp "$tmp/base.db" "$tmp/new.db"
"$MPT" build "$tmp/update.json" -o "$tmp/new.db" >/dev/null || die "update of new.db failed"
"$MPT" get-node "$tmp/base.db" 0x00 >"$tmp/rootnode_old"
"$MPT" get-node "$tmp/new.db" 0x00 >"$tmp/rootnode_new"
probe=$(head -n 1 "$tmp/head_old" | cut -d' ' -f1)
rm -f "$tmp"/rw.db*
cp "$tmp/base.db" "$tmp/rw.db"
(
    for _ in 1 2 3 4; do
        "$MPT" build "$tmp/update.json" -o "$tmp/rw.db" >/dev/null 2>"$tmp/werr" || exit 1
        "$MPT" build "$tmp/base.json" --replace -o "$tmp/rw.db" >/dev/null 2>"$tmp/werr" || exit 1
    done
) &
writer=$!
reads=0
seen_old=0
seen_new=0
while kill -0 "$writer" 2>/dev/null; do
    got=$("$MPT" root "$tmp/rw.db" 2>"$tmp/rerr")
    rc=$?
    reads=$((reads + 1))
    if [ $rc -ne 0 ]; then
        die "reader root exit $rc: $(cat "$tmp/rerr")"
    elif [ "$got" = "$old" ]; then
        seen_old=$((seen_old + 1))
    elif [ "$got" = "$new" ]; then
        seen_new=$((seen_new + 1))
    else
        die "reader root $got is neither old nor new"
    fi
    "$MPT" dump "$tmp/rw.db" --limit 5 >"$tmp/rout" 2>"$tmp/rerr"
    rc=$?
    reads=$((reads + 1))
    if [ $rc -ne 0 ]; then
        die "reader dump exit $rc: $(cat "$tmp/rerr")"
    elif ! cmp -s "$tmp/rout" "$tmp/head_old" && ! cmp -s "$tmp/rout" "$tmp/head_new"; then
        die "reader dump --limit 5 matches neither the old nor the new trie"
    fi
    "$MPT" check --json "$tmp/rw.db" >"$tmp/rout" 2>"$tmp/rerr"
    rc=$?
    reads=$((reads + 1))
    if [ $rc -ne 0 ]; then
        die "reader check exit $rc: $(head -c 300 "$tmp/rout") $(cat "$tmp/rerr")"
    elif ! grep -q "\"root\":\"$old\"" "$tmp/rout" && ! grep -q "\"root\":\"$new\"" "$tmp/rout"; then
        die "reader check saw a root that is neither old nor new"
    fi
    "$MPT" proof "$tmp/rw.db" "$probe" >"$tmp/rout" 2>"$tmp/rerr"
    rc=$?
    reads=$((reads + 1))
    if [ $rc -ne 0 ]; then
        die "reader proof exit $rc: $(cat "$tmp/rerr")"
    elif ! grep -q "\"root\":\"\($old\|$new\)\"" "$tmp/rout"; then
        die "reader proof is under a root that is neither old nor new"
    elif [ "$("$MPT" proof --verify "$tmp/rout")" != valid ]; then
        die "reader proof does not verify: $(head -c 300 "$tmp/rout")"
    fi
    "$MPT" get-node "$tmp/rw.db" 0x00 >"$tmp/rout" 2>"$tmp/rerr"
    rc=$?
    reads=$((reads + 1))
    if [ $rc -ne 0 ]; then
        die "reader get-node exit $rc: $(cat "$tmp/rerr")"
    elif ! cmp -s "$tmp/rout" "$tmp/rootnode_old" && ! cmp -s "$tmp/rout" "$tmp/rootnode_new"; then
        die "reader get-node of the root matches neither the old nor the new root node"
    fi
    [ $fail -gt 20 ] && break
done
wait "$writer" || die "writer failed: $(cat "$tmp/werr")"
echo "readers: $reads reads beside 8 writes; root reads saw old $seen_old, new $seen_new"
[ $seen_old -gt 0 ] && [ $seen_new -gt 0 ] || echo "WARNING: the readers saw only one of the two roots"

echo "$fail failures"
[ $fail -eq 0 ]

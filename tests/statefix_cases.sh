# Cases of mpt diff on states whose slots a side does not hold, and of a diff stopped by a
# signal, for cli_test.sh; sourced after state_cases.sh.

# A geth dump made without storage gives each account's storage root and no slots: the
# roots are compared, the slots are said to be missing, never shown as added or removed.
# fixtures/state_geth_dump.json lists the slots of 0x000f3df6 and only the root of the
# account named pre(0x528b...); state_alloc.json lists every slot of the same state.
sys=0x000f3df6d732807ef1319fb7b8bb8522d0beac02
pre=0x528b55564e8518548e42b534da3a526179b820f264ee7c6929d00b0b6a31cfc2
python3 - "$FIX/state_geth_dump.json" "$tmp/sf_dump_roots.json" "$tmp/sf_dump_changed.json" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
for a in dump["accounts"].values():
    a.pop("storage", None)  # storage roots only, as geth dumps with --nostorage
json.dump(dump, open(sys.argv[2], "w"), indent=1)
# Another state: one slot of 0x000f3df6 changed, its root with it (as a client's dump gives it).
for name, a in dump["accounts"].items():
    if name.lower().startswith("0x000f3df6"):
        a["root"] = "0x" + "11" * 32
    if name.startswith("pre("):
        a["root"] = "0x" + "22" * 32
json.dump(dump, open(sys.argv[3], "w"), indent=1)
PY
expect "diff: a dump without slots equals its state" 0 '^$' '^$' -- "$MPT" diff --state "$FIX/state_alloc.json" "$tmp/sf_dump_roots.json"
expect "diff: a dump without slots equals the dump with them" 0 '^$' '^$' -- "$MPT" diff --state "$tmp/sf_dump_roots.json" "$FIX/state_geth_dump.json"
expect "diff: storage roots of a dump without slots" 1 "^~ $sys storageRoot 0x09cf0d8f[0-9a-f]{56} -> 0x1{64}\$" '^$' -- "$MPT" diff --state "$FIX/state_alloc.json" "$tmp/sf_dump_changed.json"
expect "diff: the slots B does not give" 1 "^\\? $sys slots not compared: B gives the storage root without its slots\$" '^$' -- "$MPT" diff --state "$FIX/state_alloc.json" "$tmp/sf_dump_changed.json"
expect "diff: the slots A does not give" 1 "^\\? $sys slots not compared: A gives the storage root without its slots\$" '^$' -- "$MPT" diff --state "$tmp/sf_dump_changed.json" "$FIX/state_geth_dump.json"
expect "diff: the slots neither gives" 1 "^\\? pre\\($pre\\) slots not compared: A and B give the storage root without their slots\$" '^$' -- "$MPT" diff --state "$tmp/sf_dump_roots.json" "$tmp/sf_dump_changed.json"
expect "diff: no slot line against a side without slots" 0 '^$' '^$' -- sh -c "'$MPT' diff --state '$FIX/state_alloc.json' '$tmp/sf_dump_changed.json' | grep ' slot '; test \$? -eq 1"
expect "diff --json: slots-unknown" 1 "^\\{\"change\":\"slots-unknown\",\"address\":\"$sys\",\"missing\":\\[\"B\"\\]\\}\$" '^$' -- "$MPT" diff --state --json "$FIX/state_alloc.json" "$tmp/sf_dump_changed.json"
expect "diff --json: slots-unknown on both sides" 1 "^\\{\"change\":\"slots-unknown\",\"key\":\"$pre\",\"missing\":\\[\"A\",\"B\"\\]\\}\$" '^$' -- "$MPT" diff --state --json "$tmp/sf_dump_roots.json" "$tmp/sf_dump_changed.json"
# A state file built from such a dump holds no storage trie for those accounts: the same.
expect "build --state of a dump without slots" 0 '^0x0e2696d3' '^$' -- "$MPT" build --state "$tmp/sf_dump_roots.json" -o "$tmp/sf_roots.db"
expect "diff: a state file without slots, against itself" 0 '^$' '^$' -- "$MPT" diff "$tmp/sf_roots.db" "$FIX/state_alloc.json"
sed 's/"0x03b6": "0x03b6"/"0x03b6": "0x03b7"/' "$FIX/state_alloc.json" >"$tmp/sf_alloc_changed.json"
expect "diff: a state file without slots" 1 "^\\? $sys slots not compared: A gives the storage root without its slots\$" '^$' -- "$MPT" diff "$tmp/sf_roots.db" "$tmp/sf_alloc_changed.json"
expect "diff: a state file without slots, its root" 1 "^~ $sys storageRoot 0x09cf0d8f" '^$' -- "$MPT" diff "$tmp/sf_roots.db" "$tmp/sf_alloc_changed.json"
expect "diff: an account added with its root only" 1 "^\\? $sys slots not compared: B gives" '^$' -- "$MPT" diff --state "$FIX/state_a.json" "$tmp/sf_dump_roots.json"

# A diff stopped by a signal removes its temporary folder and file. Side B is standard input
# that never ends, so the diff waits there with side A's file made (its own TMPDIR).
mkdir -p "$tmp/sf_tmp"
mkfifo "$tmp/sf_fifo"
sf_signal_case() {
    local sig=$1 want=$2
    rm -rf "$tmp/sf_tmp"/*
    exec 9<>"$tmp/sf_fifo"
    TMPDIR=$tmp/sf_tmp "$MPT" diff --state "$FIX/state_a.json" - <"$tmp/sf_fifo" >/dev/null 2>&1 &
    local pid=$! made=0
    for _ in $(seq 200); do
        [ -e "$tmp/sf_tmp"/mpt-diff-*/state.db ] && { made=1; break; }
        sleep 0.05
    done
    kill "-$sig" "$pid"
    # A process that does not stop (the signal not handled) fails the case, not the run.
    for _ in $(seq 200); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null
    local rc=0
    wait "$pid" 2>/dev/null || rc=$?
    exec 9>&-
    local left
    left=$(find "$tmp/sf_tmp" -mindepth 1 | wc -l)
    [ "$made" -eq 1 ] && [ "$rc" -eq "$want" ] && [ "$left" -eq 0 ]
    case_result "diff stopped by SIG$sig: exit $want, no temporary file left" $? \
        "file made $made, exit $rc (want $want), $left left"
}
sf_signal_case TERM 143
sf_signal_case INT 130
sf_signal_case HUP 129
# A closed pipe: more output than a pipe holds, to a reader that is gone.
awk 'BEGIN { print "{"; for (i = 1; i <= 3000; ++i) printf "%s\"0x%040x\": {\"balance\": \"%d\"}\n", (i > 1 ? "," : ""), i, i; print "}" }' >"$tmp/sf_many.json"
rm -rf "$tmp/sf_tmp"/*
TMPDIR=$tmp/sf_tmp "$MPT" diff --state "$FIX/state_a.json" "$tmp/sf_many.json" 2>/dev/null | true
sf_rc=${PIPESTATUS[0]}
sf_left=$(find "$tmp/sf_tmp" -mindepth 1 | wc -l)
[ "$sf_rc" -eq 141 ] && [ "$sf_left" -eq 0 ]
case_result "diff stopped by SIGPIPE: exit 141, no temporary file left" $? \
    "exit $sf_rc (want 141), $sf_left left"
# Ended normally, it leaves nothing either.
expect "diff leaves no temporary file" 0 '^$' '^$' -- sh -c "TMPDIR='$tmp/sf_tmp' '$MPT' diff --state '$FIX/state_a.json' '$FIX/state_a.json' && test -z \"\$(ls -A '$tmp/sf_tmp')\""

# An account that lists slots, if only zero ones, has the root of those, not the dump's own
# (state_root.hpp): root --state and build --state agree, through either builder.
python3 - "$FIX/state_geth_dump.json" "$tmp/sf_zero_slots.json" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
for name, a in dump["accounts"].items():
    if name.startswith("pre("):
        a["storage"] = {"0x01": "0x00"}
json.dump(dump, open(sys.argv[2], "w"))
PY
sf_zero_root=$("$MPT" root --state "$tmp/sf_zero_slots.json" 2>/dev/null)
expect "build --state of zero slots beside a dump's root: refused by default" 1 '^$' "account 0x[0-9a-f]{64} \(line 1\): the document gives storage root 0x821e2556[0-9a-f]{56}, its slots 0x56e81f17" -- "$MPT" build --state "$tmp/sf_zero_slots.json" -o "$tmp/sf_zero.db"
expect "build --state of zero slots beside a dump's root: root --state's root" 0 "^$sf_zero_root\$" '^$' -- "$MPT" build --state --ignore-stated-roots "$tmp/sf_zero_slots.json" -o "$tmp/sf_zero.db"
expect "build --state of zero slots, through the store" 0 "^$sf_zero_root\$" '^$' -- sh -c "cp '$tmp/sf_zero.db' '$tmp/sf_zero2.db' && '$MPT' build --state --ignore-stated-roots --replace '$tmp/sf_zero_slots.json' -o '$tmp/sf_zero2.db'"
expect "zero slots: root --state differs from the dump's root" 1 '^0x' 'root mismatch' -- "$MPT" root --state "$tmp/sf_zero_slots.json"

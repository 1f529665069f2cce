# Cases of `mpt root --state` past --memory on ethereum/tests BlockchainTests allocations, for
# cli_test.sh (a group apart from statespill_cases.sh, whose longest part it would be): when
# the folder is given, the pre and postState of each bcStateTests fixture's first test behind
# an "alloc" member of 2.7 MB that theirs replaces, against the root of their alloc alone.
# (The unit tests stream every allocation of every fixture; this is the command's part, with
# its --memory and --tmp.) While the cases are listed, nothing is read.
ss=$tmp/statespill_bc
mkdir -p "$ss/tmp"
GENSTATE=$(dirname "$GEN")/mpt_gen_state
if [ -n "$ETHEREUM_TESTS" ]; then
    [ -x "$GENSTATE" ]
    case_result "statespill_bc: the state generator" $? "no $GENSTATE (built beside mpt_gen_kv)"
    "$GENSTATE" 3000 60000 "$ss/alloc.json" --every 3
    n=0
    : >"$ss/bc_results"
    if [ -z "${CASE_LIST:-}" ]; then
        # Each allocation alone, its root from one process for all of them.
        i=0
        for f in "$ETHEREUM_TESTS"/BlockchainTests/ValidBlocks/bcStateTests/*.json; do
            for member in pre postState; do
                i=$((i + 1))
                jq -c "first(.[] | .$member // empty)" "$f" >"$ss/bc_$i.json"
                [ -s "$ss/bc_$i.json" ] || rm "$ss/bc_$i.json"
            done
        done
        "$MPT" root --state "$ss"/bc_[0-9]*.json >"$ss/bc_roots" ||
            echo "FAIL mpt root --state of the allocations: exit $?" >"$ss/bc_roots_failed"
        while read -r want file; do
            {
                printf '{"config": {"chainId": 1}, "alloc": '
                cat "$ss/alloc.json"
                printf ', "alloc": %s}' "$(cat "$file")"
            } >"$ss/bc_padded.json"
            got=$("$MPT" root --json --memory 1M --tmp "$ss/tmp" --state "$ss/bc_padded.json")
            case $got in
                *"\"root\":\"$want\""*tempFiles*) echo ok ;;
                *) echo "FAIL $file: $got, want $want" ;;
            esac
        done <"$ss/bc_roots" >"$ss/bc_results"
        cat "$ss/bc_roots_failed" >>"$ss/bc_results" 2>/dev/null
    fi
    n=$(grep -c '^ok$' "$ss/bc_results")
    # Every allocation read, and at least 50 of them.
    ! grep -q '^FAIL' "$ss/bc_results" && [ "$n" -ge 50 ] &&
        [ "$n" -eq "$(find "$ss" -maxdepth 1 -name 'bc_[0-9]*.json' | wc -l)" ]
    case_result "statespill_bc: BlockchainTests allocations past --memory" $? \
        "$n ok: $(grep -m1 '^FAIL' "$ss/bc_results")"
fi

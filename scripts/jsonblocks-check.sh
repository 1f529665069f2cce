#!/usr/bin/env bash
# Checks `mpt root --block` on blocks and receipts given as JSON, against roots their headers
# commit to, on data written elsewhere:
#
#   scripts/jsonblocks-check.sh EXECUTION_APIS ETHEREUM_TESTS [BUILD_DIR]
#
# EXECUTION_APIS holds execution-apis' recorded exchanges (eth_getBlockByNumber/,
# eth_getBlockByHash/, eth_getBlockReceipts/) and chain.rlp; ETHEREUM_TESTS holds
# BlockchainTests/. BUILD_DIR defaults to build/.
# - Each eth_getBlockBy* answer with full transactions gives the header's roots (exit 0), and
#   with one transaction's value changed, a mismatch naming that transaction (exit 1). An
#   answer with transactions as hashes, with a null result or with an error is refused (exit 2).
#   The same answers as one batch response give one verdict each.
#   Each header, as a witness's header object, hashes to its "hash" (mpt witness check), and
#   with a field changed does not.
# - Each eth_getBlockReceipts answer, beside the block answer of the same block hash, gives
#   the header's receiptsRoot (exit 0), and with one receipt changed, a mismatch (exit 1).
# - Each block of chain.rlp, decoded by tests/chain_blocks.py into JSON (every transaction type
#   up to EIP-7702), gives its header's roots.
# - Each BlockchainTests block with a header and transactions gives the header's roots.
# - genesis.json's alloc gives the genesis header's stateRoot, read from the file,
#   piped in and built into a state file; with a balance changed, another root.
#
# Prints one line per failed check and a count per group, then "N passed, M failed". Exit 0
# when all pass, 1 when a check fails, 2 when a folder, the binary or a tool is missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "jsonblocks-check: error: $*" >&2
    exit 2
}

[ $# -ge 2 ] && [ $# -le 3 ] ||
    die "usage: scripts/jsonblocks-check.sh EXECUTION_APIS ETHEREUM_TESTS [BUILD_DIR]"
apis=$1
et=$2
build=${3:-$root/build}
mpt=$build/mpt
for d in eth_getBlockByNumber eth_getBlockByHash eth_getBlockReceipts; do
    [ -d "$apis/$d" ] || die "$apis/$d: no such folder (EXECUTION_APIS must be execution-apis' tests)"
done
[ -f "$apis/chain.rlp" ] || die "$apis/chain.rlp: no such file"
[ -d "$et/BlockchainTests" ] || die "$et/BlockchainTests: no such folder"
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v jq >/dev/null || die "jq not found (scripts/setup.sh installs it)"
command -v python3 >/dev/null || die "python3 not found (scripts/setup.sh installs it)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # NAME STATUS [WHY]
    if [ "$2" -eq 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $1${3:+: $3}"
    fi
}
response() { sed -n 's/^<< //p' "$1"; }

# 1. Blocks from eth_getBlockByNumber and eth_getBlockByHash.
full=0
for io in "$apis"/eth_getBlockByNumber/*.io "$apis"/eth_getBlockByHash/*.io; do
    name=$(basename "$(dirname "$io")")/$(basename "$io")
    response "$io" >"$tmp/b.json"
    out=$("$mpt" root --block "$tmp/b.json" 2>&1)
    rc=$?
    if jq -e '.error' "$tmp/b.json" >/dev/null; then
        [ $rc -eq 2 ] && [[ $out == *"the JSON-RPC response carries an error"* ]]
        check "$name: the error answer refused" $? "exit $rc: $out"
    elif jq -e '.result == null' "$tmp/b.json" >/dev/null; then
        [ $rc -eq 2 ] && [[ $out == *"the node has no such block"* ]]
        check "$name: the null result refused" $? "exit $rc: $out"
    elif jq -e '.result.transactions | any(type == "string")' "$tmp/b.json" >/dev/null; then
        [ $rc -eq 2 ] && [[ $out == *"by hash only"* ]]
        check "$name: transactions as hashes refused" $? "exit $rc: $out"
    else
        full=$((full + 1))
        [ $rc -eq 0 ] && [[ $out == "transactionsRoot "*" ok"* ]]
        check "$name: the header's roots" $? "exit $rc: $out"
        [ "$(jq '.result.transactions | length' "$tmp/b.json")" -gt 0 ] || continue
        last=$(($(jq '.result.transactions | length' "$tmp/b.json") - 1))
        jq -c ".result.transactions[$last].value |= (if . == \"0x1\" then \"0x2\" else \"0x1\" end)" \
            "$tmp/b.json" >"$tmp/changed.json"
        out=$("$mpt" root --block "$tmp/changed.json" 2>&1)
        rc=$?
        [ $rc -eq 1 ] && [[ $out == *MISMATCH* ]] &&
            [[ $out == *"suspect: transaction $last (from 0)"* ]]
        check "$name: a changed value, a mismatch naming transaction $last" $? "exit $rc: $out"
    fi
done
[ $full -gt 0 ]
check "at least one block with full transactions" $? "none"
# The same answers as one JSON-RPC batch response, ids 1..N: one "id N:" verdict each.
for io in "$apis"/eth_getBlockByNumber/*.io "$apis"/eth_getBlockByHash/*.io; do
    response "$io"
    echo
done | jq -s -c '[.[] | select(.result != null and (.result.transactions | all(type == "object")))]
    | to_entries | map(.value + {id: (.key + 1)})' >"$tmp/batch.json"
out=$("$mpt" root --block "$tmp/batch.json" 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^id [0-9]*: transactionsRoot .* ok$')" -eq $full ]
check "eth_getBlockBy*: the $full blocks as one batch response" $? "exit $rc: $out"
echo "eth_getBlockBy*: $full blocks with full transactions"
# Each header as mpt witness check reads a header object (geth's witness headers): its fields
# give its "hash" and its stateRoot is the pre-state root; a field changed is refused.
headers=0
for io in "$apis"/eth_getBlockByNumber/*.io "$apis"/eth_getBlockByHash/*.io; do
    name=$(basename "$(dirname "$io")")/$(basename "$io")
    response "$io" >"$tmp/b.json"
    jq -e '.result.hash' "$tmp/b.json" >/dev/null || continue
    headers=$((headers + 1))
    jq -c '{state: [], headers: [.result]}' "$tmp/b.json" >"$tmp/w.json"
    out=$("$mpt" witness check --json "$tmp/w.json" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && [ "$(echo "$out" | jq -r .root)" = "$(jq -r .result.stateRoot "$tmp/b.json")" ]
    check "$name: the header hashes to its hash" $? "exit $rc: $out"
    jq -c '{state: [], headers: [.result | .gasUsed = "0x123457"]}' "$tmp/b.json" >"$tmp/w.json"
    out=$("$mpt" witness check "$tmp/w.json" 2>&1)
    rc=$?
    [ $rc -eq 2 ] && [[ $out == *'"headers[0].hash"'*"the header's fields hash to"* ]]
    check "$name: a header with gasUsed changed refused" $? "exit $rc: $out"
done
[ $headers -gt 0 ]
check "at least one header" $? "none"

# 2. Receipts from eth_getBlockReceipts, beside the block of the same hash.
receipts=0
for io in "$apis"/eth_getBlockReceipts/*.io; do
    name=eth_getBlockReceipts/$(basename "$io")
    response "$io" >"$tmp/r.json"
    if jq -e '.error or .result == null' "$tmp/r.json" >/dev/null; then
        out=$("$mpt" root --list "$tmp/r.json" 2>&1)
        rc=$?
        [ $rc -eq 2 ]
        check "$name: the answer without receipts refused" $? "exit $rc: $out"
        continue
    fi
    if jq -e '.result | length == 0' "$tmp/r.json" >/dev/null; then
        # No receipts: the genesis block's, which has no transactions.
        block=$apis/eth_getBlockByNumber/get-genesis.io
    else
        hash=$(jq -r '.result[0].blockHash' "$tmp/r.json")
        block=$(grep -l "\"hash\":\"$hash\"" "$apis"/eth_getBlockByNumber/*.io \
            "$apis"/eth_getBlockByHash/*.io | head -1)
    fi
    [ -n "$block" ] || continue
    receipts=$((receipts + 1))
    response "$block" >"$tmp/b.json"
    out=$("$mpt" root --block "$tmp/b.json" "$tmp/r.json" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && [[ $out == *"receiptsRoot "*" ok"* ]]
    check "$name: the receiptsRoot of $(basename "$block")" $? "exit $rc: $out"
    jq -e '.result | length > 0' "$tmp/r.json" >/dev/null || continue
    jq -c '.result[-1].cumulativeGasUsed |= (if . == "0x1" then "0x2" else "0x1" end)' \
        "$tmp/r.json" >"$tmp/changed.json"
    out=$("$mpt" root --block "$tmp/b.json" "$tmp/changed.json" 2>&1)
    rc=$?
    [ $rc -eq 1 ] && [[ $out == *"receiptsRoot "*MISMATCH* ]]
    check "$name: a changed receipt, a mismatch" $? "exit $rc: $out"
done
[ $receipts -gt 1 ]
check "receipts answers beside their blocks" $? "$receipts"
echo "eth_getBlockReceipts: $receipts answers beside their blocks"

# check_blocks NAME FILE ID: `root --block` of each JSON block of FILE (one a line) must find
# its header's roots; a failure is named by the block's field ID (a jq path). Sets blocks.
check_blocks() {
    blocks=0
    local b out
    while IFS= read -r b; do
        blocks=$((blocks + 1))
        out=$(printf '%s' "$b" | "$mpt" root --block - 2>&1) && check "$1 block" 0 ||
            check "$1 block $(printf '%s' "$b" | jq -r "$3"): the header's roots" 1 "$out"
    done <"$2"
}

# 3. chain.rlp's blocks as JSON: every transaction type.
python3 "$root/tests/chain_blocks.py" "$apis/chain.rlp" >"$tmp/chain.jsonl" ||
    die "tests/chain_blocks.py failed on $apis/chain.rlp"
check_blocks chain.rlp "$tmp/chain.jsonl" .number
types=$(jq -r '.transactions[].type' "$tmp/chain.jsonl" | sort -u | tr '\n' ' ')
[ "$types" = "0x0 0x1 0x2 0x3 0x4 " ]
check "chain.rlp: every transaction type" $? "types seen: $types"
echo "chain.rlp: $blocks blocks, transaction types $types"

# 4. BlockchainTests blocks.
find "$et/BlockchainTests" -name '*.json' -print0 | sort -z |
    xargs -0 jq -c '.[] | .blocks[]? | select(.blockHeader and .transactions)' >"$tmp/bt.jsonl" ||
    die "jq failed on $et/BlockchainTests"
check_blocks BlockchainTests "$tmp/bt.jsonl" .blockHeader.hash
types=$(jq -r '.transactions[] | .type // "0x00"' "$tmp/bt.jsonl" | sort -u | tr '\n' ' ')
[[ $types == *0x01*0x02*0x03* ]]
check "BlockchainTests: transaction types 1 to 3" $? "types seen: $types"
[ $blocks -gt 100 ]
check "BlockchainTests: blocks read" $? "$blocks"
echo "BlockchainTests: $blocks blocks, transaction types $types"

# 5. genesis.json's alloc: its state root is the genesis header's stateRoot, read from the file,
# piped in, and built into a state file; one balance changed, another root.
[ -f "$apis/genesis.json" ] || die "$apis/genesis.json: no such file"
want=$(response "$apis/eth_getBlockByNumber/get-genesis.io" | jq -r '.result.stateRoot')
[[ $want == 0x* ]] || die "get-genesis.io: no stateRoot"
for way in file pipe build; do
    case $way in
    file) out=$("$mpt" root --state "$apis/genesis.json" 2>&1) ;;
    pipe) out=$(cat "$apis/genesis.json" | "$mpt" root --state - 2>&1) ;;
    build) out=$("$mpt" -q build --state "$apis/genesis.json" -o "$tmp/genesis.db" >/dev/null &&
        "$mpt" root "$tmp/genesis.db" 2>&1) ;;
    esac
    [ "$out" = "$want" ]
    check "genesis.json ($way): the genesis header's stateRoot" $? "got $out, the header's $want"
done
jq '.alloc |= (to_entries | .[0].value.balance = "0x1234" | from_entries)' \
    "$apis/genesis.json" >"$tmp/genesis_changed.json" || die "jq failed on genesis.json"
out=$("$mpt" root --state "$tmp/genesis_changed.json" 2>&1)
[[ $out == 0x* ]] && [ "$out" != "$want" ]
check "genesis.json with a balance changed: another root" $? "got $out"
echo "genesis.json: the state root of the genesis header, $want"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

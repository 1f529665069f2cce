#!/usr/bin/env bash
# Checks recorded debug_getRawBlock, debug_getRawHeader and debug_getRawReceipts exchanges
# with `mpt root --block` and `mpt root --list`, each reading the JSON-RPC response as it is:
#
#   scripts/rawblocks-check.sh FOLDER [BUILD_DIR]   (FOLDER: execution-apis' tests, holding
#                                                    debug_getRawBlock/ and the others;
#                                                    BUILD_DIR defaults to build/)
#
# Each FOLDER/<method>/*.io file holds a ">> " request line and a "<< " response line. For
# every debug_getRawBlock answer, `root --block` must find the header's transactions (and
# withdrawals) roots (exit 0). For every debug_getRawReceipts answer, `root --list` must give
# the receiptsRoot of the header debug_getRawHeader answers for the same request (the file of
# the same name), and a receipt with one hex digit changed another root. An answer that is an
# error must be refused (exit 2) with the node's message.
#
# Prints one line per check and "N passed, M failed". Exit 0 when all pass, 1 when a check
# fails, 2 when FOLDER, the binary or a tool is missing, or FOLDER holds no exchange.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "rawblocks-check: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/rawblocks-check.sh FOLDER [BUILD_DIR]"
dir=$1
build=${2:-$root/build}
mpt=$build/mpt
for m in debug_getRawBlock debug_getRawHeader debug_getRawReceipts; do
    [ -d "$dir/$m" ] || die "$dir/$m: no such folder (FOLDER must be execution-apis' tests)"
done
[ -x "$mpt" ] || die "$mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v jq >/dev/null || die "jq not found (scripts/setup.sh installs it)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # NAME STATUS [WHY]
    if [ "$2" -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   $1"
    else
        fail=$((fail + 1))
        echo "FAIL $1${3:+: $3}"
    fi
}
response() { sed -n 's/^<< //p' "$1"; }

blocks=0
for io in "$dir"/debug_getRawBlock/*.io; do
    name=debug_getRawBlock/$(basename "$io")
    response "$io" >"$tmp/r.json"
    if jq -e '.error' "$tmp/r.json" >/dev/null; then
        out=$("$mpt" root --block "$tmp/r.json" 2>&1)
        rc=$?
        [ $rc -eq 2 ] && [[ $out == *"the JSON-RPC response carries an error"* ]]
        check "$name: the error answer refused" $? "exit $rc: $out"
        continue
    fi
    blocks=$((blocks + 1))
    out=$("$mpt" root --block "$tmp/r.json" 2>&1)
    check "$name: the header's roots" $? "$out"
done

receipts=0
for io in "$dir"/debug_getRawReceipts/*.io; do
    name=debug_getRawReceipts/$(basename "$io")
    header_io=$dir/debug_getRawHeader/$(basename "$io")
    response "$io" >"$tmp/r.json"
    if jq -e '.error' "$tmp/r.json" >/dev/null; then
        out=$("$mpt" root --list "$tmp/r.json" 2>&1)
        rc=$?
        [ $rc -eq 2 ] && [[ $out == *"the JSON-RPC response carries an error"* ]]
        check "$name: the error answer refused" $? "exit $rc: $out"
        continue
    fi
    [ -f "$header_io" ] || {
        check "$name: a header answer of the same name" 1 "no $header_io"
        continue
    }
    receipts=$((receipts + 1))
    # The header's fields: receiptsRoot is the sixth.
    want=$(response "$header_io" | jq -r .result | "$mpt" rlp decode - | jq -r '.[5]')
    got=$("$mpt" root --list "$tmp/r.json" 2>&1)
    [ "$got" = "$want" ]
    check "$name: the header's receiptsRoot" $? "root --list gives $got, the header $want"
    # One hex digit of the first receipt changed: another root.
    if [ "$(jq '.result | length' "$tmp/r.json")" -gt 0 ]; then
        jq -c '.result[0] |= (.[0:40] + (if .[40:41] == "0" then "1" else "0" end) + .[41:])' \
            "$tmp/r.json" >"$tmp/changed.json"
        changed=$("$mpt" root --list "$tmp/changed.json" 2>&1)
        [ -n "$changed" ] && [ "$changed" != "$want" ] && [[ $changed == 0x* ]]
        check "$name: a changed receipt, another root" $? "$changed"
    fi
done

[ $blocks -gt 0 ] && [ $receipts -gt 0 ]
check "at least one block and one receipts answer" $? "$blocks blocks, $receipts receipts answers"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Writes an eth_getProof JSON-RPC response made with mpt alone, as go-ethereum shapes one:
#
#   tests/make_getproof.sh MPT ACCOUNTS SLOTS OUT_DIR
#
# The state has ACCOUNTS accounts, at addresses 0x00..01 up to ACCOUNTS; the last one,
# 0x<ACCOUNTS as 20 bytes>, has nonce 1, balance 0x76, the code hash of "code" and SLOTS
# storage slots 0..SLOTS-1 holding 0x100 + slot (slot 2 is left out: an empty slot). Each
# other account has nonce (i mod 127) + 1 and nothing else. The tries are built with
# `mpt build --secure` (keys hashed with keccak256, as the state does) and the proofs made with
# `mpt proof`. Writes into OUT_DIR:
#   response.json  the answer for the last account and slots 0..9 (10 storage proofs; slot 2
#                  proves absence), keys as quantities ("0x0"), as go-ethereum echoes them
#   absent.json    the answer for an address the state lacks (0xff..ff), with slot 0x1
#   root           the state root
# Used by the CLI tests and bench/getproof_bench.sh.
set -euo pipefail

[ $# -eq 4 ] || {
    echo "usage: make_getproof.sh MPT ACCOUNTS SLOTS OUT_DIR" >&2
    exit 2
}
mpt=$1
accounts=$2
slots=$3
out=$4
[ "$accounts" -ge 1 ] && [ "$slots" -ge 10 ] || {
    echo "make_getproof: ACCOUNTS must be 1 or more and SLOTS 10 or more" >&2
    exit 2
}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

empty_root=56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421
empty_code=c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470
code_hash=$("$mpt" keccak code | cut -c3-)

# Storage: slot word -> rlp(0x100 + slot), a 2- or 3-byte RLP string.
awk -v n="$slots" 'BEGIN {
    printf "{"
    sep = ""
    for (s = 0; s < n; ++s) {
        if (s == 2) continue
        v = 256 + s
        hex = sprintf("%x", v); if (length(hex) % 2) hex = "0" hex
        printf "%s\"0x%064x\":\"0x%02x%s\"", sep, s, 128 + length(hex) / 2, hex
        sep = ","
    }
    printf "}\n"
}' >"$work/storage.json"
storage_root=$("$mpt" build --secure "$work/storage.json" -o "$work/storage.db" | cut -c3-)

# Accounts: address -> rlp([nonce, balance, storageRoot, codeHash]); 68 payload bytes.
awk -v n="$accounts" -v sr="$storage_root" -v ch="$code_hash" -v er="$empty_root" \
    -v ec="$empty_code" 'BEGIN {
    printf "{"
    for (i = 1; i <= n; ++i) {
        if (i < n) value = sprintf("f844%02x80a0%sa0%s", (i % 127) + 1, er, ec)
        else value = sprintf("f8440176a0%sa0%s", sr, ch)
        printf "%s\"0x%040x\":\"0x%s\"", (i > 1 ? "," : ""), i, value
    }
    printf "}\n"
}' >"$work/accounts.json"
state_root=$("$mpt" build --secure "$work/accounts.json" -o "$work/accounts.db")
printf '%s\n' "$state_root" >"$out/root"

proof_of() {  # DB KEY: the "proof" array of mpt proof
    "$mpt" proof "$1" "$2" | sed -E 's/.*"proof":(\[.*\])\}$/\1/'
}

address=$(printf '0x%040x' "$accounts")
{
    printf '{"jsonrpc":"2.0","id":1,"result":{"address":"%s","accountProof":%s,' \
        "$address" "$(proof_of "$work/accounts.db" "$address")"
    printf '"balance":"0x76","codeHash":"0x%s","nonce":"0x1","storageHash":"0x%s","storageProof":[' \
        "$code_hash" "$storage_root"
    for s in 0 1 2 3 4 5 6 7 8 9; do
        [ "$s" -gt 0 ] && printf ','
        if [ "$s" -eq 2 ]; then value=0x0; else value=$(printf '0x%x' $((256 + s))); fi
        printf '{"key":"0x%x","value":"%s","proof":%s}' "$s" "$value" \
            "$(proof_of "$work/storage.db" "$(printf '0x%064x' "$s")")"
    done
    printf ']}}\n'
} >"$out/response.json"

absent=0xffffffffffffffffffffffffffffffffffffffff
printf '{"address":"%s","accountProof":%s,"balance":"0x0","codeHash":"0x%s","nonce":"0x0","storageHash":"0x%s","storageProof":[{"key":"0x1","value":"0x0","proof":[]}]}\n' \
    "$absent" "$(proof_of "$work/accounts.db" "$absent")" "$empty_code" "$empty_root" \
    >"$out/absent.json"

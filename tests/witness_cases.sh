# Cases of mpt witness check, for cli_test.sh: fixtures/witness_a.json (the proofs of
# fixtures/state_a.json's two accounts, two of its slots, a third slot and an account it
# lacks, under a header whose stateRoot is that state's root) in each shape a client writes,
# and broken in each way the command must catch.
W=$FIX/witness_a.json
addr1=0x1000000000000000000000000000000000000001
python3 - "$W" "$tmp" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
out = sys.argv[2]


def rb(b):
    if len(b) == 1 and b[0] < 0x80:
        return b
    if len(b) < 56:
        return bytes([0x80 + len(b)]) + b
    n = (len(b).bit_length() + 7) // 8
    return bytes([0xb7 + n]) + len(b).to_bytes(n, "big") + b


def rl(p):
    if len(p) < 56:
        return bytes([0xc0 + len(p)]) + p
    n = (len(p).bit_length() + 7) // 8
    return bytes([0xf7 + n]) + len(p).to_bytes(n, "big") + p


def save(name, doc):
    with open(out + "/" + name, "w") as f:
        json.dump(doc, f)


h = lambda s: bytes.fromhex(s[2:])
strings = lambda items: rl(b"".join(rb(h(i)) for i in items))
parts = [rl(b"".join(h(x) for x in w["headers"])), strings(w["codes"]), strings(w["state"]),
         strings(w["keys"])]
open(out + "/w4.rlp", "wb").write(rl(b"".join(parts)))
open(out + "/w3.hex", "w").write("0x" + rl(b"".join(parts[:3])).hex() + "\n")
open(out + "/w_trailing.rlp", "wb").write(rl(b"".join(parts)) + b"\x00")
open(out + "/w_cut.rlp", "wb").write(rl(b"".join(parts))[:-5])
save("w_rpc.json", {"jsonrpc": "2.0", "id": 7, "result": w})
save("w_rpc_error.json", {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": "no witness"}})
save("w_sorted.json", dict(w, keys=sorted(set(w["keys"]), key=lambda k: h(k))))
save("w_noheaders.json", dict(w, headers=[]))
save("w_nokeys.json", {"state": w["state"], "codes": None, "keys": None, "headers": w["headers"]})
# The node the account 0x10..01 stands in (its leaf, the longest of the account proofs).
leaf = max((n for n in w["state"]), key=len)
save("w_less.json", dict(w, state=[n for n in w["state"] if n != leaf]))
save("w_more.json", dict(w, state=w["state"] + ["0xe21ba0" + "11" * 32],
                          codes=w["codes"] + ["0x00"]))
save("w_undecodable.json", dict(w, state=w["state"] + ["0x" + "01" * 40]))
save("w_twice.json", dict(w, state=w["state"] + w["state"][:1]))
save("w_odd.json", dict(w, state=w["state"] + ["0x123"]))
save("w_shortkey.json", dict(w, keys=w["keys"] + ["0x" + "11" * 19]))
save("w_slotfirst.json", dict(w, keys=["0x" + "ff" * 32] + w["keys"][:1]))
save("w_badheader.json", dict(w, headers=["0xc28080"]))
save("w_statenotarray.json", dict(w, state="0x00"))
open(out + "/w_leaf.txt", "w").write(leaf)
PY
leaf=$(cat "$tmp/w_leaf.txt" 2>/dev/null)
leaf_hash=$("$MPT" keccak "$leaf" 2>/dev/null)
summary='^witness: 6 nodes \(6 reached, 0 superfluous, 0 undecodable, 0 duplicated\); 2 accounts, 1 storage trie, 2 slots reached; 1 code \(1 matched\); 5 keys: 5 resolved \(3 present, 2 absent\), 0 unresolved$'

expect "witness: JSON checks clean" 0 "$summary" '^$' -- "$MPT" witness check "$W"
expect "witness: --json" 0 '^\{"root":"0xf5bf7efc[0-9a-f]{56}","rootFrom":"headers","shape":"JSON",.*"resolved":5,"unresolved":0,"ok":true\}$' '^$' -- "$MPT" witness check --json "$W"
expect "witness: --json gives each account and slot" 0 '"key":"0x1000000000000000000000000000000000000001","kind":"account","status":"present","nonce":"0x1","balance":"0xde0b6b3a7640000".*"key":"0x0{63}1","kind":"slot","address":"0x1000000000000000000000000000000000000001","status":"present","value":"0x2a".*"key":"0x3000000000000000000000000000000000000003","kind":"account","status":"absent"' '^$' -- "$MPT" witness check "$W" --json
expect "witness: stdin" 0 "$summary" '^$' -- sh -c "'$MPT' witness check - < '$W'"
expect "witness: a JSON-RPC response" 0 '"shape":"JSON \(JSON-RPC result\)"' '^$' -- "$MPT" witness check --json "$tmp/w_rpc.json"
expect "witness: a JSON-RPC error answer" 2 '^$' 'no witness' -- "$MPT" witness check "$tmp/w_rpc_error.json"
expect "witness: RLP with keys" 0 '"shape":"RLP \[headers, codes, state, keys\]".*"resolved":5' '^$' -- "$MPT" witness check --json "$tmp/w4.rlp"
expect "witness: 0x hex RLP without keys" 0 '^witness: 6 nodes \(6 reached.* 0 keys: 0 resolved' '^$' -- "$MPT" witness check "$tmp/w3.hex"
expect "witness: keys sorted" 0 '"keysOrder":"sorted".*"resolved":5,"unresolved":0' '^$' -- "$MPT" witness check --json "$tmp/w_sorted.json"
expect "witness: keys and codes null" 0 '^witness: 6 nodes \(6 reached.*; 0 codes \(0 matched\); 0 keys' '^$' -- "$MPT" witness check "$tmp/w_nokeys.json"
expect "witness: --root beside the header" 0 '"rootFrom":"--root"' '^$' -- "$MPT" witness check --json "$W" --root 0xf5bf7efc173bb3d4f2d73eebdbe96919a53721972397fc6a05af955ae0efac45
expect "witness: another root resolves nothing" 1 "^unresolved account $addr1: node 0x1{64} missing at path \\(root\\) of trie main\$" '^$' -- "$MPT" witness check "$W" --root 0x1111111111111111111111111111111111111111111111111111111111111111
expect "witness: a node left out" 1 "^unresolved account $addr1: node $leaf_hash missing at path [0-9a-f]+ of trie main\$" '^$' -- "$MPT" witness check "$tmp/w_less.json"
expect "witness: a node left out, its slots" 1 "^unresolved slot 0x0{64} of $addr1: its account is unresolved: node $leaf_hash missing" '^$' -- "$MPT" witness check "$tmp/w_less.json"
expect "witness: a node left out, --json" 1 "\"status\":\"unresolved\",\"trie\":\"main\",\"path\":\"[0-9a-f]+\",\"missing\":\"$leaf_hash\",\"reason\":\"missing\"" '^$' -- "$MPT" witness check "$tmp/w_less.json" --json
expect "witness: a node and a code from elsewhere" 0 '^superfluous node 0x[0-9a-f]{64}$' '^$' -- "$MPT" witness check "$tmp/w_more.json"
expect "witness: a code from elsewhere" 0 '^code 0xbc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a matches no account reached$' '^$' -- "$MPT" witness check "$tmp/w_more.json"
expect "witness: --strict refuses them" 1 '^superfluous node' '^$' -- "$MPT" witness check --strict "$tmp/w_more.json"
expect "witness: an undecodable node" 0 '^undecodable node 0x[0-9a-f]{64} \(state item 7\): ' '^$' -- "$MPT" witness check "$tmp/w_undecodable.json"
expect "witness: --strict refuses an undecodable node" 1 '"undecodable":\[\{"index":6,' '^$' -- "$MPT" witness check --strict --json "$tmp/w_undecodable.json"
expect "witness: a node listed twice" 0 '\(6 reached, 0 superfluous, 0 undecodable, 1 duplicated\)' '^$' -- "$MPT" witness check "$tmp/w_twice.json"
expect "witness: a slot before any address" 1 '^unresolved slot 0xf{64}: no address before it in keys names its account$' '^$' -- "$MPT" witness check "$tmp/w_slotfirst.json"
expect "witness: no headers and no --root" 2 '^$' 'no headers to take the pre-state root from; give it with --root' -- "$MPT" witness check "$tmp/w_noheaders.json"
expect "witness: no headers, --root" 0 "$summary" '^$' -- "$MPT" witness check "$tmp/w_noheaders.json" --root 0xf5bf7efc173bb3d4f2d73eebdbe96919a53721972397fc6a05af955ae0efac45
expect "witness: odd hex in a node" 2 '^$' 'state\[6\]' -- "$MPT" witness check "$tmp/w_odd.json"
expect "witness: a key of 19 bytes" 2 '^$' 'keys\[5\] .*: a key of 19 bytes, neither an address \(20\) nor a slot \(32\)' -- "$MPT" witness check "$tmp/w_shortkey.json"
expect "witness: a header that is no header" 2 '^$' 'header 1: the header has 2 fields, fewer than 15' -- "$MPT" witness check "$tmp/w_badheader.json"
expect "witness: state not an array" 2 '^$' '"state".*not an array' -- "$MPT" witness check "$tmp/w_statenotarray.json"
expect "witness: bytes after the RLP" 2 '^$' '1 bytes after the witness' -- "$MPT" witness check "$tmp/w_trailing.rlp"
expect "witness: RLP cut short" 2 '^$' 'the witness \(byte 0\)' -- "$MPT" witness check "$tmp/w_cut.rlp"
expect "witness: malformed JSON" 2 '^$' 'line 1' -- sh -c "printf '{\"state\": [' | '$MPT' witness check -"
expect "witness: neither JSON nor RLP" 2 '^$' 'not a witness: JSON' -- sh -c "echo hello | '$MPT' witness check -"
expect "witness: empty input" 2 '^$' 'not a witness' -- sh -c "'$MPT' witness check - < /dev/null"
expect "witness: a missing file" 2 '^$' 'nothere.json' -- "$MPT" witness check "$tmp/nothere.json"
expect "witness: --root not a root" 2 '^$' 'usage: witness: --root: not a 32-byte 0x hex root: 0x12' -- "$MPT" witness check "$W" --root 0x12
expect "witness: an action it lacks" 2 '^$' 'usage' -- "$MPT" witness make "$W"

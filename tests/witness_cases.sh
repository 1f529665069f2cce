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
# The same witness under a header of another stateRoot (field 4 of 15), and with an absent
# key alone.
fields = []
body = h(w["headers"][0])
n = body[0] - 0xf7
at = 1 + n
while at < len(body):
    p = body[at]
    if p < 0x80:
        fields.append(body[at:at + 1]); at += 1
    elif p < 0xb8:
        fields.append(body[at + 1:at + 1 + p - 0x80]); at += 1 + p - 0x80
    else:
        k = p - 0xb7
        ln = int.from_bytes(body[at + 1:at + 1 + k], "big")
        fields.append(body[at + 1 + k:at + 1 + k + ln]); at += 1 + k + ln
fields[3] = b"\x11" * 32
save("w_otherroot.json", dict(w, headers=["0x" + rl(b"".join(rb(f) for f in fields)).hex()]))
save("w_absent.json", dict(w, keys=["0x3000000000000000000000000000000000000003"]))
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

# Making a witness from a state file, and applying changes to one.
root_a=0xf5bf7efc173bb3d4f2d73eebdbe96919a53721972397fc6a05af955ae0efac45
z31=0x00000000000000000000000000000000000000000000000000000000000000
"$MPT" build --state "$FIX/state_a.json" -o "$tmp/wa.db" >/dev/null 2>&1
printf '%s\n' $addr1 0x0 0x1 '' 0x2 0x3000000000000000000000000000000000000003 >"$tmp/wkeys.txt"
echo "{\"$addr1\": null}" >"$tmp/wdel.json"
echo "{\"$addr1\": {\"balance\": \"0x5\", \"storage\": {\"0x1\": \"0x0\", \"0x7\": \"0x9\"}}}" >"$tmp/wchange.json"
python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['headers'][0])" "$W" >"$tmp/wheader.hex" 2>/dev/null
cp "$tmp/wa.db" "$tmp/wa_del.db"
del_root=$("$MPT" update "$tmp/wa_del.db" --changes "$tmp/wdel.json" 2>/dev/null)
cp "$tmp/wa.db" "$tmp/wa_change.db"
change_root=$("$MPT" update "$tmp/wa_change.db" --changes "$tmp/wchange.json" 2>/dev/null)
expect "witness DB KEY...: the reads' nodes, codes and keys" 0 "^\\{\"state\":\\[\"0x[0-9a-f]+\"(,\"0x[0-9a-f]+\"){4}\\],\"codes\":\\[\"0x600160005500\"\\],\"keys\":\\[\"$addr1\",\"${z31}00\",\"${z31}01\",\"${z31}02\",\"0x3000000000000000000000000000000000000003\"\\],\"headers\":\\[\\]\\}\$" '^$' -- "$MPT" witness "$tmp/wa.db" $addr1 0x0 0x1 0x2 0x3000000000000000000000000000000000000003
expect "witness DB: what it makes checks clean" 0 '5 keys: 5 resolved \(3 present, 2 absent\), 0 unresolved$' '^$' -- sh -c "'$MPT' witness '$tmp/wa.db' --keys '$tmp/wkeys.txt' | '$MPT' witness check - --root $root_a"
expect "witness DB: keys from stdin" 0 "\"keys\":\\[\"$addr1\",\"${z31}00\"" '^$' -- sh -c "'$MPT' witness '$tmp/wa.db' --keys - < '$tmp/wkeys.txt'"
expect "witness DB --canonical: keys sorted, each once" 0 "\"keys\":\\[\"${z31}00\",\"${z31}01\",\"${z31}02\",\"$addr1\",\"0x3000000000000000000000000000000000000003\"\\]" '^$' -- "$MPT" witness "$tmp/wa.db" --canonical --keys "$tmp/wkeys.txt" $addr1
expect "witness DB --header: checked with no --root" 0 ' 0 unresolved$' '^$' -- sh -c "'$MPT' witness '$tmp/wa.db' --keys '$tmp/wkeys.txt' --header '$tmp/wheader.hex' | '$MPT' witness check -"
expect "witness DB --rlp -o: geth's RLP" 0 'RLP \[headers, codes, state, keys\]' '^mpt: note: .*wa.rlp: 5 nodes \(5 for the reads, 0 more for the changes\), 1 code, 5 keys$' -- sh -c "'$MPT' witness '$tmp/wa.db' --keys '$tmp/wkeys.txt' --header '$tmp/wheader.hex' --rlp -o '$tmp/wa.rlp' && '$MPT' witness check --json '$tmp/wa.rlp'"
expect "witness DB --rlp to a pipe: binary" 0 '^witness: 5 nodes' '^$' -- sh -c "'$MPT' witness '$tmp/wa.db' --keys '$tmp/wkeys.txt' --rlp | '$MPT' witness check - --root $root_a"
expect "witness DB -q -o: no note" 0 '^$' '^$' -- "$MPT" -q witness "$tmp/wa.db" $addr1 -o "$tmp/wq.json"
expect "witness DB --changes: the collapse sibling too" 0 '^$' '^mpt: note: .*: 3 nodes \(2 for the reads, 1 more for the changes\), 1 code, 1 key; post-state root 0x[0-9a-f]{64}$' -- "$MPT" witness "$tmp/wa.db" $addr1 --changes "$tmp/wdel.json" -o "$tmp/wdel_w.json"
expect "witness apply: the root mpt update gives" 0 "^$del_root\$" '^$' -- "$MPT" witness apply "$tmp/wdel_w.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness apply: fields and slots, through the header" 0 "^$change_root\$" '^$' -- sh -c "'$MPT' witness '$tmp/wa.db' $addr1 0x1 0x7 --header '$tmp/wheader.hex' --changes '$tmp/wchange.json' | '$MPT' witness apply - --changes '$tmp/wchange.json'"
expect "witness apply --json" 0 "^\\{\"preRoot\":\"$root_a\",\"root\":\"$del_root\",\"shape\":\"changes\",\"accounts\":0,\"deleted\":1,\"slots\":0,\"ok\":true\\}\$" '^$' -- "$MPT" witness apply --json "$tmp/wdel_w.json" --changes "$tmp/wdel.json" --root $root_a
"$MPT" witness "$tmp/wa.db" $addr1 -o "$tmp/wreads.json" 2>/dev/null
expect "witness apply: the reads alone lack the sibling" 1 '^missing node 0x[0-9a-f]{64} at path [0-9a-f]+ of trie main: the changes need it$' '^$' -- "$MPT" witness apply "$tmp/wreads.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness apply --json: the missing node" 1 '^\{"preRoot":"0xf5bf7efc[0-9a-f]{56}","ok":false,"missing":\{"trie":"main","path":"[0-9a-f]+","hash":"0x[0-9a-f]{64}"\}\}$' '^$' -- "$MPT" witness apply --json "$tmp/wreads.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness apply: another root" 1 '^missing node 0x1{64} at path \(root\) of trie main' '^$' -- "$MPT" witness apply "$tmp/wdel_w.json" --changes "$tmp/wdel.json" --root 0x1111111111111111111111111111111111111111111111111111111111111111
expect "witness apply: no --changes" 2 '^$' 'usage: witness apply: --changes DOC is required' -- "$MPT" witness apply "$W"
expect "witness apply: malformed changes" 2 '^$' 'wbad.json' -- sh -c "echo '{' > '$tmp/wbad.json'; '$MPT' witness apply '$W' --changes '$tmp/wbad.json'"
expect "witness DB: a slot before any address" 2 '^$' 'slot 0x0{64} has no address before it to name its account' -- "$MPT" witness "$tmp/wa.db" 0x0 $addr1
expect "witness DB: no key" 2 '^$' 'usage: witness: no KEY and no --keys' -- "$MPT" witness "$tmp/wa.db"
expect "witness DB: a key that is no hex" 2 '^$' 'key 0xzz' -- "$MPT" witness "$tmp/wa.db" 0xzz
expect "witness DB: a bad line of --keys" 2 '^$' 'wkeys_bad.txt:2' -- sh -c "printf '$addr1\\n0xqq\\n' > '$tmp/wkeys_bad.txt'; '$MPT' witness '$tmp/wa.db' --keys '$tmp/wkeys_bad.txt'"
expect "witness DB: a header that is no header" 2 '^$' 'wbadheader.hex' -- sh -c "echo 0xc0 > '$tmp/wbadheader.hex'; '$MPT' witness '$tmp/wa.db' $addr1 --header '$tmp/wbadheader.hex'"
expect "witness DB: a file that is no state" 3 '^$' 'trie main is plain, not an account trie' -- sh -c "'$MPT' build '$FIX/dogs.json' -o '$tmp/wdogs.db' >/dev/null && '$MPT' witness '$tmp/wdogs.db' $addr1"
expect "witness DB: a missing file" 2 '^$' 'wnothere.db' -- "$MPT" witness "$tmp/wnothere.db" $addr1
expect "witness check: a flag of the make form" 2 '^$' 'usage: witness check: --rlp is not for this form' -- "$MPT" witness check "$W" --rlp
expect "witness DB: a flag of check" 2 '^$' 'usage: witness DB: --strict is not for this form' -- "$MPT" witness "$tmp/wa.db" $addr1 --strict
expect "witness: no operand" 2 '^$' 'usage' -- "$MPT" witness

# Node classes, check --changes, and two witnesses compared.
expect "witness check --changes: the post-state root" 0 "^changes: post-state root $del_root\$" '^$' -- "$MPT" witness check "$tmp/wdel_w.json" --changes "$tmp/wdel.json" --root $root_a
# Both on standard input: the witness is read first and takes it whole, as a stream is read
# once; the changes then find it empty. 4 MB of white space after the witness give a second
# reader of the stream the time to take part of it.
expect "witness check - --changes -: the witness reads standard input first" 2 '^$' '^mpt: error: malformed JSON: -: line 1, column 1: empty document; expected a value$' -- sh -c "(cat '$tmp/wdel_w.json'; head -c 4000000 /dev/zero | tr '\\0' ' ') | '$MPT' witness check - --changes - --root $root_a"
expect "witness check --changes: the node the changes need" 1 '^missing node 0x[0-9a-f]{64} at path [0-9a-f]+ of trie main: the changes need it$' '^$' -- "$MPT" witness check "$tmp/wreads.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness check --json: each node's class" 0 '"classes":\[\{"hash":"0xf5bf7efc[0-9a-f]{56}","class":"key path"\},\{"hash":"0x[0-9a-f]{64}","class":"changes"\},.*"changes":\{"root":"0x2957f382' '^$' -- "$MPT" witness check --json "$tmp/wdel_w.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness check --json: the changes' missing node" 1 '"changes":\{"missing":\{"trie":"main","path":"[0-9a-f]+","hash":"0x[0-9a-f]{64}"\}\}' '^$' -- "$MPT" witness check --json "$tmp/wreads.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness check --json: nodes reached by no key, and superfluous ones" 0 '"class":"reached".*"class":"superfluous"' '^$' -- "$MPT" witness check --json "$tmp/w_more.json"
expect "witness check --json: an absence proof" 0 '"classes":\[\{"hash":"0x[0-9a-f]{64}","class":"reached"\},\{"hash":"0x[0-9a-f]{64}","class":"reached"\},\{"hash":"0x[0-9a-f]{64}","class":"reached"\},\{"hash":"0xf5bf7efc[0-9a-f]{56}","class":"absence proof"\}' '^$' -- "$MPT" witness check --json "$tmp/w_absent.json"
expect "witness diff: the same witness" 0 '^witness diff: 0 nodes only in A, 0 only in B; 0 codes only in A, 0 only in B; keys resolve the same$' '^$' -- "$MPT" witness diff "$W" "$tmp/w4.rlp"
expect "witness diff: the collapse sibling one lacks" 0 '^- node 0x[0-9a-f]{64} \(changes\)$' '^$' -- "$MPT" witness diff "$tmp/wdel_w.json" "$tmp/wreads.json" --changes "$tmp/wdel.json" --root $root_a
expect "witness diff: keys resolved differently" 1 "^~ key 0x0{64} of $addr1: present 0x01 in A, unresolved in B\$" '^$' -- "$MPT" witness diff "$W" "$tmp/w_less.json"
expect "witness diff: a node and a code only in B" 0 '^\+ code 0xbc36789e' '^$' -- "$MPT" witness diff "$W" "$tmp/w_more.json"
expect "witness diff --json" 1 '^\{"rootA":"0xf5bf7efc[0-9a-f]{56}","rootB":"0xf5bf7efc[0-9a-f]{56}","onlyA":\{"nodes":\[\{"hash":"0x[0-9a-f]{64}","class":"key path"\}\],"codes":\[\],"keys":\[\]\},"onlyB":.*"same":false\}$' '^$' -- "$MPT" witness diff --json "$W" "$tmp/w_less.json"
expect "witness diff: another pre-state root" 1 '^pre-state roots differ: 0xf5bf7efc[0-9a-f]{56} in A, 0x1{64} in B$' '^$' -- "$MPT" witness diff "$W" "$tmp/w_otherroot.json"
expect "witness diff: one witness" 2 '^$' 'usage: witness diff: give two witness files' -- "$MPT" witness diff "$W"
expect "witness: a JSON header that is no RLP list" 2 '^$' 'headers\[0\].*not a header.s RLP \(one RLP list\)' -- sh -c "printf '{\"state\": [], \"headers\": [\"0x8180\"]}' | '$MPT' witness check -"

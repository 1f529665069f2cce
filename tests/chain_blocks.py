#!/usr/bin/env python3
"""Writes the blocks of a chain file (concatenated block RLP, as `geth export` writes it) as
JSON blocks in the shape of eth_getBlockByNumber's answer with full transactions, one per line:
the header's transactionsRoot and withdrawalsRoot, each transaction's fields named as JSON-RPC
names them (legacy, EIP-2930, EIP-1559, EIP-4844, EIP-7702) and the withdrawals.

    tests/chain_blocks.py CHAIN_RLP

A decoder apart from mpt's, written from the EIPs' field lists, so that `mpt root --block` of
its output checks mpt's encoder of each transaction type against the header's root."""
import json
import sys


def item(b, i):
    """(payload start, payload end, is_list) of the item at i."""
    p = b[i]
    if p < 0x80:
        return i, i + 1, False
    if p < 0xB8:
        return i + 1, i + 1 + p - 0x80, False
    if p < 0xC0:
        n = p - 0xB7
        size = int.from_bytes(b[i + 1 : i + 1 + n], "big")
        return i + 1 + n, i + 1 + n + size, False
    if p < 0xF8:
        return i + 1, i + 1 + p - 0xC0, True
    n = p - 0xF7
    size = int.from_bytes(b[i + 1 : i + 1 + n], "big")
    return i + 1 + n, i + 1 + n + size, True


def decode(b, i=0):
    """The item at i as bytes or a list, and where the next one starts."""
    start, end, is_list = item(b, i)
    if not is_list:
        return bytes(b[start:end]), end
    out = []
    j = start
    while j < end:
        v, j = decode(b, j)
        out.append(v)
    return out, end


def qty(v):
    return hex(int.from_bytes(v, "big"))


def data(v):
    return "0x" + v.hex()


def access_list(v):
    return [{"address": data(a), "storageKeys": [data(k) for k in keys]} for a, keys in v]


FEE_1559 = ["chainId", "nonce", "maxPriorityFeePerGas", "maxFeePerGas", "gas", "to", "value", "input"]
FIELDS = {
    1: ["chainId", "nonce", "gasPrice", "gas", "to", "value", "input", "accessList", "yParity", "r", "s"],
    2: FEE_1559 + ["accessList", "yParity", "r", "s"],
    3: FEE_1559 + ["accessList", "maxFeePerBlobGas", "blobVersionedHashes", "yParity", "r", "s"],
    4: FEE_1559 + ["accessList", "authorizationList", "yParity", "r", "s"],
}
LEGACY = ["nonce", "gasPrice", "gas", "to", "value", "input", "v", "r", "s"]
AUTH = ["chainId", "address", "nonce", "yParity", "r", "s"]


def named(names, values):
    out = {}
    for name, v in zip(names, values):
        if name in ("to", "input", "address"):
            out[name] = data(v) if v else None if name == "to" else "0x"
        elif name == "accessList":
            out[name] = access_list(v)
        elif name == "blobVersionedHashes":
            out[name] = [data(h) for h in v]
        elif name == "authorizationList":
            out[name] = [named(AUTH, a) for a in v]
        else:
            out[name] = qty(v)
    if len(values) != len(names):
        sys.exit(f"chain_blocks: {len(values)} fields, want {len(names)}")
    return out


def transaction(t):
    if isinstance(t, list):
        tx = named(LEGACY, t)
        tx["type"] = "0x0"
        return tx
    fields, _ = decode(t, 1)
    tx = named(FIELDS[t[0]], fields)
    tx["type"] = hex(t[0])
    tx["v"] = tx["yParity"]
    return tx


def main():
    chain = open(sys.argv[1], "rb").read()
    i = 0
    while i < len(chain):
        block, i = decode(chain, i)
        header = block[0]
        out = {
            "number": qty(header[8]),
            "transactionsRoot": data(header[4]),
            "receiptsRoot": data(header[5]),
            "transactions": [transaction(t) for t in block[1]],
        }
        if len(header) > 16:
            out["withdrawalsRoot"] = data(header[16])
            out["withdrawals"] = [
                dict(zip(["index", "validatorIndex", "address", "amount"],
                         [qty(w[0]), qty(w[1]), data(w[2]), qty(w[3])]))
                for w in block[3]
            ]
        print(json.dumps(out))


main()

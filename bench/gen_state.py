#!/usr/bin/env python3
"""Writes a geth genesis.json of N generated accounts, for bench/state_bench.sh.

    bench/gen_state.py N OUT [--code BYTES] [--slots K]

Account i: address = the first 20 bytes of sha256(b"account" + i as 8 bytes big-endian),
balance = i * 10^18 + 1 (decimal for even i, hex for odd i, as geth takes both), nonce = i
mod 1000, code = BYTES bytes (default 128) of sha256 chained from i, storage = K slots
(default 4): slot j (short keys, geth left-pads them) holds sha256 of (i, j) cut to 1 to 32
bytes. Deterministic: the same N gives the same file.
"""
import hashlib
import sys


def chain(seed, n):
    out = b""
    h = seed
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        out += h
    return out[:n]


def main(argv):
    args = [a for a in argv[1:]]
    code_len, slots = 128, 4
    if "--code" in args:
        i = args.index("--code")
        code_len = int(args[i + 1])
        del args[i : i + 2]
    if "--slots" in args:
        i = args.index("--slots")
        slots = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.stderr.write("usage: gen_state.py N OUT [--code BYTES] [--slots K]\n")
        return 2
    n, out = int(args[0]), args[1]
    parts = []
    for i in range(n):
        ib = i.to_bytes(8, "big")
        address = hashlib.sha256(b"account" + ib).digest()[:20].hex()
        balance = i * 10**18 + 1
        bal = str(balance) if i % 2 == 0 else hex(balance)
        code = chain(b"code" + ib, code_len).hex()
        storage = []
        for j in range(slots):
            v = hashlib.sha256(b"slot" + ib + j.to_bytes(4, "big")).digest()
            v = v[: 1 + (v[0] % 32)]
            storage.append('"0x%02x": "0x%s"' % (j + 1, v.hex()))
        parts.append(
            '    "%s": {"balance": "%s", "nonce": "0x%x", "code": "0x%s", "storage": {%s}}'
            % (address, bal, i % 1000, code, ", ".join(storage))
        )
    with open(out, "w") as f:
        f.write('{\n  "config": {"chainId": 1337},\n  "gasLimit": "0x1c9c380",\n')
        f.write('  "difficulty": "0x1",\n  "alloc": {\n')
        f.write(",\n".join(parts))
        f.write("\n  }\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

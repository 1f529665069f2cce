"""What a block changed, from a state before to a state after (BlockchainTests' pre and
postState), as the changes documents mpt update and mpt witness read: mpt's own shape and
geth's prestateTracer diff. Used by scripts/update-check.sh and scripts/witness-check.sh."""


def num(v):
    return int(v, 16) if isinstance(v, str) and v.lower().startswith("0x") else int(v or 0)


def code(a):
    c = (a.get("code") or "0x").lower()
    return c if c != "0x" else "0x"


def slots(a):
    return {num(k): num(v) for k, v in (a.get("storage") or {}).items() if num(v) != 0}


def differences(pre, post):
    """mpt's changes document and geth's prestateTracer diff from pre to post."""
    changes, tracer_pre, tracer_post = {}, {}, {}
    for address in sorted(set(pre) | set(post)):
        p, q = pre.get(address), post.get(address)
        if q is None:
            changes[address] = None
            tracer_pre[address] = {"balance": hex(num(p.get("balance"))),
                                   "nonce": num(p.get("nonce")), "code": code(p),
                                   "storage": {"0x%064x" % k: "0x%064x" % v
                                               for k, v in slots(p).items()}}
            continue
        fields, moved = {}, {}
        for name in ("balance", "nonce"):
            if p is None or num(p.get(name)) != num(q.get(name)):
                fields[name] = hex(num(q.get(name)))
        if p is None or code(p) != code(q):
            fields["code"] = code(q)
        ps, qs = slots(p) if p else {}, slots(q)
        for k in sorted(set(ps) | set(qs)):
            if ps.get(k, 0) != qs.get(k, 0):
                moved[k] = qs.get(k, 0)
        if p is not None and not fields and not moved:
            continue
        account = dict(fields)
        if moved:
            account["storage"] = {hex(k): hex(v) for k, v in moved.items()}
        changes[address] = account
        after = {n: (num(v) if n == "nonce" else v) for n, v in fields.items()}
        changed_slots = {"0x%064x" % k: "0x%064x" % v for k, v in moved.items() if v != 0}
        if changed_slots:
            after["storage"] = changed_slots
        tracer_post[address] = after
        if p is not None:
            tracer_pre[address] = {"balance": hex(num(p.get("balance"))),
                                   "nonce": num(p.get("nonce")), "code": code(p),
                                   "storage": {"0x%064x" % k: "0x%064x" % ps[k]
                                               for k in moved if ps.get(k, 0) != 0}}
    return changes, {"pre": tracer_pre, "post": tracer_post}

"""clio_dispatch_check: the engine's S_DISPATCH verdict against a Python reference of the
model's operand checks: every opcode byte, each check's boundary (payload and offset,
the response bound at and one past it, wrapping ranges, the atomic lengths and
alignment, the forwarding state) and random inputs biased to the boundaries."""

import random

import cocotb
from cocotb.triggers import Timer

from clio_tb import PKG as P

ATOMICS = {P["OP_TAS"], P["OP_CAS"], P["OP_FAA"], P["OP_LOCK"], P["OP_UNLOCK"]}
FORWARDED = {P["OP_ALLOC"], P["OP_FREE"], P["OP_CLOSE_SESSION"]}
OUTS = ("read", "write", "wr_setup", "atomic", "fence", "chase", "cf")
NOMINAL = dict(op=0, plen=0, offset=0, total_len=64, va_low=0, rd_wraps=0, wr_wraps=0, max_resp_kib=0,
               fw_pending=0, fw_fence_free=0, fw_free=1, cq_ok=1, fa_ok=1)


def reference(i):
    """(fail status or None, the set of outputs raised) for inputs i."""
    op = i["op"]
    if op == P["OP_READ"]:
        if i["plen"] != 0 or i["offset"] != 0:
            return P["STATUS_MALFORMED"], set()
        if i["max_resp_kib"] != 0 and i["total_len"] > i["max_resp_kib"] * 1024:
            return P["STATUS_TOO_LARGE"], set()
        if i["rd_wraps"]:
            return P["STATUS_UNMAPPED"], set()
        return None, {"read"}
    if op == P["OP_WRITE"]:
        return (P["STATUS_UNMAPPED"], {"wr_setup"}) if i["wr_wraps"] else (None, {"write", "wr_setup"})
    if op in ATOMICS:
        want_plen = {P["OP_CAS"]: P["CAS_ARGS_LEN"], P["OP_FAA"]: P["FAA_ARGS_LEN"]}.get(op, 0)
        if (i["plen"] != want_plen or i["total_len"] != P["ATOMIC_RESP_LEN"] or i["offset"] != 0
                or i["va_low"] != 0):
            return P["STATUS_MALFORMED"], set()
        return None, {"atomic"}
    if op == P["OP_FENCE"]:
        if not i["fw_pending"]:
            return P["STATUS_OK"], set()
        return (None, {"fence"}) if i["fw_fence_free"] else (P["STATUS_BUSY"], set())
    if op == P["OP_POINTER_CHASE"]:
        return (None, {"chase"}) if i["cq_ok"] else (P["STATUS_MALFORMED"], set())
    if op in FORWARDED:
        if not i["fa_ok"]:
            return P["STATUS_MALFORMED"], set()
        return (None, {"cf"}) if i["fw_free"] else (P["STATUS_BUSY"], set())
    return P["STATUS_UNSUPPORTED"], set()


async def check(dut, i, seen):
    for k, v in i.items():
        getattr(dut, "s_" + k).value = v
    await Timer(1, unit="ns")
    status, raised = reference(i)
    got_fail = int(dut.m_fail.value)
    got = {o for o in OUTS if int(getattr(dut, "m_" + o).value)}
    assert got_fail == (status is not None), f"{i}: fail {got_fail}, want status {status}"
    if status is not None:
        assert int(dut.m_status.value) == status, f"{i}: status {int(dut.m_status.value)}, want {status}"
    assert got == raised, f"{i}: raised {sorted(got)}, want {sorted(raised)}"
    seen.add((i["op"] if i["op"] <= P["OP_CLOSE_SESSION"] else -1, status, tuple(sorted(raised))))


def edge_cases():
    """Each opcode byte at the nominal point, then each check's boundary per opcode."""
    for op in range(256):
        yield dict(NOMINAL, op=op)
    bound = 8
    for plen, offset, total, kib, wraps in [(0, 0, bound * 1024, bound, 0), (0, 0, bound * 1024 + 1, bound, 0),
                                            (0, 0, 0xFFFFFFFF, 0, 0), (1, 0, 64, 0, 0), (0, 1, 64, 0, 0),
                                            (0, 0, 64, 0, 1), (0, 1, bound * 1024 + 1, bound, 1),
                                            (0, 0, bound * 1024 + 1, bound, 1), (0, 0, 0xFFFFFFFF, 0xFFFF, 0)]:
        yield dict(NOMINAL, op=P["OP_READ"], plen=plen, offset=offset, total_len=total, max_resp_kib=kib,
                   rd_wraps=wraps)
    for wraps in (0, 1):
        yield dict(NOMINAL, op=P["OP_WRITE"], plen=100, offset=7, wr_wraps=wraps)
    for op in ATOMICS:
        good = {P["OP_CAS"]: P["CAS_ARGS_LEN"], P["OP_FAA"]: P["FAA_ARGS_LEN"]}.get(op, 0)
        base = dict(NOMINAL, op=op, plen=good, total_len=P["ATOMIC_RESP_LEN"])
        yield base
        for k, v in [("plen", good + 1), ("plen", max(good - 1, 0) if good else 8), ("total_len", 7),
                     ("total_len", 9), ("offset", 1), ("va_low", 4), ("va_low", 1)]:
            yield dict(base, **{k: v})
    for pending in (0, 1):
        for free in (0, 1):
            yield dict(NOMINAL, op=P["OP_FENCE"], fw_pending=pending, fw_fence_free=free)
    for ok in (0, 1):
        yield dict(NOMINAL, op=P["OP_POINTER_CHASE"], cq_ok=ok)
    for op in FORWARDED:
        for ok in (0, 1):
            for free in (0, 1):
                yield dict(NOMINAL, op=op, fa_ok=ok, fw_free=free)


def random_inputs(rng, n):
    ops = sorted(ATOMICS | FORWARDED | {P["OP_READ"], P["OP_WRITE"], P["OP_FENCE"], P["OP_POINTER_CHASE"]})
    for _ in range(n):
        kib = rng.choice([0, 0, 1, 8, 64, 0xFFFF, rng.randrange(1 << 16)])
        yield dict(
            op=rng.choice(ops) if rng.random() < 0.9 else rng.randrange(256),
            plen=rng.choice([0, 0, P["CAS_ARGS_LEN"], P["FAA_ARGS_LEN"], 1, rng.randrange(1 << 16)]),
            offset=rng.choice([0, 0, 0, 1, rng.randrange(1 << 32)]),
            total_len=rng.choice([P["ATOMIC_RESP_LEN"], kib * 1024, kib * 1024 + 1, kib * 1024 - 1 if kib else 0,
                                  rng.randrange(1 << 32)]) & 0xFFFFFFFF,
            va_low=rng.choice([0, 0, rng.randrange(8)]),
            max_resp_kib=kib,
            **{k: int(rng.random() < 0.5) for k in ("rd_wraps", "wr_wraps", "fw_pending", "fw_fence_free",
                                                     "fw_free", "cq_ok", "fa_ok")},
        )


@cocotb.test()
async def edges_and_random(dut):
    """The verdict matches the reference; every verdict of every opcode occurs."""
    seen = set()
    for i in edge_cases():
        await check(dut, i, seen)
    for i in random_inputs(random.Random(21), 20000):
        await check(dut, i, seen)
    verdicts = {(op, st) for op, st, _ in seen}
    for op, st in [(P["OP_READ"], None), (P["OP_READ"], P["STATUS_MALFORMED"]),
                   (P["OP_READ"], P["STATUS_TOO_LARGE"]), (P["OP_READ"], P["STATUS_UNMAPPED"]),
                   (P["OP_WRITE"], None), (P["OP_WRITE"], P["STATUS_UNMAPPED"]),
                   (P["OP_FENCE"], None), (P["OP_FENCE"], P["STATUS_OK"]), (P["OP_FENCE"], P["STATUS_BUSY"]),
                   (P["OP_POINTER_CHASE"], None), (P["OP_POINTER_CHASE"], P["STATUS_MALFORMED"]),
                   (-1, P["STATUS_UNSUPPORTED"]), (0, P["STATUS_UNSUPPORTED"])] + \
            [(op, st) for op in ATOMICS for st in (None, P["STATUS_MALFORMED"])] + \
            [(op, st) for op in FORWARDED for st in (None, P["STATUS_MALFORMED"], P["STATUS_BUSY"])]:
        assert (op, st) in verdicts, f"not covered: op {op} status {st}"

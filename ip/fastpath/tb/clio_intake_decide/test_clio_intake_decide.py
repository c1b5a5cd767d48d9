"""clio_intake_decide: the engine's S_DECIDE verdict against a Python reference of the
model's intake order: each decision at its boundary (a runt at 55 and 56 bytes, a payload
at the MTU and one past it, INFO's length one short, PID 0, the maximum and one past it,
flags beside FIXED_VA, each opcode), one decision over another where both apply, and
random inputs biased to the boundaries; every verdict covered."""

import random

import cocotb
from cocotb.triggers import Timer

from clio_tb import PKG as P
from tb_base import param

OUTS = ("drop", "nack", "hdr_bad", "fail", "epoch", "admit", "info", "open", "cf_match", "cf_gt", "cf_of",
        "rd_fast", "dd_look", "dispatch")
FLAGS = ("short", "crc", "malformed", "unknown", "epoch_ok", "sess_ok", "fence_wait", "gt_refuse", "gt_track",
         "rd_fast", "nonidem", "late_dup")
HDR = P["CLIO_HEADER_LEN"]
NOMINAL = dict(len=HDR + 64, short=0, crc=0, op=P["OP_READ"], malformed=0, unknown=0, epoch_ok=1, sess_ok=1,
               status=0, flags=0, plen=0, mtu=1500, pid=5, max_pid=100, fence_wait=0, gt_refuse=0,
               gt_status=P["STATUS_MOVED"], gt_track=0, rd_fast=0, nonidem=0, late_dup=0)


def reference(i, of_on):
    """(the set of outputs raised, the status or None)."""
    op = i["op"]
    needs_sess = op not in (P["OP_INFO"], P["OP_OPEN_SESSION"])
    if i["len"] < HDR:
        return {"drop"}, None
    if i["short"] or i["crc"]:
        return {"nack"}, P["STATUS_CORRUPT"]
    if op & P["OP_RESPONSE_BIT"]:
        return {"drop"}, None
    if i["malformed"]:
        return {"hdr_bad"}, P["STATUS_UNSUPPORTED"] if i["unknown"] else P["STATUS_MALFORMED"]
    if needs_sess and not i["epoch_ok"]:
        return {"fail", "epoch"}, P["STATUS_RESTARTED"]
    if needs_sess and not i["sess_ok"]:
        return {"fail"}, P["STATUS_BAD_SESSION"]
    a = {"admit"}
    if i["status"] != 0 or i["flags"] & ~P["FLAG_FIXED_VA"] & 0xFF or i["plen"] > i["mtu"]:
        return a | {"fail"}, P["STATUS_MALFORMED"]
    if op == P["OP_INFO"]:
        if i["plen"] < P["INFO_RESP_LEN"]:
            return a | {"fail"}, P["STATUS_MALFORMED"]
        return a | {"info", "epoch"}, None
    if op == P["OP_OPEN_SESSION"]:
        return a | {"open"}, None
    if i["pid"] == 0 or i["pid"] > i["max_pid"]:
        return a | {"fail"}, P["STATUS_BAD_PID"]
    if op in (P["OP_ALLOC"], P["OP_FREE"], P["OP_CLOSE_SESSION"]):
        return a | {"cf_match"}, None
    if i["fence_wait"]:
        return a | {"fail"}, P["STATUS_BUSY"]
    if i["gt_refuse"]:
        return a | {"fail"}, i["gt_status"]
    if i["gt_track"]:
        return a | {"cf_gt"}, None
    if i["rd_fast"]:
        return a | {"rd_fast"}, None
    if of_on and op == P["OP_OFFLOAD_CALL"]:
        return a | {"cf_of"}, None
    if i["nonidem"]:
        return a | ({"drop"} if i["late_dup"] else {"dd_look"}), None
    return a | {"dispatch"}, None


async def check(dut, i, of_on, seen):
    for k, v in i.items():
        getattr(dut, "s_" + k).value = v
    await Timer(1, unit="ns")
    raised, status = reference(i, of_on)
    got = {o for o in OUTS if int(getattr(dut, "m_" + o).value)}
    assert got == raised, f"{i}: raised {sorted(got)}, want {sorted(raised)}"
    if status is not None:
        assert int(dut.m_status.value) == status, f"{i}: status {int(dut.m_status.value)}, want {status}"
    seen.add((tuple(sorted(raised)), status))


def edge_cases():
    yield NOMINAL
    for n in (0, HDR - 1, HDR):
        yield dict(NOMINAL, len=n, crc=1)
    for op in range(256):
        yield dict(NOMINAL, op=op)
        yield dict(NOMINAL, op=op, epoch_ok=0)
        yield dict(NOMINAL, op=op, sess_ok=0, plen=P["INFO_RESP_LEN"])
        yield dict(NOMINAL, op=op, plen=P["INFO_RESP_LEN"])
        yield dict(NOMINAL, op=op, nonidem=1, late_dup=1)
    for k, v in [("short", 1), ("crc", 1), ("malformed", 1), ("status", 1), ("flags", P["FLAG_FIXED_VA"]),
                 ("flags", 0x80), ("plen", 1500), ("plen", 1501), ("pid", 0), ("pid", 100), ("pid", 101),
                 ("pid", 0xFFFFFFFF), ("fence_wait", 1), ("gt_refuse", 1), ("gt_track", 1), ("rd_fast", 1),
                 ("nonidem", 1)]:
        yield dict(NOMINAL, **{k: v})
    yield dict(NOMINAL, malformed=1, unknown=1)
    for plen in (P["INFO_RESP_LEN"] - 1, P["INFO_RESP_LEN"]):
        yield dict(NOMINAL, op=P["OP_INFO"], plen=plen, epoch_ok=0, sess_ok=0)
    # One decision over the next where both apply.
    yield dict(NOMINAL, fence_wait=1, gt_refuse=1, gt_track=1, rd_fast=1, nonidem=1)
    yield dict(NOMINAL, gt_refuse=1, gt_status=P["STATUS_BUSY"], gt_track=1)
    yield dict(NOMINAL, gt_track=1, rd_fast=1)
    yield dict(NOMINAL, op=P["OP_OFFLOAD_CALL"], rd_fast=1)
    yield dict(NOMINAL, op=P["OP_OFFLOAD_CALL"], nonidem=1)


def random_inputs(rng, n):
    ops = [P["OP_READ"], P["OP_WRITE"], P["OP_INFO"], P["OP_OPEN_SESSION"], P["OP_ALLOC"], P["OP_FREE"],
           P["OP_CLOSE_SESSION"], P["OP_OFFLOAD_CALL"], P["OP_TAS"], P["OP_FENCE"]]
    for _ in range(n):
        mtu = rng.choice([1500, 9000, rng.randrange(1 << 16)])
        max_pid = rng.choice([1, 100, rng.randrange(1 << 32)])
        i = dict(
            len=rng.choice([HDR - 1, HDR, HDR + 64, rng.randrange(1 << 16)]),
            op=rng.choice(ops) if rng.random() < 0.85 else rng.randrange(256),
            status=rng.choice([0, 0, 0, rng.randrange(256)]),
            flags=rng.choice([0, 0, P["FLAG_FIXED_VA"], rng.randrange(256)]),
            plen=rng.choice([0, P["INFO_RESP_LEN"] - 1, P["INFO_RESP_LEN"], mtu, (mtu + 1) & 0xFFFF,
                             rng.randrange(1 << 16)]),
            mtu=mtu,
            pid=rng.choice([0, 1, max_pid, (max_pid + 1) & 0xFFFFFFFF, rng.randrange(1 << 32)]),
            max_pid=max_pid,
            gt_status=rng.choice([P["STATUS_BUSY"], P["STATUS_MOVED"]]),
        )
        for k in FLAGS:
            i[k] = int(rng.random() < (0.9 if k in ("epoch_ok", "sess_ok") else 0.12))
        yield i


@cocotb.test()
async def edges_and_random(dut):
    """The verdict matches the reference; every verdict occurs."""
    of_on = param(dut, "OF_ON")
    seen = set()
    for i in edge_cases():
        await check(dut, i, of_on, seen)
    for i in random_inputs(random.Random(21), 20000):
        await check(dut, i, of_on, seen)
    want = [(("drop",), None), (("nack",), P["STATUS_CORRUPT"]), (("hdr_bad",), P["STATUS_UNSUPPORTED"]),
            (("hdr_bad",), P["STATUS_MALFORMED"]), (("epoch", "fail"), P["STATUS_RESTARTED"]),
            (("fail",), P["STATUS_BAD_SESSION"]), (("admit", "fail"), P["STATUS_MALFORMED"]),
            (("admit", "epoch", "info"), None), (("admit", "open"), None),
            (("admit", "fail"), P["STATUS_BAD_PID"]), (("admit", "cf_match"), None),
            (("admit", "fail"), P["STATUS_BUSY"]), (("admit", "fail"), P["STATUS_MOVED"]),
            (("admit", "cf_gt"), None), (("admit", "rd_fast"), None), (("admit", "drop"), None),
            (("admit", "dd_look"), None), (("admit", "dispatch"), None)]
    if of_on:
        want.append((("admit", "cf_of"), None))
    for w in want:
        assert w in seen, f"not covered: {w}"

"""clio_fwd_table against a model of the reference `Pending` slots and fences
(ip/fastpath/src/control.rs): lowest free slot, tags with generations that
advance on release, re-target matching on the current and the first id,
per-PID pending and fence queries, lowest fence of a PID first."""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from clio_tb import reset

OPS = (1, 2)  # ALLOC, FREE


class Model:
    def __init__(self, n, nf):
        self.live = [False] * n
        self.gen = [0] * n
        self.req = [None] * n  # (pid, op, req_id, retry_of, va, total_len, offset)
        self.first = [0] * n
        self.fences = [None] * nf  # (pid, req_id, retry_of, va, total_len, offset)

    def match(self, pid, op, req_id, retry_of):
        for i, r in enumerate(self.req):
            if not self.live[i] or r[0] != pid or r[1] != op:
                continue
            if r[2] == req_id or (retry_of != 0 and (r[2] == retry_of or self.first[i] == retry_of)):
                return i
        return None

    def pending(self, pid):
        return any(self.live[i] and self.req[i][0] == pid for i in range(len(self.live)))

    def free(self):
        return next((i for i, l in enumerate(self.live) if not l), None)

    def fence_of(self, pid):
        return next((i for i, f in enumerate(self.fences) if f and f[0] == pid), None)

    def fence_free(self):
        return next((i for i, f in enumerate(self.fences) if f is None), None)


def idle_inputs(dut):
    for s in ("s_set", "s_set_new", "s_release", "s_fence_set", "s_fence_clear"):
        getattr(dut, s).value = 0


def drive_request(dut, r):
    (dut.s_pid.value, dut.s_opcode.value, dut.s_req_id.value, dut.s_retry_of.value,
     dut.s_va.value, dut.s_total_len.value, dut.s_offset.value) = r


async def check_queries(dut, m, rng):
    """Random queries agree with the model (combinational outputs)."""
    for _ in range(8):
        pid = rng.randrange(1, 4)
        op = rng.choice(OPS)
        rid = rng.randrange(1, 12)
        rof = rng.choice([0, rng.randrange(1, 12)])
        dut.q_pid.value, dut.q_opcode.value, dut.q_req_id.value, dut.q_retry_of.value = pid, op, rid, rof
        slot = rng.randrange(len(m.live) + 2)
        g = m.gen[slot] if slot < len(m.live) else 0
        tag = ((g + (1 if rng.random() < 0.2 else 0)) & 0xFFFF) << 16 | slot
        dut.s_tag.value = tag
        await Timer(1, unit="ns")
        want = m.match(pid, op, rid, rof)
        assert bool(dut.m_match.value) == (want is not None), (pid, op, rid, rof)
        if want is not None:
            assert int(dut.m_match_index.value) == want
        assert bool(dut.m_pending.value) == m.pending(pid)
        f = m.free()
        assert bool(dut.m_free.value) == (f is not None)
        if f is not None:
            assert int(dut.m_free_index.value) == f
            assert int(dut.m_free_gen.value) == m.gen[f]
        ok = slot < len(m.live) and m.live[slot] and (tag >> 16) == m.gen[slot]
        assert bool(dut.m_tag_ok.value) == ok, hex(tag)
        if ok:
            r = m.req[slot]
            got = (int(dut.m_pid.value), int(dut.m_opcode.value), int(dut.m_req_id.value),
                   int(dut.m_retry_of.value), int(dut.m_va.value), int(dut.m_total_len.value),
                   int(dut.m_offset.value))
            assert got == r
            assert int(dut.m_first_req_id.value) == m.first[slot]
        fi = m.fence_of(pid)
        assert bool(dut.m_fence_wait.value) == (fi is not None)
        if fi is not None:
            assert int(dut.m_fence_index.value) == fi
            fr = m.fences[fi]
            got = (int(dut.m_fence_req_id.value), int(dut.m_fence_retry_of.value), int(dut.m_fence_va.value),
                   int(dut.m_fence_total_len.value), int(dut.m_fence_offset.value))
            assert got == fr[1:]
        assert bool(dut.m_fence_any.value) == any(x is not None for x in m.fences)
        ff = m.fence_free()
        assert bool(dut.m_fence_free.value) == (ff is not None)
        if ff is not None:
            assert int(dut.m_fence_free_index.value) == ff


@cocotb.test()
async def random_against_model(dut):
    """Random inserts, re-targets, releases and fences agree with the model; generations wrap."""
    n = int(dut.SLOTS.value)
    nf = int(dut.FENCES.value)
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    idle_inputs(dut)
    await reset(dut)
    m = Model(n, nf)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    counts = {"insert": 0, "retarget": 0, "release": 0, "fence": 0}
    for _ in range(3000):
        # Queries take several ns: no update may be driven across a clock edge.
        await check_queries(dut, m, rng)
        r = (rng.randrange(1, 4), rng.choice(OPS), rng.randrange(1, 12), rng.choice([0, rng.randrange(1, 12)]),
             rng.getrandbits(64), rng.getrandbits(32), rng.getrandbits(32))
        drive_request(dut, r)
        act = rng.random()
        live = [i for i in range(n) if m.live[i]]
        if 0.3 <= act < 0.45 and live:
            # A repeat (same id) or a retry (of the current or the first id) of a waiting request.
            q = m.req[rng.choice(live)]
            j = rng.randrange(3)
            rid = q[2] if j == 0 else rng.randrange(1, 12)
            rof = 0 if j == 0 else (q[2] if j == 1 else m.first[live[0]])
            r = (q[0], q[1], rid, rof) + r[4:]
            drive_request(dut, r)
        if act < 0.3 and m.free() is not None:
            i = m.free()
            dut.s_set.value, dut.s_set_new.value, dut.s_set_index.value = 1, 1, i
            m.live[i], m.req[i], m.first[i] = True, r, r[2]
            counts["insert"] += 1
        elif act < 0.45 and m.match(*r[:4]) is not None:
            i = m.match(*r[:4])
            dut.s_set.value, dut.s_set_new.value, dut.s_set_index.value = 1, 0, i
            m.req[i] = r
            counts["retarget"] += 1
        elif act < 0.75:
            i = rng.randrange(n)
            if m.live[i]:
                dut.s_release.value, dut.s_release_index.value = 1, i
                m.live[i] = False
                m.gen[i] = (m.gen[i] + 1) & 0xFFFF
                counts["release"] += 1
        elif act < 0.87 and m.fence_free() is not None:
            i = m.fence_free()
            dut.s_fence_set.value, dut.s_fence_set_index.value = 1, i
            m.fences[i] = (r[0], r[2], r[3], r[4], r[5], r[6])
            counts["fence"] += 1
        else:
            i = rng.randrange(nf)
            if m.fences[i] is not None:
                dut.s_fence_clear.value, dut.s_fence_clear_index.value = 1, i
                m.fences[i] = None
        await RisingEdge(dut.clk)
        idle_inputs(dut)
        await Timer(1, unit="ns")
    for k, v in counts.items():
        assert v > 50, f"too few {k}: {counts}"
    dut._log.info("%s", counts)


@cocotb.test()
async def generation_wraps(dut):
    """A slot released 65 536 times is back at generation 0; a stale tag never matches."""
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    idle_inputs(dut)
    await reset(dut)
    drive_request(dut, (1, 1, 5, 0, 0, 0, 0))
    for k in range(1 << 16):
        dut.s_set.value, dut.s_set_new.value, dut.s_set_index.value = 1, 1, 0
        dut.s_release.value = 0
        await RisingEdge(dut.clk)
        dut.s_set.value = 0
        dut.s_release.value, dut.s_release_index.value = 1, 0
        if k in (0, 65535):
            dut.s_tag.value = (k << 16) | 0
            await Timer(1, unit="ns")
            assert dut.m_tag_ok.value == 1
            dut.s_tag.value = (((k + 1) & 0xFFFF) << 16) | 0
            await Timer(1, unit="ns")
            assert dut.m_tag_ok.value == 0
        await RisingEdge(dut.clk)
    idle_inputs(dut)
    await Timer(1, unit="ns")
    assert int(dut.m_free_gen.value) == 0

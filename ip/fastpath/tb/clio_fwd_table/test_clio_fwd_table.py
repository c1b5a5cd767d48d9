"""clio_fwd_table against a model of the reference `Pending` slots and fences
(ip/fastpath/src/control.rs): lowest free slot, tags with generations that
start at 1 and advance on release skipping 0 (no tag is 0), re-target
matching on (session, opcode, first id) never for session 0, orphans of a
closed session or of a new epoch, per-PID pending and fence queries, lowest
fence of a PID first."""

import random

import cocotb
from cocotb.triggers import RisingEdge, Timer

from clio_tb import reset, start_clock

OPS = (1, 2, 15)  # ALLOC, FREE, CLOSE_SESSION


class Model:
    def __init__(self, n, nf):
        self.live = [False] * n
        self.gen = [1] * n
        # (pid, op, req_id, retry_of, va, total_len, offset, session, epoch)
        self.req = [None] * n
        self.first = [0] * n
        self.dds = [0] * n  # session for matching and records; 0 = orphan
        self.fences = [None] * nf  # (pid, req_id, retry_of, va, total_len, offset, session, epoch)

    def match(self, session, op, qid):
        for i, r in enumerate(self.req):
            if self.live[i] and self.dds[i] != 0 and self.dds[i] == session and r[1] == op \
                    and self.first[i] == qid:
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
    for s in ("s_set", "s_set_new", "s_release", "s_fence_set", "s_fence_clear", "s_orphan", "s_orphan_all"):
        getattr(dut, s).value = 0


def drive_request(dut, r, first, dds):
    (dut.s_pid.value, dut.s_opcode.value, dut.s_req_id.value, dut.s_retry_of.value,
     dut.s_va.value, dut.s_total_len.value, dut.s_offset.value, dut.s_session.value,
     dut.s_epoch.value) = r
    dut.s_first.value, dut.s_dd_session.value = first, dds


async def check_queries(dut, m, rng):
    """Random queries agree with the model (combinational outputs)."""
    for _ in range(8):
        pid = rng.randrange(1, 4)
        op = rng.choice(OPS)
        session = rng.randrange(0, 4)
        qid = rng.randrange(1, 12)
        dut.q_pid.value, dut.q_session.value, dut.q_opcode.value, dut.q_id.value = pid, session, op, qid
        slot = rng.randrange(len(m.live) + 2)
        g = m.gen[slot] if slot < len(m.live) else 1
        tag = ((g + (1 if rng.random() < 0.2 else 0)) & 0xFFFF) << 16 | slot
        dut.s_tag.value = tag
        await Timer(1, unit="ns")
        want = m.match(session, op, qid)
        assert bool(dut.m_match.value) == (want is not None), (session, op, qid)
        if want is not None:
            assert int(dut.m_match_index.value) == want
        assert bool(dut.m_pending.value) == m.pending(pid)
        f = m.free()
        assert bool(dut.m_free.value) == (f is not None)
        if f is not None:
            assert int(dut.m_free_index.value) == f
            assert int(dut.m_free_gen.value) == m.gen[f] != 0
        ok = slot < len(m.live) and m.live[slot] and (tag >> 16) == m.gen[slot]
        assert bool(dut.m_tag_ok.value) == ok, hex(tag)
        if ok:
            r = m.req[slot]
            got = (int(dut.m_pid.value), int(dut.m_opcode.value), int(dut.m_req_id.value),
                   int(dut.m_retry_of.value), int(dut.m_va.value), int(dut.m_total_len.value),
                   int(dut.m_offset.value), int(dut.m_session.value), int(dut.m_epoch.value))
            assert got == r
            assert int(dut.m_first_req_id.value) == m.first[slot]
            assert int(dut.m_dd_session.value) == m.dds[slot]
        fi = m.fence_of(pid)
        assert bool(dut.m_fence_wait.value) == (fi is not None)
        if fi is not None:
            assert int(dut.m_fence_index.value) == fi
            fr = m.fences[fi]
            got = (int(dut.m_fence_req_id.value), int(dut.m_fence_retry_of.value), int(dut.m_fence_va.value),
                   int(dut.m_fence_total_len.value), int(dut.m_fence_offset.value),
                   int(dut.m_fence_session.value), int(dut.m_fence_epoch.value))
            assert got == fr[1:]
        assert bool(dut.m_fence_any.value) == any(x is not None for x in m.fences)
        ff = m.fence_free()
        assert bool(dut.m_fence_free.value) == (ff is not None)
        if ff is not None:
            assert int(dut.m_fence_free_index.value) == ff


@cocotb.test()
async def random_against_model(dut):
    """Random inserts, re-targets, releases, orphans and fences agree with the model."""
    n = int(dut.SLOTS.value)
    nf = int(dut.FENCES.value)
    start_clock(dut)
    idle_inputs(dut)
    await reset(dut)
    m = Model(n, nf)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    counts = {"insert": 0, "retarget": 0, "release": 0, "fence": 0, "orphan": 0}
    for _ in range(3000):
        # Queries take several ns: no update may be driven across a clock edge.
        await check_queries(dut, m, rng)
        session = rng.randrange(0, 4)
        r = (rng.randrange(1, 4), rng.choice(OPS), rng.randrange(1, 12), rng.choice([0, rng.randrange(1, 12)]),
             rng.getrandbits(64), rng.getrandbits(32), rng.getrandbits(32), session, rng.getrandbits(32))
        first = r[3] if r[3] else r[2]
        drive_request(dut, r, first, session)
        act = rng.random()
        live = [i for i in range(n) if m.live[i]]
        if 0.3 <= act < 0.45 and live:
            # A repeat or a retry of a waiting request: same session, opcode, first id.
            i = rng.choice(live)
            q = m.req[i]
            rof = m.first[i] if rng.random() < 0.7 else 0
            rid = rng.randrange(1, 12) if rof else m.first[i]
            r = (q[0], q[1], rid, rof) + r[4:7] + (m.dds[i], r[8])
            first = rof if rof else rid
            drive_request(dut, r, first, r[7])
        if act < 0.3 and m.free() is not None:
            i = m.free()
            dut.s_set.value, dut.s_set_new.value, dut.s_set_index.value = 1, 1, i
            m.live[i], m.req[i], m.first[i], m.dds[i] = True, r, first, r[7]
            counts["insert"] += 1
        elif act < 0.45 and m.match(r[7], r[1], first) is not None:
            i = m.match(r[7], r[1], first)
            dut.s_set.value, dut.s_set_new.value, dut.s_set_index.value = 1, 0, i
            m.req[i] = r
            counts["retarget"] += 1
        elif act < 0.70:
            i = rng.randrange(n)
            if m.live[i]:
                dut.s_release.value, dut.s_release_index.value = 1, i
                m.live[i] = False
                m.gen[i] = 1 if m.gen[i] == 0xFFFF else m.gen[i] + 1
                counts["release"] += 1
        elif act < 0.75:
            # A session closes (or, rarely, a new epoch): its requests become orphans.
            every = rng.random() < 0.1
            s = rng.randrange(0, 4)
            dut.s_orphan.value, dut.s_orphan_all.value, dut.s_orphan_session.value = 1, int(every), s
            for i in range(n):
                if every or m.dds[i] == s:
                    m.dds[i] = 0
            counts["orphan"] += 1
        elif act < 0.87 and m.fence_free() is not None:
            i = m.fence_free()
            dut.s_fence_set.value, dut.s_fence_set_index.value = 1, i
            m.fences[i] = (r[0], r[2], r[3], r[4], r[5], r[6], r[7], r[8])
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
    """A slot released 65 535 times is back at generation 1 (0 is skipped); a stale tag never matches."""
    start_clock(dut)
    idle_inputs(dut)
    await reset(dut)
    drive_request(dut, (1, 1, 5, 0, 0, 0, 0, 1, 0), 5, 1)
    gen = 1
    for k in range(65535):
        dut.s_set.value, dut.s_set_new.value, dut.s_set_index.value = 1, 1, 0
        dut.s_release.value = 0
        await RisingEdge(dut.clk)
        dut.s_set.value = 0
        dut.s_release.value, dut.s_release_index.value = 1, 0
        if k in (0, 65533, 65534):
            dut.s_tag.value = (gen << 16) | 0
            await Timer(1, unit="ns")
            assert dut.m_tag_ok.value == 1
            dut.s_tag.value = 0
            await Timer(1, unit="ns")
            assert dut.m_tag_ok.value == 0, "tag 0 never names a request"
        await RisingEdge(dut.clk)
        gen = 1 if gen == 0xFFFF else gen + 1
    idle_inputs(dut)
    await Timer(1, unit="ns")
    assert int(dut.m_free_gen.value) == 1

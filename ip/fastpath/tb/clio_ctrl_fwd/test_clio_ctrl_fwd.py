"""clio_ctrl_fwd: forwarded requests, gate reports and offload calls pushed to a model RX ring; offload answers.

The bench is the engine: it hands a packet over (`s_valid`, `s_entry`),
performs each ring access or notice flush the stage asks for against a
small RX ring model (a list of slots with a capacity; notices queued before
the packet are flushed into it first), leaves for a random number of cycles
as the engine's ring states do, and comes back, while holding the stage now
and then (`s_en` low, the response builder's hold). A region gate model
(tracking entries with missing blocks, marked by `m_gt_mark`, an entry that
refuses once some are marked), the forwarding table's inputs and an
offload answer's row read port (rows of 40 bytes, as clio_offload_fwd's)
drive the rest; the bench's response buffer takes the answer bytes the
stage writes and is compared with the answer at each send. Expected descriptors are built here from the package's slot offsets;
the verdict, the table and dedup strobes, and the stage's own cycles (one
per state of the engine's former S_FW_*/S_GT_*/S_OF_* states: the top's
cycle counts depend on it) are checked per packet.
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from clio_tb import PKG, desc_put as put
from tb_base import engine_cycle, param, reset_with_one_inside, rng, start

P = PKG
FW_MATCH, FW_PUSH, GT, OF, OF_ANS = 0, 1, 2, 3, 4
FINISH, FAIL, GO, POLL, SEND_POLL = 0, 1, 2, 3, 4
RING, FLUSH, SEND = 0, 1, 2
ROW = 40  # bytes of an answer row (clio_offload_fwd)
BUSY = P["STATUS_BUSY"]
FIW = 4  # the forwarding table's index width, from the compiled design (setup)
IDLE_IN = ("s_valid", "s_entry", "s_en", "s_ring_full", "s_ring_free", "s_fq_pending", "s_fw_match",
           "s_fw_match_index", "s_fw_fence_wait", "s_fw_free_index", "s_fw_desc", "s_gt_ready", "s_gt_refuse",
           "s_gt_status", "s_gt_track", "s_gt_track_pid", "s_gt_track_entry", "s_gt_track_va",
           "s_gt_track_mask", "s_of_cnt", "s_of_len", "s_of_tag", "s_of_seq", "s_of_data",
           "s_of_ans_plen", "s_of_ans_status", "s_of_bound", "s_mtu", "s_of_rd_left", "s_wr_block")



def gate_dirty(pid, entry, va, mask):
    d = put(0, P["SLOT_OFF_KIND"], 1, P["DESC_GATE_DIRTY"])
    d = put(d, P["SLOT_OFF_PID"], 4, pid)
    d = put(d, P["SLOT_OFF_TAG"], 4, entry)
    d = put(d, P["SLOT_OFF_A"], 8, va)
    return put(d, P["SLOT_OFF_C"], 8, mask)


def offload_req(count, i, tag, seq, frag, length):
    d = put(0, P["SLOT_OFF_KIND"], 1, P["DESC_OFFLOAD_REQ"])
    d = put(d, P["SLOT_OFF_PID"], 4, (count << 16) | i)
    d = put(d, P["SLOT_OFF_TAG"], 4, tag)
    d = put(d, P["SLOT_OFF_REQ_ID"], 4, seq)
    d = put(d, P["SLOT_OFF_A"], 40, int.from_bytes(frag, "little"))
    return put(d, P["SLOT_OFF_F"], 4, length)


class Env:
    """The engine's surroundings for one packet: RX ring, notice queue, gate, table, offload call."""

    def __init__(self, r, cap, used, notices=0):
        self.r = r
        self.cap = cap
        self.ring = [("old", k) for k in range(used)]
        self.fq = [("notice", k) for k in range(notices)]
        self.full = 0
        self.free = 0
        # Forwarding table.
        self.match = 0
        self.match_index = r.getrandbits(FIW)
        self.fence_wait = 0
        self.free_index = r.getrandbits(FIW)
        self.fw_desc = r.getrandbits(512)
        # Gate: entries [entry, pid, va, missing mask]; a refusal after `refuse_after` marks.
        self.gate = []
        self.refuse_after = None
        self.refuse_status = P["STATUS_MOVED"]
        self.marks = 0
        self.stale = 0
        self.snap = None
        # Offload call.
        self.pkt = b""
        self.tag = r.getrandbits(32)
        self.seq = r.getrandbits(32)
        # Offload answer: its bytes, read pointer, the response buffer being written.
        self.ans = b""
        self.ans_status = r.getrandbits(8)
        self.bound = 0
        self.mtu = 1
        self.rp = 0
        self.buf = {}

    def track(self):
        for e in self.gate:
            if e[3]:
                return e
        return None

    def verdict(self):
        refuse = self.refuse_after is not None and self.marks >= self.refuse_after
        t = self.track()
        e = t or [0, 0, 0, 0]
        return (int(refuse), self.refuse_status, int(t is not None), e[0], e[1], e[2], e[3])

    def mark(self):
        """The stage marks the tracking entry's blocks at this edge."""
        self.snap = self.verdict()
        self.stale = 1
        self.track()[3] = 0
        self.marks += 1

    def drive(self, dut, of_i):
        dut.s_fq_pending.value = int(bool(self.fq))
        dut.s_ring_full.value = self.full
        dut.s_ring_free.value = self.free
        dut.s_fw_match.value = self.match
        dut.s_fw_match_index.value = self.match_index
        dut.s_fw_fence_wait.value = self.fence_wait
        dut.s_fw_free_index.value = self.free_index
        dut.s_fw_desc.value = self.fw_desc
        # The gate's registered verdict: in the cycle after a mark it is the
        # table's before the mark (`s_gt_ready` low), then today's.
        gate = self.verdict()
        dut.s_gt_ready.value = int(not self.stale)
        if self.stale:
            gate = self.snap
            self.stale -= 1
        (dut.s_gt_refuse.value, dut.s_gt_status.value, dut.s_gt_track.value, dut.s_gt_track_entry.value,
         dut.s_gt_track_pid.value, dut.s_gt_track_va.value, dut.s_gt_track_mask.value) = gate
        n = len(self.pkt)
        dut.s_of_len.value = n
        dut.s_of_cnt.value = (n + 39) // 40
        dut.s_of_tag.value = self.tag
        dut.s_of_seq.value = self.seq
        frag = self.pkt[40 * of_i:40 * of_i + 40].ljust(40, b"\0")
        dut.s_of_data.value = int.from_bytes(frag, "little")
        dut.s_of_ans_plen.value = len(self.ans)
        dut.s_of_ans_status.value = self.ans_status
        dut.s_of_bound.value = self.bound
        dut.s_mtu.value = self.mtu
        dut.s_of_rd_left.value = ROW - self.rp % ROW
        dut.s_wr_block.value = 0

    def push(self, desc):
        # The RX ring: the slot is written if there is room; the result says full.
        if len(self.ring) < self.cap:
            self.ring.append(desc)
            self.full = 0
        else:
            self.full = 1

    def probe(self):
        self.free = self.cap - len(self.ring)


OUTS = ("m_done", "m_call_valid", "m_fw_set", "m_reserve", "m_gt_mark", "m_of_call", "m_ans_load",
        "m_plen_load", "m_offset_load", "m_of_wr")


async def run(dut, r, entry, env, hold_p=0.2):
    """Hand one packet over and play the engine until the stage's verdict; returns what happened."""
    out = {"fw_set": [], "reserve": 0, "of_call": 0, "calls": [], "active": 0, "load": None, "sent": [],
           "stalled": 0}
    plen = offset = None
    away = 0
    first = True

    def drive():
        dut.s_entry.value = entry
        env.drive(dut, int(dut.m_of_i.value))

    while True:
        if not await engine_cycle(dut, r, away, hold_p, OUTS, drive):
            if away:
                away -= 1
            continue
        assert int(dut.s_ready.value) == int(first), "ready only while no packet is inside"
        first = False
        out["active"] += 1
        if not int(dut.s_gt_ready.value):
            out["stalled"] += 1
            for name in OUTS:
                assert int(getattr(dut, name).value) == 0, f"{name} on the gate's verdict from before the mark"
        if int(dut.m_gt_mark.value):
            assert env.track() is not None, "a mark without a tracking entry"
            env.mark()
        if int(dut.m_fw_set.value):
            out["fw_set"].append((int(dut.m_fw_set_new.value), int(dut.m_fw_set_index.value)))
        out["reserve"] += int(dut.m_reserve.value)
        out["of_call"] += int(dut.m_of_call.value)
        if int(dut.m_ans_load.value):
            assert out["load"] is None, "the answer's header loaded twice"
            out["load"] = (int(dut.m_r_status.value), int(dut.m_r_big.value))
            plen, offset = 0, 0
        if int(dut.m_plen_load.value):
            plen = int(dut.m_r_plen.value)
        if int(dut.m_offset_load.value):
            offset = int(dut.m_r_offset.value)
        if int(dut.m_of_wr.value):
            # The answer's next bytes at the packet's byte `fill` (the row read port's take).
            k, fill = int(dut.m_of_k.value), int(dut.m_of_fill.value)
            assert 0 < k <= ROW - env.rp % ROW, f"{k} bytes from a row with {ROW - env.rp % ROW} left"
            for j in range(k):
                env.buf[fill + j] = env.ans[env.rp + j]
            env.rp += k
        send = int(dut.m_call_valid.value) and int(dut.m_call_kind.value) == SEND
        if send or (int(dut.m_done.value) and int(dut.m_next.value) == SEND_POLL):
            # The response builder takes the packet: its length, offset and payload bytes.
            out["sent"].append((plen, offset, bytes(env.buf.get(j, 0) for j in range(plen or 0))))
            env.buf = {}
        if int(dut.m_call_valid.value):
            assert not int(dut.m_done.value), "a call and a verdict at once"
            kind = int(dut.m_call_kind.value)
            if kind == SEND:
                out["calls"].append("send")
            elif kind == FLUSH:
                out["calls"].append("flush")
                for n in env.fq:
                    env.push(n)
                env.fq = []
            else:
                assert kind == RING, f"call kind {kind}"
                cmd = int(dut.m_ring_cmd.value)
                if cmd == 0:
                    assert int(dut.m_ring_load.value) == 1, "a push without its descriptor"
                    out["calls"].append("push")
                    env.push(int(dut.m_ring_desc.value))
                else:
                    assert cmd == 1, f"ring command {cmd}"
                    out["calls"].append("probe")
                    env.probe()
            away = r.randrange(1, 4)          # the engine's ring states
            await RisingEdge(dut.clk)
            continue
        if int(dut.m_done.value):
            out["next"] = int(dut.m_next.value)
            out["status"] = int(dut.m_status.value)
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
            await Timer(1, unit="ns")
            assert int(dut.s_ready.value) == 1, "the stage idles after its verdict"
            return out


def slots(env):
    return [d for d in env.ring if not isinstance(d, tuple)]


async def setup(dut):
    global FIW
    await start(dut, idle=IDLE_IN)
    assert param(dut, "DATA_WIDTH") == 512
    FIW = param(dut, "FIW")
    return rng()


@cocotb.test()
async def forwarded_requests(dut):
    """FW_MATCH verdicts; FW_PUSH with room, without, and behind queued notices."""
    r = await setup(dut)
    for _ in range(40):
        env = Env(r, 4, 0)
        env.match, env.fence_wait = r.choice([(1, 0), (1, 1), (0, 1), (0, 0)])
        o = await run(dut, r, FW_MATCH, env)
        assert o["calls"] == [] and o["active"] == 1
        if env.match:
            assert (o["next"], o["fw_set"]) == (FINISH, [(0, env.match_index)]), o
        elif env.fence_wait:
            assert (o["next"], o["status"], o["fw_set"]) == (FAIL, BUSY, []), o
        else:
            assert (o["next"], o["fw_set"]) == (GO, []), o
    for _ in range(60):
        cap = r.randrange(1, 5)
        env = Env(r, cap, r.randrange(0, cap + 1), notices=r.choice([0, 0, 1, 2]))
        before = list(env.ring)
        notices = list(env.fq)
        o = await run(dut, r, FW_PUSH, env)
        expect_ring = (before + notices)[:cap]
        room = len(expect_ring) < cap
        assert o["calls"] == (["flush"] if notices else []) + ["push"], o
        assert o["active"] == 2 + bool(notices)
        if room:
            assert env.ring == expect_ring + [env.fw_desc]
            assert (o["next"], o["fw_set"], o["reserve"]) == (FINISH, [(1, env.free_index)], 1), o
        else:
            assert env.ring == expect_ring
            assert (o["next"], o["status"], o["fw_set"], o["reserve"]) == (FAIL, BUSY, [], 0), o


@cocotb.test()
async def gate_reports(dut):
    """GATE_DIRTY of each tracking entry lacking blocks, marked, then the gate asked again."""
    r = await setup(dut)
    seen = set()
    stalls = 0
    for _ in range(60):
        cap = r.randrange(1, 5)
        env = Env(r, cap, r.randrange(0, cap), notices=r.choice([0, 0, 1]))
        n = r.randrange(1, 4)
        env.gate = [[k * 3 + r.randrange(3), r.getrandbits(32), r.getrandbits(64), r.getrandbits(64) | 1]
                    for k in range(n)]
        expect = [gate_dirty(e[1], e[0], e[2], e[3]) for e in env.gate]
        if r.random() < 0.3:
            env.refuse_after = r.randrange(1, n + 1)
            env.refuse_status = r.choice([BUSY, P["STATUS_MOVED"]])
        notices = list(env.fq)
        old = len(env.ring)
        o = await run(dut, r, GT, env)
        pushed = slots(env)
        room = cap - old - len(notices)
        # Reports until the ring is full or the gate refuses after a mark.
        k = n if env.refuse_after is None else min(n, env.refuse_after)
        seen.add("no room" if room < 1 else "full later" if room < k else "refused"
                 if env.refuse_after is not None else "all reported" if n > 1 else "one reported")
        if room < 1:
            assert (o["next"], o["status"]) == (FAIL, BUSY) and pushed == [] and env.marks == 0, o
        elif room < k:
            assert pushed == expect[:room] and env.marks == room and (o["next"], o["status"]) == (FAIL, BUSY), o
        elif env.refuse_after is not None:
            assert pushed == expect[:k] and env.marks == k, o
            assert (o["next"], o["status"]) == (FAIL, env.refuse_status), o
        else:
            assert pushed == expect and env.marks == n and o["next"] == GO, o
        assert o["calls"][0] == ("flush" if notices else "push")
        # PUSH, PUSHED, CHECK per report (no CHECK after a full ring), one more for a flush,
        # and a cycle waiting for the gate's verdict after a mark unless the stage was
        # held in it.
        reports = len(o["calls"]) - bool(notices)
        assert o["stalled"] <= env.marks, o
        stalls += o["stalled"]
        assert o["active"] == 3 * reports - (room < min(k, n)) + bool(notices) + o["stalled"], o
    assert seen == {"no room", "full later", "refused", "all reported", "one reported"}, seen
    assert stalls > 10, stalls


@cocotb.test()
async def offload_fragments(dut):
    """An OFFLOAD_CALL: a probe, then every 40-byte fragment (zeros past the end), whole or BUSY."""
    r = await setup(dut)
    seen = set()
    for _ in range(50):
        ln = P["CLIO_HEADER_LEN"] + r.choice([0, 1, 24, 25, 63, 64, 200, r.randrange(0, 600)])
        cnt = (ln + 39) // 40
        cap = r.randrange(cnt - 1, cnt + 3) if r.random() < 0.7 else r.randrange(1, 30)
        env = Env(r, max(cap, 1), 0, notices=r.choice([0, 0, 1]))
        env.pkt = bytes(r.getrandbits(8) for _ in range(ln))
        notices = list(env.fq)
        o = await run(dut, r, OF, env)
        room = env.cap - len(notices)
        seen.add((room >= cnt, bool(notices)))
        head = ["flush"] if notices else []
        if room < cnt:
            assert o["calls"] == head + ["probe"], o
            assert (o["next"], o["status"], o["of_call"]) == (FAIL, BUSY, 0), o
            assert slots(env) == [] and o["active"] == 2 + bool(notices)
        else:
            expect = [offload_req(cnt, i, env.tag, env.seq, env.pkt[40 * i:40 * i + 40].ljust(40, b"\0"), ln)
                      for i in range(cnt)]
            assert o["calls"] == head + ["probe"] + ["push"] * cnt, o
            assert slots(env) == expect, "fragments differ"
            assert (o["next"], o["of_call"]) == (FINISH, 1), o
            assert o["active"] == 2 + 2 * cnt + bool(notices), o
    assert len(seen) == 4, seen


@cocotb.test()
async def reset_mid_packet(dut):
    """A reset while a packet waits on a ring access leaves the stage ready for the next one."""
    r = await setup(dut)
    env = Env(r, 8, 0)
    env.pkt = bytes(range(100))
    dut.s_en.value = 1
    dut.s_valid.value = 1
    dut.s_entry.value = OF
    env.drive(dut, 0)
    await reset_with_one_inside(dut, "call's packet")
    o = await run(dut, r, FW_MATCH, Env(r, 4, 0), hold_p=0)
    assert o["next"] == GO


@cocotb.test()
async def offload_answers(dut):
    """An answer from the poll: MTU packets of its bytes (row by row), header-only MALFORMED over the bound."""
    r = await setup(dut)
    seen = set()
    for _ in range(60):
        env = Env(r, 4, 0)
        env.mtu = r.choice([64, 100, 512, 1500])
        env.bound = r.choice([env.mtu, 1024, 2048, 4096])
        n = r.choice([0, 1, 39, 40, 41, env.mtu - 1, env.mtu, env.mtu + 1, 2 * env.mtu + 7, env.bound,
                      env.bound + 1, r.randrange(0, 2 * env.bound)])
        env.ans = bytes(r.getrandbits(8) for _ in range(n))
        o = await run(dut, r, OF_ANS, env)
        if n > env.bound:
            seen.add("over the bound")
            assert o["load"] == (P["STATUS_MALFORMED"], 0) and o["next"] == SEND_POLL, o
            assert o["sent"] == [(0, 0, b"")] and o["active"] == 1 and env.rp == 0, o
            continue
        seen.add("MTU packets" if n > env.mtu else "one packet")
        assert o["load"] == (env.ans_status, int(n > env.mtu)) and o["next"] == POLL, o
        expect, off = [], 0
        while True:
            m = min(env.mtu, n - off)
            # The first packet keeps the answer's offset (the engine's load); the others name theirs.
            expect.append((m, off, env.ans[off:off + m]))
            off += m
            if off >= n:
                break
        assert o["sent"] == expect, [(a, b) for a, b, _ in o["sent"]]
        assert o["calls"] == ["send"] * len(expect)
        # ANS, then per packet a write cycle per row piece, its send and the next-packet step.
        pieces = 0
        for m, start, _ in expect:
            at = start
            while at < start + m:
                at += min(ROW - at % ROW, start + m - at)
                pieces += 1
        assert o["active"] == 1 + pieces + 2 * len(expect), o["active"]
    assert seen == {"over the bound", "MTU packets", "one packet"}, seen

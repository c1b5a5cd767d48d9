"""clio_atomic_stage against a sequential reference: atomics (TAS, CAS that match and that
do not, FAA that wraps) on a few words of two DRAM beats, handed over at random while the
stage may be busy, behind an engine port that takes commands at random and answers after
random latencies, a shared port that is free at random and a builder that is ready at
random. Checked every cycle: a command is taken only while `s_ready`; the port is used
only while owned, and owned only after a cycle with `s_port_free` (the stage waits for the
port); the write only after the read's data, of the sync unit's word at the word's lane
with its strobes; one dedup record per atomic (key, layout, the old value) before its
answer, `m_rec_pending` from the hand-over to the record; one answer per atomic, in order,
never before the write's B, with the command's header fields and the old value; the final
memory and every old value equal to executing the atomics one after the other. Then the
rate with nothing pausing: one atomic every (read latency + B latency + 5) cycles (the
latencies count the cycles between a command taken and its completion's cycle)."""

import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from clio_tb import PKG as P
from tb_base import param, reset, start_clock

M64 = 2**64 - 1
HDR = ["opcode", "flags", "pid", "req_id", "retry_of", "va", "total_len", "offset", "session", "epoch"]
WIDTH = {"opcode": 8, "flags": 8, "va": 64, "session": 16}
OPS = ["OP_TAS", "OP_CAS", "OP_FAA"]


def bswap64(x):
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def execute(op, old, a0, a1):
    """(new word or None) of the reference model's atomic."""
    if op == P["OP_TAS"]:
        return 1
    if op == P["OP_CAS"]:
        return a1 if old == a0 else None
    return (old + a0) & M64


class Atomic:
    def __init__(self, rng, words, mem):
        self.addr = rng.choice(words)
        self.op = P[rng.choice(OPS)]
        cur = mem.get(self.addr, 0)
        self.a0 = rng.choice([cur, M64, 1, rng.getrandbits(64)])     # CAS matches at times
        self.a1 = rng.getrandbits(64)
        self.key = rng.getrandbits(88)
        self.hdr = {f: rng.getrandbits(WIDTH.get(f, 32)) for f in HDR}
        self.old = None


class Bench:
    def __init__(self, dut, rng, bpb, p_take, p_free, p_ready, p_ans, lat):
        self.dut, self.rng, self.bpb = dut, rng, bpb
        self.p_take, self.p_free, self.p_ready, self.p_ans, self.lat = p_take, p_free, p_ready, p_ans, lat
        # Words of two beats (the lanes differ, the beats collide).
        self.words = [b * bpb + 8 * w for b in (0, 3) for w in range(min(bpb // 8, 4))]
        self.mem = {a: random.Random(a).getrandbits(64) for a in self.words}
        self.ref = dict(self.mem)
        self.handed = []          # atomics taken, in order
        self.recs = 0             # records seen
        self.answers = 0
        self.pending = None       # (kind, cycles left, data) of the outstanding port access
        self.read_done = False    # this atomic's read data delivered
        self.b_done = False       # this atomic's B delivered
        self.free_last = False    # s_port_free in the previous cycle
        self.owned = False

    def beat(self, addr):
        base = addr - addr % self.bpb
        v = 0
        for i in range(self.bpb // 8):
            v |= self.mem.get(base + 8 * i, 0) << (64 * i)
        return v

    async def cycle(self, offer):
        """One clock cycle: drive at the falling edge, check, account at the edge."""
        d, rng = self.dut, self.rng
        await FallingEdge(d.clk)
        d.s_valid.value = 1 if offer else 0
        if offer:
            d.s_addr.value = offer.addr
            d.s_opcode.value = offer.op
            d.s_arg0.value = offer.a0
            d.s_arg1.value = offer.a1
            d.s_key.value = offer.key
            for f in HDR:
                getattr(d, "s_hdr_" + f).value = offer.hdr[f]
        free = rng.random() < self.p_free
        d.s_port_free.value = 1 if free else 0
        ready = rng.random() < self.p_ready
        d.s_mem_ready.value = 1 if ready else 0
        done = self.pending is not None and self.pending[1] == 0
        d.s_mem_done.value = 1 if done else 0
        d.s_mem_rdata.value = self.pending[2] if done and self.pending[0] == "r" else rng.getrandbits(8 * self.bpb)
        ans_ready = rng.random() < self.p_ans
        d.s_ans_ready.value = 1 if ans_ready else 0
        await Timer(1, "ns")

        own = int(d.m_port_own.value)
        if own and not self.owned:
            assert self.free_last, "the port taken without a cycle of s_port_free"
        if own:
            self.owned = True
        mvalid = int(d.m_mem_valid.value)
        assert not mvalid or own, "a port command while not owning the port"
        taken = offer is not None and int(d.s_ready.value)
        cur = self.handed[-1] if self.handed else None
        # The port: a command taken this cycle.
        if mvalid and ready:
            assert self.pending is None, "a second port command before the first one's completion"
            assert int(d.m_mem_addr.value) == cur.addr
            if int(d.m_mem_write.value):
                assert self.read_done, "the write before the read's data"
                lane = cur.addr % self.bpb
                assert int(d.m_mem_wstrb.value) == 0xFF << lane
                new = (int(d.m_mem_wdata.value) >> (8 * lane)) & M64
                exp = execute(cur.op, cur.old, cur.a0, cur.a1)
                assert exp is not None and new == exp, f"written {new:#x}, expected {exp}"
                self.mem[cur.addr] = new
                self.pending = ("w", rng.randrange(self.lat[1][0], self.lat[1][1] + 1), 0)
            else:
                assert not self.read_done
                self.pending = ("r", rng.randrange(self.lat[0][0], self.lat[0][1] + 1), self.beat(cur.addr))
        elif done:
            if self.pending[0] == "r":
                self.read_done = True
                cur.old = self.mem[cur.addr]
            else:
                self.b_done = True
            self.pending = None
        elif self.pending is not None:
            self.pending = (self.pending[0], self.pending[1] - 1, self.pending[2])
        # The record.
        if int(d.m_rec_valid.value):
            assert self.read_done and self.recs == len(self.handed) - 1, "a record without a new atomic's read"
            assert int(d.m_rec_key.value) == cur.key
            rec = int(d.m_rec.value)
            h = cur.hdr
            exp = (h["flags"] | P["STATUS_OK"] << 8 | h["va"] << 16 | h["total_len"] << 80 | h["offset"] << 112
                   | P["ATOMIC_RESP_LEN"] << 144 | bswap64(cur.old) << 152)
            assert rec == exp, f"record {rec:#x}, expected {exp:#x}"
            self.recs += 1
        if cur is not None and self.recs < len(self.handed):
            assert int(d.m_rec_pending.value) == 1, "record pending not shown"
        else:
            assert int(d.m_rec_pending.value) == 0
        # The answer.
        if int(d.m_ans_valid.value) and ans_ready:
            assert self.recs == len(self.handed) and self.answers == len(self.handed) - 1, "an answer out of turn"
            wrote = execute(cur.op, cur.old, cur.a0, cur.a1) is not None
            assert self.b_done or (not wrote and self.pending is None), "an answer before its write's B"
            for f in HDR:
                got = int(getattr(d, "m_ans_" + f).value)
                assert got == cur.hdr[f], f"answer {f} {got:#x}, expected {cur.hdr[f]:#x}"
            assert int(d.m_ans_status.value) == P["STATUS_OK"]
            assert int(d.m_ans_data.value) == bswap64(cur.old)
            self.answers += 1
            # The reference: the atomics one after the other.
            ref_old = self.ref[cur.addr]
            assert cur.old == ref_old, f"old value {cur.old:#x}, reference {ref_old:#x}"
            new = execute(cur.op, ref_old, cur.a0, cur.a1)
            if new is not None:
                self.ref[cur.addr] = new
            self.owned = False
        if taken:
            assert self.answers == len(self.handed), "taken while the previous atomic is unanswered"
            self.handed.append(offer)
            self.read_done = self.b_done = False
        self.free_last = free
        return taken


async def setup(dut):
    start_clock(dut)
    for s in ("s_valid", "s_port_free", "s_mem_ready", "s_mem_done", "s_ans_ready"):
        getattr(dut, s).value = 0
    await reset(dut)


@cocotb.test()
async def random_traffic(dut):
    """Random hand-overs, port, latencies and builder readiness; every rule checked."""
    await setup(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    bpb = param(dut, "DATA_WIDTH") // 8
    for p_take, p_free, p_ready, p_ans, lat in [(0.5, 0.5, 0.5, 0.5, ((1, 6), (1, 6))),
                                                  (1.0, 0.9, 0.9, 0.9, ((0, 3), (0, 3))),
                                                  (1.0, 0.2, 0.3, 0.2, ((2, 9), (0, 9)))]:
        b = Bench(dut, rng, bpb, p_take, p_free, p_ready, p_ans, lat)
        n = 0
        for _ in range(6000):
            offer = Atomic(rng, b.words, b.ref) if rng.random() < p_take else None
            if await b.cycle(offer):
                n += 1
        # Drain: the last atomic answers.
        for _ in range(200):
            await b.cycle(None)
        assert b.answers == len(b.handed) == n and n > 100, (b.answers, len(b.handed), n)
        assert b.mem == b.ref, "final memory differs from the sequential reference"
        dut._log.info("%d atomics, memory and answers as executed one after the other", n)


@cocotb.test()
async def rate(dut):
    """Nothing pausing: one atomic every read latency + B latency + 5 cycles."""
    await setup(dut)
    rng = random.Random(1)
    bpb = param(dut, "DATA_WIDTH") // 8
    for rl, bl in [(4, 2), (1, 1)]:
        b = Bench(dut, rng, bpb, 1.0, 1.0, 1.0, 1.0, ((rl, rl), (bl, bl)))
        times = []
        c = 0
        while len(times) < 50:
            offer = Atomic(rng, b.words, b.ref)
            offer.op = P["OP_FAA"]
            if await b.cycle(offer):
                times.append(c)
            c += 1
        gaps = {t1 - t0 for t0, t1 in zip(times, times[1:])}
        # IDLE (taken), RD, the read's latency + its data cycle, SYNC (write taken), the B's
        # latency + its cycle (the answer in it).
        assert gaps == {rl + bl + 5}, (rl, bl, gaps)
        for _ in range(50):
            await b.cycle(None)
        dut._log.info("read latency %d, B latency %d: one atomic every %s cycles", rl, bl, gaps)

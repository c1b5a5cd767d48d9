"""clio_hit_lane with stand-ins for its neighbours (TLB and dedup answering one cycle after a
lookup and driving garbage otherwise, the session table's L1 port, an AXI slave with a read
latency, the response path, the engine's hand-off port): a hit read (its answer: header,
data, CRC, keep; one beat for up to 8 bytes, two back to back for 9..64), a hit write (AW, W with strobes, the dedup record, a header-only answer), hits
back to back at one per cycle (one-beat answers) and at one output beat per cycle (mixes of one-
and two-beat answers), under random backpressure of DRAM and of the output, the back-off after PUMP_WAIT requests taken while the engine
waits, and requests the lane must not finish (a miss, a write with a record, a packet that is not
the lane's) handed to the engine only after the older lane requests answered; beside a walk
(`s_rd_only`, `s_no_look`): hit reads answered, a retry and a write held in L1, no lookup
from `s_no_look` on, `m_quiet` once every looked-up hit has answered."""

import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from clio_tb import PKG as P, clio_header, param, start_clock

BYTES = 64
HDR = P["CLIO_HEADER_LEN"]
SHIFT = 12
EPOCH = 7
M64 = 2**64 - 1
M32 = 2**32 - 1


def serial_before(a, b):
    """RFC 1982 order over u32: `a` comes before `b`."""
    d = (b - a) & M32
    return d != 0 and d < 2**31


class Req:
    """One request packet as the parser presents it (header fields; write payload bytes)."""

    def __init__(self, op, pid=1, req_id=1, retry_of=0, va=0, total_len=0, offset=0, payload=b"",
                 session=3, key=0x55, ack=0, ok=True, flags=0):
        self.op, self.pid, self.req_id, self.retry_of = op, pid, req_id, retry_of
        self.va, self.total_len, self.offset, self.payload = va, total_len, offset, payload
        self.session, self.key, self.ack, self.ok, self.flags = session, key, ack, ok, flags

    def beats(self):
        """(tdata, last) beats: the header (fields are driven separately) and the payload."""
        pkt = bytes(HDR) + self.payload
        out = []
        for i in range(0, len(pkt), BYTES):
            out.append((int.from_bytes(pkt[i:i + BYTES], "little"), i + BYTES >= len(pkt)))
        return out


class Env:
    """Drives every input of the lane once per cycle and plays its neighbours."""

    def __init__(self, dut, seed=1):
        self.dut = dut
        self.rng = random.Random(seed)
        self.tlb = {}            # (pid, vpn) -> (ppn, perms)
        self.mem = {}            # beat address -> bytearray(64)
        self.dd = {}             # (key int) -> session
        self.dd_entries = 16     # the lane's DEDUP_ENTRIES (Makefile)
        self.dd_looks = []       # (key, hit, full, last, count) answered to each lookup
        self.floor = {}          # session -> floor
        self.in_bank = 0         # the packet buffer bank the parser fills
        self.pkt_mem = {}        # (bank, beat) -> tdata kept
        self.dquota = {}         # session -> dedup quota
        self.queue = []          # [Req, beat index]
        self.taken = []          # (Req, taken by the lane)
        self.answers = []        # answer packets (the kept bytes of their beats)
        self.partial = b""       # beats of the answer on the output so far
        self.out_beats = []      # cycles an answer beat was taken
        self.handoffs = []       # dicts of the hand-off fields
        self.early = 0           # of them, handed over with older answers pending
        self.dd_inserts = []
        self.acks = []
        self.writes = []         # (addr, data, strb)
        self.cycle = 0
        self.tlb_due = None
        self.dd_due = None
        self.reads = []          # [addr, cycle it may answer]
        self.ars = 0
        self.aw = []
        self.w = []
        self.b = 0
        # Knobs.
        self.active = True
        self.eng_waits = False
        self.rd_only = False     # the engine walks: reads without retry_of only
        self.no_look = False     # ... and inserts soon: no lookup
        self.walk = (0, 0)       # the walking READ's (pid, va)
        self.post = False        # ... its page is inserted: lookups come after it
        self.post_hold = False   # ... and its answer has not started: their ARs wait
        self.looks = []          # (pid, va) of each TLB lookup
        self.rb_busy = False
        self.ho_ready = True
        self.pauses = False
        self.latency = 3
        self.aw_hold = False     # AWREADY low
        self.in_ready_log = []   # (cycle, valid, ready)

    async def start(self):
        dut = self.dut
        start_clock(dut)
        dut.cfg_va_bits.value = 48
        dut.cfg_class_shift.value = SHIFT * 0x01010101
        dut.cfg_max_pid.value = 100
        dut.cfg_mtu.value = 1024
        for n in ("s_in_tdata", "s_in_tlast", "s_in_valid", "s_in_first", "s_in_second", "s_in_prev",
                  "s_hdr_opcode", "s_hdr_flags", "s_hdr_status", "s_hdr_pid", "s_hdr_req_id", "s_hdr_retry_of",
                  "s_hdr_va", "s_hdr_total_len", "s_hdr_offset", "s_hdr_payload_len", "s_hdr_session",
                  "s_hdr_epoch", "s_hdr_key", "s_hdr_ack", "s_pkt_len", "s_err_short", "s_err_crc",
                  "s_err_malformed", "s_in_sess_ok", "s_fence_any", "s_active", "s_eng_waits", "m_ho_ready",
                  "s_rd_only", "s_no_look", "s_walk_pid", "s_walk_va", "s_post", "s_post_hold",
                  "s_l1_floor", "s_l1_dquota", "s_tlb_hit", "s_tlb_ppn", "s_tlb_perms", "s_dd_hit", "s_dd_full",
                  "s_dd_last", "s_dd_busy", "s_dd_count", "s_in_bank", "m_axi_arready", "m_axi_rdata", "m_axi_rvalid", "m_axi_awready", "m_axi_wready",
                  "m_axi_bvalid", "s_rb_busy", "m_out_tready"):
            getattr(dut, n).value = 0
        dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        dut.rst.value = 0

    def map(self, pid, va, ppn, perms):
        self.tlb[(pid, va >> SHIFT)] = (ppn, perms)

    def pa(self, pid, va):
        ppn, _ = self.tlb[(pid, va >> SHIFT)]
        return (ppn << SHIFT) | (va & ((1 << SHIFT) - 1))

    def line(self, addr):
        return self.mem.setdefault(addr & ~(BYTES - 1), bytearray(self.rng.randbytes(BYTES)))

    def offer(self, req):
        self.queue.append([req, 0])

    def drive_intake(self):
        dut = self.dut
        if not self.queue:
            dut.s_in_valid.value = 0
            return
        req, i = self.queue[0]
        bs = req.beats()
        data, last = bs[i]
        dut.s_in_valid.value = 1
        dut.s_in_tdata.value = data
        dut.s_in_tlast.value = last
        dut.s_in_first.value = i == 0
        dut.s_in_second.value = i == 1
        dut.s_in_prev.value = bs[0][0] if i == 1 else self.rng.getrandbits(512)
        f = {"opcode": req.op, "flags": req.flags, "status": 0, "pid": req.pid, "req_id": req.req_id,
             "retry_of": req.retry_of, "va": req.va, "total_len": req.total_len, "offset": req.offset,
             "payload_len": len(req.payload), "session": req.session, "epoch": EPOCH, "key": req.key,
             "ack": req.ack}
        for k, v in f.items():
            getattr(dut, "s_hdr_" + k).value = v
        dut.s_pkt_len.value = HDR + len(req.payload)
        dut.s_in_sess_ok.value = req.ok

    async def step(self):
        """One cycle, entered at a falling edge."""
        dut, rng = self.dut, self.rng
        p = self.pauses
        # Neighbours' answers to lookups made at the last edge; garbage otherwise.
        if self.tlb_due is not None:
            hit, ppn, perms = self.tlb_due
        else:
            hit, ppn, perms = rng.getrandbits(1), rng.getrandbits(32), rng.getrandbits(8)
        dut.s_tlb_hit.value, dut.s_tlb_ppn.value, dut.s_tlb_perms.value = hit, ppn, perms
        if self.dd_due is not None:
            dh, df, dl, dc = self.dd_due
        else:
            dh, df, dl, dc = rng.getrandbits(1), rng.getrandbits(1), rng.getrandbits(1), rng.randrange(17)
        dut.s_dd_hit.value, dut.s_dd_full.value, dut.s_dd_last.value, dut.s_dd_count.value = dh, df, dl, dc
        dut.s_in_bank.value = self.in_bank
        s1 = int(dut.m_l1_session.value)
        dut.s_l1_floor.value = self.floor.get(s1, 0)
        dut.s_l1_dquota.value = self.dquota.get(s1, 8)
        dut.m_axi_arready.value = 0 if p and rng.random() < 0.3 else 1
        rv = bool(self.reads) and self.reads[0][1] <= self.cycle and not (p and rng.random() < 0.3)
        dut.m_axi_rvalid.value = rv
        dut.m_axi_rdata.value = int.from_bytes(self.line(self.reads[0][0]), "little") if rv else rng.getrandbits(512)
        dut.m_axi_awready.value = 0 if self.aw_hold or (p and rng.random() < 0.3) else 1
        dut.m_axi_wready.value = 0 if p and rng.random() < 0.3 else 1
        bv = self.b > 0 and not (p and rng.random() < 0.3)
        dut.m_axi_bvalid.value = bv
        dut.m_out_tready.value = 0 if p and rng.random() < 0.3 else 1
        dut.s_rb_busy.value = self.rb_busy
        dut.s_active.value = self.active
        dut.s_eng_waits.value = self.eng_waits
        dut.s_rd_only.value = self.rd_only
        dut.s_no_look.value = self.no_look
        dut.s_walk_pid.value, dut.s_walk_va.value = self.walk
        dut.s_post.value, dut.s_post_hold.value = self.post, self.post_hold
        dut.m_ho_ready.value = self.ho_ready
        self.drive_intake()
        await Timer(1, "ns")
        # What happens at the coming edge.
        self.tlb_due = None
        self.dd_due = None
        if dut.s_in_valid.value and dut.s_in_ready.value:
            req, i = self.queue[0]
            self.in_ready_log.append(self.cycle)
            if not (i + 1 == len(req.beats()) and dut.m_take_rd.value):
                # The packet buffer keeps every beat but a lane read's.
                self.pkt_mem[(self.in_bank, i)] = int(dut.s_in_tdata.value)
            if i + 1 == len(req.beats()):
                self.taken.append((req, bool(dut.m_take.value)))
                if dut.m_take.value and not dut.m_take_rd.value:
                    self.in_bank ^= 1           # a lane write: the next packet fills the other bank
                self.queue.pop(0)
            else:
                self.queue[0][1] += 1
        if dut.m_tlb_valid.value:
            self.looks.append((int(dut.m_tlb_pid.value), int(dut.m_tlb_va.value)))
            key = (int(dut.m_tlb_pid.value), int(dut.m_tlb_va.value) >> SHIFT)
            self.tlb_due = (1, *self.tlb[key]) if key in self.tlb else (0, rng.getrandbits(32), 0)
        if dut.m_dd_look_valid.value:
            k = int(dut.m_dd_look_key.value)
            sess = k & 0xFFFF
            self.dd_due = (int(k in self.dd), int(len(self.dd) >= self.dd_entries),
                           int(len(self.dd) == self.dd_entries - 1),
                           sum(1 for s in self.dd.values() if s == sess))
            self.dd_looks.append((k, *self.dd_due))
        # The dedup buffer and the session table as the top has them: the lookup
        # sees the state before the edge; an ack frees its session's older
        # records and raises the floor, then an insert lands.
        if dut.m_ack_valid.value:
            s_ack, a = int(dut.m_ack_session.value), int(dut.m_ack_id.value)
            self.acks.append((s_ack, a))
            for k in [k for k, s in self.dd.items() if s == s_ack and serial_before((k >> 16) & M32, a)]:
                del self.dd[k]
            f = self.floor.get(s_ack, 0)
            if f == 0 or serial_before(f, a):
                self.floor[s_ack] = a
        if dut.m_dd_ins_valid.value:
            k = int(dut.m_dd_ins_key.value)
            assert len(self.dd) < self.dd_entries or k in self.dd, "a record inserted into a full buffer"
            self.dd[k] = k & 0xFFFF
            self.dd_inserts.append((k, int(dut.m_dd_ins_rec.value)))
        if dut.m_axi_arvalid.value and dut.m_axi_arready.value:
            self.ars += 1
            self.reads.append([int(dut.m_axi_araddr.value), self.cycle + self.latency])
        if rv and dut.m_axi_rready.value:
            self.reads.pop(0)
        if dut.m_axi_awvalid.value and dut.m_axi_awready.value:
            self.aw.append(int(dut.m_axi_awaddr.value))
        if dut.m_axi_wvalid.value and dut.m_axi_wready.value:
            self.w.append((int(dut.m_axi_wdata.value), int(dut.m_axi_wstrb.value)))
        while self.aw and self.w:
            addr = self.aw.pop(0)
            data, strb = self.w.pop(0)
            line = self.line(addr)
            db = data.to_bytes(BYTES, "little")
            for j in range(BYTES):
                if strb >> j & 1:
                    line[j] = db[j]
            self.writes.append((addr, data, strb))
            self.b += 1
        if bv and dut.m_axi_bready.value:
            self.b -= 1
        # An answer's beats follow each other: no gap the builder could fill.
        assert dut.m_out_tvalid.value or not self.partial, "gap inside a lane answer"
        if dut.m_out_tvalid.value and dut.m_out_tready.value:
            keep = int(dut.m_out_tkeep.value)
            n = bin(keep).count("1")
            assert keep == (1 << n) - 1, "keep not contiguous"
            self.out_beats.append(self.cycle)
            self.partial += int(dut.m_out_tdata.value).to_bytes(BYTES, "little")[:n]
            if dut.m_out_tlast.value:
                self.answers.append(self.partial)
                self.partial = b""
            else:
                assert n == BYTES, "a first beat that is not full"
        if dut.m_ho_valid.value and dut.m_ho_ready.value:
            h = {k: int(getattr(dut, "m_ho_" + k).value) for k in (
                "wr", "pid", "req_id", "retry_of", "va", "total_len", "offset", "payload_len", "session",
                "epoch", "key", "ack", "bank")}
            older = int(dut.m_inflight.value) != 0 or bool(dut.m_out_tvalid.value)
            assert int(dut.m_ho_early.value) == older, "m_ho_early is not 'older answers pending'"
            if older:
                # Only a read that missed the TLB goes before the older answers, and only
                # with nothing but reads in flight.
                assert not h["wr"] and not h["retry_of"] and (h["pid"], h["va"] >> SHIFT) not in self.tlb, \
                    f"hand-off of {h['req_id']} before older answers"
                assert self.b == 0 and not self.aw and not self.w, "a read miss handed over with writes in flight"
                self.early += 1
            self.handoffs.append(h)
            if h["wr"]:
                # The engine reads the write from its bank: its beats are all there.
                req = next(r for r, _ in self.taken if r.req_id == h["req_id"] and r.op == P["OP_WRITE"])
                for j, (data, _) in enumerate(req.beats()):
                    assert self.pkt_mem.get((h["bank"], j)) == data, \
                        f"write {req.req_id} handed over: beat {j} of bank {h['bank']} overwritten"
                self.in_bank = 1 - h["bank"]
        await RisingEdge(dut.clk)
        self.cycle += 1
        await FallingEdge(dut.clk)

    async def run(self, n):
        for _ in range(n):
            await self.step()

    async def drain(self, limit=400):
        for _ in range(limit):
            if not self.queue and self.dut.m_empty.value and not self.reads and self.b == 0:
                await self.run(2)
                return
            await self.step()
        raise AssertionError("the lane did not drain")


def read_answer(env, r):
    pa = env.pa(r.pid, r.va)
    two = bytes(env.line(pa)) + bytes(env.line(pa + BYTES))       # a read may span two DRAM beats
    data = two[pa % BYTES:pa % BYTES + r.total_len]
    return clio_header(P["OP_READ_RESP"], pid=r.pid, req_id=r.req_id, retry_of=r.retry_of, va=r.va,
                       total_len=r.total_len, payload=data, session=r.session, epoch=EPOCH)


def write_answer(r):
    return clio_header(P["OP_WRITE_RESP"], pid=r.pid, req_id=r.req_id, retry_of=r.retry_of, va=r.va,
                       total_len=r.total_len, offset=r.offset, session=r.session, epoch=EPOCH)


async def readable_pages(dut, seed, pauses):
    """A started bench (random pauses of DRAM and of the output if `pauses`) with
    four readable pages of PID 1 at 0x10000."""
    env = Env(dut, seed)
    await env.start()
    env.pauses = pauses
    for pg in range(4):
        env.map(1, 0x10000 + (pg << SHIFT), 0x100 + pg, P["PERM_READ"])
    return env


async def reads_answered(env, reqs):
    """Offer `reqs` (all lane reads) back to back and check every one was taken
    by the lane and answered as the model answers it, in order."""
    expect = [read_answer(env, r) for r in reqs]
    for r in reqs:
        env.offer(r)
    await env.drain()
    assert env.answers == expect
    assert all(t for _, t in env.taken)


@cocotb.test()
async def hit_read(dut):
    """A TLB-hit READ of 1..8 bytes at any lane: one answer beat (header, data, CRC); of 9..64
    bytes within one DRAM beat: two beats (header and 8 data bytes, then the rest; one CRC)."""
    env = Env(dut, 1)
    await env.start()
    env.map(1, 0x5000, 0x33, P["PERM_READ"])
    cases = [(0, 8), (3, 1), (57, 7), (0x7C0, 5), (0, 64), (0, 9), (7, 57), (0x7C0 + 20, 44), (55, 9),
             (60, 8), (63, 2), (1, 64), (0x7C0 + 50, 30), (0xFBF, 65 - 1)]        # the last ones span two DRAM beats
    reqs = [Req(P["OP_READ"], req_id=10 + i, va=0x5000 + off, total_len=n) for i, (off, n) in enumerate(cases)]
    expect = []
    for r in reqs:
        expect.append(read_answer(env, r))
        env.offer(r)
        await env.drain()
    assert [t for _, t in env.taken] == [True] * len(cases)
    assert env.answers == expect
    assert len(env.out_beats) == 4 + 2 * 5 + 1 + 1 + 2 * 3
    assert env.ars == 9 + 2 * 5, "one AR per DRAM beat read"
    assert not env.handoffs and not env.writes


@cocotb.test()
async def hit_write(dut):
    """TLB-hit WRITEs of one and two packet beats: AW + W with strobes, the dedup record inserted
    as AW issues, a header-only answer after the B; the data lands in DRAM."""
    env = Env(dut, 2)
    await env.start()
    env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
    w1 = Req(P["OP_WRITE"], req_id=20, va=0x9000, offset=5, total_len=3, payload=b"\xAA\xBB\xCC")
    w2 = Req(P["OP_WRITE"], req_id=21, va=0x9040, offset=0, total_len=64, payload=bytes(range(64)))
    for w in (w1, w2):
        env.offer(w)
        await env.drain()
    assert [t for _, t in env.taken] == [True, True]
    assert env.answers == [write_answer(w1), write_answer(w2)]
    pa1 = env.pa(1, 0x9005)
    assert bytes(env.line(pa1)[pa1 % 64:pa1 % 64 + 3]) == b"\xAA\xBB\xCC"
    assert bytes(env.line(env.pa(1, 0x9040))) == bytes(range(64))
    # Byte addresses (the arbiter sends their beat); strobes of the written bytes.
    assert [(a, s) for a, _, s in env.writes] == [(pa1, 0x7 << (pa1 % 64)), (env.pa(1, 0x9040), M64)]
    keys = [k for k, _ in env.dd_inserts]
    assert keys == [(P["OP_WRITE"] << 80) | (5 << 48) | (20 << 16) | 3, (P["OP_WRITE"] << 80) | (21 << 16) | 3]


@cocotb.test()
async def back_to_back(dut):
    """60 hit reads offered back to back are taken one per cycle, every answer right and in order;
    a second round under random pauses of DRAM and of the output: still right, in order."""
    for pauses in (False, True):
        env = await readable_pages(dut, 3 + pauses, pauses)
        rng = env.rng
        reqs = []
        for i in range(60):
            va = 0x10000 + rng.randrange(4 << SHIFT)
            n = rng.randrange(1, 9)
            va -= max(0, va % 64 + n - 64)
            reqs.append(Req(P["OP_READ"], req_id=100 + i, va=va, total_len=n))
        await reads_answered(env, reqs)
        if not pauses:
            c = env.in_ready_log
            assert c[-1] - c[0] == len(reqs) - 1, f"{len(reqs)} reads taken in {c[-1] - c[0] + 1} cycles"
    dut._log.info("60 reads taken in 60 consecutive cycles")


@cocotb.test()
async def two_beat_mix(dut):
    """Reads of 1..64 bytes within one DRAM beat (one- and two-beat answers mixed at random,
    then 40 64-byte reads) offered back to back: every answer right and in order, the output
    busy every cycle from the first answer beat to the last (II = 1 per output beat); then
    reads of 1..64 bytes anywhere in their page (one or two DRAM beats: one AR each); all again
    under random pauses of DRAM and of the output (backpressure)."""
    for pauses in (False, True):
        for mix in (True, False, "span"):
            env = await readable_pages(dut, 7 + 3 * pauses + (mix == "span") + (mix is True), pauses)
            rng = env.rng
            reqs = []
            for i in range(60 if mix else 40):
                n = rng.randrange(1, 65) if mix else 64
                va = 0x10000 + rng.randrange(4 << SHIFT)
                if mix == "span":       # anywhere in its page: one or two DRAM beats
                    va -= max(0, va % (1 << SHIFT) + n - (1 << SHIFT))
                else:
                    va -= max(0, va % 64 + n - 64)
                reqs.append(Req(P["OP_READ"], req_id=300 + i, va=va, total_len=n))
            await reads_answered(env, reqs)
            beats = sum(1 if r.total_len <= BYTES - HDR else 2 for r in reqs)
            assert len(env.out_beats) == beats
            assert mix or beats == 2 * len(reqs)
            lines = sum((env.pa(1, r.va) % 64 + r.total_len + 63) // 64 for r in reqs)
            assert env.ars == lines, f"{env.ars} AR for {lines} DRAM beats"
            assert mix == "span" or lines == len(reqs)
            if not pauses and mix != "span":
                o = env.out_beats
                assert o[-1] - o[0] == beats - 1, f"{beats} answer beats in {o[-1] - o[0] + 1} cycles"
    dut._log.info("one- and two-beat answers at one output beat per cycle")


@cocotb.test()
async def back_off(dut):
    """While the engine waits for an empty lane, the lane takes PUMP_WAIT more requests, then
    none; the count restarts when the engine stops waiting."""
    env = Env(dut, 5)
    await env.start()
    pw = param(dut, "PUMP_WAIT")
    env.map(1, 0x5000, 0x33, P["PERM_READ"])
    for i in range(pw + 6):
        env.offer(Req(P["OP_READ"], req_id=i + 1, va=0x5000 + 8 * (i % 8), total_len=8))
    env.eng_waits = True
    await env.run(pw + 10)
    assert len(env.taken) == pw, f"{len(env.taken)} taken, PUMP_WAIT {pw}"
    assert not dut.s_in_ready.value
    env.eng_waits = False          # the engine started (and went back to idle)
    await env.drain()
    assert len(env.taken) == pw + 6 and len(env.answers) == pw + 6


@cocotb.test()
async def hand_off(dut):
    """Requests the lane takes but cannot finish go to the engine once every older lane request
    has answered: a TLB miss, a read without READ permission, a write whose dedup record exists
    (a replay). Packets that are not the lane's (bad credentials, too long, an error) are not
    taken: their last beat waits for an empty lane."""
    env = Env(dut, 6)
    await env.start()
    env.map(1, 0x5000, 0x33, P["PERM_READ"])
    env.map(1, 0x6000, 0x34, P["PERM_WRITE"])
    env.map(1, 0x7000, 0x35, P["PERM_READ"] | P["PERM_WRITE"])
    rd = Req(P["OP_READ"], req_id=1, va=0x5000, total_len=8)
    miss = Req(P["OP_READ"], req_id=2, va=0x8000, total_len=4, ack=1)
    noperm = Req(P["OP_READ"], req_id=3, va=0x6000, total_len=4)
    wr = Req(P["OP_WRITE"], req_id=4, va=0x7000, total_len=2, payload=b"xy")
    replay = Req(P["OP_WRITE"], req_id=5, retry_of=4, va=0x7000, total_len=2, payload=b"xy")
    bad = Req(P["OP_READ"], req_id=6, va=0x5000, total_len=8, ok=False)
    big = Req(P["OP_READ"], req_id=7, va=0x5000 + 4092, total_len=9)    # spans two pages
    huge = Req(P["OP_READ"], req_id=10, va=0x5000, total_len=65)
    for r in (rd, miss):
        env.offer(r)
    # The miss waits in L2 until the read has answered, then the engine (busy until the
    # hand-off is taken) gets it.
    env.ho_ready = False
    await env.run(20)
    assert len(env.answers) == 1 and not env.handoffs
    env.ho_ready = True
    await env.run(2)
    assert [h["req_id"] for h in env.handoffs] == [2]
    h = env.handoffs[0]
    assert (h["wr"], h["pid"], h["va"], h["total_len"], h["session"], h["epoch"], h["key"], h["ack"]) \
        == (0, 1, 0x8000, 4, 3, EPOCH, 0x55, 1)
    assert env.acks == [(3, 1)], "the ack frees records as its packet leaves L1"
    for r in (noperm, wr, replay):
        env.offer(r)
        await env.drain()
    assert [h["req_id"] for h in env.handoffs] == [2, 3, 5]
    h = env.handoffs[2]
    assert (h["wr"], h["retry_of"], h["payload_len"]) == (1, 4, 2)
    assert len(env.writes) == 1, "the replay wrote nothing"
    for r in (bad, big, huge):
        env.offer(r)
        await env.drain()
    assert [t for _, t in env.taken] == [True, True, True, True, True, False, False, False]
    # A last beat that is not the lane's waits while a lane request is in flight.
    env.latency = 12
    env.offer(Req(P["OP_READ"], req_id=8, va=0x5000, total_len=8))
    env.offer(Req(P["OP_READ"], req_id=9, va=0x5000, total_len=8, ok=False))
    await env.run(8)
    assert len(env.taken) == 9, "the foreign packet waits for the lane to empty"
    await env.drain()
    assert len(env.taken) == 10 and not env.taken[-1][1]


def dd_key(r):
    """The dedup key of write `r`: {opcode, offset, first id, session}."""
    return (P["OP_WRITE"] << 80) | (r.offset << 48) | ((r.retry_of or r.req_id) << 16) | r.session


def model_writes(reqs, quota=8, entries=16, dd=None):
    """The model's verdicts on a run of writes (all TLB hits with WRITE permission): its
    packet's ack first (frees the session's older records, raises the floor), then a late
    duplicate below the floor, a record (replay), no room or the session's quota: not
    executed; else executed, its record kept. Returns (executed flags, records left)."""
    dd = dict(dd or {})
    floor = {}
    done = []
    for r in reqs:
        if r.ack:
            for k in [k for k, s in dd.items() if s == r.session and serial_before((k >> 16) & M32, r.ack)]:
                del dd[k]
            f = floor.get(r.session, 0)
            if f == 0 or serial_before(f, r.ack):
                floor[r.session] = r.ack
        f = floor.get(r.session, 0)
        k = dd_key(r)
        ok = not (f != 0 and serial_before(r.retry_of or r.req_id, f)) and k not in dd \
            and len(dd) < entries and sum(1 for s in dd.values() if s == r.session) < quota
        if ok:
            dd[k] = r.session
        done.append(ok)
    return done, set(dd)


async def writes_answered(env, reqs, dd=None):
    """Offer `reqs` (lane writes) back to back; every one is taken by the lane; the ones the
    model executes are written and answered in order, the others handed to the engine; the
    dedup buffer ends as the model leaves it."""
    done, left = model_writes(reqs, env.dquota.get(3, 8), env.dd_entries, dd)
    for r in reqs:
        env.offer(r)
    await env.drain()
    assert all(t for _, t in env.taken)
    assert env.answers == [write_answer(r) for r, d in zip(reqs, done) if d]
    assert [h["req_id"] for h in env.handoffs] == [r.req_id for r, d in zip(reqs, done) if not d]
    assert len(env.writes) == sum(done)
    assert set(env.dd) == left, "dedup records differ from the model's"
    return done


@cocotb.test()
async def writes_back_to_back(dut):
    """64-byte WRITEs (two packet beats) offered back to back, each acknowledging every earlier
    request: of one session, then alternating between two sessions. Each is taken two cycles
    after the one before (II = 1 per beat) while the one ahead is still in L1/L2 (its record
    forwarded), all execute in the lane (AW, W, B, answers in order, DRAM right) and the dedup
    buffer ends as the model leaves it; again under random pauses of DRAM and of the output
    (a write firing as the next one's ack takes effect: its record is never inserted)."""
    for two in (False, True):
        for pauses in (False, True):
            env = Env(dut, 11 + 2 * two + pauses)
            await env.start()
            env.pauses = pauses
            for pg in range(2):
                env.map(1, 0x20000 + (pg << SHIFT), 0x200 + pg, P["PERM_READ"] | P["PERM_WRITE"])
            reqs = []
            for i in range(40):
                rid = 100 + i
                reqs.append(Req(P["OP_WRITE"], req_id=rid, va=0x20000 + 64 * env.rng.randrange(128), total_len=64,
                                payload=env.rng.randbytes(64), session=3 + (i % 2 if two else 0), ack=rid))
            done = await writes_answered(env, reqs)
            assert all(done)
            last = {}
            for r in reqs:
                last[r.va] = r.payload
            for va, data in last.items():
                assert bytes(env.line(env.pa(1, va))) == data
            if not pauses:
                c = env.in_ready_log
                assert c[-1] - c[0] == 2 * len(reqs) - 1, f"{len(reqs)} writes taken in {c[-1] - c[0] + 1} cycles"
    dut._log.info("40 64-byte writes taken in 80 consecutive cycles (one and two sessions)")


@cocotb.test()
async def retry_behind_original(dut):
    """A retried WRITE right behind its original (their lookups both before the original's
    record is inserted): it finds the forwarded record and goes to the engine (a replay), its
    beats intact in its bank; with an ack of the original's id it is a late duplicate (the
    floor its own ack raises): to the engine as well; the original writes once."""
    for ack in (0, 31):
        env = Env(dut, 20 + ack)
        await env.start()
        env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
        w = Req(P["OP_WRITE"], req_id=30, va=0x9000, total_len=64, payload=bytes(range(64)))
        retry = Req(P["OP_WRITE"], req_id=31, retry_of=30, va=0x9000, total_len=64,
                    payload=bytes(range(64)), ack=ack)
        done = await writes_answered(env, [w, retry])
        assert done == [True, False]
        looks = [lk for lk in env.dd_looks if lk[0] == dd_key(retry)]
        assert len(looks) == 2 and looks[1][1] == 0, "the retry's lookup came before the record was inserted"
        assert env.handoffs[0]["retry_of"] == 30 and env.handoffs[0]["wr"] == 1


@cocotb.test()
async def write_at_quota(dut):
    """Writes back to back without acks at a session's dedup quota of 2: the third sees one
    record in the buffer and the second's forwarded: at the quota, to the engine; a write of
    another session in between is not counted. Then the buffer's room: with one free entry,
    the second write (the first's record forwarded) finds it full."""
    env = Env(dut, 30)
    await env.start()
    env.dquota[3] = 2
    env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
    reqs = [Req(P["OP_WRITE"], req_id=50 + i, va=0x9000 + 64 * i, total_len=64, payload=bytes([i]) * 64)
            for i in range(3)]
    done = await writes_answered(env, reqs)
    assert done == [True, True, False]
    look = [lk for lk in env.dd_looks if lk[0] == dd_key(reqs[2])][0]
    assert look[4] == 1, "the third write's lookup saw one record of its session"
    # Another session's write between them: counted for its own session only.
    env = Env(dut, 31)
    await env.start()
    env.dquota[3] = 2
    env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
    reqs = [Req(P["OP_WRITE"], req_id=60 + i, va=0x9000 + 64 * i, total_len=64, payload=bytes([i]) * 64,
                session=(3, 4, 3)[i]) for i in range(3)]
    assert await writes_answered(env, reqs) == [True, True, True]
    # One free entry left: the first write takes it.
    env = Env(dut, 32)
    await env.start()
    env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
    old = {(P["OP_WRITE"] << 80) | (i << 16) | 9: 9 for i in range(1, env.dd_entries)}
    env.dd.update(old)
    reqs = [Req(P["OP_WRITE"], req_id=70 + i, va=0x9000 + 64 * i, total_len=64, payload=bytes([i]) * 64)
            for i in range(2)]
    assert await writes_answered(env, reqs, dd=old) == [True, False]


@cocotb.test()
async def ack_as_the_record_lands(dut):
    """The write ahead fires (AW accepted) in the cycle the next request's ack takes effect
    (both held behind AWREADY): the ack frees that record, so it is never inserted; a read
    carrying the ack enters behind the write as well."""
    for second in ("write", "read"):
        env = Env(dut, 40)
        await env.start()
        env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
        w = Req(P["OP_WRITE"], req_id=80, va=0x9000, total_len=64, payload=bytes(range(64)))
        if second == "write":
            nxt = Req(P["OP_WRITE"], req_id=81, va=0x9040, total_len=64, payload=bytes(64), ack=81)
        else:
            nxt = Req(P["OP_READ"], req_id=81, va=0x9040, total_len=8, ack=81)
        env.aw_hold = True
        env.offer(w)
        env.offer(nxt)
        await env.run(12)
        assert len(env.taken) == 2, "the second request entered behind the held write"
        assert not env.dd_inserts and not env.acks
        env.aw_hold = False
        await env.drain()
        assert env.acks == [(3, 81)]
        ins = [k for k, _ in env.dd_inserts]
        assert dd_key(w) not in ins, "the record the ack freed was inserted"
        assert set(env.dd) == ({dd_key(nxt)} if second == "write" else set())
        assert len(env.answers) == 2 and not env.handoffs


@cocotb.test()
async def write_behind_a_hand_off(dut):
    """An 8-byte write (one packet beat) right behind one the lane hands to the engine (a TLB
    miss), in L1 as that one leaves L2, at a dedup quota of one: its lookup (the first write's record forwarded: at the quota) is stale once the engine
    runs; it looks up again only when the engine has let the packet go, then executes in the
    lane (the engine's write faulted: no record) or goes to the engine (the engine wrote the
    first and kept its record, and the second is its retry: a replay)."""
    for engine_writes in (False, True):
        env = Env(dut, 50 + engine_writes)
        await env.start()
        env.dquota[3] = 1
        env.map(1, 0x9000, 0x44, P["PERM_READ"] | P["PERM_WRITE"])
        w1 = Req(P["OP_WRITE"], req_id=90, va=0xA000, total_len=8, payload=bytes(range(8)))
        w2 = Req(P["OP_WRITE"], req_id=91, retry_of=90 if engine_writes else 0, va=0x9000, total_len=8,
                 payload=bytes(range(1, 9)))
        env.offer(w1)
        env.offer(w2)
        for _ in range(40):
            await env.step()
            if env.handoffs:
                break
        assert [h["req_id"] for h in env.handoffs] == [90] and len(env.taken) == 2
        env.ho_ready = False            # the engine holds the packet
        if engine_writes:
            env.dd[dd_key(w1)] = 3
        looks = len([lk for lk in env.dd_looks if lk[0] == dd_key(w2)])
        await env.run(6)
        assert len([lk for lk in env.dd_looks if lk[0] == dd_key(w2)]) == looks, "a lookup while the engine runs"
        assert not env.writes
        env.ho_ready = True
        await env.drain()
        assert len([lk for lk in env.dd_looks if lk[0] == dd_key(w2)]) == looks + 1, "no second lookup"
        if engine_writes:
            assert [h["req_id"] for h in env.handoffs] == [90, 91] and not env.writes
        else:
            assert [h["req_id"] for h in env.handoffs] == [90] and len(env.writes) == 1
            assert env.answers == [write_answer(w2)]


@cocotb.test()
async def beside_a_walk(dut):
    """While the engine walks (`s_rd_only`, the hand-off port busy): hit reads are looked up and
    answered; a miss on the walking READ's page waits in L2 and stops the lane (`m_quiet` up: no
    looked-up hit left); a read with retry_of and a write wait in L1 unlooked-up (no AW); from
    `s_no_look` on, a read taken in is not looked up. Once the walk is over everything answers
    in order."""
    env = Env(dut, 9)
    await env.start()
    env.pauses = True
    env.map(1, 0x5000, 0x33, P["PERM_READ"] | P["PERM_WRITE"])
    env.ho_ready, env.rd_only = False, True
    env.walk = (1, 0x9040)                   # the engine walks for page 0x9000
    hits = [Req(P["OP_READ"], req_id=1 + i, va=0x5000 + 64 * i, total_len=8) for i in range(3)]
    miss = Req(P["OP_READ"], req_id=4, va=0x9000, total_len=8)
    after = Req(P["OP_READ"], req_id=5, va=0x5100, total_len=8)
    for r in hits + [miss, after]:
        env.offer(r)
    await env.run(40)
    assert env.answers == [read_answer(env, r) for r in hits]
    assert [va for _, va in env.looks] == [r.va for r in hits + [miss]], "the read behind the miss waits"
    assert dut.m_quiet.value and not env.handoffs
    env.ho_ready = True                      # the walking request answered: the miss goes over
    await env.run(4)
    assert [h["req_id"] for h in env.handoffs] == [4]
    await env.drain()
    assert env.answers[-1] == read_answer(env, after)
    # A retry, then a write, each held in L1 while the engine walks.
    for r in (Req(P["OP_READ"], req_id=7, retry_of=6, va=0x5040, total_len=8),
              Req(P["OP_WRITE"], req_id=8, va=0x5080, total_len=2, payload=b"ab")):
        env.ho_ready, n, looks = False, len(env.answers), len(env.looks)
        env.offer(r)
        await env.run(30)
        assert len(env.answers) == n and len(env.looks) == looks and not env.aw
        assert dut.m_quiet.value and not dut.m_empty.value
        env.ho_ready = True
        await env.run(1)
        env.rd_only = False                  # the walk is over: it goes on
        await env.drain()
        assert len(env.answers) == n + 1 and len(env.looks) == looks + 1
        env.rd_only = True
    # From s_no_look on: taken into L1, not looked up.
    env.ho_ready, env.no_look = False, True
    looks = len(env.looks)
    env.offer(Req(P["OP_READ"], req_id=9, va=0x5000, total_len=8))
    await env.run(20)
    assert len(env.looks) == looks and len(env.taken) == 8 and dut.m_quiet.value
    env.ho_ready, env.rd_only, env.no_look = True, False, False
    await env.drain()
    assert len(env.looks) == looks + 1 and len(env.answers) == 7


@cocotb.test()
async def past_the_insert(dut):
    """The walking READ's page inserted (`s_post`) before the hits looked up during the walk
    have answered: they answer, `m_pre_quiet` rises once they have, and the reads looked up
    after the insert wait in the answer queue without an AR while `s_post_hold` (the intake
    going on until the queue is full); released, they read in order (two-beat reads with
    both ARs) and answer after. A held miss then stops L1 (the walk is over)."""
    env = Env(dut, 14)
    await env.start()
    env.pauses = True
    env.latency = 8
    env.map(1, 0x5000, 0x33, P["PERM_READ"])
    env.map(1, 0x6000, 0x34, P["PERM_READ"])
    env.ho_ready, env.rd_only = False, True
    env.walk = (1, 0x9040)
    pre = [Req(P["OP_READ"], req_id=1 + i, va=0x5000 + 64 * i, total_len=8) for i in range(3)]
    for r in pre:
        env.offer(r)
    for _ in range(40):
        await env.step()
        if env.ars == 3:
            break
    assert env.ars == 3 and not env.answers and not dut.m_pre_quiet.value
    # The insert: what is looked up from now on answers after the walking READ.
    env.post, env.post_hold = True, True
    post = [Req(P["OP_READ"], req_id=4 + i, va=0x6000 + 64 * i + (60 if i % 3 == 1 else 0),
                total_len=8 if i % 3 != 2 else 40) for i in range(9)]
    for r in post:
        env.offer(r)
    pre_quiet_at = None
    for c in range(60):
        await env.step()
        if dut.m_pre_quiet.value and pre_quiet_at is None:
            pre_quiet_at = c
            assert len(env.answers) == 3, "pre-quiet before the earlier hits answered"
    assert env.answers == [read_answer(env, r) for r in pre]
    assert pre_quiet_at is not None and dut.m_pre_quiet.value and not dut.m_quiet.value
    assert env.ars == 3, "a read looked up after the insert issued its AR while held"
    assert int(dut.m_inflight.value) == 7 and len(env.looks) == 3 + 8, \
        "the queue takes the reads behind the insert (7), L2 the next (looked up)"
    # Its answer started: they read in order, oldest first, each two-beat read twice.
    env.post_hold = False
    await env.drain()
    assert env.answers == [read_answer(env, r) for r in pre + post]
    assert env.ars == 3 + 9 + 3, "the two-beat reads issue both ARs"
    # A held miss after the walk (its insert done): the read in L1 as it parks moves on
    # with it, nothing after that leaves L1.
    env.post, env.post_hold, env.rd_only = True, True, True
    n = len(env.looks)
    miss = Req(P["OP_READ"], req_id=20, va=0x70000, total_len=8)
    hits = [Req(P["OP_READ"], req_id=21 + i, va=0x5000 + 64 * i, total_len=8) for i in range(2)]
    for r in [miss] + hits:
        env.offer(r)
    await env.run(20)
    assert [va for _, va in env.looks[n:]] == [0x70000, 0x5000], "a read looked up behind the held miss"
    assert env.ars == 15 and not env.handoffs
    env.post, env.post_hold, env.rd_only = False, False, False
    await engine_takes(env)
    engine_done(env)
    env.map(1, 0x70000, 0x35, P["PERM_READ"])
    await env.drain()
    assert [h["req_id"] for h in env.handoffs] == [20]
    assert env.answers[-2:] == [read_answer(env, r) for r in hits]


async def engine_takes(env, limit=40):
    """The engine (idle) takes the lane's next hand-off and then holds it: the lane is inactive
    and the hand-off port busy until `engine_done`. Returns the cycles it took."""
    n = len(env.handoffs)
    env.active, env.ho_ready = True, True
    for i in range(limit):
        await env.step()
        if len(env.handoffs) > n:
            assert len(env.handoffs) == n + 1
            env.active, env.ho_ready = False, False
            return i
    raise AssertionError("no hand-off")


def engine_done(env):
    env.active, env.ho_ready = True, True


@cocotb.test()
async def past_a_held_miss(dut):
    """While the engine walks, the next miss (another page than the walking READ's) moves to the
    hand-off slot and the hit reads behind it are looked up and answered before it; a read to
    the held miss's page stays in L1 unlooked-up, and so does a second miss's follower behind
    it in L2. Once the walk is over nothing more leaves L1: the held miss is handed over (first,
    with its fields) after every looked-up read has answered, then the rest in order."""
    env = Env(dut, 12)
    await env.start()
    env.pauses = True
    for pg in range(4):
        env.map(1, 0x10000 + (pg << SHIFT), 0x100 + pg, P["PERM_READ"])
    env.ho_ready, env.rd_only = False, True
    env.walk = (1, 0x40000)                  # the engine walks for page 0x40000
    before = [Req(P["OP_READ"], req_id=1 + i, va=0x10000 + 64 * i, total_len=8) for i in range(2)]
    held = Req(P["OP_READ"], req_id=3, va=0x50000, total_len=16, ack=2, key=0x77, session=4)
    behind = [Req(P["OP_READ"], req_id=4 + i, va=0x11000 + 0x1000 * i + 8 * i, total_len=8 + 20 * i)
              for i in range(3)]
    same = Req(P["OP_READ"], req_id=7, va=0x50100, total_len=8)          # the held miss's page
    tail = Req(P["OP_READ"], req_id=8, va=0x10040, total_len=8)
    for r in before + [held] + behind + [same, tail]:
        env.offer(r)
    await env.run(60)
    assert env.answers == [read_answer(env, r) for r in before + behind], "the reads behind the held miss go on"
    assert [va for _, va in env.looks] == [r.va for r in before + [held] + behind], \
        "the read to the held miss's page is not looked up"
    assert dut.m_quiet.value and not dut.m_empty.value and not env.handoffs
    # The walk is over (its READ answering): the lane stops, the held miss goes over first.
    env.rd_only, env.walk = False, (0, 0)
    await env.run(3)
    assert not env.handoffs, "the engine still holds the walking READ"
    await engine_takes(env)
    h = env.handoffs[0]
    assert (h["wr"], h["pid"], h["req_id"], h["retry_of"], h["va"], h["total_len"], h["offset"],
            h["payload_len"], h["session"], h["epoch"], h["key"], h["ack"]) \
        == (0, 1, 3, 0, 0x50000, 16, 0, 0, 4, EPOCH, 0x77, 2)
    assert len(env.looks) == 6, "nothing looked up once the walk is over, until the hand-off"
    await env.run(10)
    env.map(1, 0x50000, 0x140, P["PERM_READ"])  # the held miss's walk inserted its page
    engine_done(env)
    await env.drain()
    assert [h["req_id"] for h in env.handoffs] == [3]
    assert env.answers[-2:] == [read_answer(env, same), read_answer(env, tail)]


@cocotb.test()
async def held_miss_order(dut):
    """One held miss at a time: a second miss behind it waits in L2 and stops the lane; a miss on
    the walking READ's page is not held (it stops the lane in L2, as before); a held miss waits
    for a looked-up hit behind it still in L2 or in flight before it is handed over, and goes
    before the miss in L2."""
    env = Env(dut, 13)
    await env.start()
    for pg in range(2):
        env.map(1, 0x10000 + (pg << SHIFT), 0x100 + pg, P["PERM_READ"])
    env.ho_ready, env.rd_only = False, True
    env.walk = (1, 0x40000)
    m1 = Req(P["OP_READ"], req_id=1, va=0x50000, total_len=8)
    h1 = Req(P["OP_READ"], req_id=2, va=0x10000, total_len=8)
    m2 = Req(P["OP_READ"], req_id=3, va=0x60000, total_len=8)
    h2 = Req(P["OP_READ"], req_id=4, va=0x11000, total_len=8)
    for r in (m1, h1, m2, h2):
        env.offer(r)
    await env.run(30)
    assert env.answers == [read_answer(env, h1)]
    assert [va for _, va in env.looks] == [0x50000, 0x10000, 0x60000], "h2 waits behind the second miss"
    env.rd_only = False
    await engine_takes(env)
    assert [h["req_id"] for h in env.handoffs] == [1], "the held miss first"
    await env.run(5)
    await engine_takes(env)
    engine_done(env)
    await env.drain()
    assert [h["req_id"] for h in env.handoffs] == [1, 3]
    assert env.answers == [read_answer(env, h1), read_answer(env, h2)]
    # A miss on the walking READ's page stays in L2: the hit behind it is not looked up.
    env.ho_ready, env.rd_only = False, True
    n = len(env.looks)
    for r in (Req(P["OP_READ"], req_id=5, va=0x40080, total_len=8), Req(P["OP_READ"], req_id=6, va=0x10040, total_len=8)):
        env.offer(r)
    await env.run(20)
    assert [va for _, va in env.looks[n:]] == [0x40080] and len(env.answers) == 2
    env.rd_only = False
    await engine_takes(env)
    engine_done(env)
    await env.drain()
    assert [h["req_id"] for h in env.handoffs] == [1, 3, 5] and len(env.answers) == 3
    # A held miss goes at once, the hit behind it that was looked up still in flight
    # (slow DRAM): the engine answers after it (`m_ho_early`); the lane answers it.
    env.latency = 15
    env.ho_ready, env.rd_only = False, True
    for r in (Req(P["OP_READ"], req_id=7, va=0x70000, total_len=8), Req(P["OP_READ"], req_id=8, va=0x10080, total_len=8)):
        env.offer(r)
    await env.run(6)
    assert int(dut.m_inflight.value) == 1 and not env.answers[3:]
    env.rd_only = False
    early = env.early
    waited = await engine_takes(env)
    assert waited <= 1 and env.early == early + 1 and len(env.answers) == 3, \
        "the held miss is handed over before the hit behind it has answered"
    env.active, env.rd_only, env.no_look = True, True, True   # the engine's drain: the lane answers beside it
    await env.run(20)
    assert len(env.answers) == 4 and dut.m_quiet.value
    env.no_look, env.rd_only = False, False
    engine_done(env)
    await env.drain()
    assert [h["req_id"] for h in env.handoffs] == [1, 3, 5, 7]
    # A write (or a permission failure) is handed over only once the older answers are out.
    env.map(1, 0x12000, 0x120, 0)            # mapped without READ
    env.ho_ready = False
    for r in (Req(P["OP_READ"], req_id=9, va=0x10000, total_len=8), Req(P["OP_READ"], req_id=10, va=0x12000, total_len=8)):
        env.offer(r)
    await env.run(4)
    assert int(dut.m_inflight.value) == 1
    early = env.early
    waited = await engine_takes(env)
    assert waited >= 10 and env.early == early and len(env.answers) == 5, "a permission failure went early"
    engine_done(env)
    await env.drain()

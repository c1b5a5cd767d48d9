"""clio_rd_stage: the READ packer and the READ stage against a reference and the packets each READ must start.

The bench is the engine: one READ after the other, each begun (`s_start`,
after 0–2 cycles held in S_RD's ST_BEGIN, `s_restart` high), then, as the
READ says: handed to the READ stage (`s_solo` with its answer's header) 0–12
cycles later once no stage is busy (the engine waits: one stage at a time),
and the next READ begun at once, behind the stage's beats; drained
(`s_drained`) once its beats are all appended and no stage is busy (the
top's drain waits for the mover idle: a stream's chunk, or a pumped packet
from a byte other than 0, begun only with no stage busy);
stopped (`s_stop`) 1–3 cycles after its start (an empty READ) or after its
first chunks (a page that went away). The data mover is a model: a FIFO of
each begun READ's beats (1–64 bytes, chunks cut at the MTU, each chunk's
last beat marked), its head offered 85 % of the cycles from the cycle after
the start, held until taken. The builder is ready 80 % of the cycles and
starts an answer of the engine's 10 %. Inputs no one reads carry junk.

Every cycle every output is compared with a reference of the packer and
the stage; every packet started (`m_start`: offset and length) with the
chunks of the READs in order, each from its first byte after a stage
(`s_off0` otherwise), and the header the stage holds with the one handed
over while it is busy (`m_solo`), which ends with the packet that ends its
READ. A packet's start is held (`s_hold`) in runs of cycles at random: its
last beat is appended, no beat after it taken, and it starts once the hold
is gone (the engine drains or stops a READ only with nothing appended).
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import rng, start

HDR = (("s_op", "m_op", 8), ("s_flags", "m_flags", 8), ("s_status", "m_status", 8), ("s_pid", "m_pid", 32),
       ("s_req_id", "m_req_id", 32), ("s_retry_of", "m_retry_of", 32), ("s_va", "m_va", 64),
       ("s_total_len", "m_total_len", 32), ("s_session", "m_session", 16), ("s_epoch", "m_epoch", 32))
IDLE_IN = ("s_start", "s_off0", "s_stop", "s_drained", "s_solo", "s_restart", "s_rd_valid", "s_rd_mark", "s_rd_len",
           "s_rb_ready", "s_rb_start", "s_hold") + tuple(h[0] for h in HDR)
OUTS = ("m_on", "m_filled", "m_off", "m_plen", "m_ready", "m_beat", "m_start", "m_solo", "m_last") + tuple(
    h[1] for h in HDR)
M32 = (1 << 32) - 1
BYTES = 64


class Ref:
    """The packer and the stage, cycle by cycle (the former logic below the engine's case)."""

    def __init__(self):
        self.on = self.filled = self.off = self.solo = self.nxt = self.pend = 0
        self.hdr = {h[1]: 0 for h in HDR}
        self.cover = set()                               # the ways the stage and a READ behind it met

    def outs(self, i):
        ready = int(self.on and i["s_rb_ready"] and not i["s_rb_start"] and not self.pend)
        beat = int(i["s_rd_valid"] and ready)
        mark = beat and i["s_rd_mark"]
        start_ = int((mark or (self.pend and i["s_rb_ready"] and not i["s_rb_start"])) and not i["s_hold"])
        plen = (self.filled + (0 if self.pend else i["s_rd_len"])) & 0xFFFF
        total = self.hdr["m_total_len"]
        last = int(bool(self.solo and ((start_ and (self.off + plen) & M32 == total) or self.off == total)))
        return {"m_on": self.on, "m_filled": self.filled, "m_off": self.off, "m_plen": plen, "m_ready": ready,
                "m_beat": beat, "m_start": start_, "m_solo": self.solo, "m_last": last, **self.hdr}

    def step(self, i):
        o = self.outs(i)
        on, filled, off, solo, nxt, hdr = self.on, self.filled, self.off, self.solo, self.nxt, dict(self.hdr)
        pend = self.pend
        busy = self.solo and not o["m_last"]
        if i["s_start"]:
            if busy:
                nxt = 1
                self.cover.add("behind")
            else:
                off, filled, on = i["s_off0"], 0, 1
        if i["s_stop"]:
            if busy:
                nxt = 0
                self.cover.add("forgot")
            else:
                on = 0
        if i["s_solo"]:
            solo = 1
            hdr = {m: i[s] for s, m, _ in HDR}
        if i["s_drained"]:
            on = 0
        if o["m_start"]:
            filled, off, pend = 0, (self.off + o["m_plen"]) & M32, 0
            if not o["m_beat"]:
                self.cover.add("held")
        elif o["m_beat"]:
            filled = o["m_plen"]
            pend = pend or i["s_rd_mark"]
        if o["m_last"]:
            solo, nxt = 0, 0
            self.cover.add("at_once" if not o["m_start"] else "after")
            if self.nxt or i["s_restart"]:
                off, filled = 0, 0
            else:
                on = 0
        self.on, self.filled, self.off, self.solo, self.nxt, self.hdr = on, filled, off, solo, nxt, hdr
        self.pend = pend


def chunks(total, off0, mtu):
    out, pos = [], off0
    while pos < total:
        n = min(total - pos, mtu)
        out.append((pos, n))
        pos += n
    return out


def beats(r, rid, cks):
    """The mover's beats of a READ's chunks: (READ, bytes, mark)."""
    out = []
    for _, n in cks:
        left = n
        while left:
            k = min(left, r.randrange(1, BYTES + 1))
            left -= k
            out.append((rid, k, int(left == 0)))
    return out


def plan(r, rid):
    kind = r.choice(["solo", "solo", "solo", "drain", "pump", "empty", "fail"])
    total = r.choice([0, r.randrange(1, 300), r.randrange(1, 3000)]) if kind != "empty" else r.randrange(0, 3000)
    mtu = r.choice([64, 200, 512, 1500])
    off0 = r.randrange(1, total) if kind == "pump" and total > 1 else 0
    p = {"id": rid, "kind": kind, "total": total, "mtu": mtu, "off0": off0, "hold": r.choice([0, 0, 0, 1, 2]),
         "solo_at": r.randrange(1, 13), "stop_at": r.randrange(1, 4)}
    cks = chunks(total, off0, mtu)
    if kind == "fail":
        cks = cks[:r.randrange(0, len(cks) + 1)]
    elif kind == "empty":
        cks = []
    p["chunks"] = cks
    p["beats"] = beats(r, rid, cks)
    p["hdr"] = {s: r.getrandbits(w) for s, _, w in HDR}
    p["hdr"]["s_total_len"] = total
    return p


@cocotb.test()
async def reads(dut):
    """400 READs of every kind, back to back: every output every cycle, every packet and the stage's header."""
    await start(dut, idle=IDLE_IN)
    r = rng()
    ref = Ref()
    reads_ = [plan(r, k) for k in range(400)]
    want_packets = []
    got_packets = []
    fifo = []                                            # the mover's queue: (READ, bytes, mark)
    left = {}                                            # beats of a READ not yet taken
    cur, eng, wait, k = None, "gap", 0, 0
    hold_left = 0                                        # cycles the start stays held
    pend_id = None                                       # the READ whose packet's start is held
    stage_id = None                                      # the READ the stage holds
    seen = set()
    for cyc in range(100000):
        if k == len(reads_) and eng == "gap" and not fifo and not ref.solo:
            break
        await FallingEdge(dut.clk)
        i = {n: 0 for n in IDLE_IN}
        for s, _, w in HDR:
            i[s] = r.getrandbits(w)                      # junk unless handed over
        i["s_off0"] = r.getrandbits(32)
        # The engine.
        if eng == "gap" and k < len(reads_):
            cur = reads_[k]
            if cur["off0"] == 0 or not ref.solo:         # a pump from byte > 0: no stage busy
                eng, wait = "hold", cur["hold"]
        if eng == "hold":
            i["s_restart"] = 1
            if wait == 0:
                i["s_start"] = 1
                i["s_off0"] = cur["off0"]
                eng, wait = "run", 0
                k += 1
                seen.add(cur["kind"])
                want_packets += [(cur["id"], o, n) for o, n in cur["chunks"]]
            else:
                wait -= 1
        elif eng == "run":
            wait += 1
            kind = cur["kind"]
            if kind == "solo" and wait >= cur["solo_at"] and not ref.solo:
                i["s_solo"] = 1
                i.update(cur["hdr"])
                stage_id = cur["id"]
                eng = "gap"
            elif kind in ("drain", "pump") and not left.get(cur["id"]) and not ref.solo and not ref.pend:
                i["s_drained"] = 1
                eng = "gap"
            elif kind == "empty" and wait >= cur["stop_at"]:
                i["s_stop"] = 1
                eng = "gap"
            elif kind == "fail" and not left.get(cur["id"]) and wait >= cur["stop_at"] and not ref.pend:
                i["s_stop"] = 1
                eng = "gap"
        # The mover and the builder.
        if fifo and r.random() < 0.85:
            rid, n, mark = fifo[0]
            i.update(s_rd_valid=1, s_rd_len=n, s_rd_mark=mark)
        else:
            i.update(s_rd_len=r.randrange(0, BYTES + 1), s_rd_mark=r.getrandbits(1))
        i["s_rb_ready"] = int(r.random() < 0.8)
        i["s_rb_start"] = int(r.random() < 0.1)
        if hold_left == 0 and r.random() < 0.05:
            hold_left = r.randrange(1, 8)
        i["s_hold"] = int(hold_left > 0)
        hold_left = max(0, hold_left - 1)
        for n, v in i.items():
            getattr(dut, n).value = v
        await Timer(1, unit="ns")
        want = ref.outs(i)
        got = {n: int(getattr(dut, n).value) for n in OUTS}
        assert got == want, (cyc, {n: (got[n], want[n]) for n in OUTS if got[n] != want[n]})
        if got["m_start"]:
            rid = fifo[0][0] if got["m_beat"] else pend_id
            got_packets.append((rid, got["m_off"], got["m_plen"]))
            if got["m_solo"]:
                if rid == stage_id:
                    assert all(got[m] == reads_[rid]["hdr"][s] for s, m, _ in HDR), "the stage's header"
        if got["m_last"]:
            # The stage ends with the packet that ends its READ (or at once if it started before).
            assert not [b for b in fifo if b[0] == stage_id][1:], "the stage ended before its READ's last packet"
        if got["m_beat"]:
            rid = fifo.pop(0)[0]
            left[rid] -= 1
            if i["s_rd_mark"] and not got["m_start"]:
                pend_id = rid
        ref.step(i)
        if i["s_start"]:
            fifo += cur["beats"]
            left[cur["id"]] = len(cur["beats"])
    else:
        raise AssertionError(f"the READs did not end: {eng} {k} {cur and {x: cur[x] for x in ('id', 'kind', 'total')}} "
                             f"{fifo[:3]} {len(fifo)} {vars(ref)}")
    assert got_packets == want_packets, next((g, w) for g, w in zip(got_packets, want_packets) if g != w)
    assert seen == {"solo", "drain", "pump", "empty", "fail"}, seen
    assert len(got_packets) > 1000, len(got_packets)
    assert ref.cover == {"behind", "after", "at_once", "forgot", "held"}, ref.cover


@cocotb.test()
async def stage_then_next(dut):
    """A READ handed to the stage, the next begun behind it: its packets from byte 0 after the stage's last."""
    await start(dut, idle=IDLE_IN)

    async def cycle(**kw):
        await FallingEdge(dut.clk)
        for n in IDLE_IN:
            getattr(dut, n).value = kw.get(n, 0)
        await Timer(1, unit="ns")
        return {n: int(getattr(dut, n).value) for n in OUTS}

    await cycle(s_start=1, s_off0=0, s_restart=1)
    o = await cycle(s_solo=1, s_total_len=100, s_pid=7)
    assert o["m_on"] == 1 and o["m_solo"] == 0
    o = await cycle(s_start=1, s_restart=1, s_off0=999)     # behind the stage: waits
    assert o["m_solo"] == 1 and o["m_last"] == 0 and o["m_pid"] == 7
    o = await cycle(s_rd_valid=1, s_rd_len=64, s_rb_ready=1)
    assert o["m_beat"] == 1 and o["m_start"] == 0 and o["m_last"] == 0
    o = await cycle(s_rd_valid=1, s_rd_len=36, s_rd_mark=1, s_rb_ready=1)
    assert (o["m_start"], o["m_off"], o["m_plen"], o["m_last"]) == (1, 0, 100, 1)
    o = await cycle(s_rd_valid=1, s_rd_len=10, s_rd_mark=1, s_rb_ready=1)
    assert (o["m_on"], o["m_solo"], o["m_start"], o["m_off"], o["m_plen"]) == (1, 0, 1, 0, 10)
    o = await cycle(s_drained=1)
    o = await cycle()
    assert o["m_on"] == 0


@cocotb.test()
async def reset_clears(dut):
    """A reset with a stage busy and a READ behind it: the packer off, no stage."""
    await start(dut, idle=IDLE_IN)
    await FallingEdge(dut.clk)
    dut.s_start.value = 1
    await FallingEdge(dut.clk)
    dut.s_start.value = 0
    dut.s_solo.value = 1
    dut.s_total_len.value = 64
    await FallingEdge(dut.clk)
    dut.s_solo.value = 0
    dut.s_start.value = 1
    await FallingEdge(dut.clk)
    dut.s_start.value = 0
    await Timer(1, unit="ns")
    assert int(dut.m_solo.value) == 1 and int(dut.m_on.value) == 1
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    await Timer(1, unit="ns")
    assert int(dut.m_solo.value) == 0 and int(dut.m_on.value) == 0 and int(dut.m_last.value) == 0

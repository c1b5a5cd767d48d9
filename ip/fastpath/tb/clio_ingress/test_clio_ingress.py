"""clio_ingress: bank alternation, backpressure, header capture, hand-offs and a bad-CRC packet.

A reference model of the two packet buffers follows the bench's own view of
the traffic (which beats moved, what the hit lane took, what it handed
over); the expected headers come from the packets the bench built, not from
the parser's outputs.
"""

import random
import struct

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from clio_tb import PKG, clio_header
from tb_base import param, reset, start_clock

P = PKG
W = 64  # bytes per beat (DATA_WIDTH 512: the parser needs the header in beat 0)
HDR = P["CLIO_HEADER_LEN"]
H_FIELDS = ("op", "flags", "status", "pid", "req_id", "retry_of", "va", "total_len", "offset",
            "plen", "len", "session", "epoch", "key", "ack", "short", "crc", "malformed",
            "unknown", "request", "from_lane")


def header_of(pkt, bad_crc):
    """The header registers the engine must see for `pkt` (bytes as sent)."""
    def u(fmt, off):
        return struct.unpack_from(fmt, pkt, off)[0]
    h = dict(op=pkt[P["CLIO_OFF_OPCODE"]], flags=pkt[P["CLIO_OFF_FLAGS"]],
             status=pkt[P["CLIO_OFF_STATUS"]], pid=u(">I", P["CLIO_OFF_PID"]),
             req_id=u(">I", P["CLIO_OFF_REQ_ID"]), retry_of=u(">I", P["CLIO_OFF_RETRY_OF"]),
             va=u(">Q", P["CLIO_OFF_VA"]), total_len=u(">I", P["CLIO_OFF_TOTAL_LEN"]),
             offset=u(">I", P["CLIO_OFF_OFFSET"]), plen=u(">H", P["CLIO_OFF_PAYLOAD_LEN"]),
             len=len(pkt), session=u(">H", P["CLIO_OFF_SESSION"]), epoch=u(">I", P["CLIO_OFF_EPOCH"]),
             key=u(">Q", P["CLIO_OFF_KEY"]), ack=u(">I", P["CLIO_OFF_ACK"]),
             short=0, crc=int(bad_crc), malformed=0, unknown=0, request=1, from_lane=0)
    if bad_crc:
        # Only the verdict is defined for a damaged packet (its fields are not
        # trusted by the engine).
        return {k: h[k] for k in ("short", "crc", "from_lane")}
    return h


def make_packet(rng, i, max_bytes):
    op = rng.choice([P["OP_READ"], P["OP_WRITE"], P["OP_FAA"], P["OP_ALLOC"], P["OP_FENCE"]])
    plen = rng.choice([0, 8, 9, 40, 64, 100, rng.randrange(0, max(1, max_bytes - HDR))])
    total = plen + rng.randrange(0, 3) * 64
    pkt = bytearray(clio_header(op, pid=rng.randrange(1, 2**32), req_id=i + 1,
                                retry_of=rng.choice([0, i]), va=rng.getrandbits(40),
                                total_len=total, offset=rng.randrange(0, total - plen + 1),
                                payload=bytes(rng.getrandbits(8) for _ in range(plen)),
                                flags=rng.choice([0, P["FLAG_FIXED_VA"]]), session=rng.getrandbits(16),
                                epoch=rng.getrandbits(32), key=rng.getrandbits(64), ack=rng.getrandbits(32)))
    bad = rng.random() < 0.15
    if bad:  # one flipped bit in the CRC-covered bytes (header outside the CRC field, or payload)
        # (not the payload length: a longer one makes the packet short instead).
        keep = set(range(P["CLIO_OFF_CRC"], P["CLIO_OFF_CRC"] + 4))
        keep |= {P["CLIO_OFF_PAYLOAD_LEN"], P["CLIO_OFF_PAYLOAD_LEN"] + 1}
        j = rng.choice([k for k in range(len(pkt)) if k not in keep])
        pkt[j] ^= 1 << rng.randrange(8)
    return bytes(pkt), bad


class Model:
    """The buffers' state as the bench's traffic defines it."""

    def __init__(self, beats):
        self.pb1 = beats + 1
        self.beats = beats
        self.in_bank = 0
        self.eng_bank = 0
        self.beat = 0
        self.mem = {}
        self.h = None  # expected header registers (a subset for a bad packet)

    def beat_in(self, data, last, to_lane, take_rd, hdr):
        if not take_rd:
            if self.beat < self.beats:
                self.mem[self.in_bank * self.pb1 + self.beat] = data
                self.beat += 1
        if last:
            self.beat = 0
            if not to_lane:
                self.eng_bank, self.in_bank = self.in_bank, 1 - self.in_bank
                self.h = hdr
            elif not take_rd:
                # A lane write: the next packet goes to the other bank.
                self.in_bank = 1 - self.in_bank

    def handoff(self, ho):
        if ho["wr"]:
            # The engine gets the write's bank, the parser the other one.
            self.eng_bank, self.in_bank = ho["bank"], 1 - ho["bank"]
        plen = ho["plen"] if ho["wr"] else 0
        self.h = dict(op=P["OP_WRITE"] if ho["wr"] else P["OP_READ"], flags=0, status=P["STATUS_OK"],
                      pid=ho["pid"], req_id=ho["req_id"], retry_of=ho["retry_of"], va=ho["va"],
                      total_len=ho["total_len"], offset=ho["offset"], plen=plen, len=HDR + plen,
                      session=ho["session"], epoch=ho["epoch"], key=ho["key"], ack=ho["ack"],
                      short=0, crc=0, malformed=0, unknown=0, request=1, from_lane=1)


HO_PORTS = dict(pid=32, req_id=32, retry_of=32, va=64, total_len=32, offset=32, plen=7, session=16,
                epoch=32, key=64, ack=32)


def val(sig):
    v = sig.value
    return int(v) if v.is_resolvable else None


@cocotb.test()
async def buffers_and_headers(dut):
    """Random packets under random backpressure; lane takes and hand-offs; every cycle checked."""
    beats = param(dut, "PKT_BEATS")
    rng = random.Random(int(cocotb.RANDOM_SEED))
    start_clock(dut)
    for name in ("s_ready", "s_to_lane", "s_take_rd", "s_ho_valid", "s_ho_wr", "s_ho_bank", "s_rd_a_idx",
                 "s_rd_b_idx"):
        getattr(dut, name).value = 0
    for name in HO_PORTS:
        getattr(dut, "s_ho_" + ("payload_len" if name == "plen" else name)).value = 0
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    source.set_pause_generator(iter(lambda: rng.random() < 0.2, None))
    await reset(dut)

    n = 160
    packets = [make_packet(rng, i, (beats + 2) * W) for i in range(n)]
    # The hit lane's choice per packet: 0 engine, 1 lane write (kept), 2 lane read (not kept).
    routes = [rng.choice([0, 0, 0, 1, 2]) for _ in range(n)]
    for p, _ in packets:
        await source.send(AxiStreamFrame(p))

    m = Model(beats)
    k = 0          # packet whose beats are in flight
    done = 0       # packets whose last beat moved
    alternations = captured = bad_seen = handoffs = stalls = 0
    last_eng_bank = None
    checks = 0
    for cycle in range(200000):
        if done == n:
            break
        await FallingEdge(dut.clk)
        # State after the last edge.
        got = {"in_bank": val(dut.m_in_bank), "eng_bank": val(dut.m_eng_bank), "beat": val(dut.m_beat)}
        want = {"in_bank": m.in_bank, "eng_bank": m.eng_bank, "beat": m.beat}
        assert got == want, f"cycle {cycle}: buffer state {got}, want {want}"
        if m.h is not None:
            h = {f: val(getattr(dut, "m_h_" + f)) for f in m.h}
            assert h == m.h, f"cycle {cycle}: header registers {h}, want {m.h}"
            checks += 1
        # Read ports against the model's buffers.
        idx = rng.randrange(0, 2 * m.pb1 - 1)
        dut.s_rd_a_idx.value = idx
        dut.s_rd_b_idx.value = rng.randrange(0, 2 * m.pb1 - 1)
        # Inputs for the next edge: backpressure, the lane's choice for the
        # packet in flight, now and then a hand-off in a cycle without a beat.
        ready = rng.random() < 0.7
        route = routes[k] if k < n else 0
        ho = None
        if not ready and rng.random() < 0.15:
            ho = {name: rng.getrandbits(w) for name, w in HO_PORTS.items()}
            ho["wr"] = rng.random() < 0.5
            ho["bank"] = rng.getrandbits(1)
        dut.s_ready.value = int(ready)
        dut.s_to_lane.value = int(route != 0)
        dut.s_take_rd.value = int(route == 2)
        dut.s_ho_valid.value = int(ho is not None)
        if ho is not None:
            dut.s_ho_wr.value = int(ho["wr"])
            dut.s_ho_bank.value = ho["bank"]
            for name in HO_PORTS:
                getattr(dut, "s_ho_" + ("payload_len" if name == "plen" else name)).value = ho[name]
        await Timer(1, unit="ns")
        for port, i in (("m_rd_a_pair", idx),):
            lo, hi = m.mem.get(i), m.mem.get(i + 1)
            if lo is not None and hi is not None:
                assert val(getattr(dut, port)) == lo | (hi << (8 * W)), f"cycle {cycle}: {port}[{i}]"
        e0, e1 = m.mem.get(m.eng_bank * m.pb1), m.mem.get(m.eng_bank * m.pb1 + 1)
        if e0 is not None and e1 is not None:
            assert val(dut.m_eng01) == e0 | (e1 << (8 * W)), f"cycle {cycle}: m_eng01"
        p0 = m.mem.get(m.in_bank * m.pb1)
        if p0 is not None:
            assert val(dut.m_in_prev) == p0, f"cycle {cycle}: m_in_prev"
        valid = val(dut.m_valid)
        if valid and not ready:
            stalls += 1
        if valid and ready:
            last = bool(val(dut.m_tlast))
            pkt, bad = packets[k]
            b = m.beat if route != 2 else 0
            data = val(dut.m_tdata)
            hdr = header_of(pkt, bad)
            if route != 2 and b < beats and m.beat < beats:
                chunk = pkt[b * W:(b + 1) * W]
                # The buffer keeps the beat as the parser passes it on.
                assert data is not None and (data & ((1 << 8 * len(chunk)) - 1)) == int.from_bytes(chunk, "little"), \
                    f"packet {k} beat {b}: data"
            m.beat_in(data, last, route != 0, route == 2, hdr)
            if last:
                if route == 0:
                    captured += 1
                    bad_seen += bad
                    if last_eng_bank is not None and m.eng_bank != last_eng_bank:
                        alternations += 1
                    last_eng_bank = m.eng_bank
                k += 1
                done += 1
        if ho is not None:
            m.handoff(ho)
            handoffs += 1
            last_eng_bank = m.eng_bank
    assert done == n, f"only {done} of {n} packets left the parser"
    await RisingEdge(dut.clk)
    dut._log.info("PKT_BEATS %d: %d packets (%d to the engine, %d bad CRC), %d hand-offs, %d bank changes, "
                  "%d stalled beats, %d header checks", beats, n, captured, bad_seen, handoffs, alternations,
                  stalls, checks)
    assert captured > 50 and bad_seen > 3 and handoffs > 5 and stalls > 50 and alternations > 20


@cocotb.test()
async def backpressure_holds_the_beat(dut):
    """With `s_ready` low nothing is written and the beat counter stays; the stream resumes intact."""
    rng = random.Random(5)
    start_clock(dut)
    for name in ("s_ready", "s_to_lane", "s_take_rd", "s_ho_valid", "s_ho_wr", "s_ho_bank", "s_rd_a_idx",
                 "s_rd_b_idx"):
        getattr(dut, name).value = 0
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    await reset(dut)
    pkt = clio_header(P["OP_WRITE"], pid=3, req_id=9, va=0x1000, total_len=100,
                      payload=bytes(rng.getrandbits(8) for _ in range(100)), session=2, epoch=1, key=5)
    await source.send(AxiStreamFrame(pkt))
    for _ in range(20):
        await FallingEdge(dut.clk)
    assert val(dut.m_valid) == 1
    assert val(dut.m_beat) == 0 and val(dut.m_eng_bank) == 0 and val(dut.m_in_bank) == 0
    # One beat in, then 10 cycles held.
    before = val(dut.m_h_req_id)  # the header registers are not reset
    dut.s_ready.value = 1
    await FallingEdge(dut.clk)
    dut.s_ready.value = 0
    for _ in range(10):
        await FallingEdge(dut.clk)
        assert val(dut.m_beat) == 1 and val(dut.m_valid) == 1 and val(dut.m_h_req_id) == before
    dut.s_ready.value = 1
    while True:
        await FallingEdge(dut.clk)
        if val(dut.m_beat) == 0:
            break
    assert (val(dut.m_eng_bank), val(dut.m_in_bank)) == (0, 1)
    assert val(dut.m_h_req_id) == 9 and val(dut.m_h_plen) == 100 and val(dut.m_h_crc) == 0
    want = int.from_bytes(pkt[:2 * W], "little")
    assert val(dut.m_eng01) == want

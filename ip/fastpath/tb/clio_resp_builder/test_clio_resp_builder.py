"""clio_resp_builder: packets assembled from in-order unaligned payload writes equal the wire
encoding, CRC included, for payload lengths across beat boundaries up to a full buffer (BEATS,
the parameter point: tb/run.sh runs 24 and 9 beats); output backpressure respected; with the
two buffers, the next packet is written while one leaves, and packets written as fast as they
leave go out back to back at one beat per cycle."""

import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from clio_tb import PKG as P, clio_header, param, reset, start_clock

HDR = P["CLIO_HEADER_LEN"]


def random_packet(rng, full, plen=None):
    """Header fields and a payload (random length unless given) and the expected wire bytes."""
    if plen is None:
        plen = rng.choice([0, 1, 8, 9, 23, 24, 25, 60, 72, 88, 130, full, rng.randrange(0, min(1400, full) + 1)])
    payload = bytes(rng.getrandbits(8) for _ in range(plen))
    f = dict(opcode=rng.choice([P["OP_READ_RESP"], P["OP_NACK"], P["OP_WRITE_RESP"]]),
             pid=rng.getrandbits(32), req_id=rng.getrandbits(32), retry_of=rng.getrandbits(32),
             va=rng.getrandbits(64), total_len=rng.getrandbits(32), offset=rng.getrandbits(32),
             flags=rng.choice([0, 4]), status=rng.randrange(12),
             session=rng.getrandbits(16), epoch=rng.getrandbits(32))
    return f, payload, clio_header(payload=payload, **f)


def pieces(rng, payload, full, width, max_piece=None):
    """The payload as in-order writes (offset, bytes, length): random lengths of 1..width
    (or exactly `max_piece`); a full buffer's last write runs past the buffer end (its bytes
    beyond the last beat must be dropped, not wrapped into beat 0)."""
    out = []
    pos = 0
    plen = len(payload)
    while pos < plen:
        k = min(max_piece or rng.randrange(1, width + 1), plen - pos)
        data = payload[pos:pos + k]
        n = k
        if plen == full and pos + k == plen:
            data += bytes(rng.getrandbits(8) for _ in range(width - k))
            n = width
        out.append((HDR + pos, data, n))
        pos += k
    return out


def drive_write(dut, off, data, n):
    dut.wr_off.value = off
    dut.wr_data.value = int.from_bytes(data, "little")
    dut.wr_len.value = n
    dut.wr_en.value = 1


def drive_header(dut, f, plen):
    dut.hdr_opcode.value, dut.hdr_flags.value, dut.hdr_status.value = f["opcode"], f["flags"], f["status"]
    dut.hdr_pid.value, dut.hdr_req_id.value, dut.hdr_retry_of.value = f["pid"], f["req_id"], f["retry_of"]
    dut.hdr_va.value, dut.hdr_total_len.value, dut.hdr_offset.value = f["va"], f["total_len"], f["offset"]
    dut.hdr_payload_len.value = plen
    dut.hdr_session.value, dut.hdr_epoch.value = f["session"], f["epoch"]


async def init(dut):
    start_clock(dut)
    dut.wr_en.value = 0
    dut.start.value = 0
    dut.m_axis_tready.value = 1
    await reset(dut)
    width = len(dut.wr_data) // 8
    return width, width * param(dut, "BEATS") - HDR


async def producer(dut, rng, packets, full, width, gaps, max_piece=None, with_last=None):
    """Writes and starts each packet as soon as `ready` allows (random idle cycles if `gaps`).
    Inputs are driven at the falling edge from the cycle's `ready`; the start comes with the
    last write when `with_last` (random when None), else in a cycle of its own."""
    for f, payload, _ in packets:
        ws = pieces(rng, payload, full, width, max_piece)
        together = (rng.random() < 0.5) if with_last is None else with_last
        steps = [("w", w) for w in ws]
        if together and steps:
            steps[-1] = ("ws", ws[-1])
        else:
            steps.append(("s", None))
        for kind, w in steps:
            while True:
                await FallingEdge(dut.clk)
                dut.wr_en.value = 0
                dut.start.value = 0
                if dut.ready.value and not (gaps and rng.random() < 0.2):
                    break
            if kind in ("w", "ws"):
                drive_write(dut, *w)
            if kind in ("s", "ws"):
                drive_header(dut, f, len(payload))
                dut.start.value = 1
        if gaps and rng.random() < 0.3:
            for _ in range(rng.randrange(1, 12)):
                await FallingEdge(dut.clk)
                dut.wr_en.value = 0
                dut.start.value = 0
    await FallingEdge(dut.clk)
    dut.wr_en.value = 0
    dut.start.value = 0


async def consumer(dut, rng, n, p_ready):
    """Collects n packets under random backpressure; returns them and the transfer cycles."""
    got = []
    cur = b""
    cycles = []
    cyc = 0
    while len(got) < n:
        dut.m_axis_tready.value = int(rng.random() < p_ready)
        await RisingEdge(dut.clk)
        cyc += 1
        if dut.m_axis_tvalid.value and dut.m_axis_tready.value:
            cycles.append(cyc)
            keep = int(dut.m_axis_tkeep.value)
            nbytes = bin(keep).count("1")
            assert keep == (1 << nbytes) - 1
            cur += int(dut.m_axis_tdata.value).to_bytes(len(dut.m_axis_tdata) // 8, "little")[:nbytes]
            if dut.m_axis_tlast.value:
                got.append(cur)
                cur = b""
    return got, cycles


@cocotb.test()
async def packets(dut):
    """Random headers and payloads (up to a full buffer) written in random unaligned pieces,
    one packet at a time, sent under random backpressure."""
    width, full = await init(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    for n in range(60):
        pkt = random_packet(rng, full)
        await producer(dut, rng, [pkt], full, width, gaps=False)
        got, _ = await consumer(dut, rng, 1, 0.7)
        assert got[0] == pkt[2], f"packet {n} (plen {len(pkt[1])}) differs"
        await RisingEdge(dut.clk)
        assert dut.busy.value == 0 and dut.ready.value == 1


@cocotb.test()
async def overlapped(dut):
    """Writer and reader run concurrently with random gaps and backpressure: packets leave
    in start order, each equal to its wire encoding, while the next ones are written."""
    width, full = await init(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED) + 1)
    pkts = [random_packet(rng, full) for _ in range(80)]
    wr = cocotb.start_soon(producer(dut, rng, pkts, full, width, gaps=True))
    got, _ = await consumer(dut, random.Random(rng.getrandbits(32)), len(pkts), 0.6)
    await wr
    for i, (g, p) in enumerate(zip(got, pkts)):
        assert g == p[2], f"packet {i} (plen {len(p[1])}) differs"


@cocotb.test()
async def line_rate(dut):
    """Full-beat payload writes at one per cycle into one buffer while the other leaves:
    packets of a whole buffer go out back to back, one beat per cycle (no CRC pass, no gap
    between packets), once the first packet's CRC is finished."""
    width, full = await init(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED) + 2)
    beats = param(dut, "BEATS")
    # The largest payload that keeps the write count below the beat count: a writer
    # that appends a beat per cycle (and starts in the next) keeps up with the output.
    plen = (beats - 1) * width - HDR + width // 2
    pkts = [random_packet(rng, full, plen) for _ in range(16)]
    wr = cocotb.start_soon(producer(dut, rng, pkts, full, width, gaps=False, max_piece=width, with_last=True))
    got, cycles = await consumer(dut, rng, len(pkts), 1.0)
    await wr
    for i, (g, p) in enumerate(zip(got, pkts)):
        assert g == p[2], f"packet {i} differs"
    nbeats = len(cycles)
    assert nbeats == len(pkts) * beats
    # After the first packet: every cycle carries a beat.
    steady = cycles[beats:]
    span = steady[-1] - steady[0] + 1
    dut._log.info("line rate: %d beats in %d cycles after the first packet (%d-beat packets)",
                  len(steady), span, beats)
    assert span == len(steady), f"{len(steady)} beats took {span} cycles"

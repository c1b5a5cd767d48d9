"""clio_axi_arbiter: the engine's single-beat port (reads, strobed writes, AW and W
accepted in different cycles) against a Python memory, under random channel pauses;
the lane's pipelined reads and strobed writes, a bucket-reader burst, a ring write and
the data mover's write and read bursts passed through
under their grants; no client without the grant reaches the port; the lane as the
second reader beside the bucket reader (`lane_rd`): ARs interleaved and held stable,
R beats routed by id, under random pauses."""

import itertools
import logging
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiRam

from tb_base import falling, param, reset, start_clock

GRANT_LANE, GRANT_ENGINE, GRANT_PTF, GRANT_RING, GRANT_MOVER = 0, 1, 2, 3, 4
SIZE = 2**16

INPUTS = ["s_lane_araddr", "s_lane_arvalid", "s_lane_rready", "s_lane_awaddr", "s_lane_awvalid",
          "s_lane_wdata", "s_lane_wstrb", "s_lane_wvalid", "s_lane_bready", "s_eng_addr", "s_eng_write",
          "s_eng_wdata", "s_eng_wstrb", "s_eng_valid", "s_ptf_arid", "s_ptf_araddr", "s_ptf_arlen",
          "s_ptf_arsize", "s_ptf_arburst", "s_ptf_arvalid", "s_ptf_rready", "s_ring_awid",
          "s_ring_awaddr", "s_ring_awlen", "s_ring_awsize", "s_ring_awburst", "s_ring_awvalid",
          "s_ring_wdata", "s_ring_wstrb", "s_ring_wlast", "s_ring_wvalid", "s_ring_bready",
          "s_ring_arid", "s_ring_araddr", "s_ring_arlen", "s_ring_arsize", "s_ring_arburst",
          "s_ring_arvalid", "s_ring_rready", "s_mv_awaddr", "s_mv_awlen", "s_mv_awvalid", "s_mv_wdata",
          "s_mv_wstrb", "s_mv_wlast", "s_mv_wvalid", "s_mv_bready", "s_mv_araddr", "s_mv_arlen",
          "s_mv_arvalid", "s_mv_rready", "lane_rd"]


def pauses(rng, p):
    """A pause generator: stall a channel with probability p per cycle."""
    while True:
        yield rng.random() < p


async def setup(dut, rng=None, p=0.0):
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.m_axi").setLevel(logging.WARNING)
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=SIZE)
    if rng is not None:
        for ch in (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel,
                   ram.read_if.ar_channel, ram.read_if.r_channel):
            ch.set_pause_generator(pauses(rng, p))
    for name in INPUTS:
        getattr(dut, name).value = 0
    dut.grant.value = GRANT_ENGINE
    await reset(dut)
    return ram


async def engine_access(dut, addr, write=False, wdata=0, wstrb=0, grant_after=None):
    """One engine command; returns the read beat (or None) and the cycles it took.
    With `grant_after` = (cycles, other grant), the port belongs to another client
    for the first cycles: the command must not reach the bus then."""
    await falling(dut)
    dut.s_eng_addr.value, dut.s_eng_write.value = addr, int(write)
    dut.s_eng_wdata.value, dut.s_eng_wstrb.value = wdata, wstrb
    dut.s_eng_valid.value = 1
    n = 0
    while True:
        if grant_after is not None:
            dut.grant.value = grant_after[1] if n < grant_after[0] else GRANT_ENGINE
        await ReadOnly()
        if grant_after is not None and n < grant_after[0]:
            assert not dut.s_eng_ready.value and not dut.m_axi_awvalid.value
            assert not dut.m_axi_wvalid.value and not dut.m_axi_arvalid.value
        accepted = bool(dut.s_eng_ready.value)
        await RisingEdge(dut.clk)
        n += 1
        if accepted:
            break
        await falling(dut)
    await falling(dut)
    dut.s_eng_valid.value = 0
    while True:
        await ReadOnly()
        if dut.m_eng_done.value:
            data = int(dut.m_eng_rdata.value) if not write else None
            await RisingEdge(dut.clk)
            return data, n
        await RisingEdge(dut.clk)


@cocotb.test()
async def engine_port(dut):
    """Random single-beat reads and strobed writes against a Python memory, with the RAM
    pausing every channel at random (AW and W accepted in different cycles)."""
    width = param(dut, "DATA_WIDTH") // 8
    rng = random.Random(int(cocotb.RANDOM_SEED))
    ram = await setup(dut, rng, 0.3)
    words = SIZE // width
    mem = {}
    for i in range(words):
        v = rng.getrandbits(8 * width)
        ram.write(i * width, v.to_bytes(width, "little"))
        mem[i] = v
    for _ in range(400):
        w = rng.randrange(words)
        addr = w * width + rng.randrange(width)  # the port aligns down to the beat
        if rng.random() < 0.5:
            data = rng.getrandbits(8 * width)
            strb = rng.choice([rng.getrandbits(width), (1 << width) - 1, 1 << rng.randrange(width)])
            await engine_access(dut, addr, True, data, strb)
            mask = sum(0xFF << (8 * b) for b in range(width) if strb >> b & 1)
            mem[w] = (mem[w] & ~mask) | (data & mask)
        else:
            got, _ = await engine_access(dut, addr)
            assert got == mem[w], f"read of word {w}"
    for i in range(words):
        assert int.from_bytes(ram.read(i * width, width), "little") == mem[i], f"word {i}"


@cocotb.test()
async def grants(dut):
    """Each client under its grant: lane reads back to back and strobed writes, a 4-beat
    bucket burst, a ring write; an engine command waits while another client owns the port."""
    width = param(dut, "DATA_WIDTH") // 8
    rng = random.Random(int(cocotb.RANDOM_SEED) + 1)
    ram = await setup(dut)
    image = [rng.getrandbits(8 * width) for _ in range(64)]
    for i, v in enumerate(image):
        ram.write(i * width, v.to_bytes(width, "little"))

    # Lane: 12 reads offered one per cycle, R collected in order.
    await falling(dut)
    dut.grant.value = GRANT_LANE
    want = [rng.randrange(64) for _ in range(12)]
    got, sent, cyc = [], 0, 0
    dut.s_lane_rready.value = 1
    while len(got) < len(want):
        await falling(dut)
        dut.s_lane_arvalid.value = int(sent < len(want))
        if sent < len(want):
            dut.s_lane_araddr.value = want[sent] * width + rng.randrange(width)
        await ReadOnly()
        assert not dut.s_ptf_arready.value and not dut.s_ring_arready.value and not dut.s_eng_ready.value
        if dut.s_lane_arvalid.value and dut.s_lane_arready.value:
            sent += 1
        if dut.s_lane_rvalid.value:
            got.append(int(dut.m_axi_rdata.value))
        await RisingEdge(dut.clk)
        cyc += 1
        assert cyc < 200
    assert got == [image[w] for w in want]
    await falling(dut)
    dut.s_lane_arvalid.value = 0
    dut.s_lane_rready.value = 0

    # Lane: strobed writes, AW then W (the RAM takes W after AW), each B collected.
    for _ in range(6):
        w, val, strb = rng.randrange(32, 48), rng.getrandbits(8 * width), rng.getrandbits(width)
        dut.s_lane_awaddr.value = w * width + rng.randrange(width)
        dut.s_lane_wdata.value, dut.s_lane_wstrb.value = val, strb
        dut.s_lane_awvalid.value, dut.s_lane_bready.value = 1, 1
        aw = wd = b = False
        for _ in range(100):
            await ReadOnly()
            assert not dut.s_eng_ready.value and not dut.s_ring_awready.value
            aw_now = bool(dut.s_lane_awvalid.value and dut.s_lane_awready.value)
            w_now = bool(dut.s_lane_wvalid.value and dut.s_lane_wready.value)
            b = bool(dut.s_lane_bvalid.value)
            await RisingEdge(dut.clk)
            await falling(dut)
            if aw_now:
                aw, dut.s_lane_awvalid.value, dut.s_lane_wvalid.value = True, 0, 1
            if w_now:
                wd, dut.s_lane_wvalid.value = True, 0
            if b:
                break
        assert aw and wd and b
        mask = sum(0xFF << (8 * i) for i in range(width) if strb >> i & 1)
        image[w] = (image[w] & ~mask) | (val & mask)
        assert int.from_bytes(ram.read(w * width, width), "little") == image[w]
    dut.s_lane_bready.value = 0

    # Bucket reader: one INCR burst of 4 beats.
    dut.grant.value = GRANT_PTF
    dut.s_ptf_araddr.value, dut.s_ptf_arlen.value = 8 * width, 3
    dut.s_ptf_arsize.value, dut.s_ptf_arburst.value = (width - 1).bit_length(), 1
    dut.s_ptf_arvalid.value, dut.s_ptf_rready.value = 1, 1
    beats = []
    for _ in range(100):
        await ReadOnly()
        assert not dut.s_lane_rvalid.value and not dut.s_ring_rvalid.value
        if dut.s_ptf_arvalid.value and dut.s_ptf_arready.value:
            await RisingEdge(dut.clk)
            await falling(dut)
            dut.s_ptf_arvalid.value = 0
            continue
        if dut.s_ptf_rvalid.value:
            beats.append(int(dut.m_axi_rdata.value))
            if len(beats) == 4:
                break
        await RisingEdge(dut.clk)
    assert beats == image[8:12]
    await RisingEdge(dut.clk)
    await falling(dut)
    dut.s_ptf_rready.value = 0

    # Ring DMA: one write beat (AW and W together), then its B.
    dut.grant.value = GRANT_RING
    val = rng.getrandbits(8 * width)
    dut.s_ring_awaddr.value, dut.s_ring_awsize.value, dut.s_ring_awburst.value = 20 * width, (width - 1).bit_length(), 1
    dut.s_ring_wdata.value, dut.s_ring_wstrb.value, dut.s_ring_wlast.value = val, (1 << width) - 1, 1
    dut.s_ring_awvalid.value, dut.s_ring_wvalid.value, dut.s_ring_bready.value = 1, 1, 1
    aw = w = b = False
    for _ in range(100):
        await ReadOnly()
        aw_now = dut.s_ring_awready.value and dut.s_ring_awvalid.value
        w_now = dut.s_ring_wready.value and dut.s_ring_wvalid.value
        b = b or bool(dut.s_ring_bvalid.value)
        await RisingEdge(dut.clk)
        await falling(dut)
        if aw_now:
            aw, dut.s_ring_awvalid.value = True, 0
        if w_now:
            w, dut.s_ring_wvalid.value = True, 0
        if b:
            break
    assert aw and w and b
    assert int.from_bytes(ram.read(20 * width, width), "little") == val
    dut.s_ring_bready.value = 0

    # Data mover: a 5-beat write burst (AW, then W beat by beat), then a read burst of it.
    dut.grant.value = GRANT_MOVER
    vals = [rng.getrandbits(8 * width) for _ in range(5)]
    dut.s_mv_awaddr.value, dut.s_mv_awlen.value, dut.s_mv_awvalid.value = 40 * width, 4, 1
    dut.s_mv_bready.value = 1
    sent, b = -1, False
    for _ in range(200):
        if sent >= 0 and sent < 5:
            dut.s_mv_wdata.value, dut.s_mv_wstrb.value = vals[sent], (1 << width) - 1
            dut.s_mv_wlast.value, dut.s_mv_wvalid.value = int(sent == 4), 1
        else:
            dut.s_mv_wvalid.value = 0
        await ReadOnly()
        assert not dut.s_ring_awready.value and not dut.s_lane_awready.value and not dut.s_eng_ready.value
        aw_now = bool(dut.s_mv_awvalid.value and dut.s_mv_awready.value)
        w_now = bool(dut.s_mv_wvalid.value and dut.s_mv_wready.value)
        b = bool(dut.s_mv_bvalid.value)
        await RisingEdge(dut.clk)
        await falling(dut)
        if aw_now:
            dut.s_mv_awvalid.value, sent = 0, 0
        if w_now:
            sent += 1
        if b:
            break
    assert b and sent == 5
    dut.s_mv_bready.value, dut.s_mv_wvalid.value = 0, 0
    for i, v in enumerate(vals):
        image[40 + i] = v
        assert int.from_bytes(ram.read((40 + i) * width, width), "little") == v
    dut.s_mv_araddr.value, dut.s_mv_arlen.value, dut.s_mv_arvalid.value = 40 * width, 4, 1
    dut.s_mv_rready.value = 1
    beats = []
    for _ in range(100):
        await ReadOnly()
        assert not dut.s_lane_rvalid.value and not dut.s_ring_rvalid.value and not dut.s_ptf_rvalid.value
        if dut.s_mv_arvalid.value and dut.s_mv_arready.value:
            await RisingEdge(dut.clk)
            await falling(dut)
            dut.s_mv_arvalid.value = 0
            continue
        if dut.s_mv_rvalid.value:
            beats.append(int(dut.m_axi_rdata.value))
            if len(beats) == 5:
                break
        await RisingEdge(dut.clk)
    assert beats == vals
    await RisingEdge(dut.clk)
    await falling(dut)
    dut.s_mv_rready.value = 0

    # An engine write and read that wait for the grant (ring, then bucket reader).
    for other, write in itertools.product((GRANT_RING, GRANT_PTF, GRANT_LANE, GRANT_MOVER), (True, False)):
        data = rng.getrandbits(8 * width)
        _, n = await engine_access(dut, 30 * width, write, data, (1 << width) - 1,
                                   grant_after=(5, other))
        assert n >= 6
        if write:
            image[30] = data
        else:
            assert _ == image[30]


@cocotb.test()
async def second_reader(dut):
    """GRANT_PTF with `lane_rd`: the bucket reader's 4-beat bursts (id 0) and the lane's
    single-beat reads (id LANE_ID) offered at once, the RAM and both R consumers pausing
    at random: every AR presented and not accepted stays presented unchanged, each reader
    gets exactly its own beats in order, the lane's writes do not reach the port."""
    width = param(dut, "DATA_WIDTH") // 8
    lane_id = param(dut, "LANE_ID")
    rng = random.Random(int(cocotb.RANDOM_SEED) + 2)
    ram = await setup(dut, rng, 0.3)
    image = [rng.getrandbits(8 * width) for _ in range(256)]
    for i, v in enumerate(image):
        ram.write(i * width, v.to_bytes(width, "little"))
    await falling(dut)
    dut.grant.value, dut.lane_rd.value = GRANT_PTF, 1
    # A lane write offered all along: the write channels stay the engine's.
    dut.s_lane_awvalid.value, dut.s_lane_wvalid.value = 1, 1
    dut.s_ptf_arsize.value, dut.s_ptf_arburst.value = (width - 1).bit_length(), 1
    lane_want = [rng.randrange(256) for _ in range(40)]
    ptf_want = [rng.randrange(0, 252, 4) for _ in range(8)]
    lane_got, ptf_got = [], []
    ls = ps = 0
    lane_on = ptf_on = False
    prev = None      # (arvalid, arready, arid, araddr) of the last cycle
    ids = set()
    for cyc in range(3000):
        await falling(dut)
        # Offers start at random; once valid, an offer stays unchanged until taken (as
        # the clients do), so a lane AR waiting on the RAM meets a new bucket read.
        if not lane_on and ls < len(lane_want) and rng.random() < 0.6:
            lane_on = True
            dut.s_lane_araddr.value = lane_want[ls] * width + rng.randrange(width)
        if not ptf_on and ps < len(ptf_want) and rng.random() < 0.2:
            ptf_on = True
            dut.s_ptf_araddr.value, dut.s_ptf_arlen.value = ptf_want[ps] * width, 3
        dut.s_lane_arvalid.value, dut.s_ptf_arvalid.value = int(lane_on), int(ptf_on)
        dut.s_lane_rready.value = int(rng.random() < 0.7)
        dut.s_ptf_rready.value = int(rng.random() < 0.7)
        await ReadOnly()
        assert not dut.m_axi_awvalid.value and not dut.m_axi_wvalid.value
        assert not dut.s_lane_awready.value and not dut.s_lane_wready.value
        arv, arr = bool(dut.m_axi_arvalid.value), bool(dut.m_axi_arready.value)
        cur = (arv, arr, int(dut.m_axi_arid.value), int(dut.m_axi_araddr.value))
        if prev is not None and prev[0] and not prev[1]:
            assert cur[0] and cur[2:] == prev[2:], f"cycle {cyc}: an AR changed before its ready"
        prev = cur
        if arv and arr:
            ids.add(cur[2])
        if dut.s_lane_arvalid.value and dut.s_lane_arready.value:
            assert cur[2] == lane_id
            ls, lane_on = ls + 1, False
        if dut.s_ptf_arvalid.value and dut.s_ptf_arready.value:
            assert cur[2] == 0
            ps, ptf_on = ps + 1, False
        if dut.m_axi_rvalid.value:
            rid = int(dut.m_axi_rid.value)
            assert bool(dut.s_lane_rvalid.value) == (rid == lane_id)
            assert bool(dut.s_ptf_rvalid.value) == (rid != lane_id)
            if dut.m_axi_rready.value:
                (lane_got if rid == lane_id else ptf_got).append(int(dut.m_axi_rdata.value))
        if len(lane_got) == len(lane_want) and len(ptf_got) == 4 * len(ptf_want):
            break
    assert lane_got == [image[w] for w in lane_want]
    assert ptf_got == [image[b + k] for b in ptf_want for k in range(4)]
    assert ids == {0, lane_id}
    await falling(dut)
    dut.s_lane_arvalid.value = dut.s_ptf_arvalid.value = 0
    dut.s_lane_awvalid.value = dut.s_lane_wvalid.value = 0
    dut.lane_rd.value = 0

"""clio_axi_arbiter: the engine's single-beat port (reads, strobed writes, AW and W
accepted in different cycles) against a Python memory, under random channel pauses;
the lane's pipelined reads and strobed writes, a bucket-reader burst, a ring write and
the data mover's write and read bursts passed through
under their grants; no client without the grant reaches the port; the lane as the
second reader (`lane_rd`) beside the bucket reader, the mover and the engine's port,
and across their turns: ARs interleaved and held stable, R beats routed by id, under
random pauses."""

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


class Owner:
    """A reader that owns the port while the lane reads beside it: its AR names the
    signals it drives, its R the beats it gets (bursts of `beats`)."""

    def __init__(self, dut, grant, width):
        self.dut, self.grant, self.width = dut, grant, width
        self.beats = 1 if grant == GRANT_ENGINE else 4
        self.on = False          # an AR (or the engine's command) presented
        self.due = 0             # beats outstanding
        self.want, self.got = [], []

    def offer(self, base):
        d = self.dut
        self.on = True
        self.want += [base + k for k in range(self.beats)]
        if self.grant == GRANT_PTF:
            d.s_ptf_araddr.value, d.s_ptf_arlen.value = base * self.width, 3
        elif self.grant == GRANT_MOVER:
            d.s_mv_araddr.value, d.s_mv_arlen.value = base * self.width, 3
        else:
            d.s_eng_addr.value, d.s_eng_write.value = base * self.width, 0

    def drive(self, rng):
        d = self.dut
        d.s_ptf_arvalid.value = int(self.on and self.grant == GRANT_PTF)
        d.s_mv_arvalid.value = int(self.on and self.grant == GRANT_MOVER)
        d.s_eng_valid.value = int(self.on and self.grant == GRANT_ENGINE)
        d.s_ptf_rready.value = int(rng.random() < 0.7)
        d.s_mv_rready.value = int(rng.random() < 0.7)

    def ar_taken(self):
        d = self.dut
        if self.grant == GRANT_LANE:
            return False                             # the lane owns the port: no other reader
        name = {GRANT_PTF: "s_ptf_arready", GRANT_MOVER: "s_mv_arready", GRANT_ENGINE: "s_eng_ready"}[self.grant]
        return self.on and bool(getattr(d, name).value)

    def r_beat(self):
        """The beat this reader takes in this cycle, or None."""
        d = self.dut
        if self.grant == GRANT_LANE:
            return None
        if self.grant == GRANT_ENGINE:
            return int(d.m_eng_rdata.value) if d.m_eng_done.value else None
        rv, rr = (d.s_ptf_rvalid, d.s_ptf_rready) if self.grant == GRANT_PTF else (d.s_mv_rvalid, d.s_mv_rready)
        return int(d.m_axi_rdata.value) if rv.value and rr.value else None

    def quiet(self):
        return not self.on and self.due == 0


async def lane_beside(dut, grants, seed):
    """The lane's single-beat reads (id LANE_ID) beside owners that take turns (`grants`,
    switched only while the owner is quiet, the lane's reads still in flight), the RAM
    and every R consumer pausing at random: every AR presented and not accepted stays
    presented unchanged, each reader gets exactly its own beats in order, only the
    owner's id and LANE_ID reach the port, the lane's writes never."""
    width = param(dut, "DATA_WIDTH") // 8
    lane_id = param(dut, "LANE_ID")
    rng = random.Random(int(cocotb.RANDOM_SEED) + seed)
    ram = await setup(dut, rng, 0.3)
    image = [rng.getrandbits(8 * width) for _ in range(256)]
    for i, v in enumerate(image):
        ram.write(i * width, v.to_bytes(width, "little"))
    await falling(dut)
    owners = {g: Owner(dut, g, width) for g in set(grants)}
    turn = 0
    owner = owners[grants[0]]
    dut.grant.value, dut.lane_rd.value = owner.grant, 1
    # A lane write offered all along (not while the lane owns the port: it would write):
    # the write channels stay the owner's.
    lane_writes = GRANT_LANE not in grants
    dut.s_lane_awvalid.value, dut.s_lane_wvalid.value = int(lane_writes), int(lane_writes)
    dut.s_ptf_arsize.value, dut.s_ptf_arburst.value = (width - 1).bit_length(), 1
    lane_want = [rng.randrange(256) for _ in range(40)]
    lane_got = []
    ls, lane_on, reads, switches = 0, False, 0, 0
    prev = None      # (arvalid, arready, arid, araddr) of the last cycle
    prev_grant, taken_over = None, 0
    ids = set()
    for cyc in range(4000):
        await falling(dut)
        # The owner changes only while quiet, as the top's grant does; the lane goes on.
        # Mostly right after a cycle in which a lane AR waited on the RAM, so that every
        # seed meets the case the run checks for (a waiting AR across a change of owner).
        lane_waited = prev is not None and prev[0] and not prev[1] and prev[2] == lane_id
        if owner.quiet() and len(grants) > 1 and rng.random() < (0.8 if lane_waited else 0.2):
            turn = (turn + 1) % len(grants)
            owner = owners[grants[turn]]
            dut.grant.value = owner.grant
            switches += 1
        # Offers start at random; once valid, an offer stays unchanged until taken (as
        # the clients do), so a lane AR waiting on the RAM meets a new read of the owner.
        if not lane_on and ls < len(lane_want) and rng.random() < 0.6:
            lane_on = True
            dut.s_lane_araddr.value = lane_want[ls] * width + rng.randrange(width)
        if owner.quiet() and owner.grant != GRANT_LANE and reads < 24 and rng.random() < 0.2:
            owner.offer(rng.randrange(0, 252, 4))
            reads += 1
        for o in owners.values():
            if o is not owner:
                o.on = False
        owner.drive(rng)
        dut.s_lane_arvalid.value = int(lane_on)
        dut.s_lane_rready.value = int(rng.random() < 0.7)
        await ReadOnly()
        assert not dut.m_axi_awvalid.value and not dut.m_axi_wvalid.value
        if owner.grant != GRANT_LANE:
            assert not dut.s_lane_awready.value and not dut.s_lane_wready.value
        arv, arr = bool(dut.m_axi_arvalid.value), bool(dut.m_axi_arready.value)
        cur = (arv, arr, int(dut.m_axi_arid.value), int(dut.m_axi_araddr.value))
        if prev is not None and prev[0] and not prev[1]:
            assert cur[0] and cur[2:] == prev[2:], f"cycle {cyc}: an AR changed before its ready"
            if prev[2] == lane_id and owner.grant != prev_grant:
                taken_over += 1              # the lane's AR waited across a change of owner
        prev, prev_grant = cur, owner.grant
        if arv and arr:
            ids.add(cur[2])
        if dut.s_lane_arvalid.value and dut.s_lane_arready.value:
            assert cur[2] == lane_id
            ls, lane_on = ls + 1, False
        if owner.ar_taken():
            assert arv and arr and cur[2] == 0
            owner.on, owner.due = False, owner.beats
        if dut.m_axi_rvalid.value:
            rid = int(dut.m_axi_rid.value)
            assert bool(dut.s_lane_rvalid.value) == (rid == lane_id)
            assert bool(dut.s_ptf_rvalid.value) == (rid != lane_id and owner.grant == GRANT_PTF)
            assert bool(dut.s_mv_rvalid.value) == (rid != lane_id and owner.grant == GRANT_MOVER)
            if rid == lane_id and dut.m_axi_rready.value:
                lane_got.append(int(dut.m_axi_rdata.value))
        beat = owner.r_beat()
        if beat is not None:
            assert owner.due > 0, "a beat the owner did not ask for"
            owner.got.append(beat)
            owner.due -= 1
        if len(lane_got) == len(lane_want) and (reads == 24 or set(grants) == {GRANT_LANE}) \
                and all(o.quiet() for o in owners.values()):
            break
    assert lane_got == [image[w] for w in lane_want]
    for o in owners.values():
        assert o.got == [image[w] for w in o.want], o.grant
    assert ids == {0, lane_id}
    assert len(grants) == 1 or switches >= 3, switches
    if GRANT_LANE in grants:
        assert taken_over > 0, "no lane AR waited across a change of owner"
    await falling(dut)
    dut.s_lane_arvalid.value = dut.s_ptf_arvalid.value = dut.s_mv_arvalid.value = dut.s_eng_valid.value = 0
    dut.s_lane_awvalid.value = dut.s_lane_wvalid.value = 0
    dut.lane_rd.value = 0


@cocotb.test()
async def second_reader(dut):
    """GRANT_PTF with `lane_rd`: the bucket reader's 4-beat bursts (id 0) and the lane's
    reads beside them (`lane_beside`)."""
    await lane_beside(dut, [GRANT_PTF], 2)


@cocotb.test()
async def second_reader_mover(dut):
    """GRANT_MOVER with `lane_rd`: the data mover's 4-beat read bursts and the lane's reads."""
    await lane_beside(dut, [GRANT_MOVER], 3)


@cocotb.test()
async def second_reader_engine(dut):
    """GRANT_ENGINE with `lane_rd`: the engine port's single-beat reads and the lane's reads."""
    await lane_beside(dut, [GRANT_ENGINE], 4)


@cocotb.test()
async def lane_reads_taken_over(dut):
    """The lane's reads as the port's owner (GRANT_LANE) carry LANE_ID too, and the engine
    or the mover takes the port over with them in flight, an AR of the lane waiting on
    the RAM among them (a read miss handed over early): it stays presented, each reader
    gets its own beats."""
    await lane_beside(dut, [GRANT_LANE, GRANT_ENGINE, GRANT_LANE, GRANT_MOVER], 6)


@cocotb.test()
async def second_reader_across_owners(dut):
    """The port passing from the bucket reader to the engine and the mover (a walk, its
    insert and the READ's data) with the lane's reads in flight throughout."""
    await lane_beside(dut, [GRANT_PTF, GRANT_ENGINE, GRANT_MOVER], 5)

"""edm_xdma_path (ring memory + ring engine + register block) driven exactly
as host-sdk/xdma's XdmaLink drives a card, through the two masters the XDMA
core gives the card: the user BAR over AXI-Lite (one 32-bit word per access)
and DMA over the 512-bit AXI4 port, both with random back-pressure.

probe: ID, VERSION, STATUS.READY, the geometry (SLOT_BYTES, SLOT_COUNT, the
64-bit ring bases) and the four ring indices, checked like XdmaLink::probe
(Geometry::validate). send: the slot image (len u16 | rsvd u16 | packet, only
its bytes) DMA-written at the H2C slot, then H2C_HEAD; while the ring is full
it polls H2C_TAIL and meanwhile takes published answers off the C2H ring.
recv: poll C2H_HEAD, DMA-read the whole slot, parse it like xdma::parse_slot,
free it with C2H_TAIL. The bench's packet handler (a stand-in for what will
sit behind the rings on the card) answers every packet with a transformed
copy, with random back-pressure and gaps. Every answer must come back intact
and in order; a malformed slot must be skipped and counted in ERRORS."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiMaster

from clio_tb import PKG as P
from tb_base import start_clock
from zcu_tb import pause_channels, pulse_reset

HDR = P["XDMA_SLOT_HEADER_LEN"]


def reg(name):
    return P[f"XDMA_REG_{name}"]


def answer(p):
    """The bench handler's answer to packet p."""
    return bytes(reversed(p)) + bytes([len(p) & 0xFF])


class Host:
    """XdmaLink over the card's AXI-Lite (user BAR) and AXI4 (DMA) ports."""

    def __init__(self, dut, user, dma):
        self.dut, self.user, self.dma = dut, user, dma
        self.backlog = []

    async def rd(self, off):
        r = await with_timeout(self.user.read(off, 4), 20_000, "ns")
        assert int(r.resp) == 0, f"user BAR read {off:#x}: resp {int(r.resp)}"
        return int.from_bytes(r.data, "little")

    async def wr(self, off, v):
        r = await with_timeout(self.user.write(off, v.to_bytes(4, "little")), 20_000, "ns")
        assert int(r.resp) == 0, f"user BAR write {off:#x}: resp {int(r.resp)}"

    async def probe(self):
        assert await self.rd(reg("ID")) == P["XDMA_ID"]
        assert await self.rd(reg("VERSION")) == P["XDMA_VERSION"]
        st = await self.rd(reg("STATUS"))
        assert st & P["XDMA_STATUS_READY"], f"STATUS {st:#x}: not ready"
        self.slot_bytes = await self.rd(reg("SLOT_BYTES"))
        self.count = await self.rd(reg("SLOT_COUNT"))
        self.h2c_base = await self.rd(reg("H2C_BASE")) | await self.rd(reg("H2C_BASE") + 4) << 32
        self.c2h_base = await self.rd(reg("C2H_BASE")) | await self.rd(reg("C2H_BASE") + 4) << 32
        # Geometry::validate.
        assert self.count and self.count & (self.count - 1) == 0
        assert self.slot_bytes % 4 == 0 and self.slot_bytes >= HDR + P["CLIO_HEADER_LEN"]
        ring = self.count * self.slot_bytes
        assert not (self.h2c_base < self.c2h_base + ring and self.c2h_base < self.h2c_base + ring)
        self.h2c_head = await self.rd(reg("H2C_HEAD"))
        self.h2c_tail_seen = await self.rd(reg("H2C_TAIL"))
        self.c2h_tail = await self.rd(reg("C2H_TAIL"))
        assert (await self.rd(reg("C2H_HEAD")) - self.c2h_tail) & 0xFFFFFFFF <= self.count

    def slot(self, base, index):
        return base + (index & (self.count - 1)) * self.slot_bytes

    async def send_image(self, image):
        while (self.h2c_head - self.h2c_tail_seen) & 0xFFFFFFFF >= self.count:
            self.h2c_tail_seen = await self.rd(reg("H2C_TAIL"))
            if (self.h2c_head - self.h2c_tail_seen) & 0xFFFFFFFF < self.count:
                break
            # The card may wait for C2H room: take its answers meanwhile.
            p = await self.take(poll_once=True)
            if p is not None:
                self.backlog.append(p)
        r = await with_timeout(self.dma.write(self.slot(self.h2c_base, self.h2c_head), image), 50_000, "ns")
        assert int(r.resp) == 0
        self.h2c_head = (self.h2c_head + 1) & 0xFFFFFFFF
        await self.wr(reg("H2C_HEAD"), self.h2c_head)

    async def send(self, packet):
        assert len(packet) <= self.slot_bytes - HDR
        await self.send_image(len(packet).to_bytes(2, "little") + b"\0\0" + packet)

    async def take(self, poll_once=False):
        while True:
            head = await self.rd(reg("C2H_HEAD"))
            ahead = (head - self.c2h_tail) & 0xFFFFFFFF
            assert ahead <= self.count, f"C2H_HEAD {head} ran {ahead} past the tail"
            if ahead:
                break
            if poll_once:
                return None
        r = await with_timeout(self.dma.read(self.slot(self.c2h_base, self.c2h_tail), self.slot_bytes), 50_000, "ns")
        assert int(r.resp) == 0
        slot = bytes(r.data)
        n = int.from_bytes(slot[0:2], "little")
        assert int.from_bytes(slot[2:4], "little") == 0, "C2H slot reserved field set"
        assert HDR + n <= len(slot), "C2H slot length too large"
        self.c2h_tail = (self.c2h_tail + 1) & 0xFFFFFFFF
        await self.wr(reg("C2H_TAIL"), self.c2h_tail)
        return slot[HDR:HDR + n]

    async def recv(self):
        if self.backlog:
            return self.backlog.pop(0)
        return await self.take()


async def handler(dut, rng, ready_prob, gap_prob):
    """The bench's card-side handler: every H2C packet is answered on s_axis."""
    cur = bytearray()
    while True:
        ready = int(rng.random() < ready_prob)
        dut.m_axis_tready.value = ready
        await RisingEdge(dut.clk)
        if not (ready and int(dut.m_axis_tvalid.value)):
            continue
        keep = int(dut.m_axis_tkeep.value)
        data = int(dut.m_axis_tdata.value).to_bytes(8, "little")
        cur += bytes(data[i] for i in range(8) if keep >> i & 1)
        if not int(dut.m_axis_tlast.value):
            continue
        dut.m_axis_tready.value = 0
        out = answer(bytes(cur))
        cur = bytearray()
        beats = [out[i:i + 8] for i in range(0, len(out), 8)]
        for i, b in enumerate(beats):
            while rng.random() < gap_prob:
                dut.s_axis_tvalid.value = 0
                await RisingEdge(dut.clk)
            dut.s_axis_tdata.value = int.from_bytes(b.ljust(8, b"\0"), "little")
            dut.s_axis_tkeep.value = (1 << len(b)) - 1
            dut.s_axis_tlast.value = int(i == len(beats) - 1)
            dut.s_axis_tvalid.value = 1
            await RisingEdge(dut.clk)
            while not int(dut.s_axis_tready.value):
                await RisingEdge(dut.clk)
        dut.s_axis_tvalid.value = 0


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    for name in ("s_axil", "s_axi"):
        logging.getLogger(f"cocotb.{dut._name}.{name}").setLevel(logging.WARNING)
    user = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    dma = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    pause_channels(user, rng, 0.2)
    pause_channels(dma, rng, 0.2)
    dut.m_axis_tready.value = 0
    dut.s_axis_tvalid.value = 0
    dut.s_axis_tdata.value = 0
    dut.s_axis_tkeep.value = 0
    dut.s_axis_tlast.value = 0
    dut.ready.value = 1
    dut.link_up.value = 1
    # Distinct values, so a swapped connection shows (checked in round_trips).
    dut.xlate_refused.value = 0x5EF
    dut.xlate_timeouts.value = 0x71E
    dut.xlate_bad.value = 0xBAD
    await pulse_reset(dut)
    return rng, Host(dut, user, dma)


@cocotb.test()
async def round_trips(dut):
    rng, host = await setup(dut, 1)
    cocotb.start_soon(handler(dut, rng, 0.6, 0.2))
    await host.probe()
    assert await host.rd(reg("STATUS")) == P["XDMA_STATUS_READY"] | P["XDMA_STATUS_LINK_UP"]
    for name, v in (("XLATE_REFUSED", 0x5EF), ("XLATE_TIMEOUTS", 0x71E), ("XLATE_BAD", 0xBAD)):
        assert await host.rd(reg(name)) == v, name
    maxp = host.slot_bytes - HDR - 1  # the answer is one byte longer
    packets = [bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 7, 40, 64, 65, maxp, rng.randrange(1, maxp + 1)])))
               for _ in range(30)]
    got = []
    # A burst larger than both rings before reading: the backlog keeps it from deadlocking.
    for p in packets[:20]:
        await host.send(p)
    while len(got) < 20:
        got.append(await host.recv())
    for p in packets[20:]:
        await host.send(p)
        got.append(await host.recv())
    assert got == [answer(p) for p in packets]
    assert await host.rd(reg("ERRORS")) == 0


@cocotb.test()
async def malformed_slot_counted(dut):
    rng, host = await setup(dut, 2)
    cocotb.start_soon(handler(dut, rng, 0.8, 0.1))
    await host.probe()
    await host.send(b"first")
    await host.send_image((3).to_bytes(2, "little") + b"\x01\x00abc")   # reserved set
    await host.send_image((host.slot_bytes).to_bytes(2, "little") + b"\0\0")  # too long
    await host.send(b"second")
    assert await host.recv() == answer(b"first")
    assert await host.recv() == answer(b"second")
    assert await host.rd(reg("ERRORS")) == 2
    assert await host.rd(reg("H2C_TAIL")) == 4

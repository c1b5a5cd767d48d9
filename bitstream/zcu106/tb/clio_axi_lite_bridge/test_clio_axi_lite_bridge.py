"""clio_axi_lite_bridge: a cocotbext-axi AXI4 master (128-bit, 16-bit IDs, the
PS's M_AXI_HPM0_FPD) against a Python AXI-Lite slave with random ready and
response delays. 32-bit, 64-bit, byte and 128-bit burst accesses at random
addresses read and write exactly what a Python word-memory reference says
(words with no strobe are not written), IDs come back, SLVERR from the slave
reaches the AXI4 response, and reads and writes issued together both finish."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiBus, AxiMaster

from tb_base import start_clock
from zcu_tb import pause_channels, pulse_reset

WINDOW = 1 << 12          # LITE_ADDR_WIDTH = 12
ERR_FROM = 0x800          # the slave model answers SLVERR from here up
HOLE = 0x700              # ... and for this one word
LIMIT = 0x700             # random accesses stay below HOLE
OKAY, SLVERR = 0, 2


class LiteSlave:
    """AXI-Lite slave: 32-bit words, random ready/valid timing, SLVERR at HOLE and from ERR_FROM up."""

    def __init__(self, dut, rng):
        self.d, self.rng = dut, rng
        self.mem = {}
        self.writes = []

    async def write_side(self):
        d, rng = self.d, self.rng
        d.m_axil_awready.value = 0
        d.m_axil_wready.value = 0
        d.m_axil_bvalid.value = 0
        while True:
            addr = data = strb = None
            while addr is None or data is None:
                d.m_axil_awready.value = int(addr is None and rng.random() < 0.6)
                d.m_axil_wready.value = int(data is None and rng.random() < 0.6)
                await RisingEdge(d.clk)
                if addr is None and int(d.m_axil_awvalid.value) and int(d.m_axil_awready.value):
                    addr = int(d.m_axil_awaddr.value)
                if data is None and int(d.m_axil_wvalid.value) and int(d.m_axil_wready.value):
                    data, strb = int(d.m_axil_wdata.value), int(d.m_axil_wstrb.value)
            d.m_axil_awready.value = 0
            d.m_axil_wready.value = 0
            for _ in range(rng.randrange(3)):
                await RisingEdge(d.clk)
            assert addr % 4 == 0, f"unaligned AXI-Lite write {addr:#x}"
            self.writes.append((addr, strb))
            ok = addr < ERR_FROM and addr != HOLE
            if ok:
                word = self.mem.get(addr, 0)
                for b in range(4):
                    if strb >> b & 1:
                        word = (word & ~(0xFF << 8 * b)) | (data & (0xFF << 8 * b))
                self.mem[addr] = word
            d.m_axil_bresp.value = OKAY if ok else SLVERR
            d.m_axil_bvalid.value = 1
            while True:
                await RisingEdge(d.clk)
                if int(d.m_axil_bready.value):
                    break
            d.m_axil_bvalid.value = 0

    async def read_side(self):
        d, rng = self.d, self.rng
        d.m_axil_arready.value = 0
        d.m_axil_rvalid.value = 0
        while True:
            d.m_axil_arready.value = int(rng.random() < 0.6)
            await RisingEdge(d.clk)
            if not (int(d.m_axil_arvalid.value) and int(d.m_axil_arready.value)):
                continue
            addr = int(d.m_axil_araddr.value)
            d.m_axil_arready.value = 0
            for _ in range(rng.randrange(3)):
                await RisingEdge(d.clk)
            assert addr % 4 == 0, f"unaligned AXI-Lite read {addr:#x}"
            ok = addr < ERR_FROM and addr != HOLE
            d.m_axil_rdata.value = self.mem.get(addr, 0) if ok else 0
            d.m_axil_rresp.value = OKAY if ok else SLVERR
            d.m_axil_rvalid.value = 1
            while True:
                await RisingEdge(d.clk)
                if int(d.m_axil_rready.value):
                    break
            d.m_axil_rvalid.value = 0

    def read_bytes(self, addr, n):
        out = bytearray()
        for a in range(addr, addr + n):
            out.append((self.mem.get(a & ~3, 0) >> 8 * (a & 3)) & 0xFF)
        return bytes(out)


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.s_axi").setLevel(logging.WARNING)
    master = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    pause_channels(master, rng, 0.3)
    slave = LiteSlave(dut, rng)
    await pulse_reset(dut)
    cocotb.start_soon(slave.write_side())
    cocotb.start_soon(slave.read_side())
    return rng, master, slave


@cocotb.test()
async def random_accesses(dut):
    rng, master, slave = await setup(dut, 41)
    ref = bytearray(LIMIT)
    base = 0xA0_0000_0000     # the HPM0 window; only the low 12 bits reach the block
    for _ in range(150):
        kind = rng.choice(["w32", "w64", "w8", "burst"])
        if kind == "w32":
            addr, n, size = rng.randrange(0, LIMIT, 4), 4, 2
        elif kind == "w64":
            addr, n, size = rng.randrange(0, LIMIT, 8), 8, 3
        elif kind == "w8":
            addr, n, size = rng.randrange(0, LIMIT), 1, 0
        else:
            beats = rng.randint(1, 4)
            addr, n, size = rng.randrange(0, LIMIT - 16 * beats, 16), 16 * beats, 4
        data = bytes(rng.randrange(256) for _ in range(n))
        awid = rng.randrange(1 << 16)
        w = await with_timeout(master.write(base + addr, data, awid=awid, size=size), 200_000, "ns")
        assert int(w.resp) == OKAY, (kind, hex(addr))
        ref[addr:addr + n] = data
        r = await with_timeout(master.read(base + addr, n, arid=rng.randrange(1 << 16), size=size), 200_000, "ns")
        assert int(r.resp) == OKAY
        assert r.data == bytes(ref[addr:addr + n]), (kind, hex(addr))
    assert slave.read_bytes(0, LIMIT) == bytes(ref)
    # No AXI-Lite write carried an empty strobe.
    assert all(strb for _, strb in slave.writes)


@cocotb.test()
async def errors_propagate(dut):
    rng, master, _ = await setup(dut, 42)
    r = await with_timeout(master.read(0x900, 4, size=2), 100_000, "ns")
    assert int(r.resp) == SLVERR and r.data == bytes(4)
    w = await with_timeout(master.write(0x904, b"\x01\x02\x03\x04", size=2), 100_000, "ns")
    assert int(w.resp) == SLVERR
    # A burst whose first word fails reports SLVERR for the write as a whole,
    # and a read beat holding a failing word reports SLVERR for that beat.
    w = await with_timeout(master.write(HOLE, bytes(32), size=4), 100_000, "ns")
    assert int(w.resp) == SLVERR
    r = await with_timeout(master.read(HOLE, 32, size=4), 100_000, "ns")
    assert int(r.resp) == SLVERR
    w = await with_timeout(master.write(0x10, bytes(4), size=2), 100_000, "ns")
    assert int(w.resp) == OKAY


@cocotb.test()
async def reads_and_writes_together(dut):
    """Concurrent streams of reads and writes with distinct IDs all complete with their own data."""
    rng, master, slave = await setup(dut, 43)
    # Disjoint halves: writes to the low half, reads of a preset high half.
    for a in range(0x400, LIMIT, 4):
        slave.mem[a] = rng.getrandbits(32)
    ops = []
    for i in range(20):
        a = rng.randrange(0, 0x400, 4)
        ops.append(("w", a, master.init_write(a, rng.randbytes(4), awid=i, size=2)))
        b = rng.randrange(0x400, LIMIT, 4)
        ops.append(("r", b, master.init_read(b, 4, arid=i, size=2)))
    for kind, a, op in ops:
        await with_timeout(op.wait(), 200_000, "ns")
        if kind == "r":
            assert op.data.data == slave.read_bytes(a, 4)
            assert int(op.data.resp) == OKAY

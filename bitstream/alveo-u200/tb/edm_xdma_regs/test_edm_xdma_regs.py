"""edm_xdma_regs against the register map of the wire crate (XDMA_* of the
generated clio_pkg.sv, from host-sdk/wire/src/xdma.rs), through AXI-Lite
with random back-pressure on every channel: ID, VERSION and the ring
geometry read the crate's values and the parameters; H2C_HEAD and C2H_TAIL
take random values under random byte strobes and appear on their outputs;
H2C_TAIL, C2H_HEAD, STATUS and ERRORS follow the ring engine's inputs,
XLATE_REFUSED, XLATE_TIMEOUTS and XLATE_BAD the translator's counters;
every other offset, and a write to a read-only register, answers SLVERR
(reads 0) and changes nothing; reset clears the host indices and ERRORS."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from clio_tb import PKG as P
from tb_base import start_clock
from zcu_tb import OKAY, SLVERR, axil_read, axil_write, pause_channels, pulse_reset

RW = {"H2C_HEAD": "h2c_head", "C2H_TAIL": "c2h_tail"}
RO = ["ID", "VERSION", "H2C_TAIL", "C2H_HEAD", "SLOT_BYTES", "SLOT_COUNT", "H2C_BASE", "C2H_BASE",
      "STATUS", "ERRORS", "XLATE_REFUSED", "XLATE_TIMEOUTS", "XLATE_BAD"]
XLATE = {"XLATE_REFUSED": "xlate_refused", "XLATE_TIMEOUTS": "xlate_timeouts", "XLATE_BAD": "xlate_bad"}
WIDE = {"H2C_BASE", "C2H_BASE"}


def reg(name):
    return P[f"XDMA_REG_{name}"]


def mapped():
    out = set()
    for name in list(RW) + RO:
        out.add(reg(name))
        if name in WIDE:
            out.add(reg(name) + 4)
    return out


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.s_axil").setLevel(logging.WARNING)
    m = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    pause_channels(m, rng, 0.3)
    dut.h2c_tail.value = 0
    dut.c2h_head.value = 0
    dut.ready.value = 0
    dut.link_up.value = 0
    dut.err_add.value = 0
    for port in XLATE.values():
        getattr(dut, port).value = 0
    await pulse_reset(dut)
    return rng, m




@cocotb.test()
async def identity_and_geometry(dut):
    _, m = await setup(dut, 1)
    assert P["XDMA_ID"].to_bytes(4, "little") == b"CLIO"
    assert await axil_read(m, reg("ID")) == (P["XDMA_ID"], OKAY)
    assert await axil_read(m, reg("VERSION")) == (P["XDMA_VERSION"], OKAY)
    assert await axil_read(m, reg("SLOT_BYTES")) == (int(dut.SLOT_BYTES.value), OKAY)
    assert await axil_read(m, reg("SLOT_COUNT")) == (int(dut.SLOT_COUNT.value), OKAY)
    for name, param in (("H2C_BASE", dut.H2C_BASE), ("C2H_BASE", dut.C2H_BASE)):
        lo, r0 = await axil_read(m, reg(name))
        hi, r1 = await axil_read(m, reg(name) + 4)
        assert (r0, r1) == (OKAY, OKAY)
        assert lo | hi << 32 == int(param.value), name
    # Out of reset: indices 0, not ready, no link.
    for name in ("H2C_HEAD", "H2C_TAIL", "C2H_HEAD", "C2H_TAIL", "STATUS", "ERRORS", *XLATE):
        assert await axil_read(m, reg(name)) == (0, OKAY), name
    # The block ends at XDMA_BLOCK_LEN: the last register is right below it.
    assert max(mapped()) + 4 == P["XDMA_BLOCK_LEN"]


@cocotb.test()
async def host_indices(dut):
    rng, m = await setup(dut, 2)
    ref = {n: 0 for n in RW}
    for _ in range(40):
        name = rng.choice(list(RW))
        val = rng.getrandbits(32)
        strb = rng.choice([0xF, 0xF, rng.randrange(1, 16)])
        assert await axil_write(m, reg(name), val, strb) == OKAY
        for b in range(4):
            if strb >> b & 1:
                ref[name] = (ref[name] & ~(0xFF << 8 * b)) | (val & (0xFF << 8 * b))
        await RisingEdge(dut.clk)
        for n, port in RW.items():
            assert int(getattr(dut, port).value) == ref[n], n
            assert await axil_read(m, reg(n)) == (ref[n], OKAY), n
    await pulse_reset(dut)
    for n, port in RW.items():
        assert int(getattr(dut, port).value) == 0
        assert await axil_read(m, reg(n)) == (0, OKAY)


@cocotb.test()
async def engine_inputs(dut):
    rng, m = await setup(dut, 3)
    ready_bit, link_bit = P["XDMA_STATUS_READY"], P["XDMA_STATUS_LINK_UP"]
    for ready in (0, 1):
        for link in (0, 1):
            dut.ready.value = ready
            dut.link_up.value = link
            await RisingEdge(dut.clk)
            assert await axil_read(m, reg("STATUS")) == ((ready_bit if ready else 0) | (link_bit if link else 0), OKAY)
    # The translator's counters are shown as they are.
    for _ in range(5):
        vals = {n: rng.getrandbits(32) for n in XLATE}
        for n, port in XLATE.items():
            getattr(dut, port).value = vals[n]
        await RisingEdge(dut.clk)
        for n in XLATE:
            assert await axil_read(m, reg(n)) == (vals[n], OKAY), n
    for _ in range(5):
        t, h = rng.getrandbits(32), rng.getrandbits(32)
        dut.h2c_tail.value = t
        dut.c2h_head.value = h
        await RisingEdge(dut.clk)
        assert await axil_read(m, reg("H2C_TAIL")) == (t, OKAY)
        assert await axil_read(m, reg("C2H_HEAD")) == (h, OKAY)
    # ERRORS adds err_add every cycle and wraps.
    total = 0
    for _ in range(50):
        v = rng.choice([0, 0, 1, rng.getrandbits(32)])
        dut.err_add.value = v
        total = (total + v) & 0xFFFFFFFF
        await RisingEdge(dut.clk)
    dut.err_add.value = 0
    await RisingEdge(dut.clk)
    assert await axil_read(m, reg("ERRORS")) == (total, OKAY)
    await pulse_reset(dut)
    assert await axil_read(m, reg("ERRORS")) == (0, OKAY)


@cocotb.test()
async def errors(dut):
    """Unmapped offsets: SLVERR, read 0. Read-only registers: write SLVERR, value kept."""
    rng, m = await setup(dut, 4)
    window = 1 << int(dut.ADDR_WIDTH.value)
    holes = [o for o in range(0, window, 4) if o not in mapped()]
    picks = rng.sample(holes, 40) + [o for o in range(P["XDMA_BLOCK_LEN"], P["XDMA_BLOCK_LEN"] + 36, 4)]
    for off in picks:
        assert await axil_read(m, off) == (0, SLVERR), hex(off)
        assert await axil_write(m, off, rng.getrandbits(32)) == SLVERR, hex(off)
    dut.h2c_tail.value = 7
    dut.c2h_head.value = 9
    dut.err_add.value = 0
    for name in RO:
        offs = [reg(name)] + ([reg(name) + 4] if name in WIDE else [])
        for off in offs:
            before = await axil_read(m, off)
            assert await axil_write(m, off, 0xDEADBEEF) == SLVERR, name
            assert await axil_read(m, off) == before, name
    for n, port in RW.items():
        assert int(getattr(dut, port).value) == 0, f"{n} changed by writes elsewhere"

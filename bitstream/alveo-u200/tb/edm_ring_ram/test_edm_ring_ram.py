"""edm_ring_ram against a byte-array model: random AXI4 writes and reads (any
length and alignment, bursts crossing rows, full and narrow beats) with random
back-pressure on all five channels, interleaved with accesses through the
64-bit word port; every read must return the model's bytes. Beats past
MEM_BYTES answer DECERR, write nothing and read 0. Full-width bursts stream at
one beat per cycle with a ready master."""

import logging
import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiBus, AxiMaster

from tb_base import start_clock
from zcu_tb import pulse_reset

OKAY, DECERR = 0, 3


async def setup(dut, seed, pause=0.3):
    rng = random.Random(seed)
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.s_axi").setLevel(logging.WARNING)
    m = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    if pause:
        for ch in (m.write_if.aw_channel, m.write_if.w_channel, m.write_if.b_channel,
                   m.read_if.ar_channel, m.read_if.r_channel):
            ch.set_pause_generator(iter(lambda: rng.random() < pause, None))
    dut.mem_en.value = 0
    dut.mem_we.value = 0
    dut.mem_addr.value = 0
    dut.mem_wdata.value = 0
    await pulse_reset(dut)
    return rng, m


async def word_write(dut, index, value):
    await FallingEdge(dut.clk)
    dut.mem_en.value = 1
    dut.mem_we.value = 1
    dut.mem_addr.value = index
    dut.mem_wdata.value = value
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.mem_en.value = 0
    dut.mem_we.value = 0


async def word_read(dut, index):
    await FallingEdge(dut.clk)
    dut.mem_en.value = 1
    dut.mem_we.value = 0
    dut.mem_addr.value = index
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.mem_en.value = 0
    return int(dut.mem_rdata.value)


@cocotb.test()
async def random_access(dut):
    rng, m = await setup(dut, 1)
    size = int(dut.MEM_BYTES.value)
    model = bytearray(size)
    for _ in range(150):
        op = rng.random()
        if op < 0.35:
            n = rng.choice([1, 3, 64, 65, 200, rng.randrange(1, 700)])
            a = rng.randrange(0, size - n + 1)
            data = bytes(rng.getrandbits(8) for _ in range(n))
            wsize = rng.choice([None, None, None, 2, 3])
            r = await with_timeout(m.write(a, data, size=wsize), 100_000, "ns")
            assert int(r.resp) == OKAY
            model[a:a + n] = data
        elif op < 0.7:
            n = rng.choice([1, 8, 64, 130, rng.randrange(1, 700)])
            a = rng.randrange(0, size - n + 1)
            r = await with_timeout(m.read(a, n), 100_000, "ns")
            assert int(r.resp) == OKAY
            assert bytes(r.data) == bytes(model[a:a + n]), f"read {a:#x}+{n}"
        elif op < 0.85:
            w = rng.randrange(size // 8)
            v = rng.getrandbits(64)
            await word_write(dut, w, v)
            model[8 * w:8 * w + 8] = v.to_bytes(8, "little")
        else:
            w = rng.randrange(size // 8)
            got = await word_read(dut, w)
            assert got == int.from_bytes(model[8 * w:8 * w + 8], "little"), f"word {w}"


@cocotb.test()
async def out_of_range(dut):
    rng, m = await setup(dut, 2)
    size = int(dut.MEM_BYTES.value)
    r = await with_timeout(m.read(0, size), 200_000, "ns")
    before = bytes(r.data)
    r = await with_timeout(m.write(size - 64, bytes(range(128))), 100_000, "ns")
    assert int(r.resp) == DECERR
    # The beat inside the memory was written, the one outside nothing.
    r = await with_timeout(m.read(size - 64, 64), 100_000, "ns")
    assert (int(r.resp), bytes(r.data)) == (OKAY, bytes(range(64)))
    for a in (size, size + 4096, 1 << 40):
        r = await with_timeout(m.write(a, b"\xff" * 64), 100_000, "ns")
        assert int(r.resp) == DECERR, hex(a)
        r = await with_timeout(m.read(a, 64), 100_000, "ns")
        assert int(r.resp) == DECERR and bytes(r.data) == bytes(64), hex(a)
    # Nothing else changed (addresses past the end do not alias into the memory).
    r = await with_timeout(m.read(0, size), 200_000, "ns")
    assert bytes(r.data) == before[:size - 64] + bytes(range(64))


@cocotb.test()
async def full_rate(dut):
    """A 64-beat burst each way with no back-pressure: about one beat per cycle."""
    rng, m = await setup(dut, 3, pause=0)
    data = bytes(rng.getrandbits(8) for _ in range(64 * 64))
    t0 = cocotb.utils.get_sim_time("ns")
    await with_timeout(m.write(0, data), 100_000, "ns")
    t1 = cocotb.utils.get_sim_time("ns")
    r = await with_timeout(m.read(0, len(data)), 100_000, "ns")
    t2 = cocotb.utils.get_sim_time("ns")
    assert bytes(r.data) == data
    wc, rc = (t1 - t0) / 4, (t2 - t1) / 4
    dut._log.info("64-beat write %d cycles, read %d cycles", wc, rc)
    assert wc <= 64 + 10 and rc <= 64 + 10, (wc, rc)

"""clio_axi_ram (the behavioural DDR of the co-simulation) against a Python memory:
the whole array written in 4 KiB bursts, then random unaligned writes and reads of 1..600 bytes (bursts with byte strobes at both
ends), some running past the array (those bytes read zero and are not written);
every read's first beat comes READ_LATENCY cycles or more after its address."""

import logging

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiMaster

from tb_base import param, reset, rng, start_clock


async def first_beat_latency(dut, seen):
    """Cycles from each accepted read address to its first data beat (reads are in order)."""
    cycle, pending, first = 0, [], True
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        cycle += 1
        if dut.s_axi_arvalid.value and dut.s_axi_arready.value:
            pending.append(cycle)
        if dut.s_axi_rvalid.value and dut.s_axi_rready.value:
            if first:
                seen.append(cycle - pending.pop(0))
            first = bool(dut.s_axi_rlast.value)


@cocotb.test()
async def matches_a_python_memory(dut):
    start_clock(dut)
    logging.getLogger("cocotb.clio_axi_ram.s_axi").setLevel(logging.WARNING)
    axi = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    await reset(dut)
    width = param(dut, "DATA_WIDTH") // 8
    size = param(dut, "WORDS") * width
    latency = param(dut, "READ_LATENCY")
    seen = []
    cocotb.start_soon(first_beat_latency(dut, seen))
    r = rng()
    # The array starts undefined (the harness loads it): fill it first, in 4 KiB bursts.
    mem = bytearray(r.getrandbits(8) for _ in range(size))
    await axi.write(0, bytes(mem))
    for n in range(120):
        addr = r.randrange(0, size + 2 * width)
        length = r.randrange(1, 600)
        if r.random() < 0.5:
            data = bytes(r.getrandbits(8) for _ in range(length))
            await axi.write(addr, data)
            inside = max(0, min(length, size - addr))
            mem[addr:addr + inside] = data[:inside]
        else:
            got = (await axi.read(addr, length)).data
            want = bytes(mem[addr:addr + length]).ljust(length, b"\0")
            assert got == want, f"read {n} of {length} B at {addr:#x}: {got.hex()[:32]}.. != {want.hex()[:32]}.."
    assert seen and min(seen) >= latency, f"first read beats after {sorted(set(seen))} cycles, latency {latency}"
    dut._log.info("%d reads, first beat after %d..%d cycles (READ_LATENCY %d)", len(seen), min(seen), max(seen), latency)

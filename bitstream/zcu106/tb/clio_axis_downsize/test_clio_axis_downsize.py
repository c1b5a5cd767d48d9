"""clio_axis_downsize 512 -> 64: random frames (1..700 bytes) as packed 64-byte
beats, with random pauses in and random back-pressure out, come out as the
packed 8-byte beats of the Python reference (no beat for empty lanes, tkeep
exactly, tlast on the frame's last lane), and an always-ready output gets one
beat per cycle."""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from zcu_tb import BeatSink, expected_beats, pulse_reset

M_BYTES = 8


async def run(dut, pause, ready_prob, seed, frames):
    rng = random.Random(seed)
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    if pause:
        source.set_pause_generator(iter(lambda: rng.random() < pause, None))
    sink = BeatSink(dut, "m_axis", dut.clk, M_BYTES, ready_prob, seed + 1)
    await pulse_reset(dut.clk, dut.rst)
    cocotb.start_soon(sink.run())
    sent = [bytes(rng.randrange(256) for _ in range(rng.randint(1, 700))) for _ in range(frames)]
    want = expected_beats(sent, M_BYTES)
    start = cocotb.utils.get_sim_time("ns")
    for f in sent:
        await source.send(AxiStreamFrame(f))

    async def drained():
        while len(sink.beats) < len(want):
            await RisingEdge(dut.clk)

    await with_timeout(drained(), 1_000_000, "ns")
    cycles = (cocotb.utils.get_sim_time("ns") - start) / 4
    for _ in range(10):
        await RisingEdge(dut.clk)
    assert len(sink.beats) == len(want)
    for i, (got, exp) in enumerate(zip(sink.beats, want)):
        assert got == exp, f"beat {i}: got {got}, want {exp}"
    return len(want), cycles


@cocotb.test()
async def random_backpressure(dut):
    await run(dut, pause=0.3, ready_prob=0.5, seed=21, frames=80)


@cocotb.test()
async def full_rate(dut):
    """Always-ready output: one narrow beat per cycle, no bubble between wide beats."""
    out_beats, cycles = await run(dut, pause=0, ready_prob=1.0, seed=22, frames=40)
    assert cycles <= out_beats + 8, f"{out_beats} output beats took {cycles} cycles"

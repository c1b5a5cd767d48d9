"""clio_axis_upsize 64 -> 512: random frames (1..700 bytes, so every tail
length and multi-beat frames) with random pauses in and random back-pressure
out come out as the packed 64-byte beats of the Python reference (data under
tkeep, tkeep exactly, tlast), and at full rate with no pauses one input beat
is taken per cycle."""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from zcu_tb import BeatSink, expected_beats, pulse_reset

S_BYTES, M_BYTES = 8, 64


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
    return sum(len(expected_beats([f], S_BYTES)) for f in sent), cycles


@cocotb.test()
async def random_backpressure(dut):
    await run(dut, pause=0.3, ready_prob=0.5, seed=11, frames=80)


@cocotb.test()
async def full_rate(dut):
    """No pauses, always ready: input beats flow at one per cycle."""
    in_beats, cycles = await run(dut, pause=0, ready_prob=1.0, seed=12, frames=40)
    assert cycles <= in_beats + 8, f"{in_beats} input beats took {cycles} cycles"

"""clio_axis_async_fifo between unrelated clocks: random frames with random
pauses on the write side and random back-pressure on the read side arrive
beat for beat (data, tkeep, tlast) as the Python reference says; write side
faster, slower and at a near-equal period; in frame mode (FRAME_FIFO=1) no
frame ever shows a gap to a ready reader."""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from zcu_tb import BeatSink, expected_beats

NBYTES = 8
DEPTH = 16


async def run(dut, s_period, m_period, pause, ready_prob, seed, frames=60):
    rng = random.Random(seed)
    frame_mode = int(dut.FRAME_FIFO.value)
    cocotb.start_soon(Clock(dut.s_clk, s_period, unit="ns").start())
    cocotb.start_soon(Clock(dut.m_clk, m_period, unit="ns").start())
    dut.s_rst.value = 1
    dut.m_rst.value = 1
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.s_clk, dut.s_rst)
    if pause:
        source.set_pause_generator(iter(lambda: rng.random() < pause, None))
    sink = BeatSink(dut, "m_axis", dut.m_clk, NBYTES, ready_prob, seed + 1)
    for _ in range(5):
        await RisingEdge(dut.s_clk)
        await RisingEdge(dut.m_clk)
    dut.s_rst.value = 0
    dut.m_rst.value = 0
    cocotb.start_soon(sink.run())
    # Frame mode holds a frame until its end: at most DEPTH beats each.
    max_len = DEPTH * NBYTES if frame_mode else 300
    sent = [bytes(rng.randrange(256) for _ in range(rng.randint(1, max_len))) for _ in range(frames)]
    for f in sent:
        await source.send(AxiStreamFrame(f))
    want = expected_beats(sent, NBYTES)

    async def drained():
        while len(sink.beats) < len(want):
            await RisingEdge(dut.m_clk)

    await with_timeout(drained(), 2_000_000, "ns")
    for _ in range(20):
        await RisingEdge(dut.m_clk)
    assert len(sink.beats) == len(want), f"{len(sink.beats)} beats, want {len(want)}"
    for i, (got, exp) in enumerate(zip(sink.beats, want)):
        assert got == exp, f"beat {i}: got {got}, want {exp}"
    return sink


@cocotb.test()
async def write_faster(dut):
    """156.25 MHz-like writer, slower reader with back-pressure (FIFO fills)."""
    await run(dut, 4.0, 6.4, pause=0.1, ready_prob=0.5, seed=1)


@cocotb.test()
async def write_slower(dut):
    """Slow bursty writer, fast reader (FIFO runs empty)."""
    await run(dut, 6.4, 3.1, pause=0.4, ready_prob=0.8, seed=2)


@cocotb.test()
async def near_equal(dut):
    """Periods 4.0 and 4.1 ns: the phase drifts through every alignment."""
    await run(dut, 4.0, 4.1, pause=0.3, ready_prob=0.6, seed=3)


@cocotb.test()
async def frames_whole(dut):
    """Frame mode: a reader that is always ready never sees a gap inside a frame
    although the writer pauses; in plain mode the same traffic does show gaps."""
    sink = await run(dut, 5.3, 3.7, pause=0.5, ready_prob=1.0, seed=4, frames=40)
    if int(dut.FRAME_FIFO.value):
        assert sink.gaps == 0, f"{sink.gaps} gap cycles inside frames"
    else:
        assert sink.gaps > 0, "plain mode passed beats through without gaps: the check would not see any"

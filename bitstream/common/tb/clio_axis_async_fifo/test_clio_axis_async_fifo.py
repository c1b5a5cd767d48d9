"""clio_axis_async_fifo between unrelated clocks: random frames with random
pauses on the write side and random back-pressure on the read side arrive
beat for beat (data, tkeep, tlast) as the Python reference says; write side
faster, slower and at a near-equal period; in frame mode (FRAME_FIFO=1) no
frame ever shows a gap to a ready reader. With DROP_WHEN_FULL=1 (frame mode)
the writer is never held back: a frame meeting a full FIFO is dropped whole
(what arrives is the sent frames in order minus exactly as many whole frames
as `s_drop` pulsed), and a frame longer than the FIFO is dropped without
stalling it; without it a full FIFO holds the writer back instead."""

import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from tb_base import start_clock
from zcu_tb import BeatSink, expected_beats

NBYTES = 8
DEPTH = 16


class DropCounter:
    def __init__(self, dut):
        self.dut, self.n = dut, 0

    async def run(self):
        while True:
            await RisingEdge(self.dut.s_clk)
            self.n += int(self.dut.s_drop.value)


def subsequence(got, sent):
    """`got` is `sent` with some whole items left out, order kept."""
    it = iter(sent)
    return all(any(g == x for x in it) for g in got)


async def start(dut, s_period, m_period, pause, ready_prob, seed, rng):
    """Clocks, both sides reset together, a source pausing with probability
    `pause`, a sink ready with probability `ready_prob`, and the s_drop counter."""
    start_clock(dut, "s_clk", s_period)
    start_clock(dut, "m_clk", m_period)
    # Own reset: two domains held together, one edge of each per step (tb_base.reset has one clock).
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
    drops = DropCounter(dut)
    cocotb.start_soon(drops.run())
    return source, sink, drops


async def run(dut, s_period, m_period, pause, ready_prob, seed, frames=60):
    rng = random.Random(seed)
    frame_mode = int(dut.FRAME_FIFO.value)
    drop_mode = int(dut.DROP_WHEN_FULL.value)
    source, sink, drops = await start(dut, s_period, m_period, pause, ready_prob, seed, rng)
    # Frame mode holds a frame until its end: at most DEPTH beats each.
    max_len = DEPTH * NBYTES if frame_mode else 300
    sent = [bytes(rng.randrange(256) for _ in range(rng.randint(1, max_len))) for _ in range(frames)]
    for f in sent:
        await source.send(AxiStreamFrame(f))
    want = expected_beats(sent, NBYTES)

    async def drained():
        while len(sink.frames()) + drops.n < len(sent):
            await RisingEdge(dut.m_clk)

    await with_timeout(drained(), 2_000_000, "ns")
    for _ in range(20):
        await RisingEdge(dut.m_clk)
    if drop_mode:
        got = sink.frames()
        assert subsequence(got, sent), "frames altered, reordered or cut"
        assert len(got) + drops.n == len(sent), (len(got), drops.n, len(sent))
        assert sink.beats == expected_beats(got, NBYTES)
        return sink
    assert drops.n == 0
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


@cocotb.test()
async def full_fifo_drops_or_holds_back(dut):
    """A stalled reader: with DROP_WHEN_FULL the writer keeps sending (tready
    always high), frames that do not fit are dropped whole and counted, an
    oversize frame is dropped, and once the reader runs every frame that fit
    arrives whole; without it the writer is held back (tready low) and
    nothing is lost."""
    drop_mode = int(dut.DROP_WHEN_FULL.value)
    rng = random.Random(5)
    source, sink, drops = await start(dut, 4.0, 5.0, 0.0, 0.0, 5, rng)
    held_back = 0

    async def watch():
        nonlocal held_back
        while True:
            await RisingEdge(dut.s_clk)
            held_back += int(dut.s_axis_tvalid.value) and not int(dut.s_axis_tready.value)

    cocotb.start_soon(watch())
    # 5-beat frames: three fit in 16 beats, the rest meet a full FIFO.
    sent = [bytes(rng.randrange(256) for _ in range(40)) for _ in range(6)]
    if drop_mode:
        sent.insert(1, bytes(rng.randrange(256) for _ in range((DEPTH + 4) * NBYTES)))
    for f in sent:
        source.send_nowait(AxiStreamFrame(f))
    if drop_mode:
        await with_timeout(source.wait(), 100_000, "ns")
        for _ in range(20):
            await RisingEdge(dut.s_clk)
        assert held_back == 0
        assert sink.beats == []
        # The oversize frame and the three 5-beat frames after the first three.
        assert drops.n == 4, drops.n
    else:
        for _ in range(200):
            await RisingEdge(dut.s_clk)
        assert held_back > 100 and drops.n == 0
    sink.ready_prob = 1.0
    want = [sent[0]] + sent[2:4] if drop_mode else sent

    async def drained():
        while len(sink.frames()) < len(want):
            await RisingEdge(dut.m_clk)

    await with_timeout(drained(), 200_000, "ns")
    assert sink.frames() == want
    # After a drop, frames pass again.
    more = bytes(rng.randrange(256) for _ in range(24))
    await source.send(AxiStreamFrame(more))
    want = want + [more]
    await with_timeout(drained(), 100_000, "ns")
    assert sink.frames() == want

"""clio_axis_frame_demux against a Python reference: random frames with
random tdest, random pauses and independent random back-pressure per output
reach the output their tdest names, whole and in order; a frame for a down
output (or, with 3 outputs, for tdest 3) is consumed at one beat per cycle
and counted once in `drop`, even with that output stalled; the decision is
made at a frame's first beat and kept to its last."""

import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from tb_base import start_clock
from zcu_tb import beat_bytes, expected_beats, group_frames, port_bits, pulse_reset

NBYTES = 8


class PortSink:
    """Output k of the packed m_axis vectors: random tready, records beats."""

    def __init__(self, dut, k, ready, seed):
        self.dut, self.k, self.ready = dut, k, ready
        self.rng = random.Random(seed)
        self.beats = []

    def frames(self):
        return group_frames(self.beats)


async def drive_sinks(dut, sinks):
    ready = 0
    while True:
        await RisingEdge(dut.clk)
        for s in sinks:
            if ready >> s.k & 1 and port_bits(dut.m_axis_tvalid, s.k, 1):
                keep = port_bits(dut.m_axis_tkeep, s.k, 8)
                data = beat_bytes(port_bits(dut.m_axis_tdata, s.k, 64), keep, 8)
                s.beats.append((data, keep, bool(port_bits(dut.m_axis_tlast, s.k, 1))))
        ready = 0
        for s in sinks:
            ready |= int(s.rng.random() < s.ready) << s.k
        dut.m_axis_tready.value = ready


class Bench:
    def __init__(self, dut, seed, pause=0.3, ready=0.6):
        self.dut = dut
        self.ports = int(dut.PORTS.value)
        self.rng = random.Random(seed)
        start_clock(dut)
        dut.m_down.value = 0
        dut.m_axis_tready.value = 0
        self.src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        if pause:
            self.src.set_pause_generator(iter(lambda: self.rng.random() < pause, None))
        self.sinks = [PortSink(dut, k, ready, seed + 1 + k) for k in range(self.ports)]
        self.drops = 0

    async def start(self):
        await pulse_reset(self.dut)
        cocotb.start_soon(drive_sinks(self.dut, self.sinks))
        cocotb.start_soon(self._count())

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.drops += int(self.dut.drop.value)

    def frame(self, lo=1, hi=300):
        return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(lo, hi)))

    async def settle(self, want, drops, timeout_ns=2_000_000):
        async def done():
            while (any(len(s.frames()) < len(w) for s, w in zip(self.sinks, want))
                   or self.drops < drops or not self.src.idle()):
                await RisingEdge(self.dut.clk)
            for _ in range(20):
                await RisingEdge(self.dut.clk)

        await with_timeout(done(), timeout_ns, "ns")
        for s, w in zip(self.sinks, want):
            assert s.frames() == w
            assert s.beats == expected_beats(w, NBYTES)
        assert self.drops == drops, (self.drops, drops)


@cocotb.test()
async def frames_reach_their_output(dut):
    b = Bench(dut, 1)
    await b.start()
    want = [[] for _ in range(b.ports)]
    drops = 0
    dest_max = 3 if b.ports == 3 else b.ports - 1
    for _ in range(50 * b.ports):
        d = b.rng.randint(0, dest_max)
        f = b.frame()
        if d < b.ports:
            want[d].append(f)
        else:
            drops += 1
        await b.src.send(AxiStreamFrame(f, tdest=d))
    await b.settle(want, drops)


@cocotb.test()
async def down_output_drops_whole_frames_without_stalling(dut):
    b = Bench(dut, 2, pause=0.0, ready=1.0)
    await b.start()
    down = b.ports - 1
    b.sinks[down].ready = 0.0          # stalled and down: must not block the rest
    dut.m_down.value = 1 << down
    want = [[] for _ in range(b.ports)]
    drops = 0
    beats = 0
    for i in range(30):
        d = i % b.ports
        f = b.frame(8, 200)
        beats += (len(f) + 7) // 8
        if d == down:
            drops += 1
        else:
            want[d].append(f)
        await b.src.send(AxiStreamFrame(f, tdest=d))
    start = cocotb.utils.get_sim_time("ns")
    await b.settle(want, drops)
    cycles = (cocotb.utils.get_sim_time("ns") - start) / 4 - 20
    assert cycles <= beats + 30, (cycles, beats)
    assert b.sinks[down].beats == []


@cocotb.test()
async def decision_kept_for_the_whole_frame(dut):
    """m_down changes in the middle of frames: a frame started while its output
    was down is dropped whole, one started while it was up is delivered whole."""
    b = Bench(dut, 3, pause=0.0, ready=1.0)
    await b.start()
    f1, f2 = b.frame(400, 400), b.frame(400, 400)
    dut.m_down.value = 1
    await b.src.send(AxiStreamFrame(f1, tdest=0))
    for _ in range(10):
        await RisingEdge(dut.clk)
    dut.m_down.value = 0               # up in the middle of f1: still dropped
    await b.src.wait()
    await b.src.send(AxiStreamFrame(f2, tdest=0))
    for _ in range(10):
        await RisingEdge(dut.clk)
    dut.m_down.value = 1               # down in the middle of f2: still delivered
    await b.settle([[f2]] + [[] for _ in range(b.ports - 1)], 1)

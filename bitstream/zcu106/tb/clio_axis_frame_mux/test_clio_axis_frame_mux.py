"""clio_axis_frame_mux against a Python reference: random frames on every
input with random pauses and random back-pressure come out whole (never
interleaved), each tagged with its input in tdest, in order per input;
with every input busy the inputs take turns frame by frame and the output
carries a beat every cycle; an input reset in the middle of a frame ends
that frame with one zero byte and a `cut` pulse while the other inputs'
frames pass untouched, and an input in reset is never chosen."""

import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout

from tb_base import start_clock
from zcu_tb import BeatSink, PackedSources, expected_beats, pulse_reset

NBYTES = 8


class Bench:
    def __init__(self, dut, seed, pause, ready):
        self.dut = dut
        self.ports = int(dut.PORTS.value)
        self.rng = random.Random(seed)
        start_clock(dut)
        dut.s_rst.value = 0
        self.src = PackedSources(dut, "s_axis", dut.clk, self.ports, NBYTES, pause, seed + 1)
        self.sink = BeatSink(dut, "m_axis", dut.clk, NBYTES, ready, seed + 2)
        self.cuts = 0

    async def start(self):
        await pulse_reset(self.dut)
        cocotb.start_soon(self.src.run())
        cocotb.start_soon(self.sink.run())
        cocotb.start_soon(self._count())

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.cuts += int(self.dut.cut.value)

    def frame(self, lo=1, hi=300):
        return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(lo, hi)))

    async def drained(self, nframes, timeout_ns=2_000_000):
        async def done():
            while len(self.sink.frames()) < nframes or not self.src.idle():
                await RisingEdge(self.dut.clk)
            for _ in range(20):
                await RisingEdge(self.dut.clk)

        await with_timeout(done(), timeout_ns, "ns")

    def per_port(self):
        """Received frames grouped by tdest."""
        out = [[] for _ in range(self.ports)]
        for f, d in zip(self.sink.frames(), self.sink.frame_dests(), strict=True):
            out[d].append(f)
        return out


@cocotb.test()
async def random_frames_whole_and_tagged(dut):
    b = Bench(dut, 1, pause=0.3, ready=0.6)
    await b.start()
    sent = [[] for _ in range(b.ports)]
    for _ in range(40 * b.ports):
        p = b.rng.randrange(b.ports)
        f = b.frame()
        sent[p].append(f)
        b.src.send(p, f)
    await b.drained(sum(map(len, sent)))
    assert b.per_port() == sent
    # Packed tkeep / tlast beat for beat, in the order the frames came out.
    assert b.sink.beats == expected_beats(b.sink.frames(), NBYTES)
    assert b.cuts == 0


@cocotb.test()
async def busy_inputs_take_turns_without_bubbles(dut):
    b = Bench(dut, 2, pause=0.0, ready=1.0)
    await b.start()
    n = 12
    sent = [[b.frame(8, 200) for _ in range(n)] for _ in range(b.ports)]
    for p in range(b.ports):
        for f in sent[p]:
            b.src.send(p, f)
    beats = sum(len(expected_beats(fs, NBYTES)) for fs in sent)
    start = cocotb.utils.get_sim_time("ns")
    await b.drained(n * b.ports)
    cycles = (cocotb.utils.get_sim_time("ns") - start) / 4 - 20
    assert b.per_port() == sent
    dests = b.sink.frame_dests()
    # Round robin from input 0: 0, 1, ..., PORTS-1, 0, ...
    assert dests == [i % b.ports for i in range(n * b.ports)], dests
    # A beat every cycle (a couple of cycles of start-up slack).
    assert cycles <= beats + 4, (cycles, beats)
    assert b.sink.gaps == 0


@cocotb.test()
async def input_reset_cuts_only_its_frame(dut):
    b = Bench(dut, 3, pause=0.0, ready=1.0)
    await b.start()
    victim, other = b.ports - 1, 0
    long = b.frame(400, 400)          # 50 beats
    b.src.send(victim, long)
    # Let a few beats of it out, then reset that input (its FIFO empties).
    for _ in range(6):
        await RisingEdge(dut.clk)
    assert 0 < b.src.sent[victim] < 50
    dut.s_rst.value = 1 << victim
    b.src.flush(victim)
    taken = b.src.sent[victim]
    keep_other = [b.frame() for _ in range(5)]
    for f in keep_other:
        b.src.send(other, f)
    # While in reset the input is never chosen, even with a beat valid on it.
    b.src.send(victim, b.frame(80, 80))
    for _ in range(150):
        await RisingEdge(dut.clk)
    assert b.src.sent[victim] == taken
    before = len(b.sink.frames())
    assert before == 1 + len(keep_other), before
    b.src.flush(victim)
    dut.s_rst.value = 0
    after = [b.frame() for _ in range(3)]
    for f in after:
        b.src.send(victim, f)
    await b.drained(before + len(after))
    frames, dests = b.sink.frames(), b.sink.frame_dests()
    # The cut frame: the beats that passed, then one zero byte with tlast.
    cut = frames[dests.index(victim)]
    passed = len(cut) - 1
    assert passed % NBYTES == 0 and 0 < passed < len(long)
    assert cut == long[:passed] + b"\0"
    assert b.cuts == 1
    assert b.per_port()[other] == keep_other
    assert b.per_port()[victim] == [cut] + after

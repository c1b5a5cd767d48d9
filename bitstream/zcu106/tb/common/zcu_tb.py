"""Shared helpers of the board glue benches (ZCU106, U200, bitstream/common): a
Python reference for packed AXI4-Stream beats, a sink that applies random
back-pressure and records every beat, AXI masters with random pauses and
strobed AXI-Lite accesses, the boards' reset (built on ip/tb_common/tb_base.py, which starts the
clocks too), and the width-converter bench driver."""

import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from tb_base import reset, start_clock


def ref_beats(frame, nbytes):
    """Beats of `frame` on an `nbytes`-wide packed AXI4-Stream: (data, keep, last);
    bytes outside `keep` are None (not compared)."""
    out = []
    for off in range(0, len(frame), nbytes):
        chunk = frame[off:off + nbytes]
        keep = (1 << len(chunk)) - 1
        out.append((bytes(chunk), keep, off + nbytes >= len(frame)))
    return out


OKAY, SLVERR = 0, 2


def pause_channels(master, rng, pause):
    """Make every channel of an AXI or AXI-Lite master from cocotbext-axi pause
    with probability `pause` per cycle."""
    for ch in (master.write_if.aw_channel, master.write_if.w_channel, master.write_if.b_channel,
               master.read_if.ar_channel, master.read_if.r_channel):
        ch.set_pause_generator(iter(lambda: rng.random() < pause, None))
    return master


async def axil_write(m, off, value, strb=0xF):
    """32-bit AXI-Lite write of `value` at `off` under byte strobes `strb` (the
    master writes only the bytes given: one write per contiguous run); returns
    the worst response."""
    data = value.to_bytes(4, "little")
    resp, i = OKAY, 0
    while i < 4:
        if strb >> i & 1:
            j = i
            while j < 4 and strb >> j & 1:
                j += 1
            r = await with_timeout(m.write(off + i, data[i:j]), 10_000, "ns")
            resp = max(resp, int(r.resp))
            i = j
        else:
            i += 1
    return resp


async def axil_read(m, off):
    """32-bit AXI-Lite read at `off`: (value, response)."""
    r = await with_timeout(m.read(off, 4), 10_000, "ns")
    return int.from_bytes(r.data, "little"), int(r.resp)


def group_frames(beats):
    """Frames of bytes from (data_bytes, ..., last) beats (last is the final field)."""
    out, cur = [], bytearray()
    for beat in beats:
        cur += beat[0]
        if beat[-1]:
            out.append(bytes(cur))
            cur = bytearray()
    return out


def port_bits(signal, k, width):
    """Port k's `width` bits of a vector packing one field per port (the other
    ports' bits may be X, e.g. a FIFO output register of a port in reset)."""
    v = str(signal.value)
    n = len(v)
    return int(v[n - width * (k + 1):n - width * k], 2)


def beat_bytes(data, keep, nbytes):
    """The bytes of an integer `data` under `keep` (lane 0 = low byte)."""
    raw = data.to_bytes(nbytes, "little")
    return bytes(raw[i] for i in range(nbytes) if keep >> i & 1)


class BeatSink:
    """Drives `<prefix>_tready` with probability `ready_prob` each cycle and
    records (data_bytes_under_keep, keep, last) of every handshake, and its
    `<prefix>_tdest` in `dests` where the interface has one."""

    def __init__(self, dut, prefix, clk, nbytes, ready_prob, seed):
        self.dut, self.clk, self.nbytes = dut, clk, nbytes
        self.tdata = getattr(dut, f"{prefix}_tdata")
        self.tkeep = getattr(dut, f"{prefix}_tkeep")
        self.tvalid = getattr(dut, f"{prefix}_tvalid")
        self.tready = getattr(dut, f"{prefix}_tready")
        self.tlast = getattr(dut, f"{prefix}_tlast")
        self.tdest = getattr(dut, f"{prefix}_tdest", None)
        self.dests = []
        self.ready_prob = ready_prob
        self.rng = random.Random(seed)
        self.beats = []
        # Cycles in which valid dropped inside a frame while ready was high.
        self.gaps = 0
        self._in_frame = False
        self.tready.value = 0

    async def run(self):
        ready = 0
        while True:
            await RisingEdge(self.clk)
            valid = int(self.tvalid.value)
            if valid and ready:
                keep = int(self.tkeep.value)
                last = bool(int(self.tlast.value))
                self.beats.append((beat_bytes(int(self.tdata.value), keep, self.nbytes), keep, last))
                if self.tdest is not None:
                    self.dests.append(int(self.tdest.value))
                self._in_frame = not last
            elif ready and not valid and self._in_frame:
                self.gaps += 1
            ready = int(self.rng.random() < self.ready_prob)
            self.tready.value = ready

    def frames(self):
        """Received beats grouped into frames of bytes."""
        return group_frames(self.beats)


    def frame_dests(self):
        """The tdest of each received frame; asserts it is constant over the frame."""
        out, cur = [], None
        for (_, _, last), d in zip(self.beats, self.dests, strict=True):
            assert cur is None or d == cur, f"tdest changed inside frame {len(out)}: {cur} -> {d}"
            cur = d
            if last:
                out.append(d)
                cur = None
        return out


def expected_beats(frames, nbytes):
    out = []
    for f in frames:
        out += ref_beats(f, nbytes)
    return out


async def pulse_reset(dut, cycles=4):
    """The glue benches' reset: tb_base.reset of `dut.rst` on `dut.clk`, held
    `cycles` rising edges, then one more edge."""
    await reset(dut, cycles=cycles, settle=1)


async def run_width_converter(dut, in_bytes, out_bytes, pause, ready_prob, seed, frames):
    """Send `frames` random frames (1..700 bytes) through an AXI-Stream width converter with
    `pause` probability of an input pause and `ready_prob` of output readiness; check every
    output beat against the packed reference; return (input beats, output beats, cycles)."""
    rng = random.Random(seed)
    start_clock(dut)
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    if pause:
        source.set_pause_generator(iter(lambda: rng.random() < pause, None))
    sink = BeatSink(dut, "m_axis", dut.clk, out_bytes, ready_prob, seed + 1)
    await pulse_reset(dut)
    cocotb.start_soon(sink.run())
    sent = [bytes(rng.randrange(256) for _ in range(rng.randint(1, 700))) for _ in range(frames)]
    want = expected_beats(sent, out_bytes)
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
    return len(expected_beats(sent, in_bytes)), len(want), cycles


class PackedSources:
    """Drives PORTS AXI4-Stream inputs packed into one set of vectors
    (`<prefix>_tdata` = PORTS x data, ..., `<prefix>_tvalid` one bit per port):
    each port sends its queued frames beat by beat, pausing with probability
    `pause` between beats (valid, once raised, stays until the handshake, as
    AXI4-Stream requires). `flush(p)` drops port p's queue and any beat on
    the wire, as a clock-crossing FIFO does when its side is reset."""

    def __init__(self, dut, prefix, clk, ports, nbytes, pause, seed):
        self.clk, self.ports, self.nbytes, self.pause = clk, ports, nbytes, pause
        self.tdata = getattr(dut, f"{prefix}_tdata")
        self.tkeep = getattr(dut, f"{prefix}_tkeep")
        self.tvalid = getattr(dut, f"{prefix}_tvalid")
        self.tready = getattr(dut, f"{prefix}_tready")
        self.tlast = getattr(dut, f"{prefix}_tlast")
        self.rng = random.Random(seed)
        self.queues = [[] for _ in range(ports)]   # beats waiting, per port
        self.cur = [None] * ports                  # beat on the wire
        self.held = [False] * ports                # port stopped (in reset)
        self.sent = [0] * ports                    # beats handed over

    def send(self, port, frame):
        self.queues[port] += ref_beats(frame, self.nbytes)

    def flush(self, port):
        self.queues[port] = []
        self.cur[port] = None

    def idle(self):
        return not any(self.queues) and all(c is None for c in self.cur)

    def _drive(self):
        data = keep = valid = last = 0
        for p, beat in enumerate(self.cur):
            if beat is None:
                continue
            d, k, l = beat
            data |= int.from_bytes(d.ljust(self.nbytes, b"\0"), "little") << (8 * self.nbytes * p)
            keep |= k << (self.nbytes * p)
            valid |= 1 << p
            last |= int(l) << p
        self.tdata.value = data
        self.tkeep.value = keep
        self.tvalid.value = valid
        self.tlast.value = last

    async def run(self):
        self._drive()
        while True:
            await RisingEdge(self.clk)
            ready = int(self.tready.value)
            for p in range(self.ports):
                if self.cur[p] is not None and ready >> p & 1:
                    self.cur[p] = None
                    self.sent[p] += 1
                if (self.cur[p] is None and self.queues[p] and not self.held[p]
                        and self.rng.random() >= self.pause):
                    self.cur[p] = self.queues[p].pop(0)
            self._drive()

"""clio_eth_ports as the ZCU106 top uses it: two MAC ports in their own clock
domains, the frame mux and demux, and the UDP layer, against the reference
frames of eth_frames.py:

- clients on both ports are served: every request comes out on the Clio side
  (in order per port), every response leaves on the MAC port of its client,
  an ARP request is answered on the port it came in on;
- a port whose MAC goes down stalls nothing: responses for its client are
  dropped and counted in tx_drop while the other port keeps working, and it
  serves again once its MAC is back;
- a port whose MAC clock never runs stays in reset and is ignored;
- a request stream the Clio side cannot take fills a port's RX FIFO: the lost
  beats pulse rx_overflow, and the port recovers afterwards."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from eth_frames import BCAST, BOARD_IP, BOARD_MAC, BOARD_PORT, arp, client, clio, request_frame, response_frame
from tb_base import start_clock
from zcu_tb import BeatSink, beat_bytes, group_frames, port_bits, pulse_reset, ref_beats

PORTS = 2
MAC_PERIODS = (6.4, 6.5)


class Packed:
    """Python-side copy of packed per-port vectors, so coroutines of different
    clock domains each update their own port's bits without losing another's."""

    def __init__(self, signal, width):
        self.signal, self.width, self.v = signal, width, 0
        signal.value = 0

    def set(self, port, value):
        mask = (1 << self.width) - 1
        self.v = self.v & ~(mask << self.width * port) | (value & mask) << self.width * port
        self.signal.value = self.v


class MacPort:
    """One MAC in its clock: sends queued frames on RX (no back-pressure, as
    the MAC; random gaps) and takes TX frames with random readiness."""

    def __init__(self, dut, k, rx, tx_ready, seed):
        self.dut, self.k = dut, k
        self.clk = getattr(dut, f"mac_clk{k}")
        self.rx, self.tx_ready = rx, tx_ready
        self.rng = random.Random(seed)
        self.queue, self.tx_beats = [], []
        self.ready_prob = 0.7
        # Idle cycles after each frame: a few, so two ports together stay
        # below what the shared path drains (gap_max = 0: back to back).
        self.gap_max = 60
        self.gap = 0

    def send(self, frame):
        self.queue += ref_beats(frame, 8)

    def tx_frames(self):
        return group_frames(self.tx_beats)

    async def run(self):
        ready = 0
        while True:
            await RisingEdge(self.clk)
            if ready and port_bits(self.dut.mac_tx_tvalid, self.k, 1):
                data = port_bits(self.dut.mac_tx_tdata, self.k, 64)
                keep = port_bits(self.dut.mac_tx_tkeep, self.k, 8)
                last = bool(port_bits(self.dut.mac_tx_tlast, self.k, 1))
                self.tx_beats.append((beat_bytes(data, keep, 8), last))
            ready = int(self.rng.random() < self.ready_prob)
            self.tx_ready.set(self.k, ready)
            if self.gap:
                self.gap -= 1
                self.rx["tvalid"].set(self.k, 0)
            elif self.queue and self.rng.random() < 0.9:
                d, keep, last = self.queue.pop(0)
                if last and self.gap_max:
                    self.gap = self.rng.randint(self.gap_max // 2, self.gap_max)
                self.rx["tdata"].set(self.k, int.from_bytes(d.ljust(8, b"\0"), "little"))
                self.rx["tkeep"].set(self.k, keep)
                self.rx["tlast"].set(self.k, int(last))
                self.rx["tvalid"].set(self.k, 1)
            else:
                self.rx["tvalid"].set(self.k, 0)


class Bench:
    def __init__(self, dut, seed, run_clocks=(True, True)):
        self.dut = dut
        self.rng = random.Random(seed)
        start_clock(dut)
        for k in range(PORTS):
            if run_clocks[k]:
                start_clock(dut, f"mac_clk{k}", MAC_PERIODS[k])
            else:
                getattr(dut, f"mac_clk{k}").value = 0
        logging.getLogger(f"cocotb.{dut._name}.s_clio").setLevel(logging.WARNING)
        dut.mac_down.value = 0
        dut.cfg_mac.value = int.from_bytes(BOARD_MAC, "big")
        dut.cfg_ipv4.value = int.from_bytes(BOARD_IP, "big")
        dut.cfg_udp_port.value = BOARD_PORT
        rx = {n: Packed(getattr(dut, f"mac_rx_{n}"), w)
              for n, w in (("tdata", 64), ("tkeep", 8), ("tvalid", 1), ("tlast", 1))}
        tx_ready = Packed(dut.mac_tx_tready, 1)
        self.macs = [MacPort(dut, k, rx, tx_ready, seed + 10 + k) for k in range(PORTS)]
        self.run_clocks = run_clocks
        self.clio_in = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_clio"), dut.clk, dut.rst)
        self.clio_out = BeatSink(dut, "m_clio", dut.clk, 8, 0.8, seed + 1)
        self.counts = {"rx_drop": 0, "tx_drop": 0, "rx_overflow": 0}

    async def start(self):
        for k, m in enumerate(self.macs):
            if self.run_clocks[k]:
                cocotb.start_soon(m.run())
        await pulse_reset(self.dut)
        cocotb.start_soon(self.clio_out.run())
        cocotb.start_soon(self._count())
        # The ports' resets pass their synchronizers.
        for _ in range(20):
            await RisingEdge(self.dut.clk)

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            for k in self.counts:
                self.counts[k] += int(getattr(self.dut, k).value)

    async def until(self, cond, timeout_ns=400_000):
        async def wait():
            while not cond():
                await RisingEdge(self.dut.clk)
            for _ in range(40):
                await RisingEdge(self.dut.clk)

        await with_timeout(wait(), timeout_ns, "ns")

    def requests(self):
        return self.clio_out.frames()


def in_order_within(got, seq):
    """`seq` appears in `got` in its own order (other items may interleave)."""
    it = iter(got)
    return all(any(x == y for y in it) for x in seq)


@cocotb.test()
async def both_ports_serve_clients(dut):
    b = Bench(dut, 1)
    await b.start()
    rng = b.rng
    clients = [client(1), client(2)]          # on port 0 and port 1
    pids = [0x101, 0x202]
    sent = [[], []]
    for i in range(24):
        k = rng.randrange(PORTS)
        pkt = clio(rng, pids[k], rng.randint(0, 300))
        sent[k].append(pkt)
        b.macs[k].send(request_frame(clients[k], pkt))
    await b.until(lambda: len(b.requests()) == 24)
    got = b.requests()
    assert sorted(got) == sorted(sent[0] + sent[1])
    for k in range(PORTS):
        assert in_order_within(got, sent[k]), f"port {k} requests out of order"

    want = [[], []]
    for i in range(30):
        k = rng.randrange(PORTS)
        pkt = clio(rng, pids[k], rng.randint(0, 400))
        await b.clio_in.send(AxiStreamFrame(pkt))
        want[k].append(response_frame(clients[k], pkt))
    await b.until(lambda: all(len(b.macs[k].tx_frames()) == len(want[k]) for k in range(PORTS)))
    for k in range(PORTS):
        assert b.macs[k].tx_frames() == want[k], f"port {k} responses"

    # ARP on port 1 is answered on port 1 only.
    c = clients[1]
    b.macs[1].send(arp(1, c[0], c[1], b"\0" * 6, BOARD_IP, BCAST))
    want[1].append(arp(2, BOARD_MAC, BOARD_IP, c[0], c[1], c[0]))
    await b.until(lambda: len(b.macs[1].tx_frames()) == len(want[1]))
    for k in range(PORTS):
        assert b.macs[k].tx_frames() == want[k]
    assert b.counts == {"rx_drop": 0, "tx_drop": 0, "rx_overflow": 0}


@cocotb.test()
async def a_port_going_down_stalls_nothing(dut):
    b = Bench(dut, 2)
    await b.start()
    rng = b.rng
    ca, cb = client(3), client(4)
    pa, pb = 0x33, 0x44
    b.macs[0].send(request_frame(ca, clio(rng, pa, 8)))
    b.macs[1].send(request_frame(cb, clio(rng, pb, 8)))
    await b.until(lambda: len(b.requests()) == 2)
    # Port 1's MAC goes down: its client's responses are dropped and counted,
    # port 0 goes on.
    dut.mac_down.value = 0b10
    await b.until(lambda: int(dut.port_rst.value) == 0b10)
    want_a, dropped = [], 0
    for i in range(20):
        if i % 2:
            await b.clio_in.send(AxiStreamFrame(clio(rng, pb, rng.randint(0, 300))))
            dropped += 1
        else:
            pkt = clio(rng, pa, rng.randint(0, 300))
            await b.clio_in.send(AxiStreamFrame(pkt))
            want_a.append(response_frame(ca, pkt))
    await b.until(lambda: len(b.macs[0].tx_frames()) == len(want_a) and b.counts["tx_drop"] == dropped)
    assert b.macs[0].tx_frames() == want_a
    assert b.macs[1].tx_frames() == []
    # Back up: port 1 serves again.
    dut.mac_down.value = 0
    await b.until(lambda: int(dut.port_rst.value) == 0)
    pkt = clio(rng, pb, 20)
    await b.clio_in.send(AxiStreamFrame(pkt))
    await b.until(lambda: len(b.macs[1].tx_frames()) == 1)
    assert b.macs[1].tx_frames() == [response_frame(cb, pkt)]
    assert b.counts["tx_drop"] == dropped and b.counts["rx_drop"] == 0


@cocotb.test()
async def a_port_without_clock_stays_in_reset(dut):
    """Port 1's MAC clock never runs (no module): the port stays in reset and
    port 0 is served as if it were alone."""
    b = Bench(dut, 3, run_clocks=(True, False))
    await b.start()
    await b.until(lambda: int(dut.port_rst.value) == 0b10)
    rng = b.rng
    ca = client(5)
    reqs = [clio(rng, 0x55, rng.randint(0, 200)) for _ in range(6)]
    for r in reqs:
        b.macs[0].send(request_frame(ca, r))
    await b.until(lambda: len(b.requests()) == len(reqs))
    assert b.requests() == reqs
    resp = [clio(rng, 0x55, rng.randint(0, 200)) for _ in range(6)]
    for r in resp:
        await b.clio_in.send(AxiStreamFrame(r))
    await b.until(lambda: len(b.macs[0].tx_frames()) == len(resp))
    assert b.macs[0].tx_frames() == [response_frame(ca, r) for r in resp]
    assert int(dut.port_rst.value) == 0b10
    assert b.counts == {"rx_drop": 0, "tx_drop": 0, "rx_overflow": 0}


@cocotb.test()
async def rx_overflow_is_flagged_and_the_port_recovers(dut):
    b = Bench(dut, 4)
    b.clio_out.ready_prob = 0.0            # the fast path takes nothing
    b.macs[0].gap_max = 0
    await b.start()
    rng = b.rng
    ca = client(6)
    for _ in range(8):
        b.macs[0].send(request_frame(ca, clio(rng, 0x66, 400)))
    await b.until(lambda: not b.macs[0].queue and b.counts["rx_overflow"] > 0)
    b.clio_out.ready_prob = 1.0
    await b.until(lambda: b.dut.m_clio_tvalid.value == 0 and len(b.clio_out.beats) > 0)
    # Whatever survived has drained; a new request passes whole.
    n = len(b.requests())
    pkt = clio(rng, 0x66, 64)
    b.macs[0].send(request_frame(ca, pkt))
    await b.until(lambda: len(b.requests()) == n + 1)
    assert b.requests()[-1] == pkt

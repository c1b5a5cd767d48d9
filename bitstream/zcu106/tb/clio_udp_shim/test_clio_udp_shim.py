"""clio_udp_shim against a Python reference that builds Ethernet II / IPv4 /
UDP / ARP frames byte by byte (checksums included):

- RX: accepted Clio datagrams come out stripped of the 42-byte header and cut
  to the UDP length (trailing bytes after it are dropped), packed tkeep;
  every drop reason (MAC, EtherType, version, IHL, MF, fragment offset,
  protocol, IPv4 checksum, destination IPv4, destination port, UDP length
  against IPv4 length, payload shorter than a Clio header, runt frame, ARP
  not for us / not a request) consumes the frame and pulses rx_drop once; a
  frame shorter than its UDP length is passed zero-padded and counted;
  300 frames with random header bits flipped match a reference classifier.
- TX: responses of two clients (pids learned from their requests) get the
  exact Ethernet/IPv4/UDP header (IPv4 checksum verified independently);
  unknown pids and a pid aliasing a learned entry are dropped and counted; a
  client that moves (new port) is followed; lengths come from payload_len.
- Full table: 64 clients fill every entry and are all answered; a 65th pid
  evicts exactly the pid sharing its index (its responses dropped and
  counted, nobody else's), the evicted client takes its entry back by asking
  again, reset empties the table.
- ARP: requests for the board's IPv4 (broadcast or unicast) get the exact
  60-byte reply; a request while a reply is pending is dropped and counted.
- Ports: with frames tagged by their Ethernet port (tdest), responses go out
  on the port their client's last request came in on (and follow a client
  that moves to the other port), ARP replies on their request's port; every
  frame's tdest is constant from first beat to last.
All with random pauses on the inputs and random back-pressure on the outputs."""

import logging
import random
import struct

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from eth_frames import (BCAST, BOARD_IP, BOARD_MAC, BOARD_PORT, HDR, arp, client, clio, csum16, eth,
                        ipv4, request_frame, response_frame, udp)
from tb_base import start_clock
from zcu_tb import BeatSink, expected_beats, pulse_reset

# ---------------------------------------------------------------------------
# Bench.
# ---------------------------------------------------------------------------
class Bench:
    def __init__(self, dut, seed, pause=0.3, ready=0.5):
        self.dut = dut
        self.rng = random.Random(seed)
        start_clock(dut)
        for p in ("s_eth", "s_clio"):
            logging.getLogger(f"cocotb.{dut._name}.{p}").setLevel(logging.WARNING)
        dut.cfg_mac.value = int.from_bytes(BOARD_MAC, "big")
        dut.cfg_ipv4.value = int.from_bytes(BOARD_IP, "big")
        dut.cfg_udp_port.value = BOARD_PORT
        self.eth_in = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_eth"), dut.clk, dut.rst)
        self.clio_in = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_clio"), dut.clk, dut.rst)
        for s in (self.eth_in, self.clio_in):
            if pause:
                s.set_pause_generator(iter(lambda: self.rng.random() < pause, None))
        self.clio_out = BeatSink(dut, "m_clio", dut.clk, 8, ready, seed + 1)
        self.eth_out = BeatSink(dut, "m_eth", dut.clk, 8, ready, seed + 2)
        self.drops = {"rx_drop": 0, "tx_drop": 0}

    async def start(self):
        await pulse_reset(self.dut)
        cocotb.start_soon(self.clio_out.run())
        cocotb.start_soon(self.eth_out.run())
        cocotb.start_soon(self._count())

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            for k in self.drops:
                self.drops[k] += int(getattr(self.dut, k).value)

    async def settle(self, sink, nframes, timeout_ns=2_000_000):
        async def done():
            while len(sink.frames()) < nframes or not self.eth_in.idle() or not self.clio_in.idle():
                await RisingEdge(self.dut.clk)
            for _ in range(60):
                await RisingEdge(self.dut.clk)

        await with_timeout(done(), timeout_ns, "ns")


def check_frames(sink, want, what):
    got = sink.frames()
    assert len(got) == len(want), f"{what}: {len(got)} frames, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{what} frame {i}: got {g.hex()}, want {w.hex()}"
    # Packed tkeep and tlast exactly as the reference beats.
    assert sink.beats == expected_beats(want, 8), f"{what}: beats not packed"


@cocotb.test()
async def rx_accept_and_drop(dut):
    b = Bench(dut, 1)
    await b.start()
    rng = b.rng
    c = client(0)
    mac, ip, port = c
    frames, want, ndrop = [], [], 0

    def good(n=None, trailer=b""):
        pkt = clio(rng, rng.getrandbits(32), rng.randint(0, 300) if n is None else n)
        frames.append(request_frame(c, pkt) + trailer)
        want.append(pkt)

    def bad(frame):
        nonlocal ndrop
        frames.append(frame)
        ndrop += 1

    pkt = clio(rng, 7, 20)
    bad_cases = [
        request_frame(c, pkt, dst_mac=bytes.fromhex("02c110000002")),
        request_frame(c, pkt, dst_mac=BCAST),
        request_frame(c, pkt, etype=0x86DD),
        request_frame(c, pkt, ver_ihl=0x65),
        request_frame(c, pkt, ver_ihl=0x46, options=b"\x01\x01\x01\x00"),
        request_frame(c, pkt, flags_frag=0x2000),
        request_frame(c, pkt, flags_frag=0x0010),
        request_frame(c, pkt, proto=6),
        request_frame(c, pkt, bad_csum=True),
        request_frame(c, pkt, dst_ip=bytes([10, 0, 0, 3])),
        request_frame(c, pkt, dport=BOARD_PORT + 1),
        request_frame(c, pkt, udp_len=8 + len(pkt) - 2),
        request_frame(c, pkt[:HDR - 1]).ljust(60, b"\0"),
        eth(BOARD_MAC, mac, 0x0800, b"\x45\x00").ljust(30, b"\0"),
        arp(1, mac, ip, b"\0" * 6, bytes([10, 0, 0, 9]), BCAST),
        arp(2, mac, ip, BOARD_MAC, BOARD_IP, BOARD_MAC),
    ]
    for i in range(60):
        if i % 3 == 0 and bad_cases:
            bad(bad_cases.pop(0))
        elif i % 7 == 1:
            good(trailer=bytes(rng.randrange(256) for _ in range(rng.randint(1, 13))))
        else:
            good(n=rng.choice([0, 1, 5, 6, 7, 8, 9, 14, 15, 16, 22, 100, rng.randint(0, 1400)]))
    assert not bad_cases
    # A frame shorter than its IPv4/UDP lengths: passed zero-padded, counted.
    pkt = clio(rng, 9, 64)
    u = udp(port, BOARD_PORT, pkt)
    frames.append(eth(BOARD_MAC, mac, 0x0800, ipv4(ip, BOARD_IP, u))[:-20])
    want.append(pkt[:-20] + b"\0" * 20)
    ndrop += 1
    good(n=3)
    for f in frames:
        await b.eth_in.send(AxiStreamFrame(f))
    await b.settle(b.clio_out, len(want))
    check_frames(b.clio_out, want, "payload")
    assert b.drops["rx_drop"] == ndrop, (b.drops, ndrop)
    assert b.eth_out.beats == []
    assert b.drops["tx_drop"] == 0


def ref_rx(frame):
    """Reference RX decision: ("pass", payload, truncated), ("arp", sha, spa) or
    ("drop",), from the rules of clio_udp_rx applied to the bytes."""
    if len(frame) < 56:
        return ("drop",)
    dst, etype = frame[0:6], struct.unpack(">H", frame[12:14])[0]
    if etype == 0x0806:
        htype, ptype, hl, pl, oper = struct.unpack(">HHBBH", frame[14:22])
        if ((dst in (BOARD_MAC, BCAST)) and (htype, ptype, hl, pl, oper) == (1, 0x0800, 6, 4, 1)
                and frame[38:42] == BOARD_IP):
            return ("arp", frame[22:28], frame[28:32])
        return ("drop",)
    ip = frame[14:34]
    tl, ff, proto = struct.unpack(">H", ip[2:4])[0], struct.unpack(">H", ip[6:8])[0], ip[9]
    ulen = struct.unpack(">H", frame[38:40])[0]
    ok = (dst == BOARD_MAC and etype == 0x0800 and ip[0] == 0x45 and ff & 0x3FFF == 0
          and proto == 17 and csum16(ip) == 0 and ip[16:20] == BOARD_IP
          and struct.unpack(">H", frame[36:38])[0] == BOARD_PORT and ulen == (tl - 20) & 0xFFFF
          and ulen >= 8 + HDR)
    if not ok:
        return ("drop",)
    pay = frame[42:34 + ulen]
    return ("pass", pay.ljust(ulen - 8, b"\0"), len(pay) < ulen - 8)


@cocotb.test()
async def rx_random_against_reference(dut):
    """Valid requests and ARP requests with random header bytes corrupted
    (biased to the checked fields), random lengths and trailers, compared
    frame by frame with ref_rx; checksums are recomputed for half of the
    corrupted IPv4 headers so the later checks are reached."""
    b = Bench(dut, 6)
    await b.start()
    rng = b.rng
    want, ndrop, narp = [], 0, 0
    fields = [0, 5, 12, 13, 14, 16, 17, 20, 21, 23, 24, 30, 33, 36, 37, 38, 39]
    for i in range(300):
        cl = client(rng.randrange(4))
        if rng.random() < 0.15:
            f = bytearray(arp(1, cl[0], cl[1], b"\0" * 6, BOARD_IP, rng.choice([BCAST, BOARD_MAC])))
        else:
            pkt = clio(rng, rng.getrandbits(32), rng.randint(0, 200))
            f = bytearray(request_frame(cl, pkt))
            if rng.random() < 0.2:
                f += bytes(rng.randrange(256) for _ in range(rng.randint(1, 20)))
        if rng.random() < 0.6:
            for _ in range(rng.randint(1, 2)):
                pos = rng.choice(fields) if rng.random() < 0.8 else rng.randrange(42)
                f[pos] ^= 1 << rng.randrange(8)
            if rng.random() < 0.5 and f[12:14] == b"\x08\x00":
                f[24:26] = b"\0\0"
                f[24:26] = struct.pack(">H", csum16(bytes(f[14:34])))
        f = bytes(f)
        r = ref_rx(f)
        if r[0] == "pass":
            want.append(r[1])
            ndrop += int(r[2])
        elif r[0] == "drop":
            ndrop += 1
        else:
            narp += 1
        await b.eth_in.send(AxiStreamFrame(f))

        if r[0] == "arp":
            # One reply held at a time: wait for it before the next frame.
            async def replied():
                while len(b.eth_out.frames()) < narp:
                    await RisingEdge(dut.clk)

            await with_timeout(replied(), 100_000, "ns")
    await b.settle(b.clio_out, len(want))
    check_frames(b.clio_out, want, "payload")
    assert b.drops["rx_drop"] == ndrop, (b.drops, ndrop)
    assert len(b.eth_out.frames()) == narp
    assert 20 < len(want) < 250 and ndrop > 40, (len(want), ndrop)


@cocotb.test()
async def tx_two_clients(dut):
    b = Bench(dut, 2)
    await b.start()
    rng = b.rng
    ca, cb, cc = client(1), client(2), client(3)
    pa, pb = 0x0001_0005, 0x00A0_0042
    # Learn both clients (their requests come out on the Clio side).
    reqs = [clio(rng, pa, 8), clio(rng, pb, 0)]
    await b.eth_in.send(AxiStreamFrame(request_frame(ca, reqs[0])))
    await b.eth_in.send(AxiStreamFrame(request_frame(cb, reqs[1])))
    await b.settle(b.clio_out, 2)
    check_frames(b.clio_out, reqs, "requests")

    want, ndrop = [], 0
    for i in range(40):
        r = rng.random()
        if r < 0.1:
            # Unknown pid, and a pid sharing pa's table entry: dropped.
            pid = rng.choice([0x1234_5678, pa + 64, pa ^ 0x8000_0000])
            await b.clio_in.send(AxiStreamFrame(clio(rng, pid, rng.randint(0, 50))))
            ndrop += 1
            continue
        pid, cl = (pa, ca) if r < 0.55 else (pb, cb)
        pkt = clio(rng, pid, rng.choice([0, 1, 2, 3, 6, 7, 8, 9, 10, rng.randint(0, 1400)]))
        if i % 9 == 4:
            # Longer than payload_len: cut to it.
            await b.clio_in.send(AxiStreamFrame(pkt + bytes(rng.randint(1, 20))))
        else:
            await b.clio_in.send(AxiStreamFrame(pkt))
        want.append(response_frame(cl, pkt))
    # A response shorter than a Clio header: dropped.
    await b.clio_in.send(AxiStreamFrame(clio(rng, pa, 0)[:HDR - 3]))
    ndrop += 1
    await b.settle(b.eth_out, len(want))
    check_frames(b.eth_out, want, "response")
    assert b.drops["tx_drop"] == ndrop
    # Independent checks of the headers: IPv4 checksum verifies, lengths agree.
    for f in b.eth_out.frames():
        assert csum16(f[14:34]) == 0
        assert struct.unpack(">H", f[16:18])[0] == len(f) - 14
        assert struct.unpack(">H", f[38:40])[0] == len(f) - 34
        assert f[40:42] == b"\0\0"

    # Client A moves to another address (same pid): responses follow it.
    await b.eth_in.send(AxiStreamFrame(request_frame(cc, clio(rng, pa, 4))))
    await b.settle(b.clio_out, 3)
    pkt = clio(rng, pa, 33)
    await b.clio_in.send(AxiStreamFrame(pkt))
    want.append(response_frame(cc, pkt))
    await b.settle(b.eth_out, len(want))
    check_frames(b.eth_out, want, "response after move")
    assert b.drops == {"rx_drop": 0, "tx_drop": ndrop}


@cocotb.test()
async def arp_replies(dut):
    b = Bench(dut, 3)
    await b.start()
    rng = b.rng
    ca, cb = client(4), client(5)
    want = []
    frames = []
    for i in range(12):
        cl = rng.choice([ca, cb])
        dst = BCAST if i % 2 else BOARD_MAC
        frames.append(arp(1, cl[0], cl[1], b"\0" * 6, BOARD_IP, dst))
        want.append(arp(2, BOARD_MAC, BOARD_IP, cl[0], cl[1], cl[0]))
    # While responses stream out: each reply goes out between two frames.
    # (One reply is held at a time; the next request is sent once it is out.)
    pa = 77
    await b.eth_in.send(AxiStreamFrame(request_frame(ca, clio(rng, pa, 10))))
    await b.settle(b.clio_out, 1)
    resp = [clio(rng, pa, rng.randint(0, 600)) for _ in range(12)]
    for r in resp:
        await b.clio_in.send(AxiStreamFrame(r))

    def n_arp():
        return sum(1 for f in b.eth_out.frames() if f[12:14] == b"\x08\x06")

    for i, f in enumerate(frames):
        await b.eth_in.send(AxiStreamFrame(f))

        async def replied():
            while n_arp() <= i:
                await RisingEdge(dut.clk)

        await with_timeout(replied(), 100_000, "ns")
    await b.settle(b.eth_out, len(want) + len(resp))
    got = b.eth_out.frames()
    arps = [f for f in got if f[12:14] == b"\x08\x06"]
    udps = [f for f in got if f[12:14] == b"\x08\x00"]
    assert arps == want, [a.hex() for a in arps]
    assert udps == [response_frame(ca, r) for r in resp]
    assert b.drops == {"rx_drop": 0, "tx_drop": 0}


@cocotb.test()
async def arp_while_pending(dut):
    """TX stalled: the first request's reply waits; a second request meanwhile
    is dropped and counted; the reply goes out once the MAC takes it."""
    b = Bench(dut, 4, pause=0, ready=1.0)
    b.eth_out.ready_prob = 0.0
    await b.start()
    ca, cb = client(6), client(7)
    await b.eth_in.send(AxiStreamFrame(arp(1, ca[0], ca[1], b"\0" * 6, BOARD_IP, BCAST)))
    await b.eth_in.send(AxiStreamFrame(arp(1, cb[0], cb[1], b"\0" * 6, BOARD_IP, BCAST)))
    for _ in range(100):
        await RisingEdge(dut.clk)
    assert b.drops["rx_drop"] == 1
    assert b.eth_out.beats == []
    b.eth_out.ready_prob = 0.7
    await b.settle(b.eth_out, 1)
    check_frames(b.eth_out, [arp(2, BOARD_MAC, BOARD_IP, ca[0], ca[1], ca[0])], "arp")
    assert b.drops == {"rx_drop": 1, "tx_drop": 0}


@cocotb.test()
async def full_rate(dut):
    """No pauses, always ready: large requests and responses stream at about
    one beat per cycle (a few cycles of header work per frame)."""
    b = Bench(dut, 5, pause=0, ready=1.0)
    await b.start()
    rng = b.rng
    c = client(8)
    reqs = [clio(rng, 5, 1400) for _ in range(8)]
    start = cocotb.utils.get_sim_time("ns")
    for r in reqs:
        await b.eth_in.send(AxiStreamFrame(request_frame(c, r)))
    await b.settle(b.clio_out, len(reqs))
    beats_in = sum((len(request_frame(c, r)) + 7) // 8 for r in reqs)
    cycles = (cocotb.utils.get_sim_time("ns") - start) / 4 - 60
    assert cycles <= beats_in + 8 * len(reqs) + 20, (cycles, beats_in)
    check_frames(b.clio_out, reqs, "payload")
    resp = [clio(rng, 5, 1400) for _ in range(8)]
    start = cocotb.utils.get_sim_time("ns")
    for r in resp:
        await b.clio_in.send(AxiStreamFrame(r))
    await b.settle(b.eth_out, len(resp))
    beats_out = sum((len(response_frame(c, r)) + 7) // 8 for r in resp)
    cycles = (cocotb.utils.get_sim_time("ns") - start) / 4 - 60
    assert cycles <= beats_out + 8 * len(resp) + 20, (cycles, beats_out)
    check_frames(b.eth_out, [response_frame(c, r) for r in resp], "response")


@cocotb.test()
async def two_ports(dut):
    """Clients on Ethernet ports 0 and 1 (s_eth_tdest): each response and ARP
    reply leaves on its client's port (m_eth_tdest), constant over the frame."""
    b = Bench(dut, 7)
    await b.start()
    rng = b.rng
    ca, cb = client(9), client(10)
    pa, pb = 0x11, 0x22
    reqs = [clio(rng, pa, 12), clio(rng, pb, 40)]
    await b.eth_in.send(AxiStreamFrame(request_frame(ca, reqs[0]), tdest=0))
    await b.eth_in.send(AxiStreamFrame(request_frame(cb, reqs[1]), tdest=1))
    await b.settle(b.clio_out, 2)
    check_frames(b.clio_out, reqs, "requests")

    want, ports = [], []
    for _ in range(30):
        pid, cl, port = (pa, ca, 0) if rng.random() < 0.5 else (pb, cb, 1)
        pkt = clio(rng, pid, rng.choice([0, 3, 8, 17, rng.randint(0, 900)]))
        await b.clio_in.send(AxiStreamFrame(pkt))
        want.append(response_frame(cl, pkt))
        ports.append(port)
    await b.settle(b.eth_out, len(want))
    check_frames(b.eth_out, want, "response")
    assert b.eth_out.frame_dests() == ports

    # ARP on port 1, then on port 0: each reply on its request's port.
    for n, (cl, port) in enumerate([(cb, 1), (ca, 0)], start=1):
        await b.eth_in.send(AxiStreamFrame(arp(1, cl[0], cl[1], b"\0" * 6, BOARD_IP, BCAST),
                                           tdest=port))
        want.append(arp(2, BOARD_MAC, BOARD_IP, cl[0], cl[1], cl[0]))
        ports.append(port)
        await b.settle(b.eth_out, len(want))
    # Client A moves to port 1 (same addresses, same pid): its responses follow.
    await b.eth_in.send(AxiStreamFrame(request_frame(ca, clio(rng, pa, 4)), tdest=1))
    await b.settle(b.clio_out, 3)
    pkt = clio(rng, pa, 50)
    await b.clio_in.send(AxiStreamFrame(pkt))
    want.append(response_frame(ca, pkt))
    ports.append(1)
    await b.settle(b.eth_out, len(want))
    check_frames(b.eth_out, want, "after move")
    assert b.eth_out.frame_dests() == ports
    assert b.drops == {"rx_drop": 0, "tx_drop": 0}


@cocotb.test()
async def table_full(dut):
    """The client table at capacity (2^TABLE_BITS = 64 entries, the default the
    top uses): 64 clients whose pids fill every entry are all answered; a 65th
    pid takes exactly the entry of the pid with its low bits (that pid's
    responses are then dropped and counted, every other client is still
    answered, nothing is misdelivered); the evicted client's next request
    takes the entry back; reset empties the table."""
    entries = 64
    b = Bench(dut, 11, pause=0.1, ready=0.8)
    await b.start()
    rng = b.rng
    clients = [client(i) for i in range(entries)]
    pids = [(rng.getrandbits(25) + 1) << 6 | i for i in range(entries)]
    reqs = []
    for cl, pid in zip(clients, pids):
        reqs.append(clio(rng, pid, rng.randint(0, 24)))
        await b.eth_in.send(AxiStreamFrame(request_frame(cl, reqs[-1])))
    await b.settle(b.clio_out, len(reqs))
    check_frames(b.clio_out, reqs, "requests filling the table")

    want = []

    async def answer(order, expect):
        """Send one response per index in `order`; `expect(i)` is the client
        it must reach, or None if it must be dropped. Returns the drops."""
        n = 0
        for i, pid in order:
            pkt = clio(rng, pid, rng.randint(0, 60))
            await b.clio_in.send(AxiStreamFrame(pkt))
            cl = expect(i)
            if cl is None:
                n += 1
            else:
                want.append(response_frame(cl, pkt))
        await b.settle(b.eth_out, len(want))
        check_frames(b.eth_out, want, "responses")
        return n

    # Full: every client is answered.
    order = list(enumerate(pids))
    rng.shuffle(order)
    assert await answer(order, lambda i: clients[i]) == 0
    assert b.drops["tx_drop"] == 0

    # A 65th pid: it takes entry k only.
    k = rng.randrange(entries)
    newcomer, new_pid = client(entries), (rng.getrandbits(25) + 1) << 6 | k
    assert new_pid != pids[k]
    await b.eth_in.send(AxiStreamFrame(request_frame(newcomer, clio(rng, new_pid, 8))))
    await b.settle(b.clio_out, entries + 1)
    others = [(i, p) for i, p in enumerate(pids) if i != k]
    mixed = [(k, pids[k]), (-1, new_pid)] + rng.sample(others, 16) + [(k, pids[k])]
    dropped = await answer(mixed, lambda i: None if i == k else newcomer if i == -1 else clients[i])
    assert dropped == 2 and b.drops["tx_drop"] == 2, (dropped, b.drops)

    # The evicted client asks again: the entry is its own again.
    await b.eth_in.send(AxiStreamFrame(request_frame(clients[k], clio(rng, pids[k], 4))))
    await b.settle(b.clio_out, entries + 2)
    dropped = await answer([(k, pids[k]), (-1, new_pid)], lambda i: clients[k] if i == k else None)
    assert dropped == 1 and b.drops["tx_drop"] == 3, (dropped, b.drops)

    # Reset empties the table: nobody is answered until it asks again.
    await pulse_reset(dut)
    dropped = await answer(rng.sample(list(enumerate(pids)), 8), lambda i: None)
    assert dropped == 8 and b.drops == {"rx_drop": 0, "tx_drop": 11}, b.drops

"""edm_switch_top on its own: the bench plays the hosts on the line side.

Checks the notification -> PIM -> /G/ path, WREQ and RRES forwarding with one fixed latency
and the peer rewritten to the source, the RREQ re-sent to the memory node as the implicit
grant, one grant per chunk (the second after the first chunk's wire time), chunks without a
grant dropped and counted, several writers to one destination served one at a time, and
standard frames passing whole in both directions while memory blocks preempt them."""

import os
import random

import cocotb
from cocotb.triggers import FallingEdge

from tb_base import start_clock

from edm_blocks import (G, IDLE_BLOCK, RRES, RREQ, SYNC_CTRL, WREQ, body, frame, grant,
                        header, lane, message, notify, pack, split, with_peer)

PORTS = int(os.environ.get("PORTS", "4"))
SEED = int(os.environ.get("EDM_SEED", "1"))


class Harness:
    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.rx = [[] for _ in range(PORTS)]     # blocks to put on each ingress line
        self.sent = [[] for _ in range(PORTS)]   # (cycle, block) put on each ingress
        self.tx = [[] for _ in range(PORTS)]     # (cycle, block) on each egress line
        self.l2q = [[] for _ in range(PORTS)]    # frame blocks for the L2 side to send
        self.l2rx = [[] for _ in range(PORTS)]   # non-idle blocks the L2 side received

    async def start(self):
        d = self.dut
        start_clock(d)
        d.line_rx_valid.value = (1 << PORTS) - 1
        d.line_rx_data.value = pack([IDLE_BLOCK[1]] * PORTS, 64)
        d.line_rx_hdr.value = pack([IDLE_BLOCK[0]] * PORTS, 2)
        d.l2_tx_valid.value = 0
        d.rst.value = 1
        for _ in range(4):
            await FallingEdge(d.clk)
        d.rst.value = 0
        cocotb.start_soon(self.run())

    async def run(self):
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            for p in range(PORTS):
                b = (lane(d.line_tx_hdr, p, 2), lane(d.line_tx_data, p, 64))
                if b != IDLE_BLOCK:
                    self.tx[p].append((self.cycle, b))
            v = str(d.l2_rx_valid.value)[::-1]
            for p in range(PORTS):
                if v[p] == "1":
                    b = (lane(d.l2_rx_hdr, p, 2), lane(d.l2_rx_data, p, 64))
                    if b != IDLE_BLOCK:
                        self.l2rx[p].append(b)
            blocks = []
            for p in range(PORTS):
                b = self.rx[p].pop(0) if self.rx[p] else IDLE_BLOCK
                if b != IDLE_BLOCK:
                    self.sent[p].append((self.cycle + 1, b))
                blocks.append(b)
            d.line_rx_data.value = pack([b[1] for b in blocks], 64)
            d.line_rx_hdr.value = pack([b[0] for b in blocks], 2)
            ready = str(d.l2_tx_ready.value)[::-1]
            valid, data, hdr = [], [], []
            for p in range(PORTS):
                go = bool(self.l2q[p]) and ready[p] == "1"
                b = self.l2q[p].pop(0) if go else (0, 0)
                valid.append(int(go))
                hdr.append(b[0])
                data.append(b[1])
            d.l2_tx_valid.value = pack(valid, 1)
            d.l2_tx_data.value = pack(data, 64)
            d.l2_tx_hdr.value = pack(hdr, 2)
            self.cycle += 1

    async def wait_for(self, cond, what, limit=2000):
        for _ in range(limit):
            if cond():
                return
            await FallingEdge(self.dut.clk)
        raise AssertionError(f"timed out waiting for {what} (seed {SEED})")

    def units(self, p):
        return split(self.tx[p])[0]

    def grants(self, p):
        return [u[0] for u in self.units(p) if u[0][1][1] & 0xFF == G]


def latency_of(sent, unit):
    """Cycles from each block entering the ingress line to leaving the egress line."""
    return {c_out - c_in for (c_in, _), (c_out, _) in zip(sent, unit)}


def sent_unit(h, p, first):
    """The (cycle, block) list of the message starting with block `first` on ingress p."""
    i = next(k for k, (_, b) in enumerate(h.sent[p]) if b == first)
    out = [h.sent[p][i]]
    for c, b in h.sent[p][i + 1:]:
        out.append((c, b))
        if b[0] == SYNC_CTRL and b[1] & 0xFF in (0x20,):
            break
    return out


@cocotb.test()
async def write_read_and_fixed_latency(dut):
    h = Harness(dut)
    await h.start()
    rng = random.Random(SEED)

    # WREQ of 296 bytes from 0 to 2: /N/, a /G/ per chunk, chunks forwarded with peer = 0.
    h.rx[0].append(notify(2, 5, 296))
    await h.wait_for(lambda: len(h.grants(0)) == 1, "the first /G/ at port 0")
    g = header(h.grants(0)[0][1])
    assert (g["peer"], g["id"], g["len"], g["kind"]) == (2, 5, 256, WREQ), f"first grant {g}"
    data = bytes(rng.randrange(256) for _ in range(296))
    c1 = message(WREQ, 0, 2, 5, 256, (0x1000).to_bytes(8, "little") + data[:256])
    h.rx[0].extend(c1)
    await h.wait_for(lambda: len(h.units(2)) == 1, "the first chunk at port 2")
    out = h.units(2)[0]
    assert [b for _, b in out] == [with_peer(c1[0], 0)] + c1[1:], "forwarded chunk differs"
    lat = latency_of(sent_unit(h, 0, c1[0]), out)
    assert len(lat) == 1, f"forwarding latency not fixed within a chunk: {lat}"
    await h.wait_for(lambda: len(h.grants(0)) == 2, "the second /G/ at port 0")
    g2c, g2 = h.grants(0)[1][0], header(h.grants(0)[1][1])
    assert (g2["peer"], g2["id"], g2["len"], g2["kind"]) == (2, 5, 40, WREQ), f"second grant {g2}"
    # The next grant waits for the first chunk's wire time (34 blocks) less one iteration.
    g1c = h.grants(0)[0][0]
    assert g2c - g1c >= 34 - 3, f"second grant {g2c - g1c} cycles after the first"
    c2 = message(WREQ, 1, 2, 5, 40, (0x1100).to_bytes(8, "little") + data[256:])
    h.rx[0].extend(c2)
    await h.wait_for(lambda: len(h.units(2)) == 2, "the second chunk at port 2")
    out2 = h.units(2)[1]
    assert [b for _, b in out2] == [with_peer(c2[0], 0)] + c2[1:], "second chunk differs"
    assert latency_of(sent_unit(h, 0, c2[0]), out2) == lat, "forwarding latency changed"

    # RREQ from 1 to memory node 3: re-sent to 3 with peer = 1; the RRES goes back to 1.
    rreq = message(RREQ, 1, 3, 9, 64, (0x40).to_bytes(8, "little"))
    h.rx[1].extend(rreq)
    await h.wait_for(lambda: len(h.units(3)) == 1, "the RREQ at port 3")
    assert [b for _, b in h.units(3)[0]] == [with_peer(rreq[0], 1)] + rreq[1:], "RREQ differs"
    rdata = bytes(rng.randrange(256) for _ in range(64))
    rres = message(RRES, 1, 1, 9, 64, rdata)
    h.rx[3].extend(rres)
    await h.wait_for(lambda: len(h.units(1)) == 1, "the RRES at port 1")
    out3 = h.units(1)[0]
    assert [b for _, b in out3] == [with_peer(rres[0], 3)] + rres[1:], "RRES differs"
    assert body([b for _, b in out3]) == rdata
    assert latency_of(sent_unit(h, 3, rres[0]), out3) == lat, "RRES latency differs"

    # A chunk nobody granted is dropped and counted.
    bad = message(WREQ, 1, 0, 1, 8, bytes(16))
    h.rx[2].extend(bad)
    for _ in range(60):
        await FallingEdge(dut.clk)
    assert not [u for u in h.units(0) if u[0][1][1] & 0xFF != G], "an ungranted chunk reached port 0"
    assert int(dut.cnt_no_circuit.value) == 1
    assert int(dut.cnt_forwarded.value) == 3
    assert int(dut.cnt_grants.value) == 3
    assert int(dut.cnt_notify_refused.value) == 0
    dut._log.info("switch top: forwarding latency %d cycles (ingress line to egress line)", lat.pop())


@cocotb.test()
async def writers_share_a_destination(dut):
    h = Harness(dut)
    await h.start()
    rng = random.Random(SEED + 1)
    writers = [p for p in range(PORTS) if p != PORTS - 1]
    dst = PORTS - 1
    for p in writers:
        h.rx[p].append(notify(dst, 10 + p, 64))
    await h.wait_for(lambda: all(len(h.grants(p)) == 1 for p in writers), "a /G/ at every writer")
    chunks = {}
    for p in writers:
        g = header(h.grants(p)[0][1])
        assert (g["peer"], g["id"], g["len"], g["kind"]) == (dst, 10 + p, 64, WREQ), f"grant {g}"
        chunks[p] = message(WREQ, 1, dst, 10 + p, 64,
                            bytes(8) + bytes(rng.randrange(256) for _ in range(64)))
    # Each writer sends when its grant arrives; the destination gets whole chunks, one by one.
    order = sorted(writers, key=lambda p: h.grants(p)[0][0])
    for p in order:
        h.rx[p].extend(chunks[p])
    await h.wait_for(lambda: len(h.units(dst)) == len(writers), "every chunk at the destination")
    got = {header(u[0][1])["peer"]: [b for _, b in u] for u in h.units(dst)}
    for p in writers:
        assert got[p] == [with_peer(chunks[p][0], p)] + chunks[p][1:], f"chunk of writer {p}"
    starts = sorted(h.grants(p)[0][0] for p in writers)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    # A 64 B WREQ is 10 blocks: the destination is granted again 10 - 3 + slack cycles later.
    assert all(gap >= 7 for gap in gaps), f"grants to one destination too close: {gaps}"


@cocotb.test()
async def frames_pass_while_memory_preempts(dut):
    h = Harness(dut)
    await h.start()
    rng = random.Random(SEED + 2)
    # Egress: a long frame from the L2 side of port 3 while memory blocks go out on port 3.
    f_out = frame(bytes(rng.randrange(256) for _ in range(1000)))
    h.l2q[3].extend(f_out)
    # Ingress: a long frame arriving on port 0 with memory blocks (an /N/ and an RREQ) in it.
    f_in = frame(bytes(rng.randrange(256) for _ in range(600)))
    rreq = message(RREQ, 1, 3, 4, 32, (0x80).to_bytes(8, "little"))
    mixed = f_in[:20] + [notify(1, 2, 16)] + f_in[20:40] + rreq + f_in[40:]
    for _ in range(10):
        await FallingEdge(dut.clk)
    h.rx[0].extend(mixed)
    await h.wait_for(lambda: len(h.l2rx[0]) >= len(f_in), "the frame at port 0's L2 side")
    assert h.l2rx[0] == f_in, "the frame received on port 0 was not passed whole"
    await h.wait_for(lambda: len(split(h.tx[3])[1]) >= len(f_out), "the frame on port 3's line")
    units, frm = split(h.tx[3])
    assert [b for _, b in frm] == f_out, "the frame sent on port 3 was changed"
    first, last = frm[0][0], frm[-1][0]
    inside = [u for u in units if first < u[0][0] < last]
    assert inside, "no memory unit preempted the frame on port 3"
    assert [b for _, b in inside[0]] == [with_peer(rreq[0], 0)] + rreq[1:], "preempting unit"
    await h.wait_for(lambda: len(h.grants(0)) == 1, "the /G/ for the /N/ sent inside a frame")
    g = header(h.grants(0)[0][1])
    assert (g["peer"], g["id"], g["len"], g["kind"]) == (1, 2, 16, WREQ), f"grant {g}"
    assert int(dut.cnt_unexpected.value) == 0

"""edm_host_top on its own: the bench plays the switch (and the other hosts) on the line.

Requester: a write sends an /N/ and one WREQ chunk per /G/ with data from local memory; a
read sends its RREQ at once and its response lands in local memory; at most X messages per
destination are active, other destinations are not blocked. Memory node: an RREQ is the
implicit grant of its first RRES chunk, later chunks wait for /G/s, a WREQ writes memory, an
out-of-range read gets a NULL response (one empty chunk per grant, the NULL with the last).
Bad input (unknown grants, a message cut short) is counted and changes nothing. Frames from the MAC pass whole while memory preempts them."""

import os
import random

import cocotb
from cocotb.triggers import FallingEdge

from tb_base import drive, start_clock

from edm_blocks import (IDLE_BLOCK, MST, N, RMWREQ, RRES, RREQ, WREQ, body, frame, grant, header,
                        message, notify, split)

SEED = int(os.environ.get("EDM_SEED", "1"))
NODE = 1
WORDS = 512


class Harness:
    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.rx = []          # blocks the "switch" sends to the host
        self.tx = []          # (cycle, block) the host sent
        self.macq = []        # frame blocks the MAC sends
        self.dec = []         # non-idle blocks the decoder got
        self.reqs = []        # (write, dst, addr, len, local, tag) to submit
        self.wcomp, self.rcomp = [], []
        self.rdata = {}       # tag -> RMW result

    async def start(self, mem):
        d = self.dut
        start_clock(d)
        drive(d, node_id=NODE, req_valid=0, req_rmw=0, req_op=0, req_opa=0, req_opb=0, enc_valid=0,
              line_rx_valid=1, line_rx_data=IDLE_BLOCK[1], line_rx_hdr=IDLE_BLOCK[0])
        d.rst.value = 1  # held while the memory is preloaded
        for w, v in enumerate(mem):
            await FallingEdge(d.clk)
            d.ext_en.value = 1
            d.ext_we.value = 1
            d.ext_addr.value = w
            d.ext_wdata.value = v
        await FallingEdge(d.clk)
        d.ext_en.value = 0
        d.ext_we.value = 0
        await FallingEdge(d.clk)
        d.rst.value = 0
        cocotb.start_soon(self.run())

    async def run(self):
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            b = (int(d.line_tx_hdr.value), int(d.line_tx_data.value))
            if b != IDLE_BLOCK:
                self.tx.append((self.cycle, b))
            if int(d.dec_valid.value):
                b = (int(d.dec_hdr.value), int(d.dec_data.value))
                if b != IDLE_BLOCK:
                    self.dec.append(b)
            if int(d.wcomp_valid.value):
                self.wcomp.append(int(d.wcomp_tag.value))
            if int(d.rcomp_valid.value):
                self.rcomp.append((int(d.rcomp_tag.value), int(d.rcomp_ok.value)))
                self.rdata[int(d.rcomp_tag.value)] = int(d.rcomp_data.value)
            b = self.rx.pop(0) if self.rx else IDLE_BLOCK
            d.line_rx_hdr.value = b[0]
            d.line_rx_data.value = b[1]
            go = bool(self.macq) and int(d.enc_ready.value)
            d.enc_valid.value = int(go)
            if go:
                b = self.macq.pop(0)
                d.enc_hdr.value = b[0]
                d.enc_data.value = b[1]
            if self.reqs and int(d.req_ready.value):
                write, dst, addr, length, local, tag, *rmw = self.reqs.pop(0)
                d.req_valid.value = 1
                d.req_rmw.value = int(bool(rmw))
                if rmw:
                    d.req_op.value, d.req_opa.value, d.req_opb.value = rmw
                d.req_write.value = write
                d.req_dst.value = dst
                d.req_addr.value = addr
                d.req_len.value = length
                d.req_local.value = local
                d.req_tag.value = tag
            else:
                d.req_valid.value = 0
            self.cycle += 1

    async def wait_for(self, cond, what, limit=1000):
        for _ in range(limit):
            if cond():
                return
            await FallingEdge(self.dut.clk)
        raise AssertionError(f"timed out waiting for {what} (seed {SEED})")

    def units(self):
        return [[b for _, b in u] for u in split(self.tx)[0]]

    async def read_mem(self, byte_addr, length):
        d = self.dut
        out = bytearray()
        for w in range(byte_addr // 8, (byte_addr + length) // 8):
            await FallingEdge(d.clk)
            d.ext_en.value = 1
            d.ext_we.value = 0
            d.ext_addr.value = w
            await FallingEdge(d.clk)
            d.ext_en.value = 0
            out += int(d.ext_rdata.value).to_bytes(8, "little")
        return bytes(out)


def mem_bytes(mem, addr, length):
    raw = b"".join(v.to_bytes(8, "little") for v in mem)
    return raw[addr : addr + length]


@cocotb.test()
async def requester_side(dut):
    rng = random.Random(SEED)
    mem = [rng.getrandbits(64) for _ in range(WORDS)]
    h = Harness(dut)
    await h.start(mem)

    # Write 296 B from local 0x200 to node 2 at 0x100: /N/, then a WREQ chunk per /G/.
    h.reqs.append((1, 2, 0x100, 296, 0x200, 7))
    await h.wait_for(lambda: len(h.units()) == 1, "the /N/")
    n = header(h.units()[0][0])
    assert (n["type"], n["peer"], n["len"]) == (N, 2, 296), f"/N/ {n}"
    wid = n["id"]
    h.rx.append(grant(2, wid, 256, WREQ))
    await h.wait_for(lambda: len(h.units()) == 2, "the first WREQ chunk")
    c1 = h.units()[1]
    f = header(c1[0])
    assert (f["kind"], f["last"], f["peer"], f["id"], f["len"]) == (WREQ, 0, 2, wid, 256), f"chunk {f}"
    assert body(c1) == (0x100).to_bytes(8, "little") + mem_bytes(mem, 0x200, 256)
    assert c1 == message(WREQ, 0, 2, wid, 256, body(c1))
    assert not h.wcomp
    h.rx.append(grant(2, wid, 256, WREQ))
    await h.wait_for(lambda: len(h.units()) == 3, "the last WREQ chunk")
    c2 = h.units()[2]
    f = header(c2[0])
    assert (f["kind"], f["last"], f["len"]) == (WREQ, 1, 40), f"last chunk {f}"
    assert body(c2) == (0x100 + 256).to_bytes(8, "little") + mem_bytes(mem, 0x300, 40)
    await h.wait_for(lambda: h.wcomp == [7], "the write completion")

    # Read 64 B at 0x40 on node 3 into local 0x400: RREQ at once, RRES lands in memory.
    h.reqs.append((0, 3, 0x40, 64, 0x400, 8))
    await h.wait_for(lambda: len(h.units()) == 4, "the RREQ")
    r = h.units()[3]
    f = header(r[0])
    assert (f["kind"], f["last"], f["peer"], f["len"]) == (RREQ, 1, 3, 64), f"RREQ {f}"
    assert body(r) == (0x40).to_bytes(8, "little")
    payload = bytes(rng.randrange(256) for _ in range(64))
    h.rx.extend(message(RRES, 1, 3, f["id"], 64, payload))
    await h.wait_for(lambda: h.rcomp == [(8, 1)], "the read completion")
    assert await h.read_mem(0x400, 64) == payload, "response data not in local memory"

    # X = 3 reads to node 2 go out, the fourth waits; a read to node 0 is not blocked.
    for k in range(4):
        h.reqs.append((0, 2, 8 * k, 8, 0x600 + 8 * k, 20 + k))
    h.reqs.append((0, 0, 0, 8, 0x700, 30))
    await h.wait_for(lambda: len(h.units()) == 8, "three RREQs to node 2 and one to node 0")
    for _ in range(30):
        await FallingEdge(dut.clk)
    new = [header(u[0]) for u in h.units()[4:]]
    assert len(new) == 4, f"{len(new)} requests left, X = 3 allows 4"
    assert [u["peer"] for u in new].count(2) == 3 and [u["peer"] for u in new].count(0) == 1
    ids = [u["id"] for u in new if u["peer"] == 2]
    assert len(set(ids)) == 3, f"message ids to node 2 not distinct: {ids}"
    # A NULL response completes a read with ok = 0 and frees its id: the fourth goes out.
    h.rx.append(message(RRES, 1, 2, ids[0], 0, b"")[0])
    await h.wait_for(lambda: (20, 0) in h.rcomp, "the NULL read completion")
    await h.wait_for(lambda: len(h.units()) == 9, "the fourth RREQ to node 2")
    assert header(h.units()[8][0])["peer"] == 2

    # Grants and responses for unknown messages are counted and ignored.
    h.rx.append(grant(3, 0xEE, 64, WREQ))
    h.rx.extend(message(RRES, 1, 3, 0xEE, 8, bytes(8)))
    for _ in range(40):
        await FallingEdge(dut.clk)
    assert int(dut.cnt_unknown_grant.value) == 1
    assert int(dut.cnt_unknown_response.value) == 1
    assert len(h.units()) == 9, "an unknown grant made the host send"


@cocotb.test()
async def memory_node_side(dut):
    rng = random.Random(SEED + 1)
    mem = [rng.getrandbits(64) for _ in range(WORDS)]
    h = Harness(dut)
    await h.start(mem)

    # RREQ from node 0 for 296 B at 0x80: first chunk (256 B) at once, the rest on /G/.
    h.rx.extend(message(RREQ, 1, 0, 6, 296, (0x80).to_bytes(8, "little")))
    await h.wait_for(lambda: len(h.units()) == 1, "the first RRES chunk")
    r1 = h.units()[0]
    f = header(r1[0])
    assert (f["kind"], f["last"], f["peer"], f["id"], f["len"]) == (RRES, 0, 0, 6, 256), f"RRES {f}"
    assert body(r1) == mem_bytes(mem, 0x80, 256)
    h.rx.append(grant(0, 6, 256, RRES))
    await h.wait_for(lambda: len(h.units()) == 2, "the last RRES chunk")
    r2 = h.units()[1]
    f = header(r2[0])
    assert (f["kind"], f["last"], f["len"]) == (RRES, 1, 40), f"last RRES {f}"
    assert body(r2) == mem_bytes(mem, 0x180, 40)

    # A WREQ from node 2 writes memory; one cut short by an /N/ writes nothing.
    new = bytes(rng.randrange(256) for _ in range(48))
    h.rx.extend(message(WREQ, 1, 2, 3, 48, (0x300).to_bytes(8, "little") + new))
    cut = message(WREQ, 1, 2, 4, 64, (0x380).to_bytes(8, "little") + bytes(64))
    h.rx.extend(cut[:4] + [notify(1, 1, 8)])
    # An RREQ outside memory gets a NULL response.
    h.rx.extend(message(RREQ, 1, 3, 9, 16, (WORDS * 8).to_bytes(8, "little")))
    await h.wait_for(lambda: len(h.units()) == 3, "the NULL response")
    null = h.units()[2]
    f = header(null[0])
    assert (f["type"], f["kind"], f["last"], f["peer"], f["id"], f["len"]) == (MST, RRES, 1, 3, 9, 0), f"NULL {f}"
    assert await h.read_mem(0x300, 48) == new, "WREQ data not in memory"
    assert await h.read_mem(0x380, 64) == mem_bytes(mem, 0x380, 64), "a cut-short WREQ wrote memory"
    assert int(dut.cnt_bad_address.value) == 1
    assert int(dut.cnt_unexpected.value) == 1, "the /N/ at a host is unexpected"
    # A longer RREQ outside memory: an empty chunk per grant, the NULL (empty, last) with the
    # last grant, so the requester completes only once the switch has granted all of it.
    h.rx.extend(message(RREQ, 1, 3, 10, 296, (WORDS * 8).to_bytes(8, "little")))
    await h.wait_for(lambda: len(h.units()) == 4, "the first, empty, chunk of a NULL response")
    f = header(h.units()[3][0])
    assert (f["kind"], f["last"], f["peer"], f["id"], f["len"]) == (RRES, 0, 3, 10, 0), f"first NULL chunk {f}"
    h.rx.append(grant(3, 10, 256, RRES))
    await h.wait_for(lambda: len(h.units()) == 5, "the NULL on the last grant")
    f = header(h.units()[4][0])
    assert (f["type"], f["kind"], f["last"], f["peer"], f["id"], f["len"]) == (MST, RRES, 1, 3, 10, 0), f"NULL {f}"
    assert int(dut.cnt_bad_address.value) == 2
    assert int(dut.cnt_unknown_grant.value) == 0, "a grant of the NULL response was unknown"

    # A WREQ longer than the staging buffer (600 B, chunks are 256 B) is dropped whole and
    # counted; the next one is written.
    h.rx.extend(message(WREQ, 1, 2, 5, 600, (0x400).to_bytes(8, "little") + bytes(600)))
    small = bytes(rng.randrange(256) for _ in range(16))
    h.rx.extend(message(WREQ, 1, 2, 6, 16, (0x800).to_bytes(8, "little") + small))
    await h.wait_for(lambda: not h.rx, "the WREQs to arrive")
    for _ in range(60):
        await FallingEdge(dut.clk)
    assert int(dut.cnt_bad_message.value) == 1, "the oversized WREQ was not counted"
    assert await h.read_mem(0x400, 600) == mem_bytes(mem, 0x400, 600), "the oversized WREQ wrote memory"
    assert await h.read_mem(0x800, 16) == small, "the WREQ after it was lost"


@cocotb.test()
async def a_burst_of_grants(dut):
    """The switch queues the grants of a long response's chunks while the node's downlink
    forwards chunks back to back, then sends them in a burst, and an RREQ follows them (the
    Clio-over-EDM path, seed 1795807962: 8 grants queued, the next RREQ dropped as a bad
    message, its read never answered). The grant queue takes the whole burst: every chunk
    goes out once, in grant order, and the RREQ behind the burst is served."""
    rng = random.Random(SEED + 4)
    mem = [rng.getrandbits(64) for _ in range(WORDS)]
    h = Harness(dut)
    await h.start(mem)
    chunks = 4096 // 256
    h.rx.extend(message(RREQ, 1, 0, 20, 4096, (0).to_bytes(8, "little")))
    await h.wait_for(lambda: len(h.units()) == 1, "the first RRES chunk")
    h.rx.extend(grant(0, 20, 256, RRES) for _ in range(chunks - 1))
    h.rx.extend(message(RREQ, 1, 0, 21, 16, (0x40).to_bytes(8, "little")))
    await h.wait_for(lambda: len(h.units()) == chunks + 1, "every chunk and the second read's answer",
                     limit=60 * (chunks + 1))
    units = h.units()
    for i, u in enumerate(units[:chunks]):
        f = header(u[0])
        assert (f["kind"], f["peer"], f["id"], f["len"], f["last"]) == (RRES, 0, 20, 256, int(i == chunks - 1)), \
            f"chunk {i}: {f}"
        assert body(u) == mem_bytes(mem, 256 * i, 256), f"chunk {i} data"
    f = header(units[chunks][0])
    assert (f["kind"], f["peer"], f["id"], f["len"], f["last"]) == (RRES, 0, 21, 16, 1), f"the second read: {f}"
    assert body(units[chunks]) == mem_bytes(mem, 0x40, 16)
    assert int(dut.cnt_bad_message.value) == 0, "the RREQ behind the burst was dropped"
    assert int(dut.cnt_unknown_grant.value) == 0, "a grant of the burst was dropped"


@cocotb.test()
async def frames_pass_while_memory_preempts(dut):
    rng = random.Random(SEED + 2)
    mem = [rng.getrandbits(64) for _ in range(WORDS)]
    h = Harness(dut)
    await h.start(mem)
    f_out = frame(bytes(rng.randrange(256) for _ in range(900)))
    h.macq.extend(f_out)
    for _ in range(5):
        await FallingEdge(dut.clk)
    # Memory work while the frame is being sent: a read request and a served RREQ.
    h.reqs.append((0, 2, 0x10, 64, 0x400, 1))
    f_in = frame(bytes(rng.randrange(256) for _ in range(500)))
    h.rx.extend(f_in[:30] + message(RREQ, 1, 0, 2, 64, (0x40).to_bytes(8, "little")) + f_in[30:])
    await h.wait_for(lambda: len(split(h.tx)[1]) >= len(f_out) and len(h.units()) == 2,
                     "the frame and both memory units on the line")
    units, frm = split(h.tx)
    assert [b for _, b in frm] == f_out, "the frame was changed"
    inside = [u for u in units if frm[0][0] < u[0][0] < frm[-1][0]]
    assert inside, "memory did not preempt the frame"
    assert int(dut.cnt_preempted.value) >= 1
    await h.wait_for(lambda: len(h.dec) >= len(f_in), "the received frame at the decoder")
    assert h.dec == f_in, "the received frame was not released whole"
    kinds = sorted(header(u[0][1])["kind"] for u in units)
    assert kinds == [RREQ, RRES], f"memory units {kinds}"


@cocotb.test()
async def atomics(dut):
    """RMW at both ends: the requester sends an RMWREQ (its own notification) and reports the
    result; the memory node executes CAS / FAA / SWAP / TAS on the word and answers at once."""
    rng = random.Random(SEED + 3)
    mem = [rng.getrandbits(64) for _ in range(WORDS)]
    mem[0x10] = 0
    h = Harness(dut)
    await h.start(mem)
    # Requester: FAA 5 on node 2's word 0x80; the RRES carries the old value.
    h.reqs.append((0, 2, 0x80, 0, 0, 40, 1, 5, 0))
    await h.wait_for(lambda: len(h.units()) == 1, "the RMWREQ")
    u = h.units()[0]
    f = header(u[0])
    assert (f["kind"], f["op"], f["last"], f["peer"], f["len"]) == (RMWREQ, 1, 1, 2, 8), f"RMWREQ {f}"
    assert body(u) == (0x80).to_bytes(8, "little") + (5).to_bytes(8, "little")
    h.rx.extend(message(RRES, 1, 2, f["id"], 8, (1234).to_bytes(8, "little")))
    await h.wait_for(lambda: (40, 1) in h.rcomp, "the RMW completion")
    assert h.rdata[40] == 1234
    # Memory node: each op on its word, in arrival order; results in the RRES.
    old = {w: mem[w] for w in (0x20, 0x21, 0x22, 0x10)}
    ops = [
        (0, 0x20, [old[0x20], 77], 1, 1, 77),              # CAS succeeds
        (0, 0x21, [old[0x21] ^ 1, 78], 1, 0, old[0x21]),   # CAS fails
        (1, 0x22, [9], 8, old[0x22], old[0x22] + 9),       # FAA
        (3, 0x10, [], 1, 0, 1),                            # TAS on zero
        (2, 0x22, [3], 8, old[0x22] + 9, 3),               # SWAP after the FAA
    ]
    for k, (op, w, args, n, _, _) in enumerate(ops):
        h.rx.extend(message(RMWREQ, 1, 0, 50 + k, n,
                            (w * 8).to_bytes(8, "little") + b"".join(a.to_bytes(8, "little") for a in args),
                            op=op))
    await h.wait_for(lambda: len(h.units()) == 1 + len(ops), "every RMW response")
    for k, (op, w, args, n, result, new) in enumerate(ops):
        u = h.units()[1 + k]
        f = header(u[0])
        assert (f["kind"], f["peer"], f["id"], f["len"], f["last"]) == (RRES, 0, 50 + k, n, 1), f"RRES {f}"
        assert body(u)[:n] == (result % (1 << 64)).to_bytes(8, "little")[:n], f"op {op} result"
    for w, want in ((0x20, 77), (0x21, old[0x21]), (0x22, 3), (0x10, 1)):
        got = int.from_bytes(await h.read_mem(w * 8, 8), "little")
        assert got == want, f"word {w:#x}: {got:#x} != {want:#x}"
    # Out of memory: a NULL response.
    h.rx.extend(message(RMWREQ, 1, 0, 60, 8, (WORDS * 8).to_bytes(8, "little") + bytes(8), op=1))
    await h.wait_for(lambda: len(h.units()) == 2 + len(ops), "the NULL RMW response")
    f = header(h.units()[-1][0])
    assert (f["type"], f["len"], f["id"]) == (MST, 0, 60)
    assert int(dut.cnt_bad_address.value) == 1

"""edm_xdma_rings against the ring protocol of host-sdk/wire/src/xdma.rs,
driven the way host-sdk/xdma's XdmaLink drives a card: the host writes slot
images (len u16 | rsvd u16 | packet, only the bytes it needs) into card
memory and publishes them with H2C_HEAD, waiting on H2C_TAIL while the ring
is full; it polls C2H_HEAD, reads whole slots, parses them like
`xdma::parse_slot` and frees them with C2H_TAIL. Card memory is a Python
model of the 64-bit word port (one-cycle read latency). Random back-pressure
on m_axis, random gaps on s_axis, random host delays. Every H2C packet must
come out on m_axis byte for byte and in order, malformed slots must be
skipped and counted, every C2H packet must reach the host intact and in
order, and oversize or empty C2H packets must be dropped and counted."""

import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, with_timeout

from tb_base import start_clock
from zcu_tb import BeatSink, pulse_reset

HDR = 4  # xdma::SLOT_HEADER_LEN


class Card:
    """Card memory behind the word port, plus the host's byte view of it."""

    def __init__(self, dut, words):
        self.dut = dut
        self.mem = [0] * words
        self.writes = 0

    async def run(self):
        dut = self.dut
        rdata = 0
        while True:
            await FallingEdge(dut.clk)
            en, we = int(dut.mem_en.value), int(dut.mem_we.value)
            addr = int(dut.mem_addr.value)
            wdata = int(dut.mem_wdata.value) if we else 0
            await RisingEdge(dut.clk)
            if en and we:
                self.mem[addr] = wdata
                self.writes += 1
            elif en:
                rdata = self.mem[addr]
            dut.mem_rdata.value = rdata

    def write_bytes(self, addr, data):
        for i, b in enumerate(data):
            w, s = divmod(addr + i, 8)
            self.mem[w] = (self.mem[w] & ~(0xFF << 8 * s)) | (b << 8 * s)

    def read_bytes(self, addr, n):
        return bytes((self.mem[(addr + i) // 8] >> 8 * ((addr + i) % 8)) & 0xFF for i in range(n))


def params(dut):
    return (int(dut.SLOT_BYTES.value), int(dut.SLOT_COUNT.value), int(dut.H2C_BASE.value),
            int(dut.C2H_BASE.value))


def slot_addr(base, index, count, nbytes):
    return base + (index & (count - 1)) * nbytes


def parse_slot(slot):
    """xdma::parse_slot: the packet, or None if malformed."""
    n = int.from_bytes(slot[0:2], "little")
    rsvd = int.from_bytes(slot[2:4], "little")
    if rsvd != 0 or HDR + n > len(slot):
        return None
    return slot[HDR:HDR + n]


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    dut.h2c_head.value = 0
    dut.c2h_tail.value = 0
    dut.mem_rdata.value = 0
    dut.s_axis_tvalid.value = 0
    dut.s_axis_tdata.value = 0
    dut.s_axis_tkeep.value = 0
    dut.s_axis_tlast.value = 0
    card = Card(dut, 1 << int(dut.MEM_AW.value))
    cocotb.start_soon(card.run())
    await pulse_reset(dut)
    return rng, card


class Counters:
    def __init__(self, dut):
        self.errors = 0
        self.drops = 0
        cocotb.start_soon(self.run(dut))

    async def run(self, dut):
        while True:
            await RisingEdge(dut.clk)
            self.errors += int(dut.err_add.value)
            self.drops += int(dut.c2h_drop.value)


async def host_send(dut, card, rng, items):
    """XdmaLink::send for each (packet or raw malformed slot image)."""
    nbytes, count, h2c_base, _ = params(dut)
    head = 0
    for kind, data in items:
        while (head - int(dut.h2c_tail.value)) & 0xFFFFFFFF >= count:
            await RisingEdge(dut.clk)
        addr = slot_addr(h2c_base, head, count, nbytes)
        if kind == "packet":
            card.write_bytes(addr, len(data).to_bytes(2, "little") + b"\0\0" + data)
        else:
            card.write_bytes(addr, data)
        for _ in range(rng.choice([0, 0, 1, 5])):
            await RisingEdge(dut.clk)
        head += 1
        dut.h2c_head.value = head
    return head


async def host_recv(dut, card, rng, n, out):
    """XdmaLink::recv: poll C2H_HEAD, read the whole slot, free it with C2H_TAIL."""
    nbytes, count, _, c2h_base = params(dut)
    tail = 0
    while len(out) < n:
        if int(dut.c2h_head.value) == tail:
            await RisingEdge(dut.clk)
            continue
        assert (int(dut.c2h_head.value) - tail) & 0xFFFFFFFF <= count, "C2H_HEAD ran past the ring"
        slot = card.read_bytes(slot_addr(c2h_base, tail, count, nbytes), nbytes)
        p = parse_slot(slot)
        assert p is not None, f"C2H slot {tail} malformed: {slot.hex()}"
        out.append(p)
        for _ in range(rng.choice([0, 0, 2, 12])):
            await RisingEdge(dut.clk)
        tail += 1
        dut.c2h_tail.value = tail


async def send_packets(dut, rng, packets, gap_prob):
    """Drive s_axis: packed 64-bit beats, random gaps."""
    for p in packets:
        beats = [p[i:i + 8] for i in range(0, len(p), 8)] or [b""]
        for i, b in enumerate(beats):
            while rng.random() < gap_prob:
                dut.s_axis_tvalid.value = 0
                await RisingEdge(dut.clk)
            dut.s_axis_tdata.value = int.from_bytes(b.ljust(8, b"\0"), "little")
            dut.s_axis_tkeep.value = (1 << len(b)) - 1
            dut.s_axis_tlast.value = int(i == len(beats) - 1)
            dut.s_axis_tvalid.value = 1
            await RisingEdge(dut.clk)
            while not int(dut.s_axis_tready.value):
                await RisingEdge(dut.clk)
    dut.s_axis_tvalid.value = 0


async def wait_for(dut, cond, cycles, what):
    for _ in range(cycles):
        if cond():
            return
        await RisingEdge(dut.clk)
    raise AssertionError(f"timed out waiting for {what}")


@cocotb.test()
async def h2c_packets(dut):
    """Random packets and malformed slots through the H2C ring, random back-pressure."""
    rng, card = await setup(dut, 1)
    for seed, ready in ((1, 0.9), (2, 0.3)):
        dut.h2c_head.value = 0
        await pulse_reset(dut)
        nbytes = params(dut)[0]
        cnt = Counters(dut)
        sink = BeatSink(dut, "m_axis", dut.clk, 8, ready, seed)
        sink_task = cocotb.start_soon(sink.run())
        items, expect, bad = [], [], 0
        for i in range(60):
            r = rng.random()
            if r < 0.1:
                # Malformed: reserved set, length 0, or too long for the slot.
                img = rng.choice([
                    (5).to_bytes(2, "little") + b"\x01\x00" + b"abcde",
                    b"\0\0\0\0",
                    (nbytes - HDR + 1 + rng.randrange(100)).to_bytes(2, "little") + b"\0\0",
                ])
                items.append(("raw", img))
                bad += 1
            else:
                n = rng.choice([1, 3, 4, 5, 8, 9, 12, nbytes - HDR, nbytes - HDR - 1, rng.randrange(1, nbytes - HDR + 1)])
                p = bytes(rng.getrandbits(8) for _ in range(n))
                items.append(("packet", p))
                expect.append(p)
        await with_timeout(host_send(dut, card, rng, items), 200_000, "ns")
        await wait_for(dut, lambda: len(sink.frames()) == len(expect) and int(dut.h2c_tail.value) == len(items),
                       20_000, "all H2C packets")
        assert sink.frames() == expect
        assert cnt.errors == bad
        sink_task.cancel()
        dut.m_axis_tready.value = 0


@cocotb.test()
async def h2c_overrun(dut):
    """A host more than SLOT_COUNT ahead: every slot dropped at once and counted."""
    rng, card = await setup(dut, 3)
    cnt = Counters(dut)
    dut.m_axis_tready.value = 0
    count = params(dut)[1]
    dut.h2c_head.value = count + 3
    await wait_for(dut, lambda: int(dut.h2c_tail.value) == count + 3, 50, "H2C_TAIL to jump")
    for _ in range(3):
        await RisingEdge(dut.clk)
    assert cnt.errors == count + 3
    assert int(dut.m_axis_tvalid.value) == 0


@cocotb.test()
async def c2h_packets(dut):
    """Random packets (some too long for a slot, some empty) into the C2H ring while the host
    reads slowly, so the ring fills and s_axis is held off."""
    rng, card = await setup(dut, 4)
    nbytes = params(dut)[0]
    cnt = Counters(dut)
    dut.m_axis_tready.value = 0
    packets, expect, dropped = [], [], 0
    for _ in range(60):
        r = rng.random()
        if r < 0.08:
            p = bytes(rng.getrandbits(8) for _ in range(nbytes - HDR + 1 + rng.randrange(20)))
            dropped += 1
        elif r < 0.1:
            p = b""
            dropped += 1
        else:
            n = rng.choice([1, 4, 5, 8, 12, 13, nbytes - HDR, nbytes - HDR - 4, rng.randrange(1, nbytes - HDR + 1)])
            p = bytes(rng.getrandbits(8) for _ in range(n))
            expect.append(p)
        packets.append(p)
    got = []
    recv = cocotb.start_soon(host_recv(dut, card, rng, len(expect), got))
    await with_timeout(send_packets(dut, rng, packets, 0.3), 200_000, "ns")
    await with_timeout(recv, 200_000, "ns")
    for _ in range(4):
        await RisingEdge(dut.clk)
    assert got == expect
    assert cnt.drops == dropped
    assert cnt.errors == 0


@cocotb.test()
async def both_directions(dut):
    """H2C and C2H at once: they share the word port (C2H first)."""
    rng, card = await setup(dut, 5)
    nbytes = params(dut)[0]
    sink = BeatSink(dut, "m_axis", dut.clk, 8, 0.7, 5)
    cocotb.start_soon(sink.run())
    h2c = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, nbytes - HDR + 1))) for _ in range(40)]
    c2h = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, nbytes - HDR + 1))) for _ in range(40)]
    got = []
    recv = cocotb.start_soon(host_recv(dut, card, rng, len(c2h), got))
    send = cocotb.start_soon(host_send(dut, card, rng, [("packet", p) for p in h2c]))
    await with_timeout(send_packets(dut, rng, c2h, 0.1), 200_000, "ns")
    await with_timeout(recv, 200_000, "ns")
    await with_timeout(send, 200_000, "ns")
    await wait_for(dut, lambda: len(sink.frames()) == len(h2c), 20_000, "all H2C packets")
    assert sink.frames() == h2c
    assert got == c2h


@cocotb.test()
async def h2c_rate(dut):
    """Full-size slots back to back with m_axis always ready: one beat per cycle plus a few
    cycles per slot."""
    rng, card = await setup(dut, 6)
    nbytes, count, _, _ = params(dut)
    sink = BeatSink(dut, "m_axis", dut.clk, 8, 1.0, 6)
    cocotb.start_soon(sink.run())
    n = 40
    p = [bytes(rng.getrandbits(8) for _ in range(nbytes - HDR)) for _ in range(n)]
    # Refill the ring as slots free, counting cycles until the card has taken every slot.
    head = 0
    cycles = 0
    while int(dut.h2c_tail.value) < n:
        if head < n and head - int(dut.h2c_tail.value) < count:
            card.write_bytes(slot_addr(int(dut.H2C_BASE.value), head, count, nbytes),
                             len(p[head]).to_bytes(2, "little") + b"\0\0" + p[head])
            head += 1
            dut.h2c_head.value = head
        await RisingEdge(dut.clk)
        cycles += 1
        assert cycles < 10_000
    beats = n * ((nbytes - HDR + 7) // 8)
    dut._log.info("H2C: %d beats in %d cycles (%.2f beats/cycle)", beats, cycles, beats / cycles)
    assert sink.frames() == p
    assert cycles <= beats + 4 * n + 10, (beats, cycles)

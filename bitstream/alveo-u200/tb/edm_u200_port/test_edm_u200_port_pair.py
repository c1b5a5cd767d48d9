"""Two edm_u200_port instances back to back, as two cards on one cable: each
side's TX clock is the other side's RX clock (0.08 % apart), and a model of
the transceivers' 64b/66b gearboxes carries the bits, cut at a random bit
offset that each slip moves by one bit. Checked: both ports find block lock
and report link_up; then remote memory operations that need no switch
(reads and an atomic fetch-and-add: the request is its own notification and
the memory node's answer its own grant) go from A to B and complete with the
right data, through the scramblers, the lock, the hi-BER monitor and the
clock-crossing FIFO of both ports. Writes wait for a switch's grant, so they
are covered by the EDM benches with the switch (ip/edm/tb), not here."""

import random
from fractions import Fraction

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from tb_base import start_clock

M66 = (1 << 66) - 1
A_NODE, B_NODE = 1, 2
FAA = 1


class Gearbox:
    """Bits sent by `src` on its clock, cut into 66-bit blocks for `dst` at an offset."""

    def __init__(self, dut, clk, src, dst, offset):
        self.dut, self.clk, self.src, self.dst = dut, clk, src, dst
        self.buf = 0
        self.nbits = offset  # `offset` garbage bits first: the cut starts mid-block
        self.slips = 0

    async def run(self):
        d = self.dut
        tx_data = getattr(d, f"{self.src}_gt_tx_data")
        tx_hdr = getattr(d, f"{self.src}_gt_tx_hdr")
        rx_data = getattr(d, f"{self.dst}_gt_rx_data")
        rx_hdr = getattr(d, f"{self.dst}_gt_rx_hdr")
        rx_valid = getattr(d, f"{self.dst}_gt_rx_valid")
        slip = getattr(d, f"{self.dst}_gt_rx_slip")
        while True:
            await RisingEdge(self.clk)
            try:
                blk = int(tx_hdr.value) | int(tx_data.value) << 2
            except ValueError:
                blk = 0
            if int(slip.value):
                self.buf >>= 1
                self.nbits -= 1
                self.slips += 1
            self.buf |= blk << self.nbits
            self.nbits += 66
            if self.nbits >= 66 + 8:
                out = self.buf & M66
                self.buf >>= 66
                self.nbits -= 66
                rx_hdr.value = out & 3
                rx_data.value = out >> 2
                rx_valid.value = 1
            else:
                rx_valid.value = 0


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut, "a_clk", Fraction(2560, 1000))
    start_clock(dut, "b_clk", Fraction(2562, 1000))
    for p in ("a", "b"):
        getattr(dut, f"{p}_gt_rx_valid").value = 0
        getattr(dut, f"{p}_gt_rx_data").value = 0
        getattr(dut, f"{p}_gt_rx_hdr").value = 0
        getattr(dut, f"{p}_ext_en").value = 0
        getattr(dut, f"{p}_ext_we").value = 0
        getattr(dut, f"{p}_ext_addr").value = 0
        getattr(dut, f"{p}_ext_wdata").value = 0
    for name in ("valid", "write", "dst", "addr", "len", "local", "tag", "rmw", "op", "opa", "opb"):
        getattr(dut, f"a_req_{name}").value = 0
    # Own reset: four resets in two domains, one edge of each per step (tb_base.reset has one clock).
    for r in ("a_rst_tx", "a_rst_rx", "b_rst_tx", "b_rst_rx"):
        getattr(dut, r).value = 1
    for _ in range(5):
        await RisingEdge(dut.a_clk)
        await RisingEdge(dut.b_clk)
    for r in ("a_rst_tx", "a_rst_rx", "b_rst_tx", "b_rst_rx"):
        getattr(dut, r).value = 0
    ab = Gearbox(dut, dut.a_clk, "a", "b", rng.randrange(66))
    ba = Gearbox(dut, dut.b_clk, "b", "a", rng.randrange(66))
    cocotb.start_soon(ab.run())
    cocotb.start_soon(ba.run())
    return rng, ab, ba


async def ext_write(dut, side, clk, word, value):
    await FallingEdge(clk)
    getattr(dut, f"{side}_ext_en").value = 1
    getattr(dut, f"{side}_ext_we").value = 1
    getattr(dut, f"{side}_ext_addr").value = word
    getattr(dut, f"{side}_ext_wdata").value = value
    await FallingEdge(clk)
    getattr(dut, f"{side}_ext_en").value = 0
    getattr(dut, f"{side}_ext_we").value = 0


async def ext_read(dut, side, clk, word):
    await FallingEdge(clk)
    getattr(dut, f"{side}_ext_en").value = 1
    getattr(dut, f"{side}_ext_we").value = 0
    getattr(dut, f"{side}_ext_addr").value = word
    await FallingEdge(clk)
    getattr(dut, f"{side}_ext_en").value = 0
    await FallingEdge(clk)
    return int(getattr(dut, f"{side}_ext_rdata").value)


async def request(dut, tag, addr, length, local, rmw=0, op=0, opa=0, limit=5000):
    """Submit one request at A (to B) and wait for its read completion."""
    await FallingEdge(dut.a_clk)
    dut.a_req_valid.value = 1
    dut.a_req_write.value = 0
    dut.a_req_dst.value = B_NODE
    dut.a_req_addr.value = addr
    dut.a_req_len.value = length
    dut.a_req_local.value = local
    dut.a_req_tag.value = tag
    dut.a_req_rmw.value = rmw
    dut.a_req_op.value = op
    dut.a_req_opa.value = opa
    while True:
        await RisingEdge(dut.a_clk)
        if int(dut.a_req_ready.value):
            break
    await FallingEdge(dut.a_clk)
    dut.a_req_valid.value = 0
    for _ in range(limit):
        await RisingEdge(dut.a_clk)
        if int(dut.a_rcomp_valid.value) and int(dut.a_rcomp_tag.value) == tag:
            return int(dut.a_rcomp_ok.value), int(dut.a_rcomp_data.value)
    raise AssertionError(f"request {tag} did not complete in {limit} cycles")


@cocotb.test()
async def link_and_remote_reads(dut):
    rng, ab, ba = await setup(dut, 1)
    for _ in range(66 * 100):
        await RisingEdge(dut.a_clk)
        if int(dut.a_link_up.value) and int(dut.b_link_up.value):
            break
    assert int(dut.a_link_up.value) and int(dut.b_link_up.value), "no block lock"
    dut._log.info("locked after %d / %d slips", ab.slips, ba.slips)
    # B's memory: random words.
    words = [rng.getrandbits(64) for _ in range(64)]
    for i, w in enumerate(words):
        await ext_write(dut, "b", dut.b_clk, i, w)
    # Reads of 8, 64 and 256 bytes from B into A's memory.
    tag = 1
    for addr, length, local in ((0, 8, 0x800), (64, 64, 0x900), (128, 256, 0xA00)):
        ok, _ = await request(dut, tag, addr, length, local)
        assert ok == 1, f"read {tag} not ok"
        for k in range(length // 8):
            got = await ext_read(dut, "a", dut.a_clk, local // 8 + k)
            assert got == words[addr // 8 + k], f"read {tag} word {k}: {got:#x}"
        tag += 1
    # Fetch-and-add on B's word 3: returns the old value, B's memory holds the sum.
    old = words[3]
    ok, res = await request(dut, tag, 24, 8, 0xC00, rmw=1, op=FAA, opa=5)
    assert ok == 1 and res == old, f"FAA returned {res:#x}, expected {old:#x}"
    assert await ext_read(dut, "b", dut.b_clk, 3) == (old + 5) & (2**64 - 1)
    assert int(dut.a_link_up.value) and int(dut.b_link_up.value)

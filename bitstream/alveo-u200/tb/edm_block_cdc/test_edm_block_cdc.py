"""edm_block_cdc with unrelated write and read clocks (writer faster, slower,
and much faster than the reader) and random gaps in the input: the blocks read
out are the blocks written, in order, except idle blocks the FIFO deleted;
deletions only happen to idle blocks and equal cnt_deleted; with no idle to
delete and a much faster writer, lost blocks equal cnt_overflow and what
arrives is still in order."""

import random
from fractions import Fraction

import cocotb
from cocotb.triggers import RisingEdge

from tb_base import start_clock

IDLE = (1, 0x1E)  # SYNC_CTRL, BT_IDLE with all-/I/ control codes


async def setup(dut, wr_ps, rd_ps):
    start_clock(dut, "wr_clk", Fraction(wr_ps, 1000))
    start_clock(dut, "rd_clk", Fraction(rd_ps, 1000))
    dut.in_valid.value = 0
    dut.in_data.value = 0
    dut.in_hdr.value = 0
    # Own reset: two domains held together, one edge of each per step (tb_base.reset has one clock).
    dut.wr_rst.value = 1
    dut.rd_rst.value = 1
    for _ in range(5):
        await RisingEdge(dut.wr_clk)
        await RisingEdge(dut.rd_clk)
    dut.wr_rst.value = 0
    dut.rd_rst.value = 0
    # Let both sides see the release before the first block.
    for _ in range(2):
        await RisingEdge(dut.wr_clk)
        await RisingEdge(dut.rd_clk)


class Reader:
    def __init__(self, dut):
        self.out = []
        cocotb.start_soon(self.run(dut))

    async def run(self, dut):
        while True:
            await RisingEdge(dut.rd_clk)
            if int(dut.out_valid.value):
                self.out.append((int(dut.out_hdr.value), int(dut.out_data.value)))


def block(rng, idle_prob):
    if rng.random() < idle_prob:
        return IDLE
    # Non-idle blocks, including near-idle ones that must not be deleted.
    return rng.choice([
        (2, rng.getrandbits(64)),
        (1, (rng.getrandbits(56) << 8) | 0x1E),
        (1, 0x78 | rng.getrandbits(56) << 8),
        (2, 0x1E),
    ])


async def drive(dut, rng, blocks, gap_prob):
    # Drive right after a write-clock edge (the read clock's edges may coincide).
    await RisingEdge(dut.wr_clk)
    for b in blocks:
        while rng.random() < gap_prob:
            dut.in_valid.value = 0
            await RisingEdge(dut.wr_clk)
        dut.in_hdr.value, dut.in_data.value = b
        dut.in_valid.value = 1
        await RisingEdge(dut.wr_clk)
    dut.in_valid.value = 0
    for _ in range(40):
        await RisingEdge(dut.rd_clk)


def is_subsequence(small, big):
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


async def run_case(dut, seed, wr_ps, rd_ps, n, idle_prob, gap_prob):
    rng = random.Random(seed)
    await setup(dut, wr_ps, rd_ps)
    reader = Reader(dut)
    blocks = [block(rng, idle_prob) for _ in range(n)]
    await drive(dut, rng, blocks, gap_prob)
    return blocks, reader.out


@cocotb.test()
async def writer_faster_deletes_idles(dut):
    blocks, out = await run_case(dut, 1, 3900, 4000, 6000, 0.3, 0.0)
    deleted = int(dut.cnt_deleted.value)
    assert int(dut.cnt_overflow.value) == 0
    assert deleted > 0, "a 2.5 % faster writer must have made the FIFO delete idles"
    assert [b for b in out if b != IDLE] == [b for b in blocks if b != IDLE]
    assert len(out) == len(blocks) - deleted
    assert is_subsequence(out, blocks)
    dut._log.info("deleted %d idle blocks of %d", deleted, len(blocks))


@cocotb.test()
async def reader_faster_exact(dut):
    blocks, out = await run_case(dut, 2, 4000, 3900, 4000, 0.2, 0.05)
    assert int(dut.cnt_deleted.value) == 0 and int(dut.cnt_overflow.value) == 0
    assert out == blocks


@cocotb.test()
async def no_idles_overflow_counted(dut):
    blocks, out = await run_case(dut, 3, 2000, 4000, 600, 0.0, 0.0)
    lost = int(dut.cnt_overflow.value)
    assert int(dut.cnt_deleted.value) == 0
    assert lost > 0 and len(out) == len(blocks) - lost
    assert is_subsequence(out, blocks)

"""clio_axil_regif through a small register block (tb_clio_axil_regif.sv):
random reads and writes (byte spans inside a word set the strobes; mapped,
read-only and unmapped offsets) from an AXI-Lite master whose AW, W, B, AR and R
channels each pause at random, so AW and W arrive in either order and answers
wait; every write is applied exactly once under its strobes, writes to the
read-only or unmapped words answer SLVERR and change nothing, reads return the
Python model's value (SLVERR and 0 when unmapped)."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb_base import reset, start_clock
from zcu_tb import OKAY, SLVERR, pause_channels
RO_VALUE = 0xC0DE0042


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.s_axil").setLevel(logging.WARNING)
    m = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    pause_channels(m, rng, 0.4)
    await reset(dut, cycles=4)
    return m, rng


@cocotb.test()
async def random_accesses_match_the_model(dut):
    m, rng = await setup(dut, 31)
    model = [0, 0, 0, 0]
    writes = 0
    for _ in range(400):
        addr = rng.choice([0, 4, 8, 12, 16, 20, 0x40, 0xFC]) + rng.randrange(4)
        word = addr & ~3
        if rng.random() < 0.5:
            # A span of bytes inside the word: the master sets their strobes.
            off = rng.randrange(4)
            n = rng.randint(1, 4 - off)
            data = rng.getrandbits(8 * n)
            resp = (await m.write(word + off, data.to_bytes(n, "little"))).resp
            writes += 1
            if word < 16:
                assert resp == OKAY, f"write {word + off:#x}+{n}: resp {resp}"
                cur = model[word // 4]
                mask = ((1 << 8 * n) - 1) << 8 * off
                model[word // 4] = (cur & ~mask) | ((data << 8 * off) & mask)
            else:
                assert resp == SLVERR, f"write {word + off:#x}: resp {resp}, want SLVERR"
        else:
            rd = await m.read(word, 4)
            got = int.from_bytes(rd.data, "little")
            if word < 16:
                want, want_resp = model[word // 4], OKAY
            elif word == 16:
                want, want_resp = RO_VALUE, OKAY
            else:
                want, want_resp = 0, SLVERR
            assert rd.resp == want_resp, f"read {word:#x}: resp {rd.resp}, want {want_resp}"
            assert got == want, f"read {word:#x}: {got:#010x}, want {want:#010x}"
    for _ in range(4):
        await RisingEdge(dut.clk)
    assert int(dut.writes.value) == writes, f"{int(dut.writes.value)} wr_en pulses for {writes} writes"

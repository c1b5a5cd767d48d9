"""clio_dedup against a model of the reference dedup buffer: FIFO eviction over a non-power-of-two
capacity, overwrite in place, lookups racing inserts."""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from clio_tb import reset


class Model:
    def __init__(self, n):
        self.keys = [None] * n
        self.recs = [None] * n
        self.w = 0

    def get(self, k):
        return self.recs[self.keys.index(k)] if k in self.keys else None

    def insert(self, k, r):
        if k in self.keys:
            self.recs[self.keys.index(k)] = r
            return
        self.keys[self.w], self.recs[self.w] = k, r
        self.w = (self.w + 1) % len(self.keys)


@cocotb.test()
async def random_against_model(dut):
    """Random lookups and inserts over a small key space agree with the FIFO model."""
    n = int(dut.ENTRIES.value)
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    dut.s_lookup_valid.value = 0
    dut.s_insert_valid.value = 0
    await reset(dut)
    m = Model(n)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    pending = None
    hits = 0
    for _ in range(5000):
        look = rng.randrange(20) if rng.random() < 0.8 else None
        ins = (rng.randrange(20), rng.getrandbits(32)) if rng.random() < 0.4 else None
        if look is not None:
            dut.s_lookup_key.value = look
        dut.s_lookup_valid.value = int(look is not None)
        if ins:
            dut.s_insert_key.value, dut.s_insert_rec.value = ins
        dut.s_insert_valid.value = int(ins is not None)
        await RisingEdge(dut.clk)
        if pending is not None:
            (want,) = pending
            assert dut.m_lookup_valid.value == 1
            assert bool(dut.m_lookup_hit.value) == (want is not None)
            if want is not None:
                hits += 1
                assert int(dut.m_lookup_rec.value) == want
        pending = (m.get(look),) if look is not None else None
        if ins:
            m.insert(*ins)
    assert hits > 500

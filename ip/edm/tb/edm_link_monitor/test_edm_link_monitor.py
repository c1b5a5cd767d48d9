"""edm_link_monitor: THRESHOLD bad sync headers within WINDOW blocks disable the link (sticky);
spread-out errors do not; blocks pass unchanged until then and become error blocks after."""

import os
import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from tb_base import reset, start_clock

ERROR_BLOCK = sum(0x1E << (8 + 7 * lane) for lane in range(8)) | 0x1E


class Reference:
    def __init__(self, window, threshold):
        self.window, self.threshold = window, threshold
        self.start, self.errors, self.down = 0, 0, False

    def step(self, cycle, hdr):
        if self.down:
            return False
        if cycle >= self.start + self.window:
            self.start, self.errors = cycle, 0
        if hdr in (0, 3):
            self.errors += 1
            if self.errors >= self.threshold:
                self.down = True
                return False
        return True


async def run(dut, rng, error_rate, cycles):
    window = int(os.environ.get("WINDOW", "64"))
    threshold = int(os.environ.get("THRESHOLD", "4"))
    ref = Reference(window, threshold)
    start_clock(dut)
    dut.in_valid.value = 0
    await reset(dut, cycles=2, settle=0)
    for c in range(cycles):
        await FallingEdge(dut.clk)
        hdr = rng.choice([0, 3]) if rng.random() < error_rate else rng.choice([1, 2])
        data = rng.getrandbits(64)
        dut.in_valid.value = 1
        dut.in_hdr.value = hdr
        dut.in_data.value = data
        ok = ref.step(c, hdr)
        await RisingEdge(dut.clk)
        await ReadOnly()
        got = (int(dut.out_hdr.value), int(dut.out_data.value))
        want = (hdr, data) if ok else (1, ERROR_BLOCK)
        assert got == want, f"cycle {c}: out {got} != reference {want}"
        assert int(dut.link_down.value) == int(ref.down), f"cycle {c}: link_down"
    return ref.down


@cocotb.test()
async def burst_disables_link(dut):
    down = await run(dut, random.Random(3), 0.2, 400)
    assert down, "a 20 % error rate must disable the link"


@cocotb.test()
async def sparse_errors_keep_link(dut):
    down = await run(dut, random.Random(4), 0.01, 2000)
    assert not down, "sparse errors must not disable the link"

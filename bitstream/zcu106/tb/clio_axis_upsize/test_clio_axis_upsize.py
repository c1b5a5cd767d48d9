"""clio_axis_upsize 64 -> 512: random frames (1..700 bytes, so every tail
length and multi-beat frames) with random pauses in and random back-pressure
out come out as the packed 64-byte beats of the Python reference (data under
tkeep, tkeep exactly, tlast), and at full rate with no pauses one input beat
is taken per cycle."""

import cocotb

from zcu_tb import run_width_converter


async def run(dut, pause, ready_prob, seed, frames):
    return await run_width_converter(dut, 8, 64, pause, ready_prob, seed, frames)


@cocotb.test()
async def random_backpressure(dut):
    await run(dut, pause=0.3, ready_prob=0.5, seed=11, frames=80)


@cocotb.test()
async def full_rate(dut):
    """No pauses, always ready: input beats flow at one per cycle."""
    in_beats, _, cycles = await run(dut, pause=0, ready_prob=1.0, seed=12, frames=40)
    assert cycles <= in_beats + 8, f"{in_beats} input beats took {cycles} cycles"

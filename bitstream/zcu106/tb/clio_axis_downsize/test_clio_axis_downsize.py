"""clio_axis_downsize 512 -> 64: random frames (1..700 bytes) as packed 64-byte
beats, with random pauses in and random back-pressure out, come out as the
packed 8-byte beats of the Python reference (no beat for empty lanes, tkeep
exactly, tlast on the frame's last lane), and an always-ready output gets one
beat per cycle."""

import cocotb

from zcu_tb import run_width_converter


async def run(dut, pause, ready_prob, seed, frames):
    return await run_width_converter(dut, 64, 8, pause, ready_prob, seed, frames)


@cocotb.test()
async def random_backpressure(dut):
    await run(dut, pause=0.3, ready_prob=0.5, seed=21, frames=80)


@cocotb.test()
async def full_rate(dut):
    """Always-ready output: one narrow beat per cycle, no bubble between wide beats."""
    _, out_beats, cycles = await run(dut, pause=0, ready_prob=1.0, seed=22, frames=40)
    assert cycles <= out_beats + 8, f"{out_beats} output beats took {cycles} cycles"

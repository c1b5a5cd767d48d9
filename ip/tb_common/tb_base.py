"""Bench base shared by every cocotb bench under ip/ (fast path and EDM).

One place for what each bench used to set up by hand: the clock, the reset
sequence, idle levels of the inputs, the seed, and the parameter point the
bench was compiled for (benches run at several points: see the `run.sh` of
each IP). Format helpers stay with their IP (`ip/fastpath/tb/common/clio_tb.py`,
`ip/edm/tb/edm_blocks.py`).
"""

import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, Timer

#: Clock period of every bench (250 MHz, the fast path's clock).
PERIOD_NS = 4


def start_clock(dut, clk="clk", period_ns=PERIOD_NS):
    """Start a free-running clock on `dut.<clk>`."""
    cocotb.start_soon(Clock(getattr(dut, clk), period_ns, unit="ns").start())


def drive(dut, **values):
    """Set several inputs at once: `drive(dut, in_valid=0, node_id=3)`."""
    for name, value in values.items():
        getattr(dut, name).value = value


async def reset(dut, cycles=3, settle=1, clk="clk", rst="rst"):
    """Hold `rst` high for `cycles` rising edges, release it, then wait `settle` more.

    With `settle=0` the reset is released right after a rising edge, so inputs
    driven at the next falling edge are the first the design sees out of reset.
    """
    c, r = getattr(dut, clk), getattr(dut, rst)
    r.value = 1
    for _ in range(cycles):
        await RisingEdge(c)
    r.value = 0
    for _ in range(settle):
        await RisingEdge(c)


async def start(dut, idle=(), cycles=3, settle=1, clk="clk", rst="rst", **values):
    """The common opening of a bench: clock on, the inputs in `idle` driven low
    and the named `values` driven, reset held `cycles` edges and released."""
    start_clock(dut, clk)
    drive(dut, **{name: 0 for name in idle})
    drive(dut, **values)
    await reset(dut, cycles=cycles, settle=settle, clk=clk, rst=rst)


async def reset_with_one_inside(dut, what, valid="s_valid", ready="s_ready", clk="clk", rst="rst"):
    """A stage takes the request offered at the next rising edge, then is reset
    with it inside: not ready while it holds it, ready again out of reset."""
    c = getattr(dut, clk)
    await RisingEdge(c)
    await FallingEdge(c)
    getattr(dut, valid).value = 0
    await Timer(1, unit="ns")
    assert int(getattr(dut, ready).value) == 0, f"the {what} is inside"
    getattr(dut, rst).value = 1
    await RisingEdge(c)
    await FallingEdge(c)
    getattr(dut, rst).value = 0
    await Timer(1, unit="ns")
    assert int(getattr(dut, ready).value) == 1, f"not ready after a reset with the {what} inside"


async def cleared_by(dut, how, what, begin="m_begin", valid="s_valid", ready="s_ready", clk="clk"):
    """A stage holds a request the engine left it with (a call that failed):
    `how` (the engine idle, `s_idle`, or a reset, `rst`) high for one cycle
    clears it: ready again, at its first state (`begin`)."""
    getattr(dut, valid).value = 0
    await Timer(1, unit="ns")
    assert int(getattr(dut, ready).value) == 0, f"the {what} is inside"
    getattr(dut, how).value = 1
    await FallingEdge(getattr(dut, clk))
    getattr(dut, how).value = 0
    await Timer(1, unit="ns")
    assert int(getattr(dut, ready).value) == 1 and int(getattr(dut, begin).value) == 1, \
        f"not cleared by {how} with the {what} inside"


async def engine_cycle(dut, r, away, hold_p, outs, drive=None, clk="clk"):
    """One cycle of a bench playing the engine for a control stage (the stage
    runs while the engine is in its state, `s_valid`, and is held with it,
    `s_en` low). At the falling edge: held with probability `hold_p`, running
    the stage unless away on a call (`away` cycles left); `drive()`, if given,
    sets the other inputs. Then, while the stage does not run, every output
    in `outs` must stay low. True when the stage runs this cycle."""
    await FallingEdge(getattr(dut, clk))
    hold = r.random() < hold_p
    dut.s_en.value = 0 if hold else 1
    dut.s_valid.value = int(away == 0)
    if drive is not None:
        drive()
    await Timer(1, unit="ns")
    if away or hold:
        for name in outs:
            assert int(getattr(dut, name).value) == 0, f"{name} while the stage does not run"
        return False
    return True


async def cycles(dut, n, clk="clk"):
    """Wait `n` rising edges."""
    for _ in range(n):
        await RisingEdge(getattr(dut, clk))


async def falling(dut, clk="clk"):
    """Wait for the next falling edge (where benches drive inputs)."""
    await FallingEdge(getattr(dut, clk))


def param(dut, name):
    """A parameter of the compiled design (the sweep point), as an int."""
    return int(getattr(dut, name).value)


def env_int(name, default):
    """An integer setting passed by the Makefile or run.sh (e.g. `PORTS=6`)."""
    return int(os.environ.get(name, str(default)), 0)


def rng(default_seed=1):
    """A seeded generator; `TB_SEED` (or the EDM benches' `EDM_SEED`) replays a run."""
    seed = os.environ.get("TB_SEED") or os.environ.get("EDM_SEED") or str(default_seed)
    cocotb.log.info("seed %s", seed)
    return random.Random(int(seed))

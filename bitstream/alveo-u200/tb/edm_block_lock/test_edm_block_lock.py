"""edm_block_lock against a Python model of the clause 49 lock state machine,
fed by a model of the transceiver's 64b/66b gearbox: random blocks are
serialized and cut into 66-bit blocks at a random bit offset; each slip moves
the cut by one bit, two blocks after it is asked for. Random input gaps.
Checked: `slip` and `locked` equal the model's on every block; the DUT locks
from every offset; once locked it passes exactly the blocks that were sent;
15 invalid headers in a 1024-block window keep the lock, 16 lose it, and it
locks again."""

import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from tb_base import start_clock
from zcu_tb import pulse_reset


class LockModel:
    def __init__(self, slip_wait):
        self.slip_wait = slip_wait
        self.locked = False
        self.wait = 0
        self.sh = 0
        self.bad = 0

    def step(self, hdr):
        """One valid input block; returns (slip, out_valid)."""
        ok = hdr in (1, 2)
        if not self.locked:
            if self.wait:
                self.wait -= 1
            elif not ok:
                self.wait, self.sh = self.slip_wait, 0
                return True, False
            elif self.sh == 63:
                self.locked, self.sh, self.bad = True, 0, 0
            else:
                self.sh += 1
            return False, False
        if not ok and self.bad == 15:
            self.locked, self.wait, self.sh = False, self.slip_wait, 0
            return True, False
        if self.sh == 1023:
            self.sh, self.bad = 0, 0
        else:
            self.sh += 1
            self.bad += int(not ok)
        return False, True


class Line:
    """Transmitted blocks as a bit stream; the gearbox cuts it at `offset`."""

    def __init__(self, rng):
        self.rng = rng
        self.bits = []
        self.sent = []      # (hdr, data) per transmitted block
        self.pos = 0        # next bit the gearbox takes
        self.corrupt = set()  # block numbers sent with an invalid header

    def _more(self, n):
        while len(self.bits) < n:
            k = len(self.sent)
            hdr = self.rng.choice((1, 2))
            if k in self.corrupt:
                hdr = self.rng.choice((0, 3))
            data = self.rng.getrandbits(64)
            self.sent.append((hdr, data))
            self.bits += [hdr & 1, hdr >> 1] + [(data >> i) & 1 for i in range(64)]

    def next_block(self):
        self._more(self.pos + 66)
        b = self.bits[self.pos:self.pos + 66]
        self.pos += 66
        hdr = b[0] | b[1] << 1
        data = sum(bit << i for i, bit in enumerate(b[2:]))
        return hdr, data

    def slip(self):
        self.pos += 1


async def run(dut, rng, line, model, blocks, gap_prob, on_block=None):
    """Feed `blocks` gearbox blocks; compare slip/locked with the model each block.
    Returns the blocks passed on."""
    out = []
    pending_slips = []
    n = 0
    while n < blocks:
        await FallingEdge(dut.clk)
        if int(dut.out_valid.value):
            out.append((int(dut.out_hdr.value), int(dut.out_data.value)))
        if rng.random() < gap_prob:
            dut.in_valid.value = 0
            await RisingEdge(dut.clk)
            continue
        # A slip takes effect two blocks after it was asked for.
        pending_slips = [c - 1 for c in pending_slips]
        while pending_slips and pending_slips[0] <= 0:
            pending_slips.pop(0)
            line.slip()
        hdr, data = line.next_block()
        dut.in_hdr.value = hdr
        dut.in_data.value = data
        dut.in_valid.value = 1
        exp_slip, _ = model.step(hdr)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        dut.in_valid.value = 0
        assert int(dut.slip.value) == int(exp_slip), f"block {n}: slip"
        assert int(dut.locked.value) == int(model.locked), f"block {n}: locked"
        if exp_slip:
            pending_slips.append(2)
        if on_block:
            on_block(n)
        n += 1
        if int(dut.out_valid.value):
            out.append((int(dut.out_hdr.value), int(dut.out_data.value)))
        await RisingEdge(dut.clk)
    return out


async def setup(dut, seed):
    start_clock(dut)
    dut.in_valid.value = 0
    dut.in_data.value = 0
    dut.in_hdr.value = 0
    await pulse_reset(dut)
    return random.Random(seed)


def is_contiguous_run(out, sent):
    """`out` is a contiguous run of `sent`."""
    if not out:
        return False
    for start in range(len(sent)):
        if sent[start] == out[0]:
            return sent[start:start + len(out)] == out
    return False


@cocotb.test()
async def locks_from_any_offset(dut):
    rng = await setup(dut, 1)
    wait = int(dut.SLIP_WAIT.value)
    for trial in range(4):
        await pulse_reset(dut)
        model = LockModel(wait)
        line = Line(rng)
        line.pos = rng.randrange(66)
        out = await run(dut, rng, line, model, 66 * (wait + 70) + 300, 0.2)
        assert model.locked, f"trial {trial}: no lock"
        assert len(out) > 100
        assert is_contiguous_run(out, line.sent), f"trial {trial}: passed blocks are not the sent ones"


@cocotb.test()
async def loses_lock_at_16_bad_headers(dut):
    rng = await setup(dut, 2)
    wait = int(dut.SLIP_WAIT.value)
    model = LockModel(wait)
    line = Line(rng)
    line.pos = 0
    await run(dut, rng, line, model, 200, 0.0)
    assert model.locked
    # 15 bad headers spread over the next window: still locked.
    base = len(line.sent) + 8
    line.corrupt |= set(rng.sample(range(base, base + 900), 15))
    await run(dut, rng, line, model, 1100, 0.1)
    assert model.locked and int(dut.locked.value)
    # 16 close together: lock lost, then found again (the cut is still right).
    base = len(line.sent) + 8
    line.corrupt |= set(range(base, base + 32, 2))
    lost = []
    await run(dut, rng, line, model, 80, 0.0, on_block=lambda n: lost.append(not model.locked))
    assert any(lost), "lock not lost after 16 bad headers"
    await run(dut, rng, line, model, 66 * (wait + 70) + 300, 0.1)
    assert model.locked

"""clio_page_in_region: a page of 2^shift bytes at a PPN inside [lo, hi), against a reference.

The reference is exact: the page [PPN << shift, (PPN + 1) << shift) lies in
[lo, hi), so a page of 2^64 bytes or more never does.
"""

import cocotb
from cocotb.triggers import Timer

from tb_base import drive, rng

def reference(ppn, shift, lo, hi):
    return int(lo <= ppn << shift and (ppn + 1) << shift <= hi)


async def check(dut, ppn, shift, lo, hi):
    drive(dut, s_ppn=ppn, s_shift=shift, s_lo=lo, s_hi=hi)
    await Timer(1, "ns")
    want = reference(ppn, shift, lo, hi)
    got = int(dut.m_in.value)
    assert got == want, f"ppn {ppn:#x} shift {shift} region [{lo:#x}, {hi:#x}): got {got}, want {want}"
    return got


@cocotb.test()
async def edges(dut):
    """Pages at the region's ends, one page over, empty regions, huge shifts."""
    lo, hi = 0x4000_0000, 0x8000_0000
    cases = [
        (lo >> 12, 12, 1),                       # the first page
        ((hi >> 12) - 1, 12, 1),                 # the last page
        (hi >> 12, 12, 0),                       # the page after the region
        ((lo >> 12) - 1, 12, 0),                 # the page before it
        (lo >> 21, 21, 1),                       # a 2 MiB page at the start
        ((hi >> 21) - 1, 21, 1),
        (hi >> 21, 21, 0),
        (lo, 0, 1),                              # a one-byte page
        (hi, 0, 0),
        (0xFFFF_FFFF, 12, 0),                    # past the region
        (1, 64, 0),                              # a page of 2^64 bytes: never inside
        (0, 64, 0),
        (0, 70, 0),
        (0xFFFF_FFFF, 32, 0),                    # ends at 2^64 - 2^32: above this region
    ]
    for ppn, shift, want in cases:
        assert await check(dut, ppn, shift, lo, hi) == want, (ppn, shift)
    # An empty region holds no page; the whole space holds every page below 2^64.
    assert await check(dut, lo >> 12, 12, lo, lo) == 0
    assert await check(dut, 0xFFFF_FFFF, 31, 0, (1 << 64) - 1) == 1
    assert await check(dut, 1, 63, 0, (1 << 64) - 1) == 0, "[2^63, 2^64) ends past the region"
    assert await check(dut, 0, 63, 0, (1 << 64) - 1) == 1, "[0, 2^63) lies inside"


@cocotb.test()
async def random_points(dut):
    """Random PPNs, shifts and regions, biased towards the region's ends."""
    r = rng()
    inside = 0
    for _ in range(3000):
        shift = r.choice([0, 12, 12, 21, 22, 30, r.randrange(0, 80)])
        lo = r.randrange(0, 1 << 40) & ~0xFFF
        hi = lo + r.randrange(0, 1 << 34)
        if r.random() < 0.5 and shift < 40:
            # a page next to either end
            ppn = max(0, (r.choice([lo, hi]) >> shift) + r.randrange(-2, 2)) & 0xFFFF_FFFF
        else:
            ppn = r.randrange(0, 1 << 32)
        inside += await check(dut, ppn, shift, lo, min(hi, (1 << 64) - 1))
    assert 200 < inside < 2800, f"{inside} of 3000 inside: the points do not cover both answers"

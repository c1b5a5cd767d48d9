"""clio_axi_downsize 512 -> 128 between a cocotbext-axi master (the fast path's
side) and a 128-bit RAM (S_AXI_HP0's side), both with random pauses on every
channel: full-width bursts of 1..8 beats written with random strobes land in
the RAM as a Python byte-array reference says, reads return the reference,
several IDs in flight at once get their own data back, and every narrow burst
has len = 4 * (len + 1) - 1, size 16 bytes and ID 0."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge, with_timeout
from cocotbext.axi import AxiBus, AxiMaster, AxiRam

from tb_base import start_clock
from zcu_tb import pulse_reset

S_BYTES, M_BYTES, RATIO = 64, 16, 4
MEM = 1 << 16


class AddrMonitor:
    """Records (id, addr, len, size, burst) of every address handshake on one side."""

    def __init__(self, dut, side, ch):
        self.dut, self.p, self.seen = dut, f"{side}_axi_{ch}", []

    async def run(self):
        d, p = self.dut, self.p
        while True:
            await RisingEdge(d.clk)
            if int(getattr(d, f"{p}valid").value) and int(getattr(d, f"{p}ready").value):
                self.seen.append(tuple(int(getattr(d, f"{p}{f}").value) for f in ("id", "addr", "len", "size", "burst")))


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    for name in ("s_axi", "m_axi"):
        logging.getLogger(f"cocotb.{dut._name}.{name}").setLevel(logging.WARNING)
    master = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=MEM)
    for gen_owner in (master.write_if, master.read_if, ram.write_if, ram.read_if):
        for ch in ("aw", "w", "b", "ar", "r"):
            chan = getattr(gen_owner, f"{ch}_channel", None)
            if chan is not None:
                chan.set_pause_generator(iter(lambda: rng.random() < 0.3, None))
    mons = {f"{side}_{c}": AddrMonitor(dut, side, c) for side in ("s", "m") for c in ("ar", "aw")}
    await pulse_reset(dut)
    for m in mons.values():
        cocotb.start_soon(m.run())
    return rng, master, ram, mons


def check_narrow(wide, narrow):
    """Each wide burst became one narrow burst: same address, 4x the beats, 16-byte size, ID 0."""
    assert len(narrow) == len(wide), f"{len(narrow)} narrow bursts for {len(wide)} wide ones"
    for (_, waddr, wlen, wsize, wburst), n in zip(wide, narrow):
        assert wsize == 6 and wburst == 1
        assert n == (0, waddr & ~(S_BYTES - 1), RATIO * (wlen + 1) - 1, 4, 1), (n, waddr, wlen)


@cocotb.test()
async def write_read_random(dut):
    rng, master, ram, mons = await setup(dut, 31)
    ref = bytearray(MEM)
    ram.write(0, bytes(ref))
    wlens, rlens = [], []
    for _ in range(60):
        beats = rng.randint(1, 8)
        addr = rng.randrange(0, MEM - beats * S_BYTES, S_BYTES)
        data = bytes(rng.randrange(256) for _ in range(beats * S_BYTES))
        await with_timeout(master.write(addr, data, awid=rng.randrange(16)), 100_000, "ns")
        ref[addr:addr + len(data)] = data
        wlens.append(beats - 1)
        raddr = rng.randrange(0, MEM - 8 * S_BYTES, S_BYTES)
        rb = rng.randint(1, 8)
        got = await with_timeout(master.read(raddr, rb * S_BYTES, arid=rng.randrange(16)), 100_000, "ns")
        assert got.data == bytes(ref[raddr:raddr + rb * S_BYTES]), f"read {raddr:#x}+{rb} beats"
        assert got.resp == 0
        rlens.append(rb - 1)
    assert ram.read(0, MEM) == bytes(ref), "RAM differs from the reference"
    assert len(mons["s_aw"].seen) >= len(wlens) and len(mons["s_ar"].seen) >= len(rlens)
    check_narrow(mons["s_aw"].seen, mons["m_aw"].seen)
    check_narrow(mons["s_ar"].seen, mons["m_ar"].seen)


@cocotb.test()
async def strobes(dut):
    """A wide write whose strobes cover only some bytes of some lanes changes exactly those bytes."""
    rng, master, ram, _ = await setup(dut, 32)
    ref = bytearray(rng.randrange(256) for _ in range(4096))
    ram.write(0, bytes(ref))
    for _ in range(40):
        # Unaligned start/end inside one wide beat: the master keeps a
        # full-width burst and clears the strobes outside the range.
        base = rng.randrange(0, 4096 - S_BYTES, S_BYTES)
        lo = rng.randrange(S_BYTES)
        hi = rng.randrange(lo + 1, S_BYTES + 1)
        data = bytes(rng.randrange(256) for _ in range(hi - lo))
        await with_timeout(master.write(base + lo, data, size=6), 100_000, "ns")
        ref[base + lo:base + hi] = data
    got = ram.read(0, 4096)
    diff = [i for i in range(4096) if got[i] != ref[i]]
    assert not diff, f"bytes differ at {diff[:16]} ({len(diff)} in all)"


@cocotb.test()
async def ids_in_flight(dut):
    """Eight reads with different IDs issued together each get their own data."""
    rng, master, ram, _ = await setup(dut, 33)
    img = bytes(rng.randrange(256) for _ in range(MEM))
    ram.write(0, img)
    reqs = []
    for i in range(8):
        addr = rng.randrange(0, MEM - 4 * S_BYTES, S_BYTES)
        n = rng.randint(1, 4) * S_BYTES
        reqs.append((addr, n, master.init_read(addr, n, arid=i)))
    for addr, n, op in reqs:
        await with_timeout(op.wait(), 100_000, "ns")
        assert op.data.data == img[addr:addr + n]


@cocotb.test()
async def narrow_flagged(dut):
    """A narrow (4-byte) transfer, which the downsizer does not convert, raises unsupported_o."""
    rng, master, ram, _ = await setup(dut, 34)
    seen = []

    async def watch():
        while True:
            await RisingEdge(dut.clk)
            if int(dut.unsupported_o.value):
                seen.append(1)

    cocotb.start_soon(watch())
    await with_timeout(master.read(0x40, 64), 100_000, "ns")
    assert not seen, "full-width read flagged"
    await with_timeout(master.read(0x40, 4, size=2), 100_000, "ns")
    assert seen, "narrow read not flagged"

"""clio_pt_fetch: one burst per bucket, tag compare against a table laid out with the package's
PTE offsets, hits in every beat/slot, misses, PID/VPN near-misses, unallocated slots."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiRamRead, AxiReadBus

from clio_tb import PKG, bucket_index, param, pte_bytes, reset, start_clock

BASE = 0x10000


@cocotb.test()
async def lookups(dut):
    """Random (pid, vpn) keys placed by the wire hash; every lookup finds exactly its slot."""
    bits, k = param(dut, "BUCKET_BITS"), param(dut, "SLOTS")  # the sweep point
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.m_axi").setLevel(logging.WARNING)
    ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=2**20)
    dut.table_base.value = BASE
    dut.s_valid.value = 0
    dut.m_ready.value = 1
    await reset(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    table = {}
    used = {}
    for _ in range(600):
        pid, vpn = rng.randrange(1, 6), rng.getrandbits(20)
        b = bucket_index(pid, vpn, bits)
        free = [s for s in range(k) if (b, s) not in used]
        if (pid, vpn) in table or not free:
            continue
        s = rng.choice(free)
        valid = rng.random() < 0.7
        pte = (pid, vpn, rng.getrandbits(32) if valid else 0, rng.randrange(1, 4), True, valid,
               rng.choice([12, 21, 22]))
        used[(b, s)] = pte
        table[(pid, vpn)] = (b, s, pte)
        ram.write(BASE + (b * k + s) * PKG["PTE_LEN"], pte_bytes(*pte))
    # A freed-looking slot (not allocated) with a matching tag must not match.
    ghost = (9, 0x777)
    gb = bucket_index(*ghost, bits)
    gs = next(s for s in range(k) if (gb, s) not in used)
    ram.write(BASE + (gb * k + gs) * PKG["PTE_LEN"], pte_bytes(9, 0x777, 5, 3, False, False, 0))
    keys = list(table) + [ghost] + [(p + 1, v) for p, v in list(table)[:50]] + [(p, v ^ 1 << 47) for p, v in list(table)[:50]]
    rng.shuffle(keys)
    for n, (pid, vpn) in enumerate(keys):
        b = bucket_index(pid, vpn, bits)
        want = table.get((pid, vpn))
        shift = want[2][6] if want else 12
        wrong_shift = want is not None and rng.random() < 0.1
        if wrong_shift:
            shift ^= 1  # a well-formed PTE of another page size is not this page's
        dut.s_pid.value, dut.s_vpn.value, dut.s_bucket.value, dut.s_user.value = pid, vpn, b, n & 0xFF
        dut.s_shift.value = shift
        dut.s_valid.value = 1
        await RisingEdge(dut.clk)
        while not dut.s_ready.value:
            await RisingEdge(dut.clk)
        dut.s_valid.value = 0
        while not dut.m_valid.value:
            await RisingEdge(dut.clk)
        assert int(dut.m_user.value) == n & 0xFF and int(dut.m_bucket.value) == b
        if wrong_shift:
            # The tag includes the page shift: the slot is another page, not a bad entry.
            assert dut.m_found.value == 0 and int(dut.m_bad.value) == 0
            await RisingEdge(dut.clk)
            continue
        assert bool(dut.m_found.value) == (want is not None), (pid, vpn)
        if want:
            _, s, pte = want
            assert int(dut.m_slot.value) == s
            assert int(dut.m_ppn.value) == pte[2] and int(dut.m_perms.value) == pte[3]
            flags = int(dut.m_flags.value)
            assert flags & PKG["PTE_FLAG_VALID"] == (PKG["PTE_FLAG_VALID"] if pte[5] else 0)
            assert flags >> PKG["PTE_PAGE_SHIFT_SHIFT"] == pte[6]
        await RisingEdge(dut.clk)

"""clio_tlb against a cycle-level Python model: CAM match over mixed page sizes, exact LRU,
insert/invalidate, and hits demoted to misses when an update races a lookup."""

import random

import cocotb
from cocotb.triggers import RisingEdge

from clio_tb import reset, start_clock


class TlbModel:
    def __init__(self, n):
        self.n = n
        self.e = [None] * n  # (pid, vpn, shift, ppn, perms)
        self.age = list(range(n))

    def match(self, pid, va):
        hit = None
        for i in range(self.n):
            e = self.e[i]
            if e and e[0] == pid and (va >> e[2]) == e[1]:
                hit = i if hit is None else hit
        return hit

    def victim(self, pid, vpn, shift):
        for i in range(self.n):
            e = self.e[i]
            if e and (e[0], e[1], e[2]) == (pid, vpn, shift):
                return i
        for i in range(self.n):
            if self.e[i] is None:
                return i
        return self.age.index(self.n - 1)

    def touch(self, k):
        a = self.age[k]
        self.age = [x + 1 if x < a else x for x in self.age]
        self.age[k] = 0

    def cycle(self, look, ins, inv):
        """One clock: returns the lookup result (or None)."""
        res = None
        hit = self.match(*look) if look else None
        vic = self.victim(ins[0], ins[1], ins[2]) if ins else None
        dropped = set()
        if inv:
            pid, vpn, pages = inv[:3]
            if pages is None:  # exact (pid, vpn, shift)
                dropped = {i for i in range(self.n) if self.e[i] and self.e[i][:3] == (pid, vpn, inv[3])}
            else:
                end = min(vpn + pages, 2**64 - 1)
                dropped = {i for i in range(self.n)
                           if self.e[i] and self.e[i][0] == pid and (pages == 0 or vpn <= self.e[i][1] < end)}
        if look:
            ok = hit is not None and not (ins and vic == hit) and hit not in dropped
            res = (ok, self.e[hit][3], self.e[hit][4], self.e[hit][2]) if ok else (False,)
        if ins:
            self.touch(vic)
        elif hit is not None:
            self.touch(hit)
        for i in dropped:
            self.e[i] = None
        if ins:
            self.e[vic] = (ins[0], ins[1], ins[2], ins[3], ins[4])
        return res


@cocotb.test()
async def random_against_model(dut):
    """Thousands of random cycles of lookups, inserts and invalidates agree with the model."""
    n = int(dut.ENTRIES.value)
    start_clock(dut)
    for s in ("s_lookup_valid", "s_insert_valid", "s_inval_valid"):
        getattr(dut, s).value = 0
    dut.m_lookup_ready.value = 1
    await reset(dut)
    model = TlbModel(n)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    shifts = [12, 21, 22]
    pages = [(rng.randrange(1, 4), rng.randrange(0, 3 * n), rng.choice(shifts)) for _ in range(3 * n)]
    pending = None
    hits = 0
    for cyc in range(6000):
        look = ins = inv = None
        if rng.random() < 0.8:
            pid, vpn, sh = rng.choice(pages)
            va = (vpn << sh) + rng.randrange(1 << sh)
            look = (pid if rng.random() < 0.95 else pid + 7, va)
            dut.s_lookup_pid.value = look[0]
            dut.s_lookup_va.value = look[1]
            dut.s_lookup_user.value = cyc & 0xFFFF
        dut.s_lookup_valid.value = int(look is not None)
        if rng.random() < 0.3:
            pid, vpn, sh = rng.choice(pages)
            ins = (pid, vpn, sh, rng.getrandbits(32), rng.randrange(4))
            dut.s_insert_pid.value, dut.s_insert_vpn.value, dut.s_insert_shift.value = pid, vpn, sh
            dut.s_insert_ppn.value, dut.s_insert_perms.value = ins[3], ins[4]
        dut.s_insert_valid.value = int(ins is not None)
        if rng.random() < 0.05:
            pid, vpn, _ = rng.choice(pages)
            if rng.random() < 0.4:
                inv = (pid, vpn, None, rng.choice([sh, 12, 22]))
                dut.s_inval_exact.value, dut.s_inval_shift.value, dut.s_inval_pages.value = 1, inv[3], 0
            else:
                inv = (pid, vpn if rng.random() < 0.9 else vpn + 2**60, rng.choice([0, 1, 2, 8, 2**32 - 1]))
                dut.s_inval_exact.value, dut.s_inval_pages.value = 0, inv[2]
            dut.s_inval_pid.value, dut.s_inval_vpn.value = inv[0], inv[1]
        dut.s_inval_valid.value = int(inv is not None)
        await RisingEdge(dut.clk)
        if pending is not None:
            assert dut.m_lookup_valid.value == 1
            got = (bool(dut.m_lookup_hit.value),)
            if got[0]:
                got = (True, int(dut.m_lookup_ppn.value), int(dut.m_lookup_perms.value),
                       int(dut.m_lookup_shift.value))
                hits += 1
            assert got == pending[0], f"cycle {cyc - 1}: lookup {pending[1]} got {got} want {pending[0]}"
        pending = None
        res = model.cycle(look, ins, inv)
        if look:
            pending = (res, look)
    assert hits > 1000, hits


@cocotb.test()
async def lru_order(dut):
    """Filling the TLB then touching all but one entry evicts exactly that one."""
    n = int(dut.ENTRIES.value)
    start_clock(dut)
    for s in ("s_lookup_valid", "s_insert_valid", "s_inval_valid"):
        getattr(dut, s).value = 0
    dut.m_lookup_ready.value = 1
    await reset(dut)

    async def insert(vpn):
        dut.s_insert_pid.value, dut.s_insert_vpn.value, dut.s_insert_shift.value = 1, vpn, 12
        dut.s_insert_ppn.value, dut.s_insert_perms.value = vpn + 100, 3
        dut.s_insert_valid.value = 1
        await RisingEdge(dut.clk)
        dut.s_insert_valid.value = 0

    async def lookup(vpn):
        dut.s_lookup_pid.value, dut.s_lookup_va.value, dut.s_lookup_valid.value = 1, vpn << 12, 1
        await RisingEdge(dut.clk)
        dut.s_lookup_valid.value = 0
        await RisingEdge(dut.clk)
        return bool(dut.m_lookup_hit.value)

    for v in range(n):
        await insert(v)
    for v in range(n):
        if v != 3:
            assert await lookup(v)
    await insert(1000)
    assert not await lookup(3)
    for v in range(n):
        if v != 3:
            assert await lookup(v), v
    assert await lookup(1000)

"""clio_dedup against a model of the reference dedup buffer (ip/fastpath/src/dedup.rs): records
never evicted, the lowest free entry taken, reservations that answer no lookup, completion and
removal of a key, frees by ack (serial order, wrapping ids), by session close and by clear, full,
one free entry left and per-session counts, and every same-cycle combination of operations."""

import random

import cocotb
from cocotb.triggers import RisingEdge

from clio_tb import reset, start_clock

IDS = list(range(12)) + [0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFF]


def serial_before(a, b):
    d = (b - a) & 0xFFFFFFFF
    return d != 0 and d < 0x80000000


class Model:
    """Entries: [live, pending, key, rec]; key = id << 16 | session."""

    def __init__(self, n):
        self.e = [[False, False, 0, 0] for _ in range(n)]

    def find(self, k):
        for i, (live, _, key, _) in enumerate(self.e):
            if live and key == k:
                return i
        return None

    def lookup(self, k):
        i = self.find(k)
        hit = i is not None and not self.e[i][1]
        full = all(live for live, *_ in self.e)
        last = sum(1 for live, *_ in self.e if not live) == 1
        count = sum(1 for live, _, key, _ in self.e if live and key & 0xFFFF == k & 0xFFFF)
        return hit, (self.e[i][3] if hit else None), full, last, count

    def step(self, upd, ack, close, clear):
        """upd = (mode, key, rec): 0 insert, 1 reserve, 2 complete, 3 remove."""
        pre = [list(x) for x in self.e]
        free = set()
        for i, (live, _, key, _) in enumerate(pre):
            if not live:
                continue
            if clear or (ack and key & 0xFFFF == ack[0] and serial_before(key >> 16, ack[1])):
                free.add(i)
            if close is not None and key & 0xFFFF == close:
                free.add(i)
        new = None
        if upd:
            mode, k, r = upd
            ui = next((i for i, x in enumerate(pre) if x[0] and x[2] == k), None)
            if ui is not None:
                if mode == 3:
                    free.add(ui)
                else:
                    self.e[ui][3], self.e[ui][1] = r, mode == 1
            elif mode in (0, 1):
                new = next((i for i, x in enumerate(pre) if not x[0]), None)
                if new is not None:
                    self.e[new] = [False, mode == 1, k, r]
        for i in range(len(self.e)):
            self.e[i][0] = (pre[i][0] and i not in free) or i == new


@cocotb.test()
async def random_against_model(dut):
    """Random operations, several per cycle, agree with the model cycle by cycle."""
    n = int(dut.ENTRIES.value)
    start_clock(dut)
    for s in ("s_lookup_valid", "s_update_valid", "s_ack_valid", "s_close_valid", "s_clear"):
        getattr(dut, s).value = 0
    await reset(dut)
    m = Model(n)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    key = lambda: rng.choice(IDS) << 16 | rng.randrange(1, 4)
    pending = None
    seen = {"hit": 0, "full": 0, "last": 0, "acked": 0}
    for _ in range(6000):
        look = key() if rng.random() < 0.8 else None
        upd = None
        if rng.random() < 0.6:
            upd = (rng.choice([0, 0, 0, 0, 1, 2, 3]), key(), rng.getrandbits(32))
        ack = (rng.randrange(1, 4), rng.choice(IDS + [5, 9, 12])) if rng.random() < 0.12 else None
        close = rng.randrange(0, 4) if rng.random() < 0.03 else None
        clear = rng.random() < 0.005
        dut.s_lookup_valid.value = int(look is not None)
        if look is not None:
            dut.s_lookup_key.value = look
        dut.s_update_valid.value = int(upd is not None)
        if upd:
            dut.s_update_mode.value, dut.s_update_key.value, dut.s_update_rec.value = upd
        dut.s_ack_valid.value = int(ack is not None)
        if ack:
            dut.s_ack_session.value, dut.s_ack_id.value = ack
        dut.s_close_valid.value = int(close is not None)
        if close is not None:
            dut.s_close_session.value = close
        dut.s_clear.value = int(clear)
        await RisingEdge(dut.clk)
        if pending is not None:
            hit, rec, full, last, count = pending
            assert dut.m_lookup_valid.value == 1
            assert bool(dut.m_lookup_hit.value) == hit
            if hit:
                seen["hit"] += 1
                assert int(dut.m_lookup_rec.value) == rec
            assert bool(dut.m_lookup_full.value) == full
            assert bool(dut.m_lookup_last.value) == last
            assert int(dut.m_lookup_count.value) == count
            seen["full"] += full
            seen["last"] += last
        pending = m.lookup(look) if look is not None else None
        before = sum(x[0] for x in m.e)
        m.step(upd, ack, close, clear)
        seen["acked"] += ack is not None and sum(x[0] for x in m.e) < before
    assert seen["hit"] > 300 and seen["full"] > 100 and seen["last"] > 20 and seen["acked"] > 20, seen

"""clio_session_table against the session table as the top level kept it before it became a module:
arrays written at the clock edge by the engine (SESSION_REPLY install and clear, EPOCH, ack floor,
lock counts) and by the ack of the packet leaving the lane's L1 (after the engine's writes of the same edge), read
asynchronously. The module receives each engine write one cycle later, as the engine's registered
command, and must show every read port exactly what the old arrays showed: the reset state, the
credential check (epoch, session id range, valid bit, key, PID), a write and a read of the same
entry in one cycle, an L1 ack and an engine write of the same floor at one edge, and random
traffic on every port at once."""

import random

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from tb_base import param, start_clock

M32 = 2**32 - 1
NONE, FLOOR, LOCKS, ENTRY, EPOCH = range(5)


def serial_before(a, b):
    d = (b - a) & M32
    return d != 0 and d < 0x80000000


class OldTable:
    """The top level's arrays: writes land at the edge, reads see the stored state."""

    def __init__(self, n):
        self.n = n
        self.siw = max(1, (n - 1).bit_length())
        self.valid = [False] * n
        self.pid = [0] * n
        self.key = [0] * n
        self.dq = [0] * n
        self.lq = [0] * n
        self.locks = [0] * n
        self.floor = [0] * n
        self.epoch = 0

    def idx(self, s):
        return s & ((1 << self.siw) - 1)

    def ok(self, s, key, pid, epoch=None):
        i = self.idx(s)
        good = s != 0 and s < self.n and self.valid[i] and self.key[i] == key and self.pid[i] == pid
        if epoch is None:
            return good
        return good and self.epoch != 0 and epoch == self.epoch

    def edge(self, w, ack, rst):
        """One clock edge: the engine's write `w` made at it, then the L1 ack (session, id),
        which the top compared against the floor before the edge."""
        raise_floor = False
        if ack is not None:
            f = self.floor[self.idx(ack[0])]
            raise_floor = f == 0 or serial_before(f, ack[1])
        if w is not None:
            op, s, word, opn, pid, key, dq, lq = w
            i = self.idx(s)
            if op == FLOOR:
                self.floor[i] = word
            elif op == LOCKS:
                self.locks[i] = word & 0xFFFF
            elif op == ENTRY:
                self.valid[i] = bool(opn)
                self.pid[i] = pid if opn else 0
                self.key[i] = key if opn else 0
                self.dq[i] = dq if opn else 0
                self.lq[i] = lq if opn else 0
                self.locks[i] = 0
                self.floor[i] = 0
            elif op == EPOCH:
                self.epoch = word
                self.valid = [False] * self.n
        if raise_floor:
            self.floor[self.idx(ack[0])] = ack[1]
        if rst:
            self.epoch = 0
            self.valid = [False] * self.n


def drive_cmd(dut, w):
    if w is None:
        dut.s_wr_op.value = NONE
        return
    op, s, word, opn, pid, key, dq, lq = w
    dut.s_wr_op.value = op
    dut.s_wr_session.value = s
    dut.s_wr_word.value = word
    dut.s_wr_open.value = opn
    dut.s_wr_pid.value = pid
    dut.s_wr_key.value = key
    dut.s_wr_dquota.value = dq
    dut.s_wr_lquota.value = lq


class Bench:
    def __init__(self, dut):
        self.dut = dut
        self.n = param(dut, "SESSIONS")
        self.ref = OldTable(self.n)
        self.pending = None      # the engine write made at the last edge (presented now)
        self.cycle = 0

    async def start(self):
        dut = self.dut
        start_clock(dut)
        for name in ("s_in_session", "s_in_key", "s_in_pid", "s_in_epoch", "s_l1_ack_valid", "s_l1_ack_id",
                     "s_l1_session", "s_eng_session", "s_eng_key", "s_eng_pid", "s_wr_op", "s_wr_session",
                     "s_wr_word", "s_wr_open", "s_wr_pid", "s_wr_key", "s_wr_dquota", "s_wr_lquota"):
            getattr(dut, name).value = 0
        dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(dut.clk)
            self.ref.edge(None, None, True)
        await FallingEdge(dut.clk)
        dut.rst.value = 0
        # Reset leaves the arrays as they are (only the valid bits and the epoch
        # reset): clear every entry, so each test starts from zeros.
        for i in range(self.n):
            await self.step(write=entry(i, 0, 0, 0, 0, 0))
        await self.idle()

    async def step(self, write=None, rd_in=(0, 0, 0, 0), ack=None, l1=0, eng=(0, 0, 0), rst=False):
        """One cycle (entered at a falling edge): drive, check every read port against the old
        arrays, then the edge: the engine makes `write` there (the module sees it next cycle)."""
        dut, ref = self.dut, self.ref
        s, key, pid, epoch = rd_in
        dut.s_in_session.value, dut.s_in_key.value, dut.s_in_pid.value, dut.s_in_epoch.value = s, key, pid, epoch
        dut.s_l1_ack_valid.value = ack is not None
        dut.s_l1_ack_id.value = ack if ack is not None else 0
        dut.s_l1_session.value = l1
        dut.s_eng_session.value, dut.s_eng_key.value, dut.s_eng_pid.value = eng
        drive_cmd(dut, self.pending)
        dut.rst.value = rst
        await Timer(1, "ns")
        where = f"cycle {self.cycle}"
        assert int(dut.m_epoch.value) == ref.epoch, where
        assert bool(dut.m_in_ok.value) == ref.ok(s, key, pid, epoch), f"{where}: in ok, session {s}"
        i = ref.idx(s)
        if i < self.n:
            assert int(dut.m_in_floor.value) == ref.floor[i], f"{where}: in floor"
        j = ref.idx(l1)
        if j < self.n:
            assert int(dut.m_l1_floor.value) == ref.floor[j], f"{where}: l1 floor"
            assert int(dut.m_l1_dquota.value) == ref.dq[j], f"{where}: l1 dquota"
        es, ek, ep = eng
        k = ref.idx(es)
        assert bool(dut.m_eng_ok.value) == ref.ok(es, ek, ep), f"{where}: eng ok, session {es}"
        if k < self.n:
            assert int(dut.m_eng_dquota.value) == ref.dq[k], f"{where}: eng dquota"
            assert int(dut.m_eng_lquota.value) == ref.lq[k], f"{where}: eng lquota"
            assert int(dut.m_eng_locks.value) == ref.locks[k], f"{where}: eng locks"
            assert int(dut.m_eng_floor.value) == ref.floor[k], f"{where}: eng floor"
        await RisingEdge(dut.clk)
        # The command was this cycle's; the next step presents the next one (the
        # checks after a step read the state the edge left).
        drive_cmd(dut, None)
        ref.edge(write, (l1, ack) if ack is not None else None, rst)
        # A write made at a reset edge is dropped by the module (the engine is reset
        # then); the benches never make one.
        assert not (rst and write is not None)
        self.pending = write
        self.cycle += 1
        await FallingEdge(dut.clk)

    async def idle(self, n=1):
        for _ in range(n):
            await self.step()


def entry(s, opn, pid, key, dq, lq):
    return (ENTRY, s, 0, opn, pid, key, dq, lq)


@cocotb.test()
async def reset_state_and_credentials(dut):
    """After reset: epoch 0, no session valid, even credentials of all zeros; after an EPOCH
    and an install, only the exact (session, key, PID, epoch) passes."""
    b = Bench(dut)
    await b.start()
    await b.step(rd_in=(1, 0, 0, 0), eng=(1, 0, 0))
    assert int(dut.m_epoch.value) == 0
    await b.step(write=(EPOCH, 0, 7, 0, 0, 0, 0, 0))
    await b.step(write=entry(3, 1, 42, 0xABCD, 5, 2))
    await b.idle()
    good = (3, 0xABCD, 42, 7)
    await b.step(rd_in=good, eng=(3, 0xABCD, 42))
    assert dut.m_in_ok.value == 1 and dut.m_eng_ok.value == 1
    for bad in ((3, 0xABCE, 42, 7), (3, 0xABCD, 43, 7), (3, 0xABCD, 42, 8), (0, 0xABCD, 42, 7),
                (3 + b.n * 2, 0xABCD, 42, 7)):
        await b.step(rd_in=bad)
        assert dut.m_in_ok.value == 0, bad
    # A new epoch invalidates every session; a close clears the entry.
    await b.step(write=(EPOCH, 0, 9, 0, 0, 0, 0, 0))
    await b.step(rd_in=(3, 0xABCD, 42, 9))
    assert dut.m_in_ok.value == 0
    await b.step(write=entry(3, 1, 42, 0xABCD, 5, 2))
    await b.step(rd_in=(3, 0xABCD, 42, 9))
    assert dut.m_in_ok.value == 1
    await b.step(write=entry(3, 0, 42, 0xABCD, 5, 2))
    await b.step(eng=(3, 0, 0))
    assert dut.m_eng_ok.value == 0 and int(dut.m_eng_dquota.value) == 0
    # Reset again: epoch 0, nothing valid.
    await b.step(write=entry(2, 1, 1, 1, 1, 1))
    await b.step(rst=True)
    await b.step(rst=True)
    await b.step(rd_in=(2, 1, 1, 0), eng=(2, 1, 1))
    assert dut.m_in_ok.value == 0 and dut.m_eng_ok.value == 0 and int(dut.m_epoch.value) == 0


@cocotb.test()
async def same_entry_in_one_cycle(dut):
    """As the top uses the table: the engine's write is seen by every port in the cycle after it
    made it (the floor its S_DECIDE raised, read by S_DD_LOOK1 next cycle; a session its poll
    installed, seen by the lane's intake next cycle); an L1 ack compares against the floor
    of the entry and lands at the edge, after an engine write of the same edge."""
    b = Bench(dut)
    await b.start()
    S = b.n - 1
    await b.step(write=(EPOCH, 0, 1, 0, 0, 0, 0, 0))
    await b.step(write=entry(S, 1, 9, 0x55, 3, 1))
    # The install is visible on the intake port in the cycle after it was made.
    await b.step(rd_in=(S, 0x55, 9, 1), eng=(S, 0x55, 9))
    assert dut.m_in_ok.value == 1 and dut.m_eng_ok.value == 1
    # Engine floor write, read back by the engine and the lane next cycle.
    await b.step(write=(FLOOR, S, 100, 0, 0, 0, 0, 0))
    await b.step(l1=S, eng=(S, 0x55, 9))
    assert int(dut.m_eng_floor.value) == 100 and int(dut.m_l1_floor.value) == 100
    # An L1 ack before the floor is ignored, one after it raises it (wrapping order).
    await b.step(l1=S, ack=50)
    await b.step(l1=S, ack=(100 + 0x7FFFFFFF) & M32)
    await b.step(eng=(S, 0x55, 9))
    assert int(dut.m_eng_floor.value) == (100 + 0x7FFFFFFF) & M32
    # The engine's write and an L1 ack of the same floor at one edge: the ack is newer.
    await b.step(write=entry(S, 1, 9, 0x55, 3, 1), l1=S, ack=7)
    await b.step(eng=(S, 0x55, 9), l1=S)
    assert int(dut.m_eng_floor.value) == 7, "the ack of the install's edge is kept"
    # An ack at the edge after the engine's write: compared against the written floor.
    await b.step(write=(FLOOR, S, 20, 0, 0, 0, 0, 0))
    await b.step(l1=S, ack=10)     # 10 before 20: ignored
    await b.step(eng=(S, 0x55, 9))
    assert int(dut.m_eng_floor.value) == 20
    # Lock counts.
    await b.step(write=(LOCKS, S, 3, 0, 0, 0, 0, 0))
    await b.step(eng=(S, 0x55, 9))
    assert int(dut.m_eng_locks.value) == 3
    # An EPOCH is seen by the intake port next cycle.
    await b.step(write=(EPOCH, 0, 2, 0, 0, 0, 0, 0))
    await b.step(rd_in=(S, 0x55, 9, 1))
    assert dut.m_in_ok.value == 0 and int(dut.m_epoch.value) == 2


@cocotb.test()
async def random_traffic(dut):
    """Random engine writes and port reads (few sessions, so they collide) against the old
    arrays, every port checked every cycle."""
    b = Bench(dut)
    await b.start()
    rng = random.Random(int(cocotb.RANDOM_SEED))
    n = b.n
    siw = b.ref.siw
    pids = [1, 2, 3]
    keys = [0x11, 0x22]
    epochs = [0, 1, 2]

    def sess():
        s = rng.randrange(n)
        return s + (rng.choice([0, 0, 0, 1, 7]) << siw)

    def ident():
        return (sess(), rng.choice(keys), rng.choice(pids))

    def ack_id():
        return rng.choice([0, 1, 5, 0x7FFFFFFF, 0x80000000, M32, rng.getrandbits(32)])

    for _ in range(4000):
        w = None
        r = rng.random()
        if r < 0.05:
            w = (EPOCH, 0, rng.choice(epochs[1:]), 0, 0, 0, 0, 0)
        elif r < 0.25:
            s, k, p = ident()
            w = entry(s, rng.random() < 0.8, p, k, rng.randrange(4), rng.randrange(4))
        elif r < 0.4:
            w = (FLOOR, sess(), ack_id(), 0, 0, 0, 0, 0)
        elif r < 0.5:
            w = (LOCKS, sess(), rng.getrandbits(16), 0, 0, 0, 0, 0)
        s, k, p = ident()
        ack = ack_id() if rng.random() < 0.4 else None
        await b.step(write=w, rd_in=(s, k, p, rng.choice(epochs)), ack=ack, l1=sess(), eng=ident())
    await b.idle(2)

"""clio_write_lane with stand-ins for its neighbours: a data mover that takes a write
command when it is idle (or at random), then takes the payload W beat by W beat (the first
beat up to the next DRAM beat boundary, then full beats, random pauses) and pulses done with
the B after a random latency; a response builder whose start is ready at random. Checked every
cycle: commands taken only when the stage is empty, the mover command (address, length),
the source position (the bytes taken so far) and `m_src_busy` (until the last byte is
taken), `m_mem_busy` (until the B), no answer before the B, the answer's header fields,
answers in command order, each once; and the throughput with nothing pausing: a command
back to back every (beats + B latency + 4) cycles."""

import random

import cocotb
from cocotb.triggers import FallingEdge

from tb_base import param, reset, start_clock

FIELDS = ["opcode", "pid", "req_id", "retry_of", "va", "total_len", "offset", "session", "epoch"]
WIDTHS = {"opcode": 8, "va": 64, "session": 16}


class Cmd:
    """One write handed over: physical range and answer fields."""

    def __init__(self, rng, bytes_per_beat):
        self.addr = rng.randrange(0, 2**20)
        self.len = rng.choice([1, 7, 8, 63, 64, 65, 500, 512, bytes_per_beat * 8, rng.randrange(1, 2048)])
        self.hdr = {f: rng.getrandbits(WIDTHS.get(f, 32)) for f in FIELDS}


class Mover:
    """The data mover's write side as the stage sees it."""

    def __init__(self, rng, bpb, p_ready, p_pause, b_lat):
        self.rng, self.bpb, self.p_ready, self.p_pause, self.b_lat = rng, bpb, p_ready, p_pause, b_lat
        self.cmd = None          # (addr, len) in flight
        self.taken = 0
        self.b_wait = None
        self.busy_cycles = 0

    def ready(self):
        return self.cmd is None and self.rng.random() < self.p_ready

    def step(self):
        """This cycle's (take_valid, take, done)."""
        if self.cmd is None:
            return 0, 0, 0
        addr, n = self.cmd
        if self.taken < n:
            if self.rng.random() < self.p_pause:
                return 0, 0, 0
            room = self.bpb - (addr + self.taken) % self.bpb
            k = min(room, n - self.taken)
            self.taken += k
            if self.taken == n:
                self.b_wait = self.b_lat() if callable(self.b_lat) else self.b_lat
            return 1, k, 0
        if self.b_wait > 0:
            self.b_wait -= 1
            return 0, 0, 0
        self.cmd = None
        return 0, 0, 1


async def run(dut, n, rng, p_cmd, p_ready, p_pause, p_ans, b_lat):
    bpb = param(dut, "DATA_WIDTH") // 8
    start_clock(dut)
    dut.s_cmd_valid.value = 0
    dut.m_mv_ready.value = 0
    dut.s_mv_take_valid.value = 0
    dut.s_mv_take.value = 0
    dut.s_mv_done.value = 0
    dut.s_ans_ready.value = 0
    await reset(dut)
    mover = Mover(rng, bpb, p_ready, p_pause, b_lat)
    todo = [Cmd(rng, bpb) for _ in range(n)]
    sent, answered = [], []
    cur = None               # the command in the stage: [Cmd, pos, moved, done]
    offered = None
    cyc = 0
    while len(answered) < n:
        await FallingEdge(dut.clk)
        cyc += 1
        assert cyc < 200 * n + 1000, "the stage stalls"
        idle = int(dut.m_idle.value)
        ready = int(dut.s_cmd_ready.value)
        mv_valid = int(dut.m_mv_valid.value)
        ans_valid = int(dut.m_ans_valid.value)
        pos = int(dut.m_src_pos.value)
        src_busy = int(dut.m_src_busy.value)
        mem_busy = int(dut.m_mem_busy.value)
        assert ready == idle == (cur is None), (cyc, ready, idle, cur)
        if cur is not None:
            c, cpos, issued, done = cur
            assert not issued or pos == cpos, (cyc, pos, cpos)
            assert src_busy == (not issued or cpos != c.len), (cyc, src_busy, issued, cpos, c.len)
            assert mem_busy == (not done), (cyc, mem_busy, done)
            assert mv_valid == (not issued), (cyc, mv_valid, issued)
            if mv_valid:
                assert int(dut.m_mv_addr.value) == c.addr % 2**int(len(dut.m_mv_addr))
                assert int(dut.m_mv_len.value) == c.len
            assert ans_valid == done, (cyc, ans_valid, done)
            if ans_valid:
                for f in FIELDS:
                    assert int(getattr(dut, f"m_ans_{f}").value) == c.hdr[f], (f, cyc)
        else:
            assert not (mv_valid or ans_valid or src_busy or mem_busy), cyc
        # Inputs for the next rising edge.
        mv_ready = mover.ready() if mv_valid else (mover.cmd is None and rng.random() < p_ready)
        take_valid, take, done = mover.step()
        ans_ready = rng.random() < p_ans
        give = cur is None and todo and rng.random() < p_cmd
        dut.m_mv_ready.value = int(mv_ready)
        dut.s_mv_take_valid.value = take_valid
        dut.s_mv_take.value = take
        dut.s_mv_done.value = done
        dut.s_ans_ready.value = int(ans_ready)
        dut.s_cmd_valid.value = int(bool(give))
        if give:
            c = todo[0]
            dut.s_cmd_addr.value = c.addr % 2**int(len(dut.s_cmd_addr))
            dut.s_cmd_len.value = c.len
            for f in FIELDS:
                getattr(dut, f"s_hdr_{f}").value = c.hdr[f]
        else:
            dut.s_cmd_addr.value = rng.getrandbits(int(len(dut.s_cmd_addr)))
            dut.s_cmd_len.value = rng.getrandbits(16)
        # What the rising edge does.
        if cur is not None:
            c, cpos, issued, cdone = cur
            if take_valid:
                assert issued, "a take before the command was given"
                cpos += take
            if done:
                cdone = True
            if mv_valid and mv_ready:
                mover.cmd = (c.addr, c.len)
                mover.taken = 0
                issued = True
            cur = [c, cpos, issued, cdone]
            if ans_valid and ans_ready:
                answered.append(c)
                cur = None
        if give:
            cur = [todo.pop(0), 0, False, False]
            sent.append(cur[0])
    assert [id(c) for c in answered] == [id(c) for c in sent]
    return cyc


@cocotb.test()
async def random_traffic(dut):
    """300 commands under random pauses of the engine, the mover, the B and the builder."""
    rng = random.Random(21)
    await run(dut, 300, rng, p_cmd=0.6, p_ready=0.5, p_pause=0.3, p_ans=0.5,
              b_lat=lambda: rng.randrange(0, 6))


@cocotb.test()
async def back_to_back(dut):
    """Nothing pauses: 512-byte writes at a beat-aligned address, one per (taken, mover
    command, 512 / bytes-per-beat W beats, B latency 2, done, answer) cycles: 14 at 512 bits."""
    rng = random.Random(5)
    bpb = param(dut, "DATA_WIDTH") // 8
    n = 40
    start_clock(dut)
    dut.s_cmd_valid.value = 0
    await reset(dut)
    lat = 2
    mover = Mover(rng, bpb, 1.0, 0.0, lat)
    beats = 512 // bpb
    done_cmds = 0
    cyc = 0
    first = last = None
    issued = False
    while done_cmds < n:
        await FallingEdge(dut.clk)
        cyc += 1
        assert cyc < 100 * n
        ready = int(dut.s_cmd_ready.value)
        mv_valid = int(dut.m_mv_valid.value)
        ans_valid = int(dut.m_ans_valid.value)
        take_valid, take, done = mover.step()
        dut.s_mv_take_valid.value = take_valid
        dut.s_mv_take.value = take
        dut.s_mv_done.value = done
        dut.m_mv_ready.value = int(mv_valid and mover.cmd is None)
        if mv_valid and mover.cmd is None:
            mover.cmd = (0, 512)
            mover.taken = 0
        dut.s_cmd_valid.value = ready
        dut.s_cmd_addr.value = 0
        dut.s_cmd_len.value = 512
        for f in FIELDS:
            getattr(dut, f"s_hdr_{f}").value = 0
        dut.s_ans_ready.value = 1
        if ready and first is None:
            first = cyc
        if ans_valid:
            done_cmds += 1
            last = cyc
    per = (last - first + 1) / n
    # taken + mover command + W beats + B latency + done + answer
    assert per == 1 + 1 + beats + lat + 1 + 1, per

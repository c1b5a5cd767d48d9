"""clio_write_lane with stand-ins for its neighbours: a data mover that takes a write
command once the previous command's payload is all taken (at random, or at once), takes
the payload W beat by W beat (the first beat up to the next DRAM beat boundary, then full
beats, random pauses) and pulses done with each command's B, in command order, a B latency
after its last beat (several Bs outstanding); a response builder whose start is ready at
random. Checked every cycle against a reference of the stage's slots: commands taken while
a slot is free, the mover command (address, length, oldest not given first), the source
position and buffer (the oldest write with bytes left), `m_src_busy`, the buffers held
whole by the writes behind it (`m_buf_held`), `m_mem_busy` (until the last B), no answer
before its own B, the answer's header fields (the oldest write's: a swap of two answers
fails), answers in command order, each once; and the throughput with nothing pausing: one
512-byte write every (W beats + 1) cycles, the B latency hidden behind the next write."""

import random

import cocotb
from cocotb.triggers import FallingEdge

from tb_base import param, reset, start_clock

FIELDS = ["opcode", "pid", "req_id", "retry_of", "va", "total_len", "offset", "session", "epoch"]
WIDTHS = {"opcode": 8, "va": 64, "session": 16}
TRACE = False


class Cmd:
    """One write handed over: physical range (beat-aligned if its length is given),
    packet buffer and answer fields."""

    def __init__(self, rng, bytes_per_beat, bufs, length=None):
        self.addr = rng.randrange(0, 2**20)
        if length:
            self.addr -= self.addr % bytes_per_beat
        self.len = length or rng.choice([1, 7, 8, 63, 64, 65, 500, 512, bytes_per_beat * 8,
                                         rng.randrange(1, 2048)])
        self.buf = rng.randrange(bufs)
        self.hdr = {f: rng.getrandbits(WIDTHS.get(f, 32)) for f in FIELDS}


class Slot:
    """The reference's view of one write in the stage."""

    def __init__(self, cmd):
        self.cmd, self.pos, self.issued, self.done = cmd, 0, False, False

    def taking(self):
        return not self.issued or self.pos != self.cmd.len


class Mover:
    """The data mover's write side as the stage sees it: commands in order, the next one
    taken while the current one's bytes move (one waiting), its first byte a cycle (the
    AW) after the previous one's last, Bs in order after a latency."""

    def __init__(self, rng, bpb, p_ready, p_pause, b_lat):
        self.rng, self.bpb, self.p_ready, self.p_pause, self.b_lat = rng, bpb, p_ready, p_pause, b_lat
        self.cmds = []           # [addr, len, taken] of the command whose bytes move, the next
        self.gap = 0             # cycles before the first one's first byte (its AW)
        self.bq = []             # cycles left until each outstanding B, in order

    def ready(self):
        return len(self.cmds) < 2 and self.rng.random() < self.p_ready

    def give(self, addr, n):
        self.cmds.append([addr, n, 0])
        if len(self.cmds) == 1:
            self.gap = 1

    def step(self):
        """This cycle's (take_valid, take, done)."""
        done = 0
        if self.bq and self.bq[0] <= 0:
            self.bq.pop(0)
            done = 1
        self.bq = [b - 1 for b in self.bq]
        if not self.cmds:
            return 0, 0, done
        if self.gap:
            self.gap -= 1
            return 0, 0, done
        if self.rng.random() < self.p_pause:
            return 0, 0, done
        addr, n, taken = self.cmds[0]
        room = self.bpb - (addr + taken) % self.bpb
        k = min(room, n - taken)
        self.cmds[0][2] += k
        if self.cmds[0][2] == n:
            self.cmds.pop(0)
            self.gap = 1
            self.bq.append(self.b_lat() if callable(self.b_lat) else self.b_lat)
        return 1, k, done


async def run(dut, n, rng, p_cmd, p_ready, p_pause, p_ans, b_lat, length=None):
    bpb = param(dut, "DATA_WIDTH") // 8
    slots_n = param(dut, "SLOTS")
    bufs = param(dut, "BUFS")
    start_clock(dut)
    dut.s_cmd_valid.value = 0
    dut.m_mv_ready.value = 0
    dut.s_mv_take_valid.value = 0
    dut.s_mv_take.value = 0
    dut.s_mv_done.value = 0
    dut.s_ans_ready.value = 0
    await reset(dut)
    mover = Mover(rng, bpb, p_ready, p_pause, b_lat)
    todo = [Cmd(rng, bpb, bufs, length) for _ in range(n)]
    sent, answered = [], []
    slots = []               # the reference, oldest first
    cyc = 0
    most = 0
    while len(answered) < n:
        await FallingEdge(dut.clk)
        cyc += 1
        assert cyc < 200 * n + 1000, "the stage stalls"
        idle = int(dut.m_idle.value)
        ready = int(dut.s_cmd_ready.value)
        mv_valid = int(dut.m_mv_valid.value)
        ans_valid = int(dut.m_ans_valid.value)
        src_busy = int(dut.m_src_busy.value)
        mem_busy = int(dut.m_mem_busy.value)
        held = int(dut.m_buf_held.value)
        most = max(most, len(slots))
        assert idle == (not slots), (cyc, idle, len(slots))
        assert ready == (len(slots) < slots_n), (cyc, ready, len(slots))
        unissued = [s for s in slots if not s.issued]
        assert mv_valid == bool(unissued), (cyc, mv_valid)
        if mv_valid:
            c = unissued[0].cmd
            assert int(dut.m_mv_addr.value) == c.addr % 2**int(len(dut.m_mv_addr)), cyc
            assert int(dut.m_mv_len.value) == c.len, cyc
        taking = [i for i, s in enumerate(slots) if s.taking()]
        assert src_busy == bool(taking), (cyc, src_busy)
        want_held = 0
        if taking:
            t = slots[taking[0]]
            assert int(dut.m_src_pos.value) == t.pos, (cyc, int(dut.m_src_pos.value), t.pos)
            assert int(dut.m_src_buf.value) == t.cmd.buf % 2**int(len(dut.m_src_buf)), cyc
            for s in slots[taking[0] + 1:]:
                want_held |= 1 << s.cmd.buf
        assert held == want_held, (cyc, held, want_held)
        assert mem_busy == any(not s.done for s in slots), (cyc, mem_busy)
        assert ans_valid == bool(slots and slots[0].done), (cyc, ans_valid)
        if ans_valid:
            for f in FIELDS:
                assert int(getattr(dut, f"m_ans_{f}").value) == slots[0].cmd.hdr[f], (f, cyc)
        if TRACE:
            dut._log.info("cyc %d slots %s ready %d mv_valid %d ans %d", cyc,
                          [(s.pos, s.issued, s.done) for s in slots], ready, mv_valid, ans_valid)
        # Inputs for the next rising edge.
        mv_ready = mover.ready()
        take_valid, take, done = mover.step()
        ans_ready = rng.random() < p_ans
        give = ready and todo and rng.random() < p_cmd
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
            dut.s_cmd_buf.value = c.buf
            for f in FIELDS:
                getattr(dut, f"s_hdr_{f}").value = c.hdr[f]
        else:
            dut.s_cmd_addr.value = rng.getrandbits(int(len(dut.s_cmd_addr)))
            dut.s_cmd_len.value = rng.getrandbits(16)
            dut.s_cmd_buf.value = rng.getrandbits(int(len(dut.s_cmd_buf)))
        # What the rising edge does.
        if take_valid:
            t = slots[taking[0]]
            assert t.issued, "a take before the command was given"
            t.pos += take
        if done:
            d = [s for s in slots if s.issued and not s.done]
            assert d and not d[0].taking(), "a done before the command's bytes were taken"
            d[0].done = True
        if mv_valid and mv_ready:
            unissued[0].issued = True
            mover.give(unissued[0].cmd.addr, unissued[0].cmd.len)
        if ans_valid and ans_ready:
            answered.append(slots.pop(0).cmd)
        if give:
            slots.append(Slot(todo.pop(0)))
            sent.append(slots[-1].cmd)
    assert [id(c) for c in answered] == [id(c) for c in sent]
    return cyc, most


@cocotb.test()
async def random_traffic(dut):
    """300 commands under random pauses of the engine, the mover, the B and the builder."""
    rng = random.Random(21)
    _, most = await run(dut, 300, rng, p_cmd=0.6, p_ready=0.5, p_pause=0.3, p_ans=0.5,
                        b_lat=lambda: rng.randrange(0, 6))
    assert most == param(dut, "SLOTS"), f"never {param(dut, 'SLOTS')} writes in the stage"


@cocotb.test()
async def b_delayed(dut):
    """Long B latencies (10-40 cycles): the stage fills, later writes' payloads move while
    earlier Bs are outstanding, every answer waits for its own B and leaves in order."""
    rng = random.Random(7)
    await run(dut, 120, rng, p_cmd=0.9, p_ready=0.9, p_pause=0.1, p_ans=0.9,
              b_lat=lambda: rng.randrange(10, 41))


@cocotb.test()
async def answer_backpressure(dut):
    """The builder rarely ready (p = 0.05): written writes wait in the stage, which stops
    taking commands when full; answers still in order with the right fields."""
    rng = random.Random(9)
    await run(dut, 120, rng, p_cmd=0.9, p_ready=0.9, p_pause=0.1, p_ans=0.05,
              b_lat=lambda: rng.randrange(0, 4))


@cocotb.test()
async def back_to_back(dut):
    """Nothing pauses (the engine gives a command whenever a slot is free, the mover takes
    the next one as soon as the previous payload is taken, B latency 2, the builder always
    ready): 512-byte writes at a beat-aligned address, one per (512 / bytes-per-beat W beats
    + 1) cycles (the mover takes the next command while the previous payload moves, and
    its AW costs a cycle): 9 at 512 bits, the B and the answer hidden."""
    rng = random.Random(5)
    bpb = param(dut, "DATA_WIDTH") // 8
    n = 40
    cyc, _ = await run(dut, n, rng, p_cmd=1.0, p_ready=1.0, p_pause=0.0, p_ans=1.0, b_lat=2,
                       length=512)
    beats = 512 // bpb
    per = cyc / n
    dut._log.info("back to back: %d writes of %d beats in %d cycles (%.2f per write)", n, beats, cyc, per)
    # The first write's hand-over, command, B and answer are paid once.
    assert cyc <= n * (beats + 1) + 8, per

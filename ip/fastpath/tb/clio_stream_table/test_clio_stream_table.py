"""clio_stream_table: the READ-stream table against a Python model of the streams, cycle by cycle.

The bench is the engine: each cycle (outside a pump) it inserts a READ
(`s_insert`, only while the table is not full: the engine pumps first),
starts a pump of entry 0 (`s_pump`, only with a stream open), sends a stray
cut (`s_cut` with no pump: an S_FAIL of another request, ignored) or idles;
a pump lasts 1–6 cycles, is cut (a page that went away) a third of the
time, and ends with the rotation (`s_rotate`). Sessions come from three
clients and PIDs from six, so groups of one client's streams and PID hits
occur; totals and bytes sent are chosen so that a pumped stream goes on or
finishes, near 2**32 too (the 32-bit sums wrap as in the RTL). A reset
falls in now and then.

The model is a list of open streams in pump order: an insert goes after the
last stream of its session, else last; at a pump's end the client of entry
0 goes last (the other clients' streams first, then its own: stream 0 first
if it goes on, its bytes sent advanced by the packet, else dropped). Every
cycle the outputs (count, the PID lookup, entry 0's fields, VA and packet
length, the pumped stream) are compared with it; at the end every insert
position, a full table, a rotation that keeps and one that finishes stream
0 with a group of more than one stream must have been seen.
"""

import cocotb
from cocotb.triggers import FallingEdge, Timer

from tb_base import param, rng, start

M32 = (1 << 32) - 1
M64 = (1 << 64) - 1
INS = ("s_pid", "s_req_id", "s_retry_of", "s_epoch", "s_total", "s_sent", "s_session", "s_va")
IDLE_IN = ("s_insert", "s_pump", "s_mtu", "s_cut", "s_rotate") + INS


class Model:
    """The open READ streams (dicts of the insert's fields) and the pumped stream."""

    def __init__(self, stn):
        self.stn = stn
        self.q = []
        self.pm = {"on": 0, "pid": 0, "va": 0, "total": 0, "sent": 0, "n": 0, "cut": 0}
        self.cover = set()

    def outs(self, i):
        o = {"m_cnt": len(self.q), "m_pid_open": int(any(e["s_pid"] == i["s_pid"] for e in self.q)),
             "m_pm_on": self.pm["on"], "m_pm_pid": self.pm["pid"], "m_pm_va": self.pm["va"],
             "m_pm_total": self.pm["total"], "m_pm_sent": self.pm["sent"]}
        if self.q:                                       # entry 0 means nothing with no stream open
            e = self.q[0]
            o.update(m_q_pid=e["s_pid"], m_q_req_id=e["s_req_id"], m_q_retry_of=e["s_retry_of"],
                     m_q_session=e["s_session"], m_q_epoch=e["s_epoch"],
                     m_q_cur=(e["s_va"] + e["s_sent"]) & M64,
                     m_q_n=min((e["s_total"] - e["s_sent"]) & M32, i["s_mtu"]))
        return o

    def step(self, i, rst):
        o = self.outs(i)
        if i["s_pump"]:
            e = self.q[0]
            self.pm = {"on": 1, "pid": e["s_pid"], "va": e["s_va"], "total": e["s_total"], "sent": e["s_sent"],
                       "n": o["m_q_n"], "cut": 0}
        if i["s_cut"] and self.pm["on"]:
            self.pm["cut"] = 1
        if i["s_insert"]:
            pos = len(self.q)
            for k, e in enumerate(self.q):
                if e["s_session"] == i["s_session"]:
                    pos = k + 1
            self.cover.add(("insert", pos))
            self.q.insert(pos, {n: i[n] for n in INS})
            if len(self.q) == self.stn:
                self.cover.add("full")
        if i["s_rotate"]:
            pm = self.pm
            keep = not pm["cut"] and ((pm["sent"] + pm["n"]) & M32) < pm["total"]
            head = dict(self.q[0], s_sent=(pm["sent"] + pm["n"]) & M32)
            mine = [k for k, e in enumerate(self.q) if e["s_session"] == head["s_session"]]
            grp = 1
            while grp < len(self.q) and self.q[grp]["s_session"] == head["s_session"]:
                grp += 1
            self.cover.add(("keep" if keep else "finish", "group" if grp > 1 else "alone"))
            if len(mine) > grp:
                self.cover.add("split client")
            self.q = self.q[grp:] + ([head] if keep else []) + self.q[1:grp]
            self.pm["on"] = 0
        if rst:
            self.q = []
            self.pm["on"] = 0


def new_read(r):
    total = r.choice([r.randrange(2, 5000), r.randrange(M32 - 3000, M32 + 1)])
    return {"s_pid": r.randrange(1, 7), "s_req_id": r.getrandbits(32), "s_retry_of": r.getrandbits(32),
            "s_epoch": r.getrandbits(32), "s_total": total, "s_sent": r.randrange(1, total),
            "s_session": r.randrange(3), "s_va": r.getrandbits(64)}


@cocotb.test()
async def streams(dut):
    """20 000 cycles of inserts, pumps, cuts and rotations: every output every cycle against the model."""
    await start(dut, idle=IDLE_IN)
    stn = param(dut, "STN")
    r = rng()
    m = Model(stn)
    pump_left, cut_at, rst_next = 0, -1, 0
    for cyc in range(20000):
        await FallingEdge(dut.clk)
        i = {n: 0 for n in IDLE_IN}
        i.update(new_read(r))                            # junk unless inserted; the lookup's keys
        if r.random() < 0.5 and m.q:
            i["s_pid"] = r.choice(m.q)["s_pid"]
        i["s_mtu"] = r.choice([64, 256, 1500, 4096, 9000])
        rst = rst_next
        rst_next = 0
        if m.pm["on"]:
            pump_left -= 1
            if pump_left == cut_at:
                i["s_cut"] = 1
            elif pump_left <= 0:
                i["s_rotate"] = 1
        else:
            # Fill the table more often than draining it so that it runs full.
            a = r.random()
            if a < 0.35 and len(m.q) < stn:
                i["s_insert"] = 1
            elif a < 0.65 and m.q:
                i["s_pump"] = 1
                pump_left = r.randrange(2, 7)
                cut_at = r.randrange(1, pump_left) if r.random() < 0.33 else -1
            elif a < 0.7:
                i["s_cut"] = 1                           # another request's S_FAIL: no pump, no effect
            elif a < 0.7005:
                rst_next = 1
        dut.rst.value = rst
        for n, v in i.items():
            getattr(dut, n).value = v
        await Timer(1, unit="ns")
        want = m.outs(i)
        for n, v in want.items():
            got = int(getattr(dut, n).value)
            assert got == v, f"cycle {cyc}: {n} = {got:#x}, model {v:#x} (table {m.q}, pump {m.pm})"
        m.step(i, rst)
    need = {("insert", k) for k in range(stn)} | {"full", ("keep", "alone"), ("finish", "alone")}
    if stn > 1:
        need |= {("keep", "group"), ("finish", "group")}
    missing = need - m.cover
    assert not missing, f"not covered: {missing}"
    dut._log.info("covered: %s", sorted(map(str, m.cover)))

"""clio_engine: the sequencing the top relies on, against the bench as the top.

Every input is driven low except the ones a test names (the engine reads
only the verdicts of the state it is in). The checks are the engine's
contract with the top: which request the idle engine takes (the poll, then
a stream's pump, then a packet), the answers the intake decision leads to
(a NACK, INFO) and their send (the builder's start, its ready), the hold
(`eng_hold` freezes the state and the loads, never the pulses' clearing),
the session-table write an ack makes (only when it raises the floor), a
ring call returning to its caller, and reset from inside a call. The state
is read through the flags the top reads (`es_*`).
"""

import os
import re

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from clio_tb import PKG
from tb_base import drive, start

RTL = os.path.join(os.path.dirname(__file__), "..", "..", "rtl", "clio_engine.sv")
INPUTS = tuple(
    n
    for decl in re.findall(r"^\s*input\s+wire\s+(?:\[[^\]]*\]\s*)?([^\n]*?),?\s*(?://.*)?$",
                           open(RTL).read().split(") (", 1)[1].split(");", 1)[0], re.M)
    for n in (x.strip() for x in decl.split(","))
    if n and n not in ("clk", "rst")
)
FLAGS = ("es_idle", "es_decide", "es_send", "es_info", "es_fail", "es_poll", "es_ring", "es_ring_w", "es_xl")


def state(dut):
    """The one state flag that is up (the engine is in exactly one state)."""
    up = [f for f in FLAGS if int(getattr(dut, f).value)]
    assert len(up) <= 1, f"several state flags up at once: {up}"
    return up[0] if up else None


async def edge(dut, n=1):
    """`n` rising edges, then the falling edge after (where the bench drives)."""
    for _ in range(n):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)


async def opened(dut):
    await start(dut, idle=INPUTS)
    await FallingEdge(dut.clk)
    assert state(dut) == "es_idle", state(dut)
    assert int(dut.pkt_have_reg.value) == 0


async def take_packet(dut, opcode):
    """A packet's last beat enters with the engine idle: S_DECIDE next."""
    drive(dut, eng_in_last=1, lane_empty=1, p_opcode=opcode)
    await edge(dut)
    drive(dut, eng_in_last=0, p_opcode=0, h_op=opcode)   # the header registers loaded at that edge
    assert state(dut) == "es_decide", state(dut)
    assert int(dut.ev_take_q.value) == 1 and int(dut.pkt_have_reg.value) == 1
    assert int(dut.rep_opcode.value) == opcode


@cocotb.test()
async def idle_takes_the_poll_first(dut):
    """The poll before a stream's pump before a packet, all offered at once."""
    await opened(dut)
    assert len(INPUTS) > 200, f"the port list was not read: {len(INPUTS)} inputs"
    drive(dut, idle_poll=1, pm_want=1, eng_in_last=1, lane_empty=1)
    await edge(dut)
    drive(dut, idle_poll=0, pm_want=0, eng_in_last=0)
    assert state(dut) == "es_poll", state(dut)
    assert (int(dut.ev_poll_q.value), int(dut.ev_pump_q.value), int(dut.ev_take_q.value)) == (1, 0, 0)
    assert int(dut.gt_poll_reg.value) == 1
    assert int(dut.pkt_have_reg.value) == 1, "the packet's last beat is held for later"
    await edge(dut)
    assert int(dut.ev_poll_q.value) == 0, "an event is a one-cycle pulse"
    # The poll ends: back to idle, the poll's done pulse, the gate released.
    drive(dut, tp_done=1)
    await edge(dut)
    drive(dut, tp_done=0)
    assert state(dut) == "es_idle" and int(dut.poll_done_reg.value) == 1
    assert int(dut.gt_poll_reg.value) == 0


@cocotb.test()
async def pump_loads_the_stream(dut):
    """A stream's pump: its ids answer, its range is translated (S_XL from the wrap check)."""
    await opened(dut)
    drive(dut, pm_want=1, sq_q_pid=7, sq_q_req_id=9, sq_q_retry_of=2, sq_q_session=3, sq_q_epoch=5,
          sq_q_cur=0x1000, sq_n=0x200, eng_in_last=0)
    await edge(dut)
    drive(dut, pm_want=0)
    assert state(dut) == "es_xl", state(dut)
    assert int(dut.ev_pump_q.value) == 1
    assert int(dut.rs_own.value) == 1
    got = [int(getattr(dut, n).value) for n in ("rs_pid", "rs_req_id", "rs_retry_of", "rs_session", "r_epoch")]
    assert got == [7, 9, 2, 3, 5], got
    assert int(dut.r_op.value) == PKG["OP_READ_RESP"]
    assert int(dut.xl_at.value) == 0, "the call enters at the range's wrap check"
    assert int(dut.xl_cur.value) == 0x1000 and int(dut.xl_end.value) == 0x1200
    assert int(dut.xl_need.value) == PKG["PERM_READ"]
    assert (int(dut.xl_for_wr.value), int(dut.xl_for_at.value)) == (0, 0), "the caller is the READ"


@cocotb.test()
async def nack_is_sent_then_the_packet_let_go(dut):
    """S_DECIDE's NACK: the answer's fields, the builder's start, its ready, then idle."""
    await opened(dut)
    await take_packet(dut, PKG["OP_READ"])
    drive(dut, id_nack=1, h_request=1, h_va=0x1234, h_total_len=64, h_offset=8, h_epoch=4)
    await edge(dut)
    drive(dut, id_nack=0)
    assert state(dut) == "es_send", state(dut)
    assert int(dut.r_op.value) == PKG["OP_NACK"] and int(dut.r_status.value) == PKG["STATUS_CORRUPT"]
    assert (int(dut.r_va.value), int(dut.r_total_len.value), int(dut.r_offset.value)) == (0, 0, 8)
    assert int(dut.r_epoch.value) == 4
    await edge(dut)
    assert int(dut.rb_start.value) == 1 and state(dut) is None, "S_SEND_W after the start"
    for _ in range(3):                                   # the builder not ready: the engine waits
        await edge(dut)
        assert int(dut.rb_start.value) == 0 and state(dut) is None
    drive(dut, rb_ready=1)
    await edge(dut, 2)                                   # S_FINISH, then idle
    assert state(dut) == "es_idle" and int(dut.pkt_have_reg.value) == 0


@cocotb.test()
async def hold_freezes_the_engine(dut):
    """`eng_hold` keeps S_DECIDE and its loads; released, INFO answers with its length."""
    await opened(dut)
    await take_packet(dut, PKG["OP_INFO"])
    r_op = int(dut.r_op.value)                           # not reset: what an earlier answer left
    assert r_op != PKG["OP_INFO"] | PKG["OP_RESPONSE_BIT"]
    drive(dut, id_info=1, h_request=1, eng_hold=1)
    for _ in range(4):
        await edge(dut)
        assert state(dut) == "es_decide", state(dut)
        assert int(dut.ev_take_q.value) == 0, "pulses clear while held"
        assert int(dut.r_op.value) == r_op, "no load while held"
    drive(dut, eng_hold=0)
    await edge(dut)
    drive(dut, id_info=0)
    assert state(dut) == "es_info", state(dut)
    assert int(dut.r_op.value) == PKG["OP_INFO"] | PKG["OP_RESPONSE_BIT"]
    await edge(dut)
    assert state(dut) == "es_send"
    assert int(dut.r_plen.value) == PKG["INFO_RESP_LEN"] and int(dut.r_status.value) == PKG["STATUS_OK"]


@cocotb.test()
async def ack_raises_the_floor_once(dut):
    """An admitted packet's ack writes the session's floor only when it raises it."""
    for above in (1, 0):
        await opened(dut)
        await take_packet(dut, PKG["OP_READ"])
        drive(dut, id_admit=1, needs_sess=1, h_ack=0x55, h_sidx=3, ack_above_floor=above, id_drop=1)
        await edge(dut)
        drive(dut, id_admit=0, id_drop=0)
        if above:
            got = (int(dut.st_wr_op.value), int(dut.st_wr_session.value), int(dut.st_wr_word.value))
            assert got == (1, 3, 0x55), got                  # ST_FLOOR
        else:
            assert int(dut.st_wr_op.value) == 0
        await edge(dut)
        assert int(dut.st_wr_op.value) == 0, "a table write is one cycle's command"
        assert state(dut) == "es_idle", "a dropped packet is let go"


@cocotb.test()
async def ring_call_returns_to_the_poll(dut):
    """The poll's pop: S_RING waits for the ring engine, S_RING_W for its done, then back."""
    await opened(dut)
    drive(dut, idle_poll=1)
    await edge(dut)
    drive(dut, idle_poll=0, tp_pop=1)
    await edge(dut)
    drive(dut, tp_pop=0)
    assert state(dut) == "es_ring" and int(dut.ring_cmd.value) == 2
    await edge(dut, 2)                                   # the ring engine busy: no command
    assert state(dut) == "es_ring" and int(dut.ring_valid.value) == 0
    drive(dut, ring_idle=1)
    await edge(dut)
    assert state(dut) == "es_ring_w" and int(dut.ring_valid.value) == 1
    await edge(dut)
    assert int(dut.ring_valid.value) == 0, "one command"
    drive(dut, ring_done=1, ring_free=9)
    await edge(dut)
    drive(dut, ring_done=0)
    assert state(dut) == "es_poll", state(dut)
    assert int(dut.rx_credit.value) == 0, "a TX pop leaves the RX credit as it was"
    desc = 0xABCDEF << 100
    drive(dut, tp_popped=1, ring_tx_desc=desc)
    await edge(dut)
    drive(dut, tp_popped=0)
    assert int(dut.desc_reg.value) == desc


@cocotb.test()
async def reset_inside_a_call(dut):
    """Reset while the engine waits in a call (S_RING_W) with a packet held: idle, nothing held."""
    await opened(dut)
    drive(dut, idle_poll=1, eng_in_last=1)
    await edge(dut)
    drive(dut, idle_poll=0, eng_in_last=0, tp_pop=1, ring_idle=1)
    await edge(dut, 2)
    drive(dut, tp_pop=0)
    assert state(dut) == "es_ring_w" and int(dut.pkt_have_reg.value) == 1
    dut.rst.value = 1
    await edge(dut)
    dut.rst.value = 0
    assert state(dut) == "es_idle"
    assert (int(dut.pkt_have_reg.value), int(dut.gt_poll_reg.value), int(dut.poll_req.value)) == (0, 0, 0)

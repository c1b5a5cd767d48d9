"""The ZCU106's EDM front end on the real fast path: a card's EDM host (the bench
plays its translator, by host-sdk/wire/src/edm_clio.rs) carries Clio requests as
EDM records over the EDM switch to the memory node (edm_host_top + clio_edm_front
+ clio_fastpath_top, the fast path in its own clock), and the answers come back:
  - an INFO request (answered by the fast path from cfg_info): its record is
    WREQ'd into the node's inbox; the node WREQs the answer record into the card's
    inbox slot for the node; the chain holds the fast path's InfoResp (CRC checked,
    the request's ids, cfg_info as its payload);
  - a READ without a session: its record's WREQ, then the card's RREQ of the
    node's outbox slot (read_demand bytes), read again while the outbox holds no
    chain with this record's seq; the chain holds the fast path's refusal.
No EDM host counts an error and the node counts no bad record, stray or timeout."""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

import clio_client as cc
from tb_base import drive, reset, start_clock

INBOX_SLOT = 4096
OUTBOX_BASE = 16 * 8 * 4096
OUTBOX_SLOT = 65536
CARD, NODE = 0, 1
STAGE = 200000 * 8          # the card's staging area (bytes)
ANSWER = 220000 * 8         # where the card's RREQs land (bytes)


def record(seq, body):
    return len(body).to_bytes(2, "little") + b"\0\0" + seq.to_bytes(4, "little") + body


def r8(n):
    return (n + 7) & ~7


def chain_packets(b):
    """(seq, packets) of an answer chain."""
    seq, at, out = int.from_bytes(b[0:4], "little"), 4, []
    while True:
        n = int.from_bytes(b[at:at + 2], "little")
        if n == 0:
            return seq, out
        out.append(b[at + 2:at + 2 + n])
        at += 2 + n


class Card:
    def __init__(self, dut):
        self.dut = dut
        self.mem = dut.card_host.engine_inst.mem
        self.cycle = 0

    def write_mem(self, byte_addr, data):
        data = data.ljust(r8(len(data)), b"\0")
        for i in range(len(data) // 8):
            self.mem[byte_addr // 8 + i].value = int.from_bytes(data[8 * i:8 * i + 8], "little")

    def read_mem(self, byte_addr, n):
        return b"".join(int(self.mem[byte_addr // 8 + i].value).to_bytes(8, "little")
                        for i in range(r8(n) // 8))[:n]

    async def request(self, write, addr, length, local, tag, want, limit=20000):
        """Post one EDM request and wait for `want` ("wcomp" / "rcomp") of `tag`;
        also returns the card-inbox writes applied meanwhile."""
        d = self.dut
        await FallingEdge(d.clk)
        d.c_req_valid.value, d.c_req_write.value = 1, int(write)
        d.c_req_addr.value, d.c_req_len.value, d.c_req_local.value, d.c_req_tag.value = addr, length, local, tag
        posted = False
        for _ in range(limit):
            await ReadOnly()
            if not posted and d.c_req_ready.value:
                posted = True
            comp = (want == "wcomp" and d.c_wcomp_valid.value and int(d.c_wcomp_tag.value) == tag) or \
                   (want == "rcomp" and d.c_rcomp_valid.value and int(d.c_rcomp_tag.value) == tag)
            if comp:
                return int(d.c_rcomp_ok.value) if want == "rcomp" else 1
            await FallingEdge(d.clk)
            if posted:
                d.c_req_valid.value = 0
        raise AssertionError(f"no {want} for tag {tag} after {limit} cycles")

    async def inbox_record(self, slot, limit=50000):
        """Wait for the node's answer record in this card's inbox slot for the node."""
        d = self.dut
        base = (NODE * 8 + slot) * INBOX_SLOT // 8
        for _ in range(limit):
            await FallingEdge(d.clk)
            await ReadOnly()
            if d.c_wapp_valid.value and d.c_wapp_last.value and \
                    base <= int(d.c_wapp_addr.value) < base + INBOX_SLOT // 8:
                assert int(d.c_wapp_peer.value) == NODE
                await FallingEdge(d.clk)
                n = int.from_bytes(self.read_mem(base * 8, 2), "little")
                return self.read_mem(base * 8, 8 + n)
        raise AssertionError(f"no answer record in inbox slot {slot} after {limit} cycles")


@cocotb.test()
async def clio_requests_over_edm(dut):
    # The board's clocks: the EDM port's 10G user clock (161.13 MHz) and the fast path's 250 MHz.
    start_clock(dut, "clk", 6.206)
    cocotb.start_soon(Clock(dut.clk_fp, 4, unit="ns").start())
    info = bytes(range(1, 65))
    dut.cfg_info.value = int.from_bytes(info, "little")    # byte 0 in bits 7:0
    drive(dut, **dict.fromkeys(("c_req_valid", "c_req_write", "c_req_addr", "c_req_len", "c_req_local",
                                "c_req_tag"), 0))
    await reset(dut, cycles=8)
    card = Card(dut)

    # INFO: answered by a record WREQ'd into the card's inbox.
    slot, seq = 2, 0x1111
    # (an INFO request carries 64 zero bytes, the size of its answer: section 6)
    req = cc.encode(cc.Header(opcode=cc.INFO, pid=5, req_id=0x70, va=0, total_len=cc.INFO_RESP_LEN),
                    bytes(cc.INFO_RESP_LEN))
    rec = record(seq, req)
    card.write_mem(STAGE, rec)
    waiter = cocotb.start_soon(card.inbox_record(slot))
    await card.request(True, (CARD * 8 + slot) * INBOX_SLOT, r8(len(rec)), STAGE, 1, "wcomp")
    ans = await waiter
    n = int.from_bytes(ans[0:2], "little")
    assert ans[2:4] == b"\0\0" and int.from_bytes(ans[4:8], "little") == seq, f"answer record header {ans[:8].hex()}"
    cseq, pkts = chain_packets(ans[8:8 + n])
    assert cseq == seq and len(pkts) == 1, f"chain seq {cseq:#x}, {len(pkts)} packets"
    h, payload = cc.decode(pkts[0])
    assert (h.opcode, h.status, h.pid, h.req_id) == (cc.INFO | cc.RESPONSE_BIT, cc.OK, 5, 0x70), h
    # cfg_info as the firmware wrote it, with the boot epoch (InfoResp bytes 56..59) filled
    # in by the fast path: 0, no EPOCH descriptor yet
    assert payload == info[:56] + bytes(4) + info[60:], f"InfoResp {payload.hex()}, cfg_info {info.hex()}"
    dut._log.info("INFO over EDM: answer record of %d bytes, InfoResp %d bytes (status %s)",
                  8 + n, len(payload), cc.STATUS_NAMES[h.status])

    # READ without a session: record WREQ, then RREQs of the outbox slot until the chain is there.
    slot, seq, total = 3, 0x2222, 64
    req = cc.encode(cc.Header(opcode=cc.READ, pid=5, req_id=0x71, va=0x1000, total_len=total))
    rec = record(seq, req)
    card.write_mem(STAGE, rec)
    await card.request(True, (CARD * 8 + slot) * INBOX_SLOT, r8(len(rec)), STAGE, 2, "wcomp")
    demand = 4 + (-(-total // 512)) * (2 + 56) + total + 2
    for reads in range(1, 200):
        ok = await card.request(False, OUTBOX_BASE + (CARD * 8 + slot) * OUTBOX_SLOT, r8(demand), ANSWER,
                                3, "rcomp")
        assert ok, "NULL RRES for the node's outbox"
        got = card.read_mem(ANSWER, demand)
        if int.from_bytes(got[0:4], "little") == seq:
            break
        for _ in range(20):
            await FallingEdge(dut.clk)
    else:
        raise AssertionError("the READ's answer chain never appeared in the node's outbox")
    cseq, pkts = chain_packets(got)
    assert len(pkts) == 1, f"{len(pkts)} packets in the READ's chain"
    h, payload = cc.decode(pkts[0])
    assert (h.opcode, h.pid, h.req_id) == (cc.READ | cc.RESPONSE_BIT, 5, 0x71), h
    # no EPOCH descriptor yet (boot epoch 0): every session-bound request is RESTARTED
    assert h.status == cc.RESTARTED and payload == b"", f"a READ without a session answered {h}"
    dut._log.info("READ over EDM: answer chain read in %d RREQs, status %s", reads, cc.STATUS_NAMES[h.status])

    for _ in range(50):
        await FallingEdge(dut.clk)
    errs = {k: int(getattr(dut, k).value) for k in ("host_errors", "node_bad", "node_stray", "node_timeouts")}
    assert errs == dict.fromkeys(errs, 0), errs
    assert int(dut.node_records.value) == 2

"""clio_resp_builder: packets assembled from unaligned payload writes equal the wire encoding,
CRC included, for payload lengths across beat boundaries up to a full buffer (BEATS, the
parameter point: tb/run.sh runs 24 and 9 beats); output backpressure respected."""

import random

import cocotb
from cocotb.triggers import RisingEdge

from clio_tb import PKG as P, clio_header, param, reset, start_clock


@cocotb.test()
async def packets(dut):
    """Random headers and payloads (up to a full buffer) written in random unaligned pieces."""
    start_clock(dut)
    dut.wr_en.value = 0
    dut.start.value = 0
    dut.m_axis_tready.value = 1
    await reset(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    # Header + payload fill every buffer beat exactly (1480 bytes at 24 beats of 64).
    full = len(dut.wr_data) // 8 * param(dut, "BEATS") - P["CLIO_HEADER_LEN"]
    for n in range(60):
        plen = rng.choice([0, 1, 8, 23, 24, 25, 60, 88, 130, full, rng.randrange(0, min(1400, full))])
        payload = bytes(rng.getrandbits(8) for _ in range(plen))
        f = dict(opcode=rng.choice([P["OP_READ_RESP"], P["OP_NACK"], P["OP_WRITE_RESP"]]),
                 pid=rng.getrandbits(32), req_id=rng.getrandbits(32), retry_of=rng.getrandbits(32),
                 va=rng.getrandbits(64), total_len=rng.getrandbits(32), offset=rng.getrandbits(32),
                 flags=rng.choice([0, 4]), status=rng.randrange(12),
                 session=rng.getrandbits(16), epoch=rng.getrandbits(32))
        want = clio_header(payload=payload, **f)
        pos = 0
        while pos < plen:
            k = min(rng.randrange(1, 65), plen - pos)
            dut.wr_off.value = P["CLIO_HEADER_LEN"] + pos
            dut.wr_data.value = int.from_bytes(payload[pos:pos + k], "little")
            dut.wr_len.value = k
            dut.wr_en.value = 1
            await RisingEdge(dut.clk)
            pos += k
        if plen == full:
            # A write running past the buffer end: its bytes beyond the last beat are
            # dropped (they must not wrap into beat 0).
            tail = payload[-10:] + bytes(rng.getrandbits(8) for _ in range(54))
            dut.wr_off.value = P["CLIO_HEADER_LEN"] + plen - 10
            dut.wr_data.value = int.from_bytes(tail, "little")
            dut.wr_len.value = 64
            dut.wr_en.value = 1
            await RisingEdge(dut.clk)
        dut.wr_en.value = 0
        dut.hdr_opcode.value, dut.hdr_flags.value, dut.hdr_status.value = f["opcode"], f["flags"], f["status"]
        dut.hdr_pid.value, dut.hdr_req_id.value, dut.hdr_retry_of.value = f["pid"], f["req_id"], f["retry_of"]
        dut.hdr_va.value, dut.hdr_total_len.value, dut.hdr_offset.value = f["va"], f["total_len"], f["offset"]
        dut.hdr_payload_len.value = plen
        dut.hdr_session.value, dut.hdr_epoch.value = f["session"], f["epoch"]
        dut.start.value = 1
        await RisingEdge(dut.clk)
        dut.start.value = 0
        got = b""
        while True:
            dut.m_axis_tready.value = int(rng.random() < 0.7)
            await RisingEdge(dut.clk)
            if dut.m_axis_tvalid.value and dut.m_axis_tready.value:
                keep = int(dut.m_axis_tkeep.value)
                nbytes = bin(keep).count("1")
                assert keep == (1 << nbytes) - 1
                got += int(dut.m_axis_tdata.value).to_bytes(64, "little")[:nbytes]
                if dut.m_axis_tlast.value:
                    break
        assert got == want, f"packet {n} (plen {plen}) differs"
        await RisingEdge(dut.clk)
        assert dut.busy.value == 0

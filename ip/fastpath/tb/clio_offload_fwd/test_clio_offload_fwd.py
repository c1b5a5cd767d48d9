"""clio_offload_fwd against the fast-path model's offload pass-through (issue #16).

vectors.txt is the model's run (`offload_fwd_vectors` in ip/fastpath/cosim/src/vectors.rs:
the call table of `OffloadLink` with tag = seq mod TAGS, the wire crate's `OffloadAssembler`
and `OffloadReplyHead::split`) over random calls and OFFLOAD_REPLY fragments: answers of
every status and of lengths either side of the held bound, stale and unknown sequence
numbers, tags past the table, fragments missing, swapped or never sent, heads that do not
parse. The bench records each call (checking the sequence number it gets), applies each
fragment at a clock edge and checks the combinational verdict (completes a datagram,
answered), the drop counter, the latched answer fields and, through the read port, every
payload byte the top would send."""

import os

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from tb_base import param, start_clock

HERE = os.path.dirname(os.path.abspath(__file__))
ANS = ("m_ans_status", "m_ans_plen", "m_ans_pid", "m_ans_req_id", "m_ans_retry_of", "m_ans_va",
       "m_ans_total_len", "m_ans_offset", "m_ans_session", "m_ans_epoch")
CALL = ("s_call_pid", "s_call_req_id", "s_call_retry_of", "s_call_va", "s_call_total_len",
        "s_call_offset", "s_call_session", "s_call_epoch")


def load():
    with open(os.path.join(HERE, "vectors.txt")) as f:
        return [line.split() for line in f if line.strip()]


def idle(dut):
    for name in CALL + ("s_call_valid", "s_frag_valid", "s_frag_tag", "s_frag_seq", "s_frag_len",
                        "s_frag_index", "s_frag_count", "s_frag_data", "s_rd_take", "s_rd_len"):
        getattr(dut, name).value = 0


async def edge(dut):
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    idle(dut)


@cocotb.test()
async def model_verdicts(dut):
    """Every call's seq, every fragment's verdict, every answer's fields and bytes."""
    assert param(dut, "TAGS") == 8 and param(dut, "RESP_BYTES") == 2600, \
        "vectors.txt is made for TAGS = 8, RESP_BYTES = 2600"
    start_clock(dut)
    idle(dut)
    dut.rst.value = 1
    for _ in range(2):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    counts = {"calls": 0, "frags": 0, "answers": 0, "refused": 0, "bytes": 0, "large": 0}
    for n, v in enumerate(load(), 1):
        where = f"vectors.txt line {n}: {' '.join(v)[:160]}"
        if v[0] == "C":
            vals = [int(x, 16) for x in v[1:]]
            assert int(dut.m_seq.value) == vals[8], f"{where}: seq {int(dut.m_seq.value):x}"
            assert int(dut.m_tag.value) == vals[8] % 8, where
            for name, x in zip(CALL, vals[:8]):
                getattr(dut, name).value = x
            dut.s_call_valid.value = 1
            await edge(dut)
            counts["calls"] += 1
            continue
        tag, seq, ln, index, count = (int(x, 16) for x in v[1:6])
        dut.s_frag_valid.value = 1
        dut.s_frag_tag.value = tag
        dut.s_frag_seq.value = seq
        dut.s_frag_len.value = ln
        dut.s_frag_index.value = index
        dut.s_frag_count.value = count
        dut.s_frag_data.value = int.from_bytes(bytes.fromhex(v[6]), "little")
        done, answer, dropped = int(v[7]), int(v[8]), int(v[9], 16)
        await Timer(1, unit="ns")
        # Combinational, before the edge takes the fragment.
        assert int(dut.m_done.value) == done, f"{where}: done {int(dut.m_done.value)}"
        assert int(dut.m_answer.value) == answer, f"{where}: answer {int(dut.m_answer.value)}"
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        idle(dut)
        counts["frags"] += 1
        assert int(dut.m_dropped.value) == dropped, f"{where}: dropped {int(dut.m_dropped.value):x}"
        if not answer:
            counts["refused"] += done
            continue
        counts["answers"] += 1
        want = [int(x, 16) for x in v[10:20]]
        for name, x in zip(ANS, want):
            assert int(getattr(dut, name).value) == x, f"{where}: {name} {int(getattr(dut, name).value):x}"
        payload = bytes.fromhex(v[20]) if v[20] != "-" else b""
        # The block RAM's row is read a cycle ahead: the top's S_OF_ANS cycle.
        await edge(dut)
        got = b""
        while len(got) < len(payload):
            left = int(dut.m_rd_left.value)
            k = min(left, len(payload) - len(got))
            assert 1 <= left <= 40, f"{where}: m_rd_left {left}"
            got += int(dut.m_rd_data.value).to_bytes(40, "little")[:k]
            dut.s_rd_take.value = 1
            dut.s_rd_len.value = k
            await edge(dut)
        assert got == payload, f"{where}: payload {got.hex()}"
        counts["bytes"] += len(got)
        counts["large"] += len(got) > 2048
    dut._log.info("%s", counts)
    # Fewer, longer answers than at RESP_BYTES 300: 12 or more above 2 048 bytes.
    assert counts["answers"] > 80 and counts["refused"] > 50 and counts["bytes"] > 30000, counts
    assert counts["large"] > 10, counts

"""Co-simulation of the whole Clio-over-EDM path in RTL: the card's translator
(edm_clio_card) on its EDM host, the EDM switch, and the memory node's front end
(edm_clio_node) on its EDM host, against edm-clio's model (`ClioFabric`, 1 card,
1 node) on the same random trace (`edm-clio-cosim ... clio`). The bench is only
the Clio fast path behind the node: it takes each request packet the node streams
out and answers by the model's node rule (`respond`, Clio's way: status OK, at
most one answer to anything but a READ), with random delays and back-pressure.
Checked: the card's C2H frames are the model's answers (same packets; order may
differ between slots), the same packets are refused, no card slot times out, no
EDM host or switch counts an error, and the node served every carried request (no bad
record, no stray answer; its answer timeout closes exactly the requests the rule
leaves unanswered)."""

from collections import Counter, deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm_clio_tb import keep_bytes, check_refusals, load_cosim as load, stream_beats, vectors
from tb_base import rng as seeded, start

HEADER_LEN = 56
READ_ANSWER_PAYLOAD = 512


def respond(p):
    """The memory node's answers (edm-clio-cosim's `respond`, `clio` mode)."""
    hdr = bytearray(p[:HEADER_LEN])
    hdr[1] |= 0x80
    hdr[3] = 0
    if p[1] == 3:
        total = int.from_bytes(p[24:28], "big")
        n = max(1, -(-total // READ_ANSWER_PAYLOAD))
        out = []
        for i in range(n):
            k = min(READ_ANSWER_PAYLOAD, total - min(READ_ANSWER_PAYLOAD * i, total))
            out.append(bytes(hdr) + bytes((p[0] + i + j) & 0xFF for j in range(k)))
        return out
    m = p[2] % 4
    if m == 0:
        return []
    if m == 2:
        return [bytes(hdr) + p[HEADER_LEN : min(len(p), HEADER_LEN + 100)]]
    return [bytes(hdr)]


def grant_queue(host):
    """Grants waiting in an EDM host's grant queue (its engine's write and read pointers)."""
    wr, rd = host.engine_inst.g_wr_reg, host.engine_inst.g_rd_reg
    return (int(wr.value) - int(rd.value)) % (1 << len(wr))


def switch_counts(dut):
    """The switch's error counters (tb_edm_clio_path's sw_* wires)."""
    return {k: int(getattr(dut, "sw_" + k).value) for k in ("no_circuit", "overflow", "refused", "unexpected")}


@cocotb.test()
async def matches_the_model(dut):
    pkts, want, (want_refused, want_carried, want_timeouts, _bad, want_rereads) = load(vectors("EDM_CLIO_PATH", "edm-clio-cosim"))
    rng = seeded()
    await start(dut, idle=("h2c_tvalid", "h2c_tlast", "h2c_tdata", "h2c_tkeep", "c2h_tready",
                           "fp_req_tready", "fp_ans_tvalid", "fp_ans_tdata", "fp_ans_tkeep", "fp_ans_tlast"),
                cycles=4)
    await FallingEdge(dut.clk)
    assert dut.card_ready.value == 1, "the card is not ready out of reset"

    beats = stream_beats(pkts)
    bi = 0
    frames, cur = [], b""
    fp_in = b""
    served = 0            # requests the fast path saw
    unanswered = 0        # of which the rule answers none (the node's answer timeout closes them)
    tx = deque()          # the fast path's answer beats, ("gap", n) between answers
    cycle = 0
    idle = 0
    limit = 6000 * len(pkts) + 100000
    deepest = {"card": 0, "node": 0}     # the hosts' deepest grant queues (GDEPTH must hold them)
    while cycle < limit:
        cycle += 1
        await FallingEdge(dut.clk)
        if bi < len(beats) and rng.random() < 0.9:
            c, last = beats[bi]
            dut.h2c_tdata.value = int.from_bytes(c.ljust(8, b"\xa5"), "little")
            dut.h2c_tkeep.value = (1 << len(c)) - 1
            dut.h2c_tlast.value = int(last)
            dut.h2c_tvalid.value = 1
        else:
            dut.h2c_tvalid.value = 0
        dut.c2h_tready.value = int(rng.random() < 0.8)
        dut.fp_req_tready.value = int(rng.random() < 0.8)
        while tx and tx[0][0] == "gap" and tx[0][1] == 0:
            tx.popleft()
        if tx and tx[0][0] == "gap":
            tx[0] = ("gap", tx[0][1] - 1)
            dut.fp_ans_tvalid.value = 0
        elif tx and rng.random() < 0.9:
            c, last = tx[0]
            dut.fp_ans_tdata.value = int.from_bytes(c.ljust(8, b"\x5a"), "little")
            dut.fp_ans_tkeep.value = (1 << len(c)) - 1
            dut.fp_ans_tlast.value = int(last)
            dut.fp_ans_tvalid.value = 1
        else:
            dut.fp_ans_tvalid.value = 0
        await ReadOnly()
        for k, host in (("card", dut.card_host), ("node", dut.node_host)):
            deepest[k] = max(deepest[k], grant_queue(host))
        if dut.h2c_tvalid.value and dut.h2c_tready.value:
            bi += 1
        if dut.fp_ans_tvalid.value and dut.fp_ans_tready.value:
            tx.popleft()
        if dut.fp_req_tvalid.value and dut.fp_req_tready.value:
            fp_in += keep_bytes(dut.fp_req_tdata.value, dut.fp_req_tkeep.value, f"request {served}")
            if dut.fp_req_tlast.value:
                ans = respond(fp_in)
                served += 1
                unanswered += not ans
                tx.append(("gap", rng.randrange(100)))
                for a in ans:
                    tx.extend(stream_beats([a]))
                    tx.append(("gap", rng.randrange(30)))
                fp_in = b""
        if dut.c2h_tvalid.value and dut.c2h_tready.value:
            cur += keep_bytes(dut.c2h_tdata.value, dut.c2h_tkeep.value, f"answer {len(frames)}")
            if dut.c2h_tlast.value:
                frames.append(cur)
                cur = b""
        if len(frames) >= len(want) and bi == len(beats) and served == want_carried and not tx:
            idle += 1
            if idle > 3000:
                break
    else:
        raise AssertionError(
            f"not done after {limit} cycles: {bi}/{len(beats)} beats in, {served}/{want_carried} requests "
            f"at the fast path, {len(frames)}/{len(want)} answers out; card slot timeouts "
            f"{int(dut.card_timeouts.value)}, EDM host errors {int(dut.host_errors.value)}, switch {switch_counts(dut)}"
        )
    await RisingEdge(dut.clk)
    refused = int(dut.card_refused.value)
    timeouts = int(dut.card_timeouts.value)
    assert refused == want_refused, f"refused {refused}, model {want_refused}"
    assert timeouts == want_timeouts == 0, f"card slot timeouts {timeouts}, model {want_timeouts}"
    assert int(dut.host_errors.value) == 0, f"EDM host errors {int(dut.host_errors.value)}"
    # A chunk later than its circuit table holds, a grant unit past the egress queue or a
    # refused notification would lose data: name the switch's count, not only the answer.
    assert not any(switch_counts(dut).values()), f"EDM switch counters {switch_counts(dut)}"
    node = {k: int(getattr(dut, "node_" + k).value) for k in ("records", "bad", "stray", "timeouts", "dropped",
                                                             "overflow")}
    assert node == {"records": want_carried, "bad": 0, "stray": 0, "timeouts": unanswered, "dropped": 0,
                    "overflow": 0}, f"node counters {node} ({want_carried} carried, {unanswered} unanswered)"
    refusals = check_refusals(vectors("EDM_CLIO_PATH", "edm-clio-cosim"), frames)
    missing = Counter(want) - Counter(frames)
    extra = Counter(frames) - Counter(want)
    assert not missing and not extra, (
        f"{len(frames)} answers, model {len(want)}: {sum(missing.values())} missing "
        f"(first {next(iter(missing)).hex()[:40] if missing else None}), {sum(extra.values())} extra"
    )
    dut._log.info(
        "edm_clio path: %d packets (%d refused, %d carried through the node's RTL front end, %d closed by "
        "its answer timeout), %d answers matched the model (the card's own answers to the %d leading refused "
        "packets byte for byte; %d stale READ answers read again, the model %d) in %d cycles; deepest grant "
        "queue: card %d, node %d",
        len(pkts), refused, want_carried, unanswered, len(frames), refusals, int(dut.card_bad.value),
        want_rereads, cycle, deepest["card"], deepest["node"],
    )

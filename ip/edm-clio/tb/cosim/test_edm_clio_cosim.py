"""Co-simulation of the whole translator: edm_clio_card on its EDM host, the EDM
switch and a memory node's EDM host, all RTL, against edm-clio's model
(`ClioFabric`, 1 card, 1 node) on the same random trace (`edm-clio-cosim`). The
bench is the memory node's Clio board: when a request record has fully arrived in
the node's inbox (the node host's applied-write report) it answers by the same rule
as the model's node (`respond`): a READ's answer chain into the node's outbox slot
(read by the card's RREQ), any other answer as a record the node's EDM host writes
into the card's inbox. Checked: the card's C2H frames are the model's answers
(same packets; order may differ between slots), the same packets are refused, no
slot times out and no EDM host counts an error."""

from collections import Counter

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm_clio_tb import SLOTS, keep_bytes, check_refusals, load_cosim as load, r8, stream_beats, vectors
from tb_base import rng as seeded, start

HEADER_LEN = 56
READ_ANSWER_PAYLOAD = 512
INBOX_SLOT = 4096
OUTBOX_BASE = 16 * SLOTS * 4096
OUTBOX_SLOT = 65536
NODE_STAGE_WORD = 200000  # where the node stages its answer records (after its outboxes)


def respond(p):
    """The memory node's answers (edm-clio-cosim's `respond`)."""
    hdr = bytearray(p[:HEADER_LEN])
    hdr[1] |= 0x80
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
    if m == 1:
        return [bytes(hdr)]
    if m == 2:
        return [bytes(hdr) + p[HEADER_LEN : min(len(p), HEADER_LEN + 100)]]
    return [bytes(hdr), bytes(hdr)]


def chain(seq, packets):
    b = seq.to_bytes(4, "little")
    for p in packets:
        b += len(p).to_bytes(2, "little") + p
    return b + b"\0\0"


def record(seq, body):
    return len(body).to_bytes(2, "little") + b"\0\0" + seq.to_bytes(4, "little") + body


@cocotb.test()
async def matches_the_model(dut):
    pkts, want, (want_refused, want_carried, want_timeouts, _bad, want_rereads) = load(vectors("EDM_CLIO_COSIM", "edm-clio-cosim"))
    rng = seeded()
    await start(dut, idle=("h2c_tvalid", "h2c_tlast", "h2c_tdata", "h2c_tkeep", "c2h_tready",
                           "n_req_valid", "n_req_addr", "n_req_len", "n_req_local", "n_req_tag"), cycles=4)
    await FallingEdge(dut.clk)
    assert dut.card_ready.value == 1, "the card is not ready out of reset"

    node_mem = dut.node_host.engine_inst.mem
    # A READ's RREQ can reach the node before the node has written that slot's answer chain
    # (the model then reads again): a never-written outbox must read as the model's memory,
    # zeros, not X (an X seq leaves the card's return stage neither done nor stale: it wedges).
    for slot in range(SLOTS):
        v = node_mem[(OUTBOX_BASE + slot * OUTBOX_SLOT) // 8].value
        assert v.is_resolvable and int(v) == 0, (
            f"the node's outbox slot {slot} does not start zeroed ({v}): EDM host memory must "
            "start at zero, as the model's"
        )
    beats = stream_beats(pkts)
    bi = 0
    frames, cur = [], b""
    got_words = {}        # inbox slot -> words applied
    todo = []             # node actions to do at the next falling edge
    wreqs = []            # node answer records to post: (addr, len, local, tag)
    nreq = None
    cycle = 0
    idle = 0
    limit = 3000 * len(pkts) + 100000
    while cycle < limit:
        cycle += 1
        await FallingEdge(dut.clk)
        # The node's Clio board acts on what arrived last cycle.
        for slot in todo:
            base = slot * INBOX_SLOT // 8
            w0 = int(node_mem[base].value)
            n, seq = w0 & 0xFFFF, w0 >> 32
            words = [int(node_mem[base + 1 + i].value) for i in range((n + 7) // 8)]
            body = b"".join(w.to_bytes(8, "little") for w in words)[:n]
            ch = chain(seq, respond(body))
            if body[1] == 3:
                at = (OUTBOX_BASE + slot * OUTBOX_SLOT) // 8
                data = ch.ljust(r8(len(ch)), b"\0")
                for i in range(len(data) // 8):
                    node_mem[at + i].value = int.from_bytes(data[8 * i : 8 * i + 8], "little")
            else:
                rec = record(seq, ch)
                data = rec.ljust(r8(len(rec)), b"\0")
                at = NODE_STAGE_WORD + slot * 512
                for i in range(len(data) // 8):
                    node_mem[at + i].value = int.from_bytes(data[8 * i : 8 * i + 8], "little")
                # into the card's inbox slot for this node (node 1)
                wreqs.append(((1 * SLOTS + slot) * INBOX_SLOT, len(data), at * 8, slot))
        todo = []
        if nreq is None and wreqs:
            nreq = wreqs.pop(0)
        dut.n_req_valid.value = int(nreq is not None)
        if nreq is not None:
            dut.n_req_addr.value, dut.n_req_len.value, dut.n_req_local.value, dut.n_req_tag.value = nreq
        if bi < len(beats) and rng.random() < 0.9:
            c, last = beats[bi]
            dut.h2c_tdata.value = int.from_bytes(c.ljust(8, b"\xa5"), "little")
            dut.h2c_tkeep.value = (1 << len(c)) - 1
            dut.h2c_tlast.value = int(last)
            dut.h2c_tvalid.value = 1
        else:
            dut.h2c_tvalid.value = 0
        dut.c2h_tready.value = int(rng.random() < 0.8)
        await ReadOnly()
        if dut.h2c_tvalid.value and dut.h2c_tready.value:
            bi += 1
        if dut.n_req_valid.value and dut.n_req_ready.value:
            nreq = None
        if dut.c2h_tvalid.value and dut.c2h_tready.value:
            cur += keep_bytes(dut.c2h_tdata.value, dut.c2h_tkeep.value, f"answer {len(frames)}")
            if dut.c2h_tlast.value:
                frames.append(cur)
                cur = b""
        if dut.n_wapp_valid.value:
            addr = int(dut.n_wapp_addr.value)
            assert int(dut.n_wapp_peer.value) == 0
            slot = addr * 8 // INBOX_SLOT
            assert slot < SLOTS, f"the card wrote outside its inbox slots at the node: word {addr:#x}"
            got_words[slot] = got_words.get(slot, 0) + int(dut.n_wapp_words.value)
            if dut.n_wapp_last.value:
                todo.append(slot)
                got_words[slot] = 0
        if len(frames) >= len(want) and bi == len(beats):
            idle += 1
            if idle > 3000:
                break
    else:
        raise AssertionError(
            f"not done after {limit} cycles: {bi}/{len(beats)} beats in, {len(frames)}/{len(want)} answers out"
        )
    await RisingEdge(dut.clk)
    refused = int(dut.card_refused.value)
    timeouts = int(dut.card_timeouts.value)
    assert refused == want_refused, f"refused {refused}, model {want_refused}"
    assert timeouts == want_timeouts == 0, f"timeouts {timeouts}, model {want_timeouts}"
    assert int(dut.host_errors.value) == 0, f"EDM host errors {int(dut.host_errors.value)}"
    refusals = check_refusals(vectors("EDM_CLIO_COSIM", "edm-clio-cosim"), frames)
    missing = Counter(want) - Counter(frames)
    extra = Counter(frames) - Counter(want)
    assert not missing and not extra, (
        f"{len(frames)} answers, model {len(want)}: {sum(missing.values())} missing "
        f"(first {next(iter(missing)).hex()[:40] if missing else None}), {sum(extra.values())} extra"
    )
    dut._log.info(
        "edm_clio cosim: %d packets (%d refused, %d carried), %d answers matched the model (the card's own "
        "answers to the %d leading refused packets byte for byte; %d stale READ answers read again, "
        "the model %d) in %d cycles",
        len(pkts), refused, want_carried, len(frames), refusals, int(dut.card_bad.value), want_rereads, cycle,
    )

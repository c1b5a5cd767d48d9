"""edm_clio_node (the memory node's EDM front end) against edm-clio's model
(`serve_record`), on vectors from `edm-clio-node-vectors`. The bench writes each
request record into the node's inbox slot (as the EDM host applies a card's WREQ)
and reports it on wapp_* in 32-word chunks, with a few applied writes outside the
inbox besides; it plays the Clio fast path (random back-pressure on the request
stream; each request's stray and real answers after random delays, beats with
random gaps) and the EDM host's requester (random req_ready, write completions
after random delays). Checked: every good record's packet reaches the fast path
byte for byte, in order; a READ's answer chain in the peer's outbox slot, and any
other request's answer record (its WREQ's card, address, length and bytes) are the
model's byte for byte; bad records, strays, answer timeouts and dropped chains are
counted as the model says; nothing is left waiting."""

from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from edm_clio_tb import keep_bytes, r8, stream_beats, vectors
from tb_base import param, rng as seeded, start

CHUNK_WORDS = 32          # the EDM host reports applied writes per 256-byte chunk
INBOX_SLOT = 4096


def parse(path):
    recs, node = [], None
    with open(path) as f:
        for line in f:
            op = line.split()
            if op[0] == "N":
                node = int(op[1])
            elif op[0] == "R":
                recs.append({"peer": int(op[1]), "slot": int(op[2]), "bytes": bytes.fromhex(op[3]),
                             "strays": [], "answers": []})
            elif op[0] == "X":
                recs[-1]["strays"].append(bytes.fromhex(op[1]))
            elif op[0] == "A":
                recs[-1]["answers"].append(bytes.fromhex(op[1]))
            elif op[0] == "E":
                r = recs[-1]
                r["kind"] = op[1]
                if op[1] == "read":
                    r["addr"] = int(op[2])
                    r["chain"] = None if op[3] == "-" else bytes.fromhex(op[3])
                    r["timeout"], r["dropped"] = int(op[4]), int(op[5])
                elif op[1] == "write":
                    r["dst"], r["addr"] = int(op[2]), int(op[3])
                    r["record"] = bytes.fromhex(op[4])
                    r["timeout"], r["dropped"] = int(op[5]), int(op[6])
    return node, recs


def body(rec):
    n = int.from_bytes(rec["bytes"][0:2], "little")
    return rec["bytes"][8:8 + n]


@cocotb.test()
async def matches_the_model(dut):
    node, recs = parse(vectors("EDM_CLIO_NODE_VECTORS", "edm-clio-node-vectors"))
    rng = seeded()
    aw = param(dut, "AW")
    timeout = param(dut, "ANSWER_TIMEOUT")
    dut._log.info("AW %d, STAGE_WORD %#x, PKT_WORDS %d, QDEPTH %d, ANSWER_TIMEOUT %d", aw,
                  param(dut, "STAGE_WORD"), param(dut, "PKT_WORDS"), param(dut, "QDEPTH"), timeout)
    await start(dut, idle=("req_ready", "wcomp_valid", "wcomp_tag", "wapp_valid", "wapp_addr", "wapp_words",
                           "wapp_peer", "wapp_last", "m_axis_tready", "s_axis_tdata", "s_axis_tkeep",
                           "s_axis_tvalid", "s_axis_tlast"), cycles=3, node_id=node)
    mem = dut.mem

    def read_mem(word, n):
        return b"".join(int(mem[word + i].value).to_bytes(8, "little") for i in range(r8(n) // 8))[:n]

    good = [r for r in recs if r["kind"] != "bad"]
    served_by_fp = [r for r in good if body(r)]    # an empty record is answered at once
    want_bad = sum(r["kind"] == "bad" for r in recs)
    want_strays = sum(len(r["strays"]) for r in recs)
    want_timeouts = sum(r.get("timeout", 0) for r in recs)
    want_dropped = sum(r.get("dropped", 0) for r in recs)

    window = min(12, 8 * len({r["peer"] for r in recs}))
    outstanding = deque()     # records written, not yet served (the node's order)
    ri = 0                    # next record to write
    wapp = deque()            # pending wapp pulses: (addr, words, peer, last)
    fp_in = b""               # request packet being received by the "fast path"
    gi = 0                    # next good record whose packet the fast path expects
    tx = deque()              # answer beats to send: (bytes, last) or ("gap", n)
    served = 0
    posted = None             # the last answer record WREQ seen, checked at done
    wcomps = []               # (cycle, tag)
    bad_seen = 0
    cycle = 0
    limit = 200000 + sum(len(r["bytes"]) + sum(len(a) for a in r["answers"]) for r in recs) * 2 \
        + (timeout + 200) * (want_timeouts + len(recs))
    while served < len(recs):
        cycle += 1
        assert cycle < limit, f"not done after {limit} cycles: {served}/{len(recs)} records served, {ri} written"
        await FallingEdge(dut.clk)
        # Cards' WREQs: a record into a free inbox slot, reported chunk by chunk.
        busy = {(r["peer"], r["slot"]) for r in outstanding}
        if ri < len(recs) and not wapp and len(outstanding) < window \
                and (recs[ri]["peer"], recs[ri]["slot"]) not in busy and rng.random() < 0.3:
            r = recs[ri]
            base = (r["peer"] * 8 + r["slot"]) * INBOX_SLOT // 8
            words = len(r["bytes"]) // 8
            for i in range(words):
                mem[base + i].value = int.from_bytes(r["bytes"][8 * i:8 * i + 8], "little")
            for c in range(0, words, CHUNK_WORDS):
                wapp.append((base + c, min(CHUNK_WORDS, words - c), r["peer"], c + CHUNK_WORDS >= words))
            if rng.random() < 0.1:
                # a write elsewhere (an outbox, say): not a request
                wapp.append(((1 << aw) - 64, 8, r["peer"], True))
            outstanding.append(r)
            ri += 1
        if wapp:
            a, n, p, last = wapp.popleft()
            dut.wapp_valid.value = 1
            dut.wapp_addr.value, dut.wapp_words.value, dut.wapp_peer.value, dut.wapp_last.value = a, n, p, int(last)
        else:
            dut.wapp_valid.value = 0
        # The host's requester.
        dut.req_ready.value = int(rng.random() < 0.5)
        due = [w for w in wcomps if w[0] <= cycle]
        if due:
            wcomps.remove(due[0])
            dut.wcomp_valid.value, dut.wcomp_tag.value = 1, due[0][1]
        else:
            dut.wcomp_valid.value = 0
        # The fast path: request stream back-pressure, answers out.
        dut.m_axis_tready.value = int(rng.random() < 0.7)
        while tx and tx[0][0] == "gap" and tx[0][1] == 0:
            tx.popleft()
        if tx and tx[0][0] == "gap":
            tx[0] = ("gap", tx[0][1] - 1)
            dut.s_axis_tvalid.value = 0
        elif tx and rng.random() < 0.9:
            c, last = tx[0]
            dut.s_axis_tdata.value = int.from_bytes(c.ljust(8, b"\x5a"), "little")
            dut.s_axis_tkeep.value = (1 << len(c)) - 1
            dut.s_axis_tlast.value = int(last)
            dut.s_axis_tvalid.value = 1
        else:
            dut.s_axis_tvalid.value = 0

        await ReadOnly()
        if dut.s_axis_tvalid.value and dut.s_axis_tready.value:
            tx.popleft()
        if dut.m_axis_tvalid.value and dut.m_axis_tready.value:
            fp_in += keep_bytes(dut.m_axis_tdata.value, dut.m_axis_tkeep.value, "request beat")
            if dut.m_axis_tlast.value:
                assert gi < len(served_by_fp), f"a request packet the model never served: {fp_in.hex()[:80]}"
                r = served_by_fp[gi]
                assert fp_in == body(r), (
                    f"request {gi} (peer {r['peer']} slot {r['slot']}): got {fp_in.hex()[:80]}, "
                    f"want {body(r).hex()[:80]}")
                fp_in = b""
                gi += 1
                tx.append(("gap", rng.randrange(60)))
                for a in r["strays"] + r["answers"]:
                    tx.extend(stream_beats([a]))
                    tx.append(("gap", rng.randrange(40)))
        if dut.req_valid.value and dut.req_ready.value:
            r = outstanding[0]
            assert r["kind"] == "write", f"a WREQ for peer {r['peer']} slot {r['slot']}, a {r['kind']}"
            assert int(dut.req_write.value) == 1
            got = (int(dut.req_dst.value), int(dut.req_addr.value), int(dut.req_len.value))
            want = (r["dst"], r["addr"], r8(len(r["record"])))
            assert got == want, f"answer WREQ (card, addr, len) {got}, model {want}"
            local = int(dut.req_local.value)
            assert local % 8 == 0
            staged = read_mem(local // 8, len(r["record"]))
            assert staged == r["record"], (
                f"answer record for peer {r['peer']} slot {r['slot']}: {staged.hex()[:120]}, "
                f"model {r['record'].hex()[:120]}")
            posted = r
            wcomps.append((cycle + 1 + rng.randrange(50), int(dut.req_tag.value)))
        if int(dut.cnt_bad.value) > bad_seen:
            bad_seen += 1
            r = outstanding.popleft()
            assert r["kind"] == "bad", f"peer {r['peer']} slot {r['slot']} counted bad, model {r['kind']}"
            served += 1
        if dut.done_valid.value:
            r = outstanding.popleft()
            assert r["kind"] != "bad", f"peer {r['peer']} slot {r['slot']} served, the model refuses it"
            got = (int(dut.done_peer.value), int(dut.done_slot.value), int(dut.done_read.value))
            assert got == (r["peer"], r["slot"], int(r["kind"] == "read")), f"served {got}, model {r}"
            if r["kind"] == "read":
                if r["chain"] is not None:
                    chain = read_mem(r["addr"] // 8, len(r["chain"]))
                    assert chain == r["chain"], (
                        f"READ chain for peer {r['peer']} slot {r['slot']}: {chain.hex()[:120]}, "
                        f"model {r['chain'].hex()[:120]}")
            else:
                assert posted is r, f"peer {r['peer']} slot {r['slot']} served without its WREQ"
            served += 1

    for _ in range(60):
        await RisingEdge(dut.clk)
    got = {k: int(getattr(dut, "cnt_" + k).value) for k in
           ("records", "bad", "stray", "timeouts", "dropped", "overflow")}
    want = {"records": len(good), "bad": want_bad, "stray": want_strays, "timeouts": want_timeouts,
            "dropped": want_dropped, "overflow": 0}
    assert got == want, f"counters {got}, model {want}"
    left = [t for t in tx if t[0] != "gap"]
    assert not left and not fp_in, f"{len(left)} answer beats or a request ({len(fp_in)} bytes) left over"
    dut._log.info(
        "edm_clio_node: %d records (%d bad, %d READs, %d answer records), %d answers, %d strays, "
        "%d answer timeouts, %d dropped chains matched the model in %d cycles",
        len(recs), want_bad, sum(r["kind"] == "read" for r in recs), sum(r["kind"] == "write" for r in recs),
        sum(len(r["answers"]) for r in recs), want_strays, want_timeouts, want_dropped, cycle)

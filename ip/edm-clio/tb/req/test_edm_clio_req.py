"""edm_clio_req against edm-clio's model (`plan`): a card's random H2C packets
(short, over-long, unknown opcodes, READs past the RREQ limit, reads and writes)
go in with random gaps; the bench plays the EDM host (random request back-pressure,
write completions after random delays) and the return stage (frees each slot after
a random delay once its answer could be there). Checked: each refused packet is
reported with its length and carries nothing; each carried packet's record in the
staging memory is the model's byte for byte (sequence number included), its WREQ
goes to the model's inbox address with the record's length rounded to 8 bytes, a
READ's RREQ follows its WREQ's completion with the model's outbox address and
length, no slot is used twice at once and every packet is carried in order."""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from edm_clio_tb import SLOTS, r8, stream_beats, vectors
from tb_base import param, rng as seeded, start

DST = 9


def parse(path):
    head, pkts = None, []
    with open(path) as f:
        for line in f:
            op = line.split()
            if op[0] == "S":
                v = [int(x) for x in op[1:]]
                head = (v[0], v[1:1 + SLOTS], v[1 + SLOTS:1 + 2 * SLOTS])
            elif op[0] == "P":
                n = int(op[1])
                data = bytes.fromhex(op[2]) if op[2] != "-" else b""
                assert len(data) == n
                rec = bytes.fromhex(op[4]) if op[4] != "-" else None
                pkts.append((data, int(op[3]) == 1, rec, int(op[5])))
    return head, pkts


@cocotb.test()
async def matches_the_model(dut):
    (card, inbox, outbox), pkts = parse(vectors("EDM_CLIO_REQ_VECTORS", "edm-clio-req-vectors"))
    rng = seeded()
    # The parameter point the bench was compiled for (the Makefile's AW, STAGE_WORD, ANSWER_WORD).
    stage_word, answer_word = param(dut, "STAGE_WORD"), param(dut, "ANSWER_WORD")
    dut._log.info("AW %d, STAGE_WORD %#x, ANSWER_WORD %#x", param(dut, "AW"), stage_word, answer_word)
    await start(dut, idle=("s_axis_tvalid", "s_axis_tlast", "s_axis_tdata", "s_axis_tkeep", "req_ready",
                           "wcomp_valid", "wcomp_tag", "free_valid", "free_slot", "reread_valid",
                           "reread_slot"), cycles=2, node_id=card, dst=DST)

    # Expected, in stream order.
    refused = [(len(d), r) for d, r, _, _ in pkts]
    carried = [(d, rec, rl) for d, r, rec, rl in pkts if not r]
    by_seq = {i + 1: c for i, c in enumerate(carried)}

    # The stream: beats of every packet, in order.
    beats = stream_beats(d for d, _, _, _ in pkts)
    bi = 0
    mem = {}
    seen_refusals = []
    wreqs = {}                 # seq -> slot
    slot_of = [None] * SLOTS       # slot -> (seq, read, state)
    events = []                # (cycle, kind, slot)
    rreqs = 0
    cycle = 0
    gap = False
    limit = 400 * len(pkts) + 20000
    while cycle < limit:
        cycle += 1
        await FallingEdge(dut.clk)
        # Inputs for this cycle.
        if bi < len(beats) and not gap:
            c, last = beats[bi]
            dut.s_axis_tdata.value = int.from_bytes(c.ljust(8, bytes([rng.randrange(256)])), "little")
            dut.s_axis_tkeep.value = (1 << len(c)) - 1
            dut.s_axis_tlast.value = int(last)
            dut.s_axis_tvalid.value = 1
        else:
            dut.s_axis_tvalid.value = 0
        dut.req_ready.value = int(rng.random() < 0.6)
        due = [e for e in events if e[0] <= cycle]
        wc = next((e for e in due if e[1] == "wcomp"), None)
        fr = next((e for e in due if e[1] == "free"), None)
        dut.wcomp_valid.value = int(wc is not None)
        dut.wcomp_tag.value = wc[2] if wc else 0
        dut.free_valid.value = int(fr is not None)
        dut.free_slot.value = fr[2] if fr else 0
        for e in (wc, fr):
            if e is not None:
                events.remove(e)
        await ReadOnly()
        if wc is not None:
            s = wc[2]
            seq, read, _ = slot_of[s]
            if read:
                slot_of[s] = (seq, read, "reading")
            else:
                slot_of[s] = (seq, read, "answered")
                events.append((cycle + rng.randrange(1, 40), "free", s))
        if fr is not None:
            slot_of[fr[2]] = None
        # Outputs: what the next rising edge does.
        if dut.s_axis_tvalid.value and dut.s_axis_tready.value:
            bi += 1
            gap = rng.random() < 0.15
        elif gap:
            gap = rng.random() < 0.5
        if dut.mem_we.value:
            mem[int(dut.mem_addr.value)] = int(dut.mem_wdata.value)
        if dut.refuse_valid.value:
            seen_refusals.append(int(dut.refuse_len.value))
        if dut.req_valid.value and dut.req_ready.value:
            tag = int(dut.req_tag.value)
            s = tag & (SLOTS - 1)
            local = int(dut.req_local.value)
            addr = int(dut.req_addr.value)
            n = int(dut.req_len.value)
            assert int(dut.req_dst.value) == DST
            if int(dut.req_write.value):
                assert tag == s, f"WREQ tag {tag}"
                assert local == (stage_word + 512 * s) * 8, f"WREQ local {local:#x}, slot {s}"
                w0 = mem.get(local // 8)
                assert w0 is not None, f"WREQ of slot {s} before its record header was written"
                seq = w0 >> 32
                assert seq in by_seq and seq not in wreqs, f"WREQ of seq {seq}: unknown or twice"
                d, rec, rl = by_seq[seq]
                assert slot_of[s] is None, f"slot {s} used by seq {seq} while still busy with {slot_of[s]}"
                got = b"".join(mem.get(local // 8 + w, 0).to_bytes(8, "little") for w in range(r8(len(rec)) // 8))
                assert got[: len(rec)] == rec, f"seq {seq}: record differs from the model's"
                assert got[len(rec):] == bytes(len(got) - len(rec)), f"seq {seq}: padding not zero"
                assert addr == inbox[s], f"seq {seq}: WREQ at {addr:#x}, model {inbox[s]:#x}"
                assert n == r8(len(rec)), f"seq {seq}: WREQ of {n} B, want {r8(len(rec))} B (record {len(rec)} B)"
                wreqs[seq] = s
                slot_of[s] = (seq, rl != 0, "record")
                events.append((cycle + rng.randrange(2, 60), "wcomp", s))
            else:
                assert tag == SLOTS + s, f"RREQ tag {tag}"
                assert slot_of[s] is not None and slot_of[s][2] == "reading", f"RREQ of slot {s} in state {slot_of[s]}"
                seq = slot_of[s][0]
                rl = by_seq[seq][2]
                assert addr == outbox[s], f"seq {seq}: RREQ at {addr:#x}, model {outbox[s]:#x}"
                assert n == r8(rl), f"seq {seq}: RREQ of {n} B, model {rl} B"
                assert local == (answer_word + 8192 * s) * 8
                slot_of[s] = (seq, True, "rreq")
                rreqs += 1
                events.append((cycle + rng.randrange(1, 80), "free", s))
        if bi == len(beats) and len(wreqs) == len(carried) and not events and all(x is None for x in slot_of):
            break
    else:
        raise AssertionError(f"not done after {limit} cycles: {bi}/{len(beats)} beats, {len(wreqs)}/{len(carried)} carried")
    # The last packet's classification and refusal come a few cycles after its last beat.
    for _ in range(4):
        await FallingEdge(dut.clk)
        await ReadOnly()
        if dut.refuse_valid.value:
            seen_refusals.append(int(dut.refuse_len.value))
        assert not (dut.req_valid.value), "a request after every packet was carried"
    await RisingEdge(dut.clk)
    want_ref = [min(n, 0xFFFF) for n, r in refused if r]
    assert seen_refusals == want_ref, f"refusals {len(seen_refusals)}, ..., {seen_refusals[-3:]}, model {len(want_ref)}, ..., {want_ref[-3:]}"
    assert sorted(wreqs) == list(range(1, len(carried) + 1))
    want_r = sum(1 for _, _, rl in carried if rl)
    assert rreqs == want_r, f"{rreqs} RREQs, model {want_r}"
    dut._log.info(
        "edm_clio_req: %d packets matched the model (%d refused, %d carried, %d READs) in %d cycles",
        len(pkts), len(want_ref), len(carried), rreqs, cycle,
    )

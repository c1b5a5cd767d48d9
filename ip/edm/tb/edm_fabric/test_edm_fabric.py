"""Co-simulation of the EDM RTL fabric (edm_host_top x PORTS around edm_switch_top) against
the Rust fabric model: the same random read/write/atomic mix with frames sent both ways
(`edm-cosim PORTS REQUESTS FRAMES SEED OUT [SPAN]`) must give the same completions (tag,
NULL or not, atomic results), the same final memory on every host, the same frame blocks at
every receiver, and the same host error counters, with nothing refused, overflowed or
dropped in the switch. Per-message latency is compared too: the log gives, per kind of control
block, its mean shift (RTL cycle - model cycle) at the four tap points and how many messages are
within 2 % of the model; any message beyond EDM_LAT_TOL (percent, default 2; "none" only
reports) is a failure."""

import os

import cocotb
from cocotb.triggers import FallingEdge

from tb_base import drive, start_clock

IDLE = 0x1E
FRAME_STARTS = (0x78, 0x33, 0x66)
KINDS = {0: "RREQ", 1: "WREQ", 2: "RMWREQ", 3: "RRES"}
POINTS = ("host TX", "switch RX", "switch TX", "host RX")


def tap_kind(payload):
    """Message kind of a tapped control block: /N/, /G/ or the header's kind."""
    ty = payload & 0xFF
    if ty == 0x04:
        return "/N/"
    if ty == 0x08:
        return "/G/"
    if ty in FRAME_STARTS:
        return "/S/"
    return KINDS.get((payload >> 8) & 7, "?")


def breakdown(rtl_taps, model_taps):
    """Mean shift (RTL cycle - model cycle) of every kind of control block at each of the four
    tap points. The same block (payload and occurrence) is matched on both sides, so the growth
    of the shift from one point to the next is what that stage costs the RTL beyond the model."""
    rtl, model = {}, {}
    for side, taps in ((rtl, rtl_taps), (model, model_taps)):
        for c, link, d, rx, _, payload in sorted(taps):
            side.setdefault((link, d, rx, payload), []).append(c)
    shift = {}
    for key, cycles in model.items():
        got = rtl.get(key, [])
        for i, c in enumerate(cycles[: len(got)]):
            shift.setdefault((tap_kind(key[3]), POINTS[2 * key[1] + key[2]]), []).append(got[i] - c)
    return {k: (sum(v) / len(v), len(v)) for k, v in sorted(shift.items(), key=lambda kv: (kv[0][0], POINTS.index(kv[0][1])))}


def dump_taps(taps):
    """EDM_TAP_DUMP=FILE: the RTL's taps in the trace's `T` format, to diff against the model's."""
    dump = os.environ.get("EDM_TAP_DUMP")
    if dump:
        with open(dump, "w") as f:
            for c, link, d, r, hdr, payload in sorted(taps):
                f.write(f"T {c} {link} {d} {r} {hdr} {payload:x}\n")


def lane(sig, index, width):
    bits = str(sig.value)
    lo = len(bits) - (index + 1) * width
    part = bits[lo : lo + width]
    assert all(c in "01" for c in part), f"{sig._name}[{index}] = {part} is not 0/1"
    return int(part, 2)


def bits(sig):
    return [c == "1" for c in reversed(str(sig.value))]


def pack(values, width):
    v = 0
    for i, x in enumerate(values):
        v |= (x & ((1 << width) - 1)) << (i * width)
    return v


def load(path):
    t = {"mem": {}, "reqs": [], "frames": [], "comp": {}, "final": {}, "rx": {}, "quiet": 0, "counters": {}, "taps": []}
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    i = 0
    while i < len(lines):
        op = lines[i]
        i += 1
        if op[0] == "P":
            t["ports"], t["words"], t["chunk"], t["x"] = (int(v) for v in op[1:5])
        elif op[0] == "M":
            t["mem"][(int(op[1]), int(op[2]))] = int(op[3], 16)
        elif op[0] == "R":
            t["reqs"].append(tuple(int(v) for v in op[1:10]) + (int(op[10], 16), int(op[11], 16)))
        elif op[0] == "F":
            n = int(op[4])
            blocks = [(int(lines[i + k][1], 16), int(lines[i + k][2], 16)) for k in range(n)]
            i += n
            t["frames"].append((int(op[1]), int(op[2]), int(op[3]), blocks))
        elif op[0] == "C":
            t["comp"][(int(op[1]), int(op[2]))] = (int(op[3]), int(op[4]), int(op[5], 16))
        elif op[0] == "W":
            t["final"][(int(op[1]), int(op[2]))] = int(op[3], 16)
        elif op[0] == "Y":
            n = int(op[3])
            t["rx"][(int(op[1]), int(op[2]))] = [
                (int(lines[i + k][1], 16), int(lines[i + k][2], 16)) for k in range(n)
            ]
            i += n
        elif op[0] == "E":
            t["counters"][int(op[1])] = tuple(int(v) for v in op[2:6])
        elif op[0] == "T":
            t["taps"].append(tuple(int(v) for v in op[1:5]) + (int(op[5], 16), int(op[6], 16)))
        elif op[0] == "Q":
            t["quiet"] = int(op[1])
    return t


def log_counters(dut, ports):
    for h in range(ports):
        e = dut.host[h].host_inst
        dut._log.error(
            "host %d: unknown grant %d, unknown response %d, unexpected %d, bad request %d, "
            "bad message %d, rx unknown %d, rx truncated %d", h,
            int(e.cnt_unknown_grant.value), int(e.cnt_unknown_response.value),
            int(e.cnt_unexpected.value), int(e.cnt_bad_request.value),
            int(e.cnt_bad_message.value), int(e.cnt_rx_unknown.value),
            int(e.cnt_rx_truncated.value))


@cocotb.test()
async def cosim_against_model(dut):
    path = os.environ.get("EDM_VECTORS")
    assert path, "set EDM_VECTORS to a file from `edm-cosim`"
    seed = os.environ.get("EDM_SEED", "?")
    where = f"(seed {seed}, vectors {path})"
    t = load(path)
    ports, words = t["ports"], t["words"]
    aw = (words - 1).bit_length()
    start_clock(dut)
    drive(dut, req_valid=0, req_rmw=0, ext_en=0, ext_we=0, h_enc_valid=0, s_enc_valid=0)
    dut.rst.value = 1

    # Preload every host's memory through its DMA port (during reset).
    for w in range(words):
        await FallingEdge(dut.clk)
        dut.ext_en.value = (1 << ports) - 1
        dut.ext_we.value = (1 << ports) - 1
        dut.ext_addr.value = pack([w] * ports, aw)
        dut.ext_wdata.value = pack([t["mem"][(h, w)] for h in range(ports)], 64)
    await FallingEdge(dut.clk)
    dut.ext_en.value = 0
    dut.ext_we.value = 0
    for _ in range(3):
        await FallingEdge(dut.clk)
    dut.rst.value = 0

    reqs = {h: [r for r in t["reqs"] if r[1] == h] for h in range(ports)}
    frames = sorted(t["frames"], key=lambda f: f[0])
    txq = {(s, p): [] for s in (0, 1) for p in range(ports)}
    rx = {(s, p): [] for s in (0, 1) for p in range(ports)}
    comp, submitted = {}, {}
    taps = []
    want_rx = {k: len(v) for k, v in t["rx"].items()}
    limit = 4 * t["quiet"] + 2000
    fi = 0
    cycle = 0
    done_at = None
    while True:
        await FallingEdge(dut.clk)
        # outputs of this cycle
        for link_dir, rx_side, sig_d, sig_h in ((0, 0, dut.up_data, dut.up_hdr), (0, 1, dut.sw_rx_data, dut.sw_rx_hdr),
                                                (1, 0, dut.down_data, dut.down_hdr), (1, 1, dut.h_rx_data, dut.h_rx_hdr)):
            for p in range(ports):
                hdr = lane(sig_h, p, 2)
                if hdr == 1:
                    data = lane(sig_d, p, 64)
                    if data & 0xFF in (0x10, 0x40, 0x04, 0x08) + FRAME_STARTS:
                        taps.append((cycle, p, link_dir, rx_side, hdr, data))
        for side, vs, ds, hs in ((1, dut.h_dec_valid, dut.h_dec_data, dut.h_dec_hdr),
                                 (0, dut.s_dec_valid, dut.s_dec_data, dut.s_dec_hdr)):
            for p, v in enumerate(bits(vs)[:ports]):
                if v:
                    hdr, data = lane(hs, p, 2), lane(ds, p, 64)
                    if not (hdr == 1 and data & 0xFF == IDLE):
                        rx[(side, p)].append((hdr, data))
        for p, v in enumerate(bits(dut.wcomp_valid)[:ports]):
            if v:
                tag = lane(dut.wcomp_tag, p, 16)
                assert (p, tag) not in comp, f"host {p} tag {tag} completed twice {where}"
                comp[(p, tag)] = (1, cycle - submitted[(p, tag)], 0)
        rv, ok = bits(dut.rcomp_valid), bits(dut.rcomp_ok)
        for p in range(ports):
            if rv[p]:
                tag = lane(dut.rcomp_tag, p, 16)
                assert (p, tag) not in comp, f"host {p} tag {tag} completed twice {where}"
                comp[(p, tag)] = (int(ok[p]), cycle - submitted[(p, tag)], lane(dut.rcomp_data, p, 64))

        # inputs for the next edge (ready signals depend on registers only)
        while fi < len(frames) and frames[fi][0] <= cycle:
            _, side, p, blocks = frames[fi]
            txq[(side, p)].extend(blocks)
            fi += 1
        for side, vs, ds, hs, rs in ((0, dut.h_enc_valid, dut.h_enc_data, dut.h_enc_hdr, dut.h_enc_ready),
                                     (1, dut.s_enc_valid, dut.s_enc_data, dut.s_enc_hdr, dut.s_enc_ready)):
            ready = bits(rs)
            valid, data, hdr = [], [], []
            for p in range(ports):
                q = txq[(side, p)]
                go = bool(q) and ready[p]
                valid.append(1 if go else 0)
                hdr.append(q[0][0] if go else 0)
                data.append(q[0][1] if go else 0)
                if go:
                    q.pop(0)
            vs.value = pack(valid, 1)
            ds.value = pack(data, 64)
            hs.value = pack(hdr, 2)
        ready = bits(dut.req_ready)
        names = ("valid", "write", "dst", "addr", "len", "local", "tag", "rmw", "op", "opa", "opb")
        fields = {k: [0] * ports for k in names}
        for h in range(ports):
            q = reqs[h]
            if q and q[0][0] <= cycle and ready[h]:
                q_cycle, _, kind, dst, addr, length, local, tag, op, opa, opb = q.pop(0)
                for k, v in zip(names, (1, int(kind == 1), dst, addr, length, local, tag,
                                        int(kind == 2), op, opa, opb)):
                    fields[k][h] = v
                # latency counts from the trace's submission cycle, as the model's does
                submitted[(h, tag)] = q_cycle
        dut.req_valid.value = pack(fields["valid"], 1)
        dut.req_write.value = pack(fields["write"], 1)
        dut.req_dst.value = pack(fields["dst"], 16)
        dut.req_addr.value = pack(fields["addr"], 64)
        dut.req_len.value = pack(fields["len"], 16)
        dut.req_local.value = pack(fields["local"], 32)
        dut.req_tag.value = pack(fields["tag"], 16)
        dut.req_rmw.value = pack(fields["rmw"], 1)
        dut.req_op.value = pack(fields["op"], 4)
        dut.req_opa.value = pack(fields["opa"], 64)
        dut.req_opb.value = pack(fields["opb"], 64)

        cycle += 1
        finished = len(comp) == len(t["comp"]) and all(len(rx[k]) >= n for k, n in want_rx.items())
        if finished and done_at is None:
            done_at = cycle
        if done_at is not None and cycle >= done_at + 100:
            break
        if cycle >= limit:
            log_counters(dut, ports)
            dump_taps(taps)
        assert cycle < limit, (
            f"not finished after {cycle} cycles: {len(comp)}/{len(t['comp'])} completions "
            f"(missing {sorted(set(t['comp']) - set(comp))}), "
            f"frames {[(k, len(rx[k]), n) for k, n in want_rx.items() if len(rx[k]) < n]}, "
            f"host errors {[lane(dut.host_errors, h, 32) for h in range(ports)]}, switch refused "
            f"{int(dut.sw_refused.value)} overflow {int(dut.sw_overflow.value)} no circuit "
            f"{int(dut.sw_no_circuit.value)} unexpected {int(dut.sw_unexpected.value)} {where}"
        )

    # Completions: same requests, same NULL responses, same atomic results.
    atomic = {(r[1], r[7]) for r in t["reqs"] if r[2] == 2}
    for key, (ok, _, result) in t["comp"].items():
        assert key in comp, f"host {key[0]} tag {key[1]} never completed {where}"
        assert comp[key][0] == ok, f"host {key[0]} tag {key[1]}: ok {comp[key][0]}, model {ok} {where}"
        if key in atomic and ok:
            assert comp[key][2] == result, (
                f"host {key[0]} tag {key[1]}: atomic result {comp[key][2]:#x}, model {result:#x} {where}")
    assert set(comp) == set(t["comp"]), f"extra completions {set(comp) - set(t['comp'])} {where}"

    # Frames: every receiver got exactly the model's blocks.
    for key, want in t["rx"].items():
        got = rx[key][: len(want)]
        for k, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"{'host' if key[0] else 'switch port'} {key[1]} frame block {k}: {g} != model {w} {where}"
        assert len(rx[key]) == len(want), f"{key}: {len(rx[key])} blocks, model {len(want)} {where}"

    # Counters: the model's host counts (grants after a NULL response are unknown at the
    # memory node, out-of-range reads are bad addresses), nothing refused or dropped.
    nulls = sum(1 for (ok, _, _) in t["comp"].values() if not ok)
    for h in range(ports):
        e = dut.host[h].host_inst
        got = (int(e.cnt_unknown_grant.value), int(e.cnt_unknown_response.value),
               int(e.cnt_unexpected.value), int(e.cnt_bad_address.value))
        if got != t["counters"][h] or int(e.cnt_bad_request.value) or int(e.cnt_bad_message.value):
            log_counters(dut, ports)
        assert got == t["counters"][h], (
            f"host {h} counters (unknown grant, unknown response, unexpected, bad address) "
            f"{got} != model {t['counters'][h]} {where}")
        assert int(e.cnt_bad_request.value) == 0 and int(e.cnt_bad_message.value) == 0, \
            f"host {h}: bad requests or messages {where}"
    for sig in ("sw_refused", "sw_overflow", "sw_no_circuit", "sw_unexpected"):
        assert int(getattr(dut, sig).value) == 0, f"{sig} = {int(getattr(dut, sig).value)} {where}"

    # Final memory of every host, read back through the DMA port.
    for w in range(words + 1):
        await FallingEdge(dut.clk)
        if w > 0:
            for h in range(ports):
                got = lane(dut.ext_rdata, h, 64)
                want = t["final"][(h, w - 1)]
                assert got == want, f"host {h} word {w - 1}: {got:#x} != model {want:#x} {where}"
        if w < words:
            dut.ext_en.value = (1 << ports) - 1
            dut.ext_addr.value = pack([w] * ports, aw)
    dut.ext_en.value = 0

    # Per-message latency: the RTL against the model, message by message, with where the
    # cycles differ (the shift of every control block at the four tap points).
    dump_taps(taps)
    for (kind, point), (mean, n) in breakdown(taps, t["taps"]).items():
        dut._log.info("latency shift %-6s at %-9s: %+6.2f cycles (%d blocks)", kind, point, mean, n)
    worst = []
    for key, (_, mlat, _) in t["comp"].items():
        rlat = comp[key][1]
        worst.append((abs(rlat - mlat) / max(1, mlat), key, rlat, mlat))
    worst.sort(reverse=True)
    if os.environ.get("EDM_LAT_LIST"):
        for w in worst:
            dut._log.info("message host %d tag %d: RTL %d, model %d cycles", w[1][0], w[1][1], w[2], w[3])
    within = sum(1 for w in worst if w[0] <= 0.02)
    dut._log.info("per-message latency: %d of %d within 2 %% of the model; worst %s: RTL %d, model %d cycles (%.1f %%)",
                  within, len(worst), worst[0][1], worst[0][2], worst[0][3], 100 * worst[0][0])
    # Every message within 2 % of the model unless EDM_LAT_TOL says otherwise ("none": report
    # only, e.g. to list every difference of a run under study).
    tol = os.environ.get("EDM_LAT_TOL", "2")
    if tol != "none":
        over = [w for w in worst if w[0] > float(tol) / 100]
        assert not over, (
            f"{len(over)} of {len(worst)} messages differ from the model by more than {tol} % in latency; "
            f"worst host {over[0][1][0]} tag {over[0][1][1]}: RTL {over[0][2]}, model {over[0][3]} cycles {where}")
    preempted = sum(int(dut.host[h].host_inst.cnt_preempted.value) for h in range(ports))
    preempted += sum(int(dut.switch_inst.port[p].c_preempted.value) for p in range(ports))
    lat = [v[1] for v in comp.values()]
    mlat = [v[1] for v in t["comp"].values()]
    dut._log.info(
        "co-simulation matched the model: %d requests (%d atomics, %d NULL), %d frames, %d grants, "
        "%d chunks forwarded, %d frame preemptions; mean latency RTL %.1f cycles, model %.1f; "
        "quiet after %d cycles (model %d)",
        len(comp), len(atomic), nulls, len(frames), int(dut.sw_grants.value), int(dut.sw_forwarded.value),
        preempted,
        sum(lat) / max(1, len(lat)), sum(mlat) / max(1, len(mlat)), done_at, t["quiet"],
    )

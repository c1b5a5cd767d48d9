"""clio_rx_parser: CRC32C, header fields, verdicts and II = 1 against Python oracles."""

import random
import struct

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from clio_tb import PKG, clio_header, crc32c, reset, start_clock

P = PKG
CLASS = {P["OP_ALLOC"]: 1, P["OP_FREE"]: 1, P["OP_OPEN_SESSION"]: 1, P["OP_CLOSE_SESSION"]: 1,
         P["OP_POINTER_CHASE"]: 2, P["OP_OFFLOAD_CALL"]: 2, P["OP_INFO"]: 3}
REQUESTS = [P[k] for k in ("OP_ALLOC", "OP_FREE", "OP_READ", "OP_WRITE", "OP_TAS", "OP_CAS",
                           "OP_FAA", "OP_LOCK", "OP_UNLOCK", "OP_FENCE", "OP_POINTER_CHASE",
                           "OP_OFFLOAD_CALL", "OP_INFO", "OP_OPEN_SESSION", "OP_CLOSE_SESSION")]


def expect(pkt):
    """Verdict of the wire crate's Header::parse_verified on `pkt`."""
    hl = P["CLIO_HEADER_LEN"]
    plen = struct.unpack_from(">H", pkt, P["CLIO_OFF_PAYLOAD_LEN"])[0]
    short = len(pkt) < hl + plen
    covered = bytearray(pkt[:hl + plen])
    carried = struct.unpack_from(">I", pkt, P["CLIO_OFF_CRC"])[0]
    covered[P["CLIO_OFF_CRC"]:P["CLIO_OFF_CRC"] + 4] = b"\0\0\0\0"
    bad_crc = crc32c(bytes(covered)) != carried
    op = pkt[P["CLIO_OFF_OPCODE"]]
    known = op in REQUESTS or op in [r | P["OP_RESPONSE_BIT"] for r in REQUESTS] or op == P["OP_NACK"]
    total_len = struct.unpack_from(">I", pkt, P["CLIO_OFF_TOTAL_LEN"])[0]
    offset = struct.unpack_from(">I", pkt, P["CLIO_OFF_OFFSET"])[0]
    va = struct.unpack_from(">Q", pkt, P["CLIO_OFF_VA"])[0]
    slice_op = op in (P["OP_WRITE"], P["OP_READ_RESP"])
    version_ok = pkt[P["CLIO_OFF_VERSION"]] == P["CLIO_VERSION"]
    malformed = (not version_ok or not known
                 or pkt[P["CLIO_OFF_STATUS"]] > P["STATUS_OVER_QUOTA"]
                 or pkt[P["CLIO_OFF_FLAGS"]] & ~(P["FLAG_FIXED_VA"] | P["FLAG_MOVED"] | P["FLAG_DUPLICATE"]) & 0xFF
                 or plen > P["CLIO_MAX_PAYLOAD"]
                 or (slice_op and offset + plen > total_len)
                 or va + total_len >= 2**64)
    return dict(short=short, crc=bad_crc and not short, malformed=bool(malformed), opcode=op,
                unknown_op=version_ok and not known,
                session=struct.unpack_from(">H", pkt, P["CLIO_OFF_SESSION"])[0],
                epoch=struct.unpack_from(">I", pkt, P["CLIO_OFF_EPOCH"])[0],
                key=struct.unpack_from(">Q", pkt, P["CLIO_OFF_KEY"])[0],
                ack=struct.unpack_from(">I", pkt, P["CLIO_OFF_ACK"])[0],
                pid=struct.unpack_from(">I", pkt, P["CLIO_OFF_PID"])[0],
                req_id=struct.unpack_from(">I", pkt, P["CLIO_OFF_REQ_ID"])[0],
                va=va, plen=plen, request=op in REQUESTS, cls=CLASS.get(op, 0), length=len(pkt))


def random_packet(rng):
    op = rng.choice(REQUESTS + [P["OP_READ_RESP"], P["OP_OPEN_SESSION_RESP"], 0x55, 0x10])
    plen = rng.choice([0, 1, 8, 16, 23, 24, 25, 88, 100, 1450])
    total = rng.choice([plen, plen + rng.randrange(0, 5000)])
    off = rng.randrange(0, max(1, total - plen + 1)) if rng.random() < 0.9 else total
    pkt = bytearray(clio_header(op, pid=rng.getrandbits(32), req_id=rng.getrandbits(32),
                                retry_of=rng.getrandbits(32) if rng.random() < 0.2 else 0,
                                va=rng.getrandbits(50) if rng.random() < 0.95 else 2**64 - 3,
                                total_len=total, offset=off,
                                payload=bytes(rng.getrandbits(8) for _ in range(plen)),
                                flags=rng.choice([0, 0, 0, 1, 0x40]),
                                status=0 if rng.random() < 0.9 else rng.choice([11, 12]),
                                session=rng.getrandbits(16), epoch=rng.getrandbits(32),
                                key=rng.getrandbits(64), ack=rng.getrandbits(32),
                                version=None if rng.random() < 0.95 else 1))
    r = rng.random()
    if r < 0.15:  # corrupt a byte (header or payload)
        i = rng.randrange(len(pkt))
        pkt[i] ^= 1 << rng.randrange(8)
    elif r < 0.2:  # truncate
        pkt = pkt[:rng.randrange(P["CLIO_HEADER_LEN"], len(pkt) + 1)] if len(pkt) > P["CLIO_HEADER_LEN"] else pkt
    elif r < 0.3:  # Ethernet-style padding after the payload is not covered
        pkt += bytes(rng.randrange(1, 20))
    return bytes(pkt)


async def run(dut, packets, pause):
    start_clock(dut)
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    dut.m_axis_tready.value = 1
    await reset(dut)
    if pause:
        source.set_pause_generator(iter(lambda: random.random() < 0.3, None))
    got = []
    beats_seen = 0
    cycles = 0
    rng = random.Random(7)

    async def monitor():
        nonlocal beats_seen, cycles
        while True:
            await RisingEdge(dut.clk)
            cycles += 1
            if dut.m_axis_tvalid.value and dut.m_axis_tready.value:
                beats_seen += 1
                if dut.m_axis_tlast.value:
                    got.append(dict(short=bool(dut.m_err_short.value), crc=bool(dut.m_err_crc.value),
                                    malformed=bool(dut.m_err_malformed.value),
                                    opcode=int(dut.m_hdr_opcode.value),
                                    unknown_op=bool(dut.m_err_unknown_op.value),
                                    session=int(dut.m_hdr_session.value), epoch=int(dut.m_hdr_epoch.value),
                                    key=int(dut.m_hdr_key.value), ack=int(dut.m_hdr_ack.value),
                                    pid=int(dut.m_hdr_pid.value),
                                    req_id=int(dut.m_hdr_req_id.value), va=int(dut.m_hdr_va.value),
                                    plen=int(dut.m_hdr_payload_len.value),
                                    request=bool(dut.m_opcode_request.value), cls=int(dut.m_class.value),
                                    length=int(dut.m_pkt_len.value)))
            dut.m_axis_tready.value = 1 if not pause else int(rng.random() < 0.7)

    cocotb.start_soon(monitor())
    for p in packets:
        await source.send(AxiStreamFrame(p))
    while len(got) < len(packets):
        await RisingEdge(dut.clk)
    return got, beats_seen


@cocotb.test()
async def golden_and_random(dut):
    """The wire crate's golden packet passes; random and damaged packets get the oracle's verdict."""
    # Golden packet of host-sdk/wire/src/clio.rs (its first 52 bytes).
    golden = clio_header(P["OP_WRITE"], pid=0x01020304, req_id=7, va=0x0000123456789000,
                         total_len=3000, offset=1450, payload=b"abcd", session=0x0a0b,
                         epoch=0x11223344, key=0x0102030405060708, ack=5)
    assert golden[:52] == bytes([
        2, 0x04, 0, 0, 1, 2, 3, 4, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0x90,
        0x00, 0, 0, 0x0b, 0xb8, 0, 0, 0x05, 0xaa, 0, 4, 0x0a, 0x0b, 0x11, 0x22, 0x33, 0x44, 1,
        2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 5])
    rng = random.Random(int(cocotb.RANDOM_SEED))
    packets = [golden] + [random_packet(rng) for _ in range(300)]
    got, _ = await run(dut, packets, pause=True)
    for i, (p, g) in enumerate(zip(packets, got)):
        e = expect(p)
        if e["short"] or e["crc"]:
            # Field values are only meaningful when the packet is intact.
            assert (g["short"], g["crc"]) == (e["short"], e["crc"]), f"packet {i}: {g} vs {e}"
            continue
        assert g == e, f"packet {i}: got {g} want {e}"
    assert not any(got[0][k] for k in ("short", "crc", "malformed"))


@cocotb.test()
async def one_beat_per_cycle(dut):
    """II = 1: 10 000 back-to-back single-beat requests, no backpressure, not one stall."""
    n = 10000
    packets = [clio_header(P["OP_READ"], pid=5, req_id=i + 1, va=0x400000 + 8 * i, total_len=8)
               for i in range(n)]
    start_clock(dut)
    dut.m_axis_tready.value = 1
    dut.s_axis_tvalid.value = 0
    await reset(dut)
    stalls = 0
    for i, p in enumerate(packets):
        dut.s_axis_tdata.value = int.from_bytes(p, "little")
        dut.s_axis_tkeep.value = (1 << len(p)) - 1
        dut.s_axis_tlast.value = 1
        dut.s_axis_tvalid.value = 1
        await RisingEdge(dut.clk)
        if not dut.s_axis_tready.value:
            stalls += 1
    dut.s_axis_tvalid.value = 0
    assert stalls == 0, f"{stalls} stalls in {n} cycles"
    dut._log.info("II=1: %d beats accepted in %d consecutive cycles, 0 stalls", n, n)

"""edm_clio_chain against edm-clio's model (`unpack_answer`): for every random
answer (READ answer chains and inbox records; stale, cut short, with a length
prefix overwritten, with bytes after the terminator, with a bad record header)
the frames on the C2H stream, byte for byte, and the outcome (ok, frees the
slot), with random back-pressure and a memory port shared with random other
users; and it never reads past the answer."""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, ReadOnly

from edm_clio_tb import keep_bytes, vectors
from tb_base import rng as seeded, start

WORDS = 1024


def parse(path):
    out = []
    with open(path) as f:
        for line in f:
            op = line.split()
            if not op or op[0] != "A":
                continue
            record, seq, n = int(op[1]), int(op[2]), int(op[3])
            data = bytes.fromhex(op[4]) if op[4] != "-" else b""
            assert len(data) == n
            ok, frees, k = int(op[5]), int(op[6]), int(op[7])
            packets = [bytes.fromhex(p) for p in op[8 : 8 + k]]
            out.append((record, seq, data, ok, frees, packets))
    return out


@cocotb.test()
async def matches_the_model(dut):
    vecs = parse(vectors("EDM_CLIO_CHAIN_VECTORS", "edm-clio-chain-vectors"))
    rng = seeded()
    await start(dut, idle=("start", "m_axis_tready"), cycles=2, mem_gnt=1)
    total_packets = 0
    bad = 0
    for i, (record, seq, data, ok, frees, packets) in enumerate(vecs):
        base = rng.randrange(0, 64)
        words = (len(data) + 7) // 8
        padded = data + bytes(rng.randrange(256) for _ in range(words * 8 - len(data) + 16))
        assert base + words + 2 <= WORDS
        for w in range(words + 2):
            dut.mem[base + w].value = int.from_bytes(padded[8 * w : 8 * w + 8], "little")
        await FallingEdge(dut.clk)
        dut.start.value = 1
        dut.start_record.value = record
        dut.start_word.value = base
        # A record's bytes are what arrived in the inbox slot.
        dut.start_bytes.value = len(data)
        dut.start_seq.value = seq
        await FallingEdge(dut.clk)
        dut.start.value = 0
        frames, cur, outcome = [], b"", None
        for _ in range(20000):
            # Drive tready in the middle of a cycle; read the handshake the next
            # rising edge will make once everything settled.
            await FallingEdge(dut.clk)
            dut.m_axis_tready.value = int(rng.random() < 0.7)
            dut.mem_gnt.value = int(rng.random() < 0.8)
            await ReadOnly()
            if dut.m_axis_tvalid.value and dut.m_axis_tready.value:
                cur += keep_bytes(dut.m_axis_tdata.value, dut.m_axis_tkeep.value, f"answer {i}")
                if dut.m_axis_tlast.value:
                    frames.append(cur)
                    cur = b""
            if dut.done.value:
                assert outcome is None, f"answer {i}: done twice"
                outcome = (int(dut.done_ok.value), int(dut.done_frees.value))
            if outcome is not None and not dut.busy.value and not (
                dut.m_axis_tvalid.value and not dut.m_axis_tready.value
            ):
                break
        else:
            raise AssertionError(f"answer {i}: no end (frames so far {len(frames)})")
        await RisingEdge(dut.clk)
        assert cur == b"", f"answer {i}: a frame without its last beat"
        want_words = words if not record else None
        reads = int(dut.reads.value)
        if want_words is not None:
            assert reads <= want_words, f"answer {i}: read {reads} words of {want_words}"
        else:
            assert reads <= max(1, words), f"answer {i}: read {reads} words of a {words}-word record"
        assert outcome == (ok, frees), f"answer {i} (record {record}, {len(data)} B): RTL (ok, frees) {outcome}, model {(ok, frees)}"
        assert frames == packets, (
            f"answer {i} (record {record}, {len(data)} B): RTL frames {[f.hex() for f in frames]}, "
            f"model {[p.hex() for p in packets]}"
        )
        total_packets += len(packets)
        bad += int(not ok)
    dut._log.info(
        "edm_clio_chain: %d answers (%d bad) and their %d packets matched the model",
        len(vecs), bad, total_packets,
    )


@cocotb.test()
async def one_word_per_cycle(dut):
    """Throughput of the return stage, measured: a READ's answer chain of 7 answers of
    568 bytes (a Clio header and 512 bytes of data each, 500 words) with C2H always
    ready and the memory port always granted; cycles from start to done per word of
    the chain (the stage's rate; C2H takes at most a beat per cycle)."""
    await start(dut, idle=("start", "m_axis_tready"), cycles=2, mem_gnt=1)
    packets = [bytes((7 * i + j) & 0xFF for j in range(56 + 512)) for i in range(7)]
    seq = 0x1234
    chain = seq.to_bytes(4, "little")
    for p in packets:
        chain += len(p).to_bytes(2, "little") + p
    chain += b"\0\0"
    words = (len(chain) + 7) // 8
    padded = chain.ljust(words * 8, b"\0")
    for w in range(words):
        dut.mem[w].value = int.from_bytes(padded[8 * w : 8 * w + 8], "little")
    await FallingEdge(dut.clk)
    dut.m_axis_tready.value = 1
    dut.mem_gnt.value = 1
    dut.start.value = 1
    dut.start_record.value = 0
    dut.start_word.value = 0
    dut.start_bytes.value = len(chain)
    dut.start_seq.value = seq
    await FallingEdge(dut.clk)
    dut.start.value = 0
    frames, cur, cycles, beats = [], b"", 1, 0
    while True:
        await ReadOnly()
        if dut.m_axis_tvalid.value and dut.m_axis_tready.value:
            beats += 1
            cur += keep_bytes(dut.m_axis_tdata.value, dut.m_axis_tkeep.value, "the chain")
            if dut.m_axis_tlast.value:
                frames.append(cur)
                cur = b""
        if dut.done.value:
            break
        assert cycles < 10 * words, f"no done after {cycles} cycles"
        await FallingEdge(dut.clk)
        cycles += 1
    assert frames == packets, "the frames are not the chain's packets"
    per_word = cycles / words
    dut._log.info(
        "edm_clio_chain throughput: %d words (%d B chain, %d C2H beats) in %d cycles: "
        "%.3f cycles per answer word", words, len(chain), beats, cycles, per_word,
    )
    # One word per cycle, plus a cycle per packet's length prefix and the start.
    assert per_word <= 1.05, f"{per_word:.3f} cycles per answer word: the reads are not pipelined"

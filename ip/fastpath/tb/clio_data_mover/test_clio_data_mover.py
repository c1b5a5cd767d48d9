"""clio_data_mover: byte ranges read and written in INCR bursts against a cocotbext-axi RAM.

Random ranges (any start lane, 1 byte to 9 KiB, across 4 KiB boundaries): the read stream
must be the range's bytes in order, a write must change exactly the range; no burst may
cross a 4 KiB boundary. Under random pauses of every channel (and of the read consumer)
the results stay the same; without pauses each burst moves one beat per cycle. Read commands
queued back to back (read ahead) stream their beats without a gap between commands, each
marked command's last beat carries the mark, and a write waits for the reads before it.
Write commands given back to back are taken while earlier Bs are outstanding (the next
burst's AW before the previous B), `done` comes once per command with its last B, in
command order, and a read is not issued while a B is outstanding."""

import logging
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiRam

from tb_base import falling, param, reset, start_clock

SIZE = 2**16
INPUTS = ["s_cmd_addr", "s_cmd_len", "s_cmd_write", "s_cmd_mark", "s_cmd_valid", "m_rd_ready", "s_wr_data"]


def pauses(rng, p):
    """A pause generator: stall a channel with probability p per cycle."""
    while True:
        yield rng.random() < p


async def setup(dut, rng=None, p=0.0):
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.m_axi").setLevel(logging.WARNING)
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=SIZE)
    if rng is not None and p > 0:
        for ch in (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel,
                   ram.read_if.ar_channel, ram.read_if.r_channel):
            ch.set_pause_generator(pauses(rng, p))
    for name in INPUTS:
        getattr(dut, name).value = 0
    await reset(dut)
    return ram


async def watch_bursts(dut, bursts):
    """Record every AR and AW handshake as (address, beats) and check the 4 KiB rule."""
    width = param(dut, "DATA_WIDTH") // 8
    while True:
        await RisingEdge(dut.clk)
        for ch in ("ar", "aw"):
            if getattr(dut, f"m_axi_{ch}valid").value and getattr(dut, f"m_axi_{ch}ready").value:
                addr = int(getattr(dut, f"m_axi_{ch}addr").value)
                beats = int(getattr(dut, f"m_axi_{ch}len").value) + 1
                assert addr % width == 0, f"{ch} address {addr:#x} not beat-aligned"
                assert addr // 4096 == (addr + beats * width - 1) // 4096, \
                    f"{ch} burst {addr:#x} x {beats} crosses 4 KiB"
                bursts.append((ch, addr, beats))


async def run(dut, addr, length, write, src=b"", rng=None, ready_p=0.0):
    """One command; returns (bytes read or None, cycles from command to done)."""
    width = param(dut, "DATA_WIDTH") // 8
    await falling(dut)
    dut.s_cmd_addr.value, dut.s_cmd_len.value = addr, length
    dut.s_cmd_write.value, dut.s_cmd_valid.value = int(write), 1
    got, pos, n, taken = bytearray(), 0, 0, False
    while True:
        if taken:
            await falling(dut)
            dut.s_cmd_valid.value = 0
        window = src[pos:pos + width].ljust(width, b"\0") if write else bytes(width)
        dut.s_wr_data.value = int.from_bytes(window, "little")
        dut.m_rd_ready.value = int(rng is None or rng.random() >= ready_p)
        await ReadOnly()
        if not taken:
            taken = bool(dut.s_cmd_ready.value)
        if dut.m_rd_valid.value and dut.m_rd_ready.value:
            k = int(dut.m_rd_len.value)
            assert 1 <= k <= width
            got += int(dut.m_rd_data.value).to_bytes(width, "little")[:k]
        if dut.m_wr_take_valid.value:
            pos += int(dut.m_wr_take.value)
        done = bool(dut.m_done.value)
        await RisingEdge(dut.clk)
        n += 1
        if done:
            break
        if not taken:
            await falling(dut)
    if write:
        assert pos == length, f"write took {pos} of {length} source bytes"
        return None, n
    return bytes(got), n


async def random_ranges(dut, p, count, seed):
    width = param(dut, "DATA_WIDTH") // 8
    rng = random.Random(seed)
    count = count * width // 64  # narrower beats: more of them per range, fewer ranges
    ram = await setup(dut, rng, p)
    bursts = []
    cocotb.start_soon(watch_bursts(dut, bursts))
    mem = bytearray(rng.getrandbits(8) for _ in range(SIZE))
    ram.write(0, bytes(mem))
    for i in range(count):
        length = rng.choice([1, 2, 7, 8, width - 1, width, width + 1, 64, 512, 1024, 4096,
                             rng.randrange(1, 9216)])
        addr = rng.randrange(0, SIZE - length)
        if rng.random() < 0.3:
            addr = (rng.randrange(1, SIZE // 4096) * 4096 - rng.randrange(0, min(length, 200)))
            addr = max(0, min(addr, SIZE - length))
        if rng.random() < 0.5:
            src = bytes(rng.getrandbits(8) for _ in range(length))
            await run(dut, addr, length, True, src, rng, p)
            mem[addr:addr + length] = src
        else:
            got, _ = await run(dut, addr, length, False, rng=rng, ready_p=p)
            assert got == bytes(mem[addr:addr + length]), f"command {i}: read {addr:#x}+{length}"
    assert ram.read(0, SIZE) == bytes(mem), "memory differs after the writes"
    assert bursts, "no burst seen"


@cocotb.test()
async def ranges(dut):
    """Random reads and writes, no pauses."""
    await random_ranges(dut, 0.0, 120, int(cocotb.RANDOM_SEED))


@cocotb.test()
async def ranges_paused(dut):
    """Random reads and writes with every channel and the consumer paused at random."""
    await random_ranges(dut, 0.3, 120, int(cocotb.RANDOM_SEED) + 1)


@cocotb.test()
async def one_beat_per_cycle(dut):
    """Without pauses a 4 KiB aligned range is one burst streamed one beat per cycle:
    command to done within beats + a fixed overhead (AR/AW, RAM latency, B)."""
    width = param(dut, "DATA_WIDTH") // 8
    await setup(dut)
    beats = 4096 // width
    _, rd = await run(dut, 8192, 4096, False)
    _, wr = await run(dut, 8192, 4096, True, bytes(4096))
    dut._log.info("4 KiB: read %d cycles, write %d cycles, %d beats", rd, wr, beats)
    assert rd <= beats + 8, f"read took {rd} cycles for {beats} beats"
    assert wr <= beats + 8, f"write took {wr} cycles for {beats} beats"


async def queued(dut, cmds, rng=None, p=0.0):
    """Issue read commands back to back (each as soon as the unit takes it) while a consumer
    collects the stream; returns (bytes per command, marks seen per command, cycles from the
    first command to the unit idle again)."""
    width = param(dut, "DATA_WIDTH") // 8
    got = [bytearray() for _ in cmds]
    marks = [0 for _ in cmds]
    state = {"cur": 0, "cycles": 0}

    async def consumer():
        while True:
            await falling(dut)
            dut.m_rd_ready.value = int(rng is None or rng.random() >= p)
            await ReadOnly()
            if dut.m_rd_valid.value and dut.m_rd_ready.value:
                k = int(dut.m_rd_len.value)
                i = state["cur"]
                got[i] += int(dut.m_rd_data.value).to_bytes(width, "little")[:k]
                if dut.m_rd_mark.value:
                    marks[i] += 1
                if dut.m_done.value:
                    state["cur"] += 1
            await RisingEdge(dut.clk)

    async def count():
        while True:
            await RisingEdge(dut.clk)
            state["cycles"] += 1

    task = cocotb.start_soon(consumer())
    counter = cocotb.start_soon(count())
    for addr, length, mark in cmds:
        await falling(dut)
        dut.s_cmd_addr.value, dut.s_cmd_len.value = addr, length
        dut.s_cmd_write.value, dut.s_cmd_mark.value, dut.s_cmd_valid.value = 0, int(mark), 1
        while True:
            await ReadOnly()
            taken = bool(dut.s_cmd_ready.value)
            await RisingEdge(dut.clk)
            if taken:
                break
            await falling(dut)
        await falling(dut)
        dut.s_cmd_valid.value = 0
    while True:
        await ReadOnly()
        idle = bool(dut.m_idle.value)
        await RisingEdge(dut.clk)
        if idle:
            break
    task.cancel()
    counter.cancel()
    dut.m_rd_ready.value = 0
    return got, marks, state["cycles"]


@cocotb.test()
async def read_ahead(dut):
    """Eight 512-byte read commands (a 4 KiB range cut into packets, any start lane) queued
    back to back: every command's bytes and mark are right, and without pauses the beats
    stream at one per cycle across commands (cycles within the beats + a fixed overhead)."""
    width = param(dut, "DATA_WIDTH") // 8
    rng = random.Random(int(cocotb.RANDOM_SEED) + 2)
    ram = await setup(dut)
    mem = bytes(rng.getrandbits(8) for _ in range(SIZE))
    ram.write(0, mem)
    for start in (8192, 8192 + 13, 4096 - 300):
        cmds = [(start + 512 * i, 512, i % 2 == 0) for i in range(8)]
        got, marks, n = await queued(dut, cmds)
        for i, (addr, length, mark) in enumerate(cmds):
            assert bytes(got[i]) == mem[addr:addr + length], f"command {i} at {addr:#x}"
            assert marks[i] == int(mark), f"command {i}: {marks[i]} marks"
        beats = sum((a + ln - 1) // width - a // width + 1 for a, ln, _ in cmds)
        dut._log.info("8 x 512 B from %#x: %d beats in %d cycles", start, beats, n)
        assert n <= beats + 12, f"{beats} beats took {n} cycles"


@cocotb.test()
async def read_ahead_paused(dut):
    """Random queued reads under random pauses of every channel and of the consumer, a write
    after them (it waits for the reads), and a read of what it wrote."""
    rng = random.Random(int(cocotb.RANDOM_SEED) + 3)
    ram = await setup(dut, rng, 0.3)
    mem = bytearray(rng.getrandbits(8) for _ in range(SIZE))
    ram.write(0, bytes(mem))
    for _ in range(6):
        cmds = []
        for _ in range(rng.randrange(1, 7)):
            length = rng.choice([1, 63, 64, 65, 512, rng.randrange(1, 2000)])
            cmds.append((rng.randrange(0, SIZE - length), length, rng.random() < 0.5))
        got, marks, _ = await queued(dut, cmds, rng, 0.3)
        for i, (addr, length, mark) in enumerate(cmds):
            assert bytes(got[i]) == bytes(mem[addr:addr + length]), f"command {i} at {addr:#x}"
            assert marks[i] == int(mark)
        addr, length = rng.randrange(0, SIZE - 700), rng.randrange(1, 700)
        src = bytes(rng.getrandbits(8) for _ in range(length))
        await run(dut, addr, length, True, src, rng, 0.3)
        mem[addr:addr + length] = src
        back, _ = await run(dut, addr, length, False, rng=rng, ready_p=0.3)
        assert back == src
    assert ram.read(0, SIZE) == bytes(mem)


async def watch_b_order(dut, log):
    """Count AW and B handshakes; an AR while a B is outstanding is an error. Logs
    ("aw", outstanding before) and ("b", ...) events."""
    out = 0
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        aw = dut.m_axi_awvalid.value and dut.m_axi_awready.value
        b = dut.m_axi_bvalid.value and dut.m_axi_bready.value
        ar = dut.m_axi_arvalid.value and dut.m_axi_arready.value
        assert not (ar and (out or aw)), f"AR issued with {out} B outstanding"
        if aw:
            log.append(("aw", out))
            out += 1
        if b:
            assert out > 0, "a B with no write outstanding"
            log.append(("b", out))
            out -= 1


async def writes_back_to_back(dut, cmds, then_read=None):
    """Give write commands back to back (each as soon as the unit takes it), the source
    window following each command's bytes in turn, then (`then_read`, (addr, len)) a read
    command right behind them; returns (cycles from the first command to idle, the bytes
    read)."""
    width = param(dut, "DATA_WIDTH") // 8
    state = {"cmd": 0, "pos": 0, "cycles": 0, "dones": 0, "taken": 0}
    got = bytearray()
    total = len(cmds) + (then_read is not None)

    def window():
        i = state["cmd"]
        if i >= len(cmds):
            return 0
        src = cmds[i][2]
        return int.from_bytes(src[state["pos"]:state["pos"] + width].ljust(width, b"\0"), "little")

    await falling(dut)
    dut.s_cmd_write.value, dut.s_cmd_mark.value = 1, 0
    dut.m_rd_ready.value = 1
    i = 0
    while True:
        if i < len(cmds):
            addr, length, _ = cmds[i]
            dut.s_cmd_addr.value, dut.s_cmd_len.value, dut.s_cmd_valid.value = addr, length, 1
        elif i < total:
            dut.s_cmd_addr.value, dut.s_cmd_len.value = then_read
            dut.s_cmd_write.value, dut.s_cmd_valid.value = 0, 1
        else:
            dut.s_cmd_valid.value = 0
        dut.s_wr_data.value = window()
        await ReadOnly()
        if i < total and dut.s_cmd_ready.value:
            i += 1
            if i <= len(cmds):
                state["taken"] += 1
        if dut.m_rd_valid.value:
            got += int(dut.m_rd_data.value).to_bytes(width, "little")[:int(dut.m_rd_len.value)]
        if dut.m_wr_take_valid.value:
            state["pos"] += int(dut.m_wr_take.value)
            assert state["cmd"] < state["taken"], "bytes taken for a command not given"
            if state["pos"] == cmds[state["cmd"]][1]:
                state["cmd"] += 1
                state["pos"] = 0
        if dut.m_done.value:
            state["dones"] += 1
            # A command's done comes with its last B, after all its bytes are taken.
            assert state["dones"] <= state["cmd"] or i > len(cmds), "done before the command's last W beat"
        idle = bool(dut.m_idle.value)
        await RisingEdge(dut.clk)
        state["cycles"] += 1
        if idle and i == total and state["dones"] == total:
            break
        await falling(dut)
    dut.s_cmd_write.value = 0
    return state["cycles"], bytes(got)


@cocotb.test()
async def writes_overlap_b(dut):
    """Eight 512-byte writes back to back with the B delayed (the RAM's B channel paused):
    each next burst's AW is issued while the previous B is outstanding, the memory holds
    every write, one done per command; without pauses the writes stream at one W beat
    per cycle plus one cycle per command (a read after them waits for the last B)."""
    width = param(dut, "DATA_WIDTH") // 8
    rng = random.Random(int(cocotb.RANDOM_SEED) + 4)
    ram = await setup(dut)
    log = []
    watcher = cocotb.start_soon(watch_b_order(dut, log))
    mem = bytearray(SIZE)
    cmds = [(8192 + 512 * i, 512, bytes(rng.getrandbits(8) for _ in range(512))) for i in range(8)]
    n, _ = await writes_back_to_back(dut, cmds)
    for a, ln, src in cmds:
        mem[a:a + ln] = src
    beats = 512 // width
    dut._log.info("8 x 512 B writes: %d cycles (%d W beats)", n, 8 * beats)
    assert n <= 8 * (beats + 1) + 8, f"8 writes of {beats} beats took {n} cycles"
    assert any(ev == "aw" and out > 0 for ev, out in log), "no AW while a B was outstanding"
    # B delayed: pause the B channel, unaligned and page-crossing ranges.
    ram.write_if.b_channel.set_pause_generator(pauses(rng, 0.8))
    log.clear()
    cmds = []
    for _ in range(10):
        length = rng.choice([1, 63, 64, 65, 512, rng.randrange(1, 5000)])
        addr = rng.randrange(0, SIZE - length)
        cmds.append((addr, length, bytes(rng.getrandbits(8) for _ in range(length))))
    await writes_back_to_back(dut, cmds)
    for a, ln, src in cmds:
        mem[a:a + ln] = src
    # (cocotbext-axi's RAM takes the next AW once it has queued the previous B.)
    assert any(ev == "aw" and out > 0 for ev, out in log), "no AW while a delayed B was outstanding"
    # A read given right behind writes of the same bytes: issued only after their Bs (the
    # watcher fails otherwise), and it sees the last write.
    addr, length = cmds[-1][0], cmds[-1][1]
    src = bytes(rng.getrandbits(8) for _ in range(length))
    _, back = await writes_back_to_back(dut, [(addr, length, bytes(length)), (addr, length, src)], (addr, length))
    mem[addr:addr + length] = src
    assert back == src
    watcher.cancel()
    assert ram.read(0, SIZE) == bytes(mem)

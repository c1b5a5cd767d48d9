"""clio_fp_regs against the register map of the wire crate (FPREG_* of the
generated clio_pkg.sv, from host-sdk/wire/src/fpregs.rs): every configuration
register written through AXI-Lite (random values, random byte strobes,
random back-pressure) lands on its cfg_* output and reads back; ID and
VERSION read the crate's values; unmapped offsets and writes to read-only
registers answer SLVERR (reads return 0) and change nothing; the doorbell
pulses `poll` for exactly one cycle, not while CONTROL.RESET is set; STATUS
and POLL_COUNT follow the fast path; RX_DROPS and TX_DROPS count the UDP
layer's drop pulses and are cleared by `rst` only."""

import logging
import random

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from clio_tb import PKG as P
from tb_base import start_clock
from zcu_tb import OKAY, SLVERR, axil_read, axil_write, pause_channels, pulse_reset


# name -> cfg output (bits come from the package).
CFG = {
    "TABLE_BASE": "cfg_table_base", "RX_BASE": "cfg_rx_base", "TX_BASE": "cfg_tx_base",
    "RX_SLOTS": "cfg_rx_slots", "TX_SLOTS": "cfg_tx_slots", "DATA_START": "cfg_data_start",
    "DATA_END": "cfg_data_end", "VA_BITS": "cfg_va_bits", "CLASS_SHIFT": "cfg_class_shift",
    "MAX_PID": "cfg_max_pid", "MTU": "cfg_mtu", "INFO": "cfg_info",
    "MAC": "cfg_mac", "IPV4": "cfg_ipv4", "UDP_PORT": "cfg_udp_port",
}
RO = ["ID", "VERSION", "STATUS", "POLL_COUNT", "RX_DROPS", "TX_DROPS"]


def words(name):
    return (P[f"FPREG_{name}_BITS"] + 31) // 32


def mapped():
    """Every mapped word offset of the package's register list."""
    out = set()
    for k in P:
        if k.startswith("FPREG_") and f"{k}_BITS" in P:
            name = k[len("FPREG_"):]
            out |= {P[k] + 4 * i for i in range(words(name))}
    return out


async def setup(dut, seed):
    rng = random.Random(seed)
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.s_axil").setLevel(logging.WARNING)
    m = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    pause_channels(m, rng, 0.3)
    dut.poll_done.value = 0
    dut.idle.value = 0
    dut.link_up.value = 0
    dut.rx_overflow.value = 0
    dut.rx_drop.value = 0
    dut.tx_drop.value = 0
    await pulse_reset(dut)
    return rng, m




@cocotb.test()
async def identity(dut):
    _, m = await setup(dut, 1)
    assert await axil_read(m, P["FPREG_ID"]) == (P["FPREGS_ID"], OKAY)
    assert await axil_read(m, P["FPREG_VERSION"]) == (P["FPREGS_VERSION"], OKAY)
    assert P["FPREGS_ID"].to_bytes(4, "little") == b"CLFP"
    # Out of reset the fast path is held in reset.
    assert await axil_read(m, P["FPREG_CONTROL"]) == (P["FPREG_CONTROL_RESET"], OKAY)
    assert int(dut.fp_rst.value) == 1


@cocotb.test()
async def config_lands_on_outputs(dut):
    rng, m = await setup(dut, 2)
    ref = {n: 0 for n in CFG}
    for _ in range(6):
        for name, port in CFG.items():
            bits = P[f"FPREG_{name}_BITS"]
            for w in range(words(name)):
                off = P[f"FPREG_{name}"] + 4 * w
                val = rng.getrandbits(32)
                strb = rng.choice([0xF, 0xF, rng.randrange(1, 16)])
                assert await axil_write(m, off, val, strb) == OKAY, name
                word = (ref[name] >> (32 * w)) & 0xFFFFFFFF
                for b in range(4):
                    if strb >> b & 1:
                        word = (word & ~(0xFF << 8 * b)) | (val & (0xFF << 8 * b))
                ref[name] = (ref[name] & ~(0xFFFFFFFF << 32 * w)) | (word << 32 * w)
                ref[name] &= (1 << bits) - 1
        await RisingEdge(dut.clk)
        for name, port in CFG.items():
            assert int(getattr(dut, port).value) == ref[name], f"{port}: {int(getattr(dut, port).value):#x} != {ref[name]:#x}"
            for w in range(words(name)):
                got = await axil_read(m, P[f"FPREG_{name}"] + 4 * w)
                assert got == ((ref[name] >> 32 * w) & 0xFFFFFFFF, OKAY), (name, w, got)


@cocotb.test()
async def errors(dut):
    """Unmapped offsets: SLVERR, read 0. Read-only registers: write SLVERR, value kept."""
    rng, m = await setup(dut, 3)
    holes = [o for o in range(0, 1 << 12, 4) if o not in mapped()]
    assert len(holes) > 900
    for off in rng.sample(holes, 40) + [P["FPREGS_BLOCK_LEN"], P["FPREG_INFO"] + 4 * words("INFO")]:
        assert await axil_read(m, off) == (0, SLVERR), hex(off)
        assert await axil_write(m, off, rng.getrandbits(32)) == SLVERR, hex(off)
    for name in RO:
        before = await axil_read(m, P[f"FPREG_{name}"])
        assert await axil_write(m, P[f"FPREG_{name}"], 0xDEADBEEF) == SLVERR, name
        assert await axil_read(m, P[f"FPREG_{name}"]) == before, name
    # DOORBELL is write-only: it reads 0, OKAY.
    assert await axil_read(m, P["FPREG_DOORBELL"]) == (0, OKAY)


@cocotb.test()
async def doorbell_and_status(dut):
    _, m = await setup(dut, 4)
    pulses = []

    async def count_poll():
        while True:
            await RisingEdge(dut.clk)
            if int(dut.poll.value):
                pulses.append(cocotb.utils.get_sim_time("ns"))

    cocotb.start_soon(count_poll())
    busy = 1 << P["FPREG_STATUS_BIT_POLL_BUSY"]
    in_reset = 1 << P["FPREG_STATUS_BIT_IN_RESET"]
    # Held in reset: the doorbell is ignored.
    assert await axil_write(m, P["FPREG_DOORBELL"], P["FPREG_DOORBELL_RING"]) == OKAY
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert pulses == []
    st, _ = await axil_read(m, P["FPREG_STATUS"])
    assert st & in_reset and not st & busy
    # Release and ring: one pulse, POLL_BUSY until poll_done.
    assert await axil_write(m, P["FPREG_CONTROL"], 0) == OKAY
    assert int(dut.fp_rst.value) == 0
    assert await axil_write(m, P["FPREG_DOORBELL"], P["FPREG_DOORBELL_RING"]) == OKAY
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert len(pulses) == 1, pulses
    st, _ = await axil_read(m, P["FPREG_STATUS"])
    assert st & busy and not st & in_reset
    # A write without bit 0 does not ring.
    assert await axil_write(m, P["FPREG_DOORBELL"], 0xFFFFFFFE) == OKAY
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert len(pulses) == 1
    dut.poll_done.value = 1
    await RisingEdge(dut.clk)
    dut.poll_done.value = 0
    st, _ = await axil_read(m, P["FPREG_STATUS"])
    assert not st & busy
    assert await axil_read(m, P["FPREG_POLL_COUNT"]) == (1, OKAY)
    # Status inputs.
    for idle in (0, 1):
        for link in range(4):
            dut.idle.value = idle
            dut.link_up.value = link
            await RisingEdge(dut.clk)
            st, _ = await axil_read(m, P["FPREG_STATUS"])
            assert (st >> P["FPREG_STATUS_BIT_IDLE"]) & 1 == idle
            assert (st >> P["FPREG_STATUS_BIT_LINK0_UP"]) & 1 == link & 1
            assert (st >> P["FPREG_STATUS_BIT_LINK1_UP"]) & 1 == link >> 1
    # RX overflow is sticky until CONTROL.RESET.
    ovf = 1 << P["FPREG_STATUS_BIT_RX_OVERFLOW"]
    dut.rx_overflow.value = 1
    await RisingEdge(dut.clk)
    dut.rx_overflow.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk)
    st, _ = await axil_read(m, P["FPREG_STATUS"])
    assert st & ovf
    assert await axil_write(m, P["FPREG_CONTROL"], P["FPREG_CONTROL_RESET"]) == OKAY
    st, _ = await axil_read(m, P["FPREG_STATUS"])
    assert not st & ovf and st & in_reset
    assert int(dut.fp_rst.value) == 1


@cocotb.test()
async def drop_counters(dut):
    """RX_DROPS / TX_DROPS count their pulses (also while the fast path is held
    in reset), independently, and `rst` clears them."""
    rng, m = await setup(dut, 5)
    want = {"rx_drop": 0, "tx_drop": 0}
    for _ in range(200):
        for sig in want:
            v = int(rng.random() < 0.4)
            getattr(dut, sig).value = v
            want[sig] += v
        await RisingEdge(dut.clk)
    dut.rx_drop.value = 0
    dut.tx_drop.value = 0
    await RisingEdge(dut.clk)
    assert want["rx_drop"] != want["tx_drop"]
    assert await axil_read(m, P["FPREG_RX_DROPS"]) == (want["rx_drop"], OKAY)
    assert await axil_read(m, P["FPREG_TX_DROPS"]) == (want["tx_drop"], OKAY)
    # CONTROL.RESET does not clear them; rst does.
    assert await axil_write(m, P["FPREG_CONTROL"], 0) == OKAY
    assert await axil_write(m, P["FPREG_CONTROL"], P["FPREG_CONTROL_RESET"]) == OKAY
    assert await axil_read(m, P["FPREG_RX_DROPS"]) == (want["rx_drop"], OKAY)
    await pulse_reset(dut)
    assert await axil_read(m, P["FPREG_RX_DROPS"]) == (0, OKAY)
    assert await axil_read(m, P["FPREG_TX_DROPS"]) == (0, OKAY)


@cocotb.test()
async def read_streams_reaches_the_port_and_changes_only_while_held(dut):
    """CONTROL.READ_STREAMS drives cfg_streams_on. The release write carries
    it; while the fast path runs a CONTROL write keeps it (the fast path takes
    it as static); a write that holds the fast path sets it anew; rst clears it."""
    _, m = await setup(dut, 6)
    rs = P["FPREG_CONTROL_READ_STREAMS"]
    reset = P["FPREG_CONTROL_RESET"]
    assert rs != 0 and rs & reset == 0
    assert int(dut.cfg_streams_on.value) == 0

    async def check(control, fp_rst, streams):
        await RisingEdge(dut.clk)
        assert await axil_read(m, P["FPREG_CONTROL"]) == (control, OKAY)
        assert int(dut.fp_rst.value) == fp_rst
        assert int(dut.cfg_streams_on.value) == streams

    # Release with streams on (the firmware's last boot write).
    assert await axil_write(m, P["FPREG_CONTROL"], rs) == OKAY
    await check(rs, 0, 1)
    # Running: a write without RESET keeps the streams bit either way.
    assert await axil_write(m, P["FPREG_CONTROL"], 0) == OKAY
    await check(rs, 0, 1)
    # Holding the fast path takes the bit from the same write.
    assert await axil_write(m, P["FPREG_CONTROL"], reset) == OKAY
    await check(reset, 1, 0)
    assert await axil_write(m, P["FPREG_CONTROL"], reset | rs) == OKAY
    await check(reset | rs, 1, 1)
    # Release with streams off.
    assert await axil_write(m, P["FPREG_CONTROL"], 0) == OKAY
    await check(0, 0, 0)
    assert await axil_write(m, P["FPREG_CONTROL"], rs) == OKAY
    await check(0, 0, 0)
    # Held again, streams on; rst clears it (and holds).
    assert await axil_write(m, P["FPREG_CONTROL"], reset | rs) == OKAY
    await check(reset | rs, 1, 1)
    await pulse_reset(dut)
    await check(reset, 1, 0)

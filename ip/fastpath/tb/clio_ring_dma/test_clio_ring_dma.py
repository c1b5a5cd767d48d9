"""clio_ring_dma against the ring protocol of the wire crate: RX pushes with CRC, head and doorbell,
full ring refused; TX pops over many laps with corrupt slots counted in `rejected`; empty ring and
corrupt head reported."""

import logging
import random
import struct

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiBus, AxiRam

from clio_tb import PKG as P, crc32c, reset, start_clock

RX, TX = 0x1000, 0x4000
RX_SLOTS, TX_SLOTS = 4, 8
PUSH, PROBE, POP = 0, 1, 2


def init_ring(ram, base, slots):
    h = bytearray(P["RING_HEADER_LEN"])
    struct.pack_into("<IHHI", h, 0, P["RING_MAGIC"], P["RING_VERSION"], P["RING_SLOT_LEN"], slots)
    ram.write(base, bytes(h))


def u32(ram, addr):
    return struct.unpack("<I", ram.read(addr, 4))[0]


def free_pa_push(shift, ppn):
    s = bytearray(P["RING_SLOT_LEN"])
    s[P["SLOT_OFF_KIND"]] = P["DESC_FREE_PA_PUSH"]
    s[P["SLOT_OFF_PAGE_SHIFT"]] = shift
    struct.pack_into("<Q", s, P["SLOT_OFF_B"], ppn)
    struct.pack_into("<I", s, P["SLOT_OFF_CRC"], crc32c(bytes(s[:P["SLOT_OFF_CRC"]])))
    return s


def fix_crc(s):
    struct.pack_into("<I", s, P["SLOT_OFF_CRC"], crc32c(bytes(s[:P["SLOT_OFF_CRC"]])))
    return s


async def setup(dut):
    start_clock(dut)
    logging.getLogger(f"cocotb.{dut._name}.m_axi").setLevel(logging.WARNING)
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=2**16)
    init_ring(ram, RX, RX_SLOTS)
    init_ring(ram, TX, TX_SLOTS)
    dut.rx_base.value, dut.rx_slots.value = RX, RX_SLOTS
    dut.tx_base.value, dut.tx_slots.value = TX, TX_SLOTS
    dut.cmd_valid.value = 0
    await reset(dut)
    return ram


async def op(dut, cmd, desc=b""):
    dut.cmd.value = cmd
    dut.s_rx_desc.value = int.from_bytes(bytes(desc).ljust(64, b"\0"), "little")
    dut.cmd_valid.value = 1
    await RisingEdge(dut.clk)
    dut.cmd_valid.value = 0
    for _ in range(200):
        await RisingEdge(dut.clk)
        if dut.done.value:
            return dict(full=int(dut.res_full.value), free=int(dut.res_free.value), empty=int(dut.res_empty.value),
                        bad_head=int(dut.res_bad_head.value), rejected=int(dut.res_rejected.value),
                        desc=int(dut.m_tx_desc.value).to_bytes(64, "little"))
    raise AssertionError("ring command never completed")


@cocotb.test()
async def rx_push(dut):
    """Pushes land in successive slots with a valid CRC; head/doorbell advance; full refuses."""
    ram = await setup(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    tail = 0
    pushed = 0
    for _ in range(30):
        if rng.random() < 0.3 and tail < pushed:
            tail += rng.randrange(1, pushed - tail + 1)  # the ARM consumes
            ram.write(RX + P["RING_OFF_TAIL"], struct.pack("<I", tail))
        desc = bytes([P["DESC_PA_CONSUMED"]]) + bytes(rng.getrandbits(8) for _ in range(59))
        full = pushed - tail >= RX_SLOTS
        probe = await op(dut, PROBE)
        assert probe["full"] == full
        assert probe["free"] == RX_SLOTS - (pushed - tail)
        r = await op(dut, PUSH, desc)
        assert r["full"] == full
        if full:
            assert u32(ram, RX + P["RING_OFF_HEAD"]) == pushed
            continue
        img = ram.read(RX + P["RING_HEADER_LEN"] + (pushed % RX_SLOTS) * P["RING_SLOT_LEN"], P["RING_SLOT_LEN"])
        pushed += 1
        assert r["free"] == RX_SLOTS - (pushed - tail)
        assert img[:60] == desc[:60]
        assert struct.unpack_from("<I", img, 60)[0] == crc32c(img[:60])
        assert u32(ram, RX + P["RING_OFF_HEAD"]) == pushed
        assert u32(ram, RX + P["RING_OFF_DOORBELL"]) == pushed
    assert pushed > 8


@cocotb.test()
async def tx_pop(dut):
    """Descriptors come out in order over many laps; corrupt ones are consumed and counted."""
    ram = await setup(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED) + 1)
    head = tail = bad = 0
    for lap in range(6):
        batch = []
        for _ in range(rng.randrange(1, TX_SLOTS + 1)):
            img = free_pa_push(rng.choice([12, 21, 22]), rng.getrandbits(32))
            r = rng.random()
            if r < 0.15:
                img[10] ^= 4  # CRC mismatch
            elif r < 0.2:
                img[P["SLOT_OFF_KIND"]] = P["DESC_PA_CONSUMED"]  # RX kind on the TX ring
                fix_crc(img)
            elif r < 0.25:
                img[P["SLOT_OFF_PID"]] = 1  # a byte FREE_PA_PUSH does not use
                fix_crc(img)
            batch.append((bytes(img), r >= 0.25))
            ram.write(TX + P["RING_HEADER_LEN"] + (head % TX_SLOTS) * P["RING_SLOT_LEN"], bytes(img))
            head += 1
        ram.write(TX + P["RING_OFF_HEAD"], struct.pack("<I", head))
        for img, ok in batch:
            r = await op(dut, POP)
            assert not r["empty"] and not r["bad_head"]
            assert r["rejected"] == (not ok)
            if ok:
                assert r["desc"] == img
            bad += not ok
            tail += 1
            assert u32(ram, TX + P["RING_OFF_TAIL"]) == tail
        assert (await op(dut, POP))["empty"] == 1, f"lap {lap}"
    assert u32(ram, TX + P["RING_OFF_REJECTED"]) == bad and bad > 0
    ram.write(TX + P["RING_OFF_HEAD"], struct.pack("<I", head + TX_SLOTS + 1))
    r = await op(dut, POP)
    assert r["bad_head"] == 1
    assert u32(ram, TX + P["RING_OFF_TAIL"]) == tail

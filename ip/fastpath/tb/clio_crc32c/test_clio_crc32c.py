"""clio_crc32c: bit-exact against a bitwise Python CRC32C for every keep length (0..W bytes) on random
data and random running CRCs, with the invalid lanes holding random bytes; the oracle itself is checked
against the wire crate's CRC32C check value."""

import random

import cocotb
from cocotb.triggers import Timer

from clio_tb import crc32c


async def settle(dut, crc_in, data, keep):
    dut.crc_in.value = crc_in
    dut.data.value = data
    dut.keep.value = keep
    await Timer(1, unit="ns")
    return int(dut.crc_out.value)


@cocotb.test()
async def oracle_check_value(dut):
    """The Python oracle gives the standard CRC32C check value of "123456789" (0xE3069283)."""
    assert crc32c(b"123456789") == 0xE3069283
    # The same nine bytes through the unit, from the initial register, inverted at the end.
    got = await settle(dut, 0xFFFFFFFF, int.from_bytes(b"123456789", "little"), (1 << 9) - 1)
    assert got ^ 0xFFFFFFFF == 0xE3069283


@cocotb.test()
async def every_keep_length(dut):
    """All n = 0..W valid lanes, 40 random (crc_in, data) pairs each, garbage in the invalid lanes."""
    width = len(dut.keep)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    for n in range(width + 1):
        for trial in range(40):
            crc_in = rng.choice([0xFFFFFFFF, 0, rng.getrandbits(32)])
            beat = bytes(rng.getrandbits(8) for _ in range(width))
            got = await settle(dut, crc_in, int.from_bytes(beat, "little"), (1 << n) - 1)
            want = crc32c(beat[:n], crc=crc_in, final=False)
            assert got == want, f"n={n} trial={trial} crc_in={crc_in:08x}: got {got:08x} want {want:08x}"


@cocotb.test()
async def chained_beats(dut):
    """A packet over several beats (full beats, then a partial one) equals the one-shot CRC."""
    width = len(dut.keep)
    rng = random.Random(int(cocotb.RANDOM_SEED) + 1)
    for _ in range(30):
        msg = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 5 * width)))
        crc = 0xFFFFFFFF
        for pos in range(0, len(msg), width):
            part = msg[pos:pos + width]
            pad = bytes(rng.getrandbits(8) for _ in range(width - len(part)))
            crc = await settle(dut, crc, int.from_bytes(part + pad, "little"), (1 << len(part)) - 1)
        assert crc ^ 0xFFFFFFFF == crc32c(msg)

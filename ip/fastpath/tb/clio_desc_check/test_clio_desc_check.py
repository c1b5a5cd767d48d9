"""clio_desc_check against the wire crate's Descriptor::parse: 3750 slots (valid ones of every kind, OFFLOAD_REPLY fragments included,
and mutations) with the crate's verdict, from vectors.txt (kept current by a test of
clio-fastpath-cosim)."""

import os

import cocotb
from cocotb.triggers import Timer


@cocotb.test()
async def crate_vectors(dut):
    """Every slot gets the crate's verdict."""
    path = os.path.join(os.path.dirname(__file__), "vectors.txt")
    ok = bad = 0
    for n, line in enumerate(open(path)):
        slot_hex, verdict = line.split()
        dut.slot.value = int.from_bytes(bytes.fromhex(slot_hex), "little")
        await Timer(1, unit="ns")
        assert int(dut.ok.value) == int(verdict), f"vector {n}: {slot_hex} crate says {verdict}"
        ok += verdict == "1"
        bad += verdict == "0"
    assert ok > 500 and bad > 500

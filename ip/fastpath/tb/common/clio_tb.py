"""Shared helpers of the fast-path cocotb benches.

Constants come from the generated `clio_pkg.sv` and the wire crate's
published vectors (parsed from the sources), so nothing here restates a
format: the CRC32C and bucket hash below are independent test oracles,
themselves checked against the wire crate's vectors in every bench that
uses them.
"""

import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
RTL = os.path.normpath(os.path.join(HERE, "..", "..", "rtl"))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))


def _load_pkg():
    consts = {}
    text = open(os.path.join(RTL, "clio_pkg.sv")).read()
    for m in re.finditer(r"localparam\s+(?:int|logic\s*\[\d+:0\])\s+(\w+)\s*=\s*([^;]+);", text):
        name, val = m.group(1), m.group(2).strip()
        if "'h" in val:
            consts[name] = int(val.split("'h")[1], 16)
        else:
            consts[name] = int(val)
    return consts


PKG = _load_pkg()


def desc_put(desc, off, width, value):
    """Field `value` of `width` bytes at byte `off` of a ring descriptor held as an
    integer (little-endian bytes, as the RTL's `+:` selects)."""
    return desc | ((value & ((1 << (8 * width)) - 1)) << (8 * off))


def crc32c(data, crc=0xFFFFFFFF, final=True):
    """Bitwise CRC32C (reflected polynomial from the package)."""
    poly = PKG["CRC32C_POLY_REFLECTED"]
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF if final else crc


def bucket_index(pid, vpn, bits):
    """Bucket hash of the wire crate: ((vpn ^ rotl64(pid)) * MUL) >> (64 - bits)."""
    if bits == 0:
        return 0
    r = PKG["HASH_PID_ROTATE"]
    rot = ((pid << r) | (pid >> (64 - r))) & (2**64 - 1)
    key = (vpn ^ rot) & (2**64 - 1)
    return ((key * PKG["HASH_MULTIPLIER"]) & (2**64 - 1)) >> (64 - bits)


def hash_vectors():
    """`HASH_VECTORS` of host-sdk/wire/src/pte.rs as (pid, vpn, bits, index)."""
    text = open(os.path.join(REPO, "host-sdk", "wire", "src", "pte.rs")).read()
    body = text.split("pub const HASH_VECTORS")[1].split("];")[0]
    out = []
    for m in re.finditer(r"\(([^()]*)\)", body.split("= &[", 1)[1]):
        vals = [int(v.strip().replace("_", ""), 0) for v in m.group(1).split(",") if v.strip()]
        out.append(tuple(vals))
    assert len(out) >= 5, "HASH_VECTORS not found in pte.rs"
    return out


def clio_header(opcode, pid=0, req_id=1, retry_of=0, va=0, total_len=0, offset=0,
                payload=b"", flags=0, status=0, version=None, plen=None, session=0, epoch=0,
                key=0, ack=0):
    """A Clio packet (header + payload) with its CRC filled, built from package offsets."""
    p = PKG
    h = bytearray(p["CLIO_HEADER_LEN"])
    h[p["CLIO_OFF_VERSION"]] = p["CLIO_VERSION"] if version is None else version
    h[p["CLIO_OFF_OPCODE"]] = opcode
    h[p["CLIO_OFF_FLAGS"]] = flags
    h[p["CLIO_OFF_STATUS"]] = status
    struct.pack_into(">I", h, p["CLIO_OFF_PID"], pid)
    struct.pack_into(">I", h, p["CLIO_OFF_REQ_ID"], req_id)
    struct.pack_into(">I", h, p["CLIO_OFF_RETRY_OF"], retry_of)
    struct.pack_into(">Q", h, p["CLIO_OFF_VA"], va)
    struct.pack_into(">I", h, p["CLIO_OFF_TOTAL_LEN"], total_len)
    struct.pack_into(">I", h, p["CLIO_OFF_OFFSET"], offset)
    struct.pack_into(">H", h, p["CLIO_OFF_PAYLOAD_LEN"], len(payload) if plen is None else plen)
    struct.pack_into(">H", h, p["CLIO_OFF_SESSION"], session)
    struct.pack_into(">I", h, p["CLIO_OFF_EPOCH"], epoch)
    struct.pack_into(">Q", h, p["CLIO_OFF_KEY"], key)
    struct.pack_into(">I", h, p["CLIO_OFF_ACK"], ack)
    pkt = bytes(h) + bytes(payload)
    crc = crc32c(pkt)
    struct.pack_into(">I", h, p["CLIO_OFF_CRC"], crc)
    return bytes(h) + bytes(payload)


def beats(data, width_bytes):
    """Split bytes into (tdata int, tkeep int, tlast) beats, lane 0 = first byte."""
    out = []
    for i in range(0, max(len(data), 1), width_bytes):
        chunk = data[i:i + width_bytes]
        out.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1,
                    i + width_bytes >= len(data)))
    return out


def pte_bytes(pid, vpn, ppn, perms, allocated, valid, page_shift):
    """A 16-byte PTE laid out with the package offsets (little-endian)."""
    p = PKG
    b = bytearray(p["PTE_LEN"])
    struct.pack_into("<I", b, p["PTE_OFF_PID"], pid)
    struct.pack_into("<I", b, p["PTE_OFF_PPN"], ppn)
    b[p["PTE_OFF_VPN"]:p["PTE_OFF_VPN"] + 6] = (vpn & (2**48 - 1)).to_bytes(6, "little")
    b[p["PTE_OFF_PERMS"]] = perms
    flags = (p["PTE_FLAG_ALLOCATED"] if allocated else 0) | (p["PTE_FLAG_VALID"] if valid else 0)
    b[p["PTE_OFF_FLAGS"]] = flags | (page_shift << p["PTE_PAGE_SHIFT_SHIFT"])
    return bytes(b)


# The clock/reset opening lives in the ip-wide bench base; re-exported here
# so the fast-path benches import everything from one module.
from tb_base import cycles, drive, param, reset, start, start_clock  # noqa: E402,F401

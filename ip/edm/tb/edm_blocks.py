"""EDM 66-bit blocks for the directed benches (layouts as clio-wire's `edm` module and
rtl/edm_pkg.sv): memory messages, /N/, /G/ and standard frames, as (sync, payload) pairs."""

SYNC_DATA = 0b10
SYNC_CTRL = 0b01
IDLE = 0x1E
MS, MT, MST, N, G = 0x10, 0x20, 0x40, 0x04, 0x08
START0 = 0x78
TERMS = [0x87, 0x99, 0xAA, 0xB4, 0xCC, 0xD2, 0xE1, 0xFF]
RREQ, WREQ, RMWREQ, RRES = 0, 1, 2, 3
IDLE_BLOCK = (SYNC_CTRL, IDLE)


def ctrl(ty, seven):
    return (SYNC_CTRL, ty | (int.from_bytes(bytes(seven), "little") << 8))


def data(eight):
    return (SYNC_DATA, int.from_bytes(bytes(eight), "little"))


def message(kind, last, peer, mid, length, body, op=0):
    """Blocks of a memory message (header fields + body bytes)."""
    h = [kind | (int(last) << 3) | (op << 4), peer & 0xFF, peer >> 8, mid, length & 0xFF, length >> 8]
    n = 1 if len(body) <= 1 else 1 + (len(body) + 7) // 8
    first = body[0] if body else 0
    if n == 1:
        return [ctrl(MST, h + [first])]
    out = [ctrl(MS, h + [first])]
    pos = 1
    for _ in range(n - 2):
        out.append(data(body[pos : pos + 8]))
        pos += 8
    rest = list(body[pos:])
    out.append(ctrl(MT, rest + [0] * (7 - len(rest))))
    return out


def notify(peer, mid, size):
    return ctrl(N, [peer & 0xFF, peer >> 8, mid, size & 0xFF, size >> 8, 0, 0])


def grant(peer, mid, length, kind):
    return ctrl(G, [peer & 0xFF, peer >> 8, mid, length & 0xFF, length >> 8, kind, 0])


def header(block):
    """Header fields of a /MS/ or /MST/ (or the fields of an /N/ or /G/)."""
    sync, p = block
    ty = p & 0xFF
    if ty in (MS, MST):
        return {
            "type": ty, "kind": (p >> 8) & 7, "last": (p >> 11) & 1, "op": (p >> 12) & 0xF,
            "peer": (p >> 16) & 0xFFFF, "id": (p >> 32) & 0xFF, "len": (p >> 40) & 0xFFFF,
        }
    return {
        "type": ty, "peer": (p >> 8) & 0xFFFF, "id": (p >> 24) & 0xFF,
        "len": (p >> 32) & 0xFFFF, "kind": (p >> 48) & 0xFF,
    }


def with_peer(block, peer):
    sync, p = block
    return (sync, (p & ~(0xFFFF << 16)) | (peer << 16))


def body(blocks):
    """Body bytes of a message's blocks."""
    out = bytearray([(blocks[0][1] >> 56) & 0xFF])
    for sync, p in blocks[1:]:
        b = p.to_bytes(8, "little")
        out += b if sync == SYNC_DATA else b[1:]
    return bytes(out)


def split(timed):
    """Split a line's (cycle, block) list into memory units (lists of (cycle, block); a
    message is contiguous on the line) and frame blocks (idles dropped)."""
    units, frames, cur = [], [], None
    for c, (sync, p) in timed:
        ty = p & 0xFF
        if cur is not None:
            cur.append((c, (sync, p)))
            if sync == SYNC_CTRL and ty == MT:
                units.append(cur)
                cur = None
        elif sync == SYNC_CTRL and ty == MS:
            cur = [(c, (sync, p))]
        elif sync == SYNC_CTRL and ty in (MST, N, G):
            units.append([(c, (sync, p))])
        elif not (sync == SYNC_CTRL and ty == IDLE):
            frames.append((c, (sync, p)))
    return units, frames


def frame(payload):
    out = [ctrl(START0, [0x55] * 6 + [0xD5])]
    full = len(payload) // 8 * 8
    for i in range(0, full, 8):
        out.append(data(payload[i : i + 8]))
    rest = list(payload[full:])
    out.append(ctrl(TERMS[len(rest)], rest + [0] * (7 - len(rest))))
    return out


def lane(sig, index, width):
    bits = str(sig.value)
    lo = len(bits) - (index + 1) * width
    part = bits[lo : lo + width]
    assert all(c in "01" for c in part), f"{sig._name}[{index}] = {part} is not 0/1"
    return int(part, 2)


def pack(values, width):
    v = 0
    for i, x in enumerate(values):
        v |= (x & ((1 << width) - 1)) << (i * width)
    return v

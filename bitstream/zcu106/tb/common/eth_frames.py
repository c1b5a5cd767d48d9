"""Reference Ethernet II / IPv4 / UDP / ARP frames, built byte by byte
(checksums included), for the benches of the board's UDP layer
(clio_udp_shim, clio_eth_ports): requests from a client to the board, the
response frame the board must send, ARP requests and replies."""

import struct

from clio_tb import PKG as P
from clio_tb import clio_header

BOARD_MAC = bytes.fromhex("02c110000001")
BOARD_IP = bytes([10, 0, 0, 2])
BOARD_PORT = 7700
BCAST = b"\xff" * 6
HDR = P["CLIO_HEADER_LEN"]


# ---------------------------------------------------------------------------
# Reference frames.
# ---------------------------------------------------------------------------
def csum16(data):
    """Internet checksum (one's complement of the one's-complement sum)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f">{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(dst, src, etype, payload):
    return bytes(dst) + bytes(src) + struct.pack(">H", etype) + bytes(payload)


def ipv4(src, dst, payload, proto=17, ttl=64, ident=0, flags_frag=0x4000, ver_ihl=0x45,
         options=b"", bad_csum=False, total_len=None):
    tl = 20 + len(options) + len(payload) if total_len is None else total_len
    h = bytearray(struct.pack(">BBHHHBBH4s4s", ver_ihl, 0, tl, ident, flags_frag, ttl, proto, 0,
                              bytes(src), bytes(dst)) + options)
    c = csum16(bytes(h))
    struct.pack_into(">H", h, 10, c ^ 0x0101 if bad_csum else c)
    return bytes(h) + bytes(payload)


def udp(sport, dport, payload, csum=0, length=None):
    n = 8 + len(payload) if length is None else length
    return struct.pack(">HHHH", sport, dport, n, csum) + bytes(payload)


def request_frame(client, payload, **kw):
    """A Clio datagram from `client` = (mac, ip, port) to the board."""
    mac, ip, port = client
    u = udp(port, kw.pop("dport", BOARD_PORT), payload, csum=0x1234, length=kw.pop("udp_len", None))
    return eth(kw.pop("dst_mac", BOARD_MAC), mac, kw.pop("etype", 0x0800),
               ipv4(ip, kw.pop("dst_ip", BOARD_IP), u, **kw))


def response_frame(client, pkt):
    """What the board must send for response `pkt` to `client`."""
    mac, ip, port = client
    return eth(mac, BOARD_MAC, 0x0800, ipv4(BOARD_IP, ip, udp(BOARD_PORT, port, pkt)))


def arp(oper, sha, spa, tha, tpa, dst):
    body = struct.pack(">HHBBH6s4s6s4s", 1, 0x0800, 6, 4, oper, sha, spa, tha, tpa)
    return eth(dst, sha, 0x0806, body).ljust(60, b"\0")


def clio(rng, pid, n):
    return clio_header(0x83, pid=pid, req_id=rng.getrandbits(32),
                       payload=bytes(rng.randrange(256) for _ in range(n)))


def client(i):
    return (bytes([0x02, 0, 0, 0, 0, 0x10 + i]), bytes([10, 0, 0, 100 + i]), 40000 + 17 * i)

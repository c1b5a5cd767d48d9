"""A small Clio client in Python (standard library only).

Written from the generated wire reference, host-sdk/wire/REFERENCE.md, alone:
section numbers in the comments point into it. It is a synchronous client:
one request in flight at a time, retransmitted on a timeout or a NACK as a
retry (new req_id, retry_of = the first attempt's id), with the ack
watermark set to the id of the request being sent (every earlier request's
answer has been received).
"""

import os
import socket
import struct
import time

VERSION = 2
HEADER_LEN = 56
# Section 3: version opcode flags status | pid | req_id | retry_of | va |
# total_len | offset | payload_len | session | epoch | key | ack | crc
HEADER = struct.Struct(">BBBBIIIQIIHHIQII")
assert HEADER.size == HEADER_LEN
CRC_OFFSET = 52

# Section 5: opcodes.
ALLOC, FREE, READ, WRITE, TAS, CAS, FAA, LOCK, UNLOCK, FENCE = range(1, 11)
POINTER_CHASE, OFFLOAD_CALL, INFO, OPEN_SESSION, CLOSE_SESSION = range(11, 16)
RESPONSE_BIT = 0x80
NACK = 0xFF

# Section 8: statuses.
STATUS_NAMES = [
    "OK", "BAD_PID", "PERMISSION", "UNMAPPED", "OUT_OF_MEMORY", "MALFORMED",
    "BUSY", "CORRUPT", "UNSUPPORTED", "BAD_SESSION", "RESTARTED", "OVER_QUOTA",
    "TOO_LARGE", "NO_SUCH_OFFLOAD", "OFFLOAD_FAULT", "OFFLOAD_REFUSED", "MOVED",
]
(OK, BAD_PID, PERMISSION, UNMAPPED, OUT_OF_MEMORY, MALFORMED, BUSY, CORRUPT,
 UNSUPPORTED, BAD_SESSION, RESTARTED, OVER_QUOTA, TOO_LARGE, NO_SUCH_OFFLOAD,
 OFFLOAD_FAULT, OFFLOAD_REFUSED, MOVED) = range(17)

# Section 3: flags.
FIXED_VA, MOVED, DUPLICATE = 0x01, 0x02, 0x04
# Section 6: AllocReq.perms.
PERM_READ, PERM_WRITE = 0x1, 0x2

INFO_RESP_LEN = 64
OPEN_SESSION_LEN = 32
ATOMIC_WORD = 8


# Section 4: CRC32C, reflected polynomial 0x82F63B78, init and xorout 0xFFFFFFFF.
def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC32C of `data`; `crc` continues an earlier result (0 to start)."""
    c = crc ^ 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = (c >> 8) ^ t[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


class Header:
    """The 56-byte header as plain fields (section 3)."""

    FIELDS = ("version", "opcode", "flags", "status", "pid", "req_id", "retry_of",
              "va", "total_len", "offset", "payload_len", "session", "epoch",
              "key", "ack", "crc")

    def __init__(self, **kw):
        for f in self.FIELDS:
            setattr(self, f, kw.get(f, 0))
        if "version" not in kw:
            self.version = VERSION

    def __repr__(self):
        return "Header(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f in self.FIELDS)


def encode(h, payload=b""):
    """Header + payload with payload_len and the CRC filled in (section 4)."""
    h.payload_len = len(payload)
    raw = HEADER.pack(h.version, h.opcode, h.flags, h.status, h.pid, h.req_id,
                      h.retry_of, h.va, h.total_len, h.offset, h.payload_len,
                      h.session, h.epoch, h.key, h.ack, 0)
    h.crc = crc32c(payload, crc32c(raw))
    return raw[:CRC_OFFSET] + struct.pack(">I", h.crc) + payload


class WireError(Exception):
    """A received datagram that is not a valid Clio packet."""


def decode(buf):
    """(Header, payload) of a received packet; WireError if it is short or its CRC is wrong."""
    if len(buf) < HEADER_LEN:
        raise WireError("packet of %d bytes is shorter than the header" % len(buf))
    h = Header(**dict(zip(Header.FIELDS, HEADER.unpack_from(buf))))
    end = HEADER_LEN + h.payload_len
    if len(buf) < end:
        raise WireError("payload_len %d runs past the %d-byte packet" % (h.payload_len, len(buf)))
    zeroed = buf[:CRC_OFFSET] + b"\0\0\0\0" + buf[CRC_OFFSET + 4:end]
    if crc32c(zeroed) != h.crc:
        raise WireError("crc mismatch")
    return h, buf[HEADER_LEN:end]


class ClioError(Exception):
    """A request answered with a status other than OK."""

    def __init__(self, status, what, old=None):
        self.status = status
        self.old = old
        name = STATUS_NAMES[status] if status < len(STATUS_NAMES) else str(status)
        super().__init__("%s: %s" % (what, name))


class BoardRestarted(ClioError):
    """RESTARTED: the board rebooted; this session and its memory are gone (section 9)."""


class Timeout(Exception):
    """No answer after every retry."""


class Session:
    """One session with a board: credentials, request ids, retransmission."""

    def __init__(self, addr, timeout=0.2, retries=25, sock=None):
        self.addr = addr
        self.sock = sock or socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(timeout)
        self.timeout = timeout
        self.retries = retries
        # Start ids at a random point: ids are per session and wrap (section 10).
        self.next_id = (int.from_bytes(os.urandom(4), "big") % 0xFFFF0000) + 1
        self.pid = self.session = self.epoch = self.key = 0
        self.mtu = None
        self.max_resp = None
        self.stats = {"sent": 0, "retries": 0, "nacks": 0, "busy": 0, "stray": 0}

    # -- request ids -------------------------------------------------------
    def _new_id(self):
        i = self.next_id
        self.next_id = (self.next_id + 1) & 0xFFFFFFFF or 1
        return i

    # -- one request, possibly several packets each way ---------------------
    def _request(self, opcode, va=0, total_len=0, packets=None, flags=0, sessionless=False,
                 pid=None, want_chunks=None, busy_retries=200, sized_answer=False):
        """Send a request and collect its answers.

        packets: list of (offset, payload) for the request's packets (one
        packet with empty payload by default). want_chunks: for READ, the
        number of response chunks (each packet otherwise gets one answer).
        sized_answer: the answer's length is in its headers' total_len (an
        OFFLOAD_CALL answer longer than one packet, section 6
        OffloadBatchReq): wait for ceil(total_len / MTU) chunks.
        Returns a list of (Header, payload) answers, one per request packet
        (or per READ chunk), ordered by offset.
        """
        if packets is None:
            packets = [(0, b"")]
        first = self._new_id()
        req_id = first
        answers = {}
        attempt = 0
        busy = 0
        while True:
            hdr_common = dict(opcode=opcode, flags=flags, va=va, total_len=total_len,
                              req_id=req_id, retry_of=first if req_id != first else 0)
            if sessionless:
                hdr_common.update(pid=pid or 0)
            else:
                hdr_common.update(pid=self.pid, session=self.session, epoch=self.epoch,
                                  key=self.key, ack=first)
            # Resend only the packets not yet answered (section 7).
            for off, payload in packets:
                if opcode == READ or off not in answers:
                    h = Header(offset=off, **hdr_common)
                    self.sock.sendto(encode(h, payload), self.addr)
                    self.stats["sent"] += 1
            if opcode == READ:
                answers = {}
            need = want_chunks if want_chunks is not None else len(packets)
            deadline = time.monotonic() + self.timeout
            resend = False
            busy_now = False
            while len(answers) < need and not resend:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.sock.settimeout(left)
                try:
                    buf, src = self.sock.recvfrom(65536)
                except socket.timeout:
                    break
                try:
                    h, payload = decode(buf)
                except WireError:
                    self.stats["stray"] += 1
                    continue
                if h.req_id != req_id:
                    self.stats["stray"] += 1  # an earlier attempt's late answer
                    continue
                if h.opcode == NACK:
                    self.stats["nacks"] += 1
                    resend = True
                    continue
                if h.opcode != opcode | RESPONSE_BIT:
                    self.stats["stray"] += 1
                    continue
                if h.status == RESTARTED:
                    raise BoardRestarted(h.status, "request %#x" % opcode)
                if h.status == BUSY and not (opcode == LOCK and payload):
                    busy += 1
                    self.stats["busy"] += 1
                    if busy > busy_retries:
                        raise ClioError(h.status, "request %#x" % opcode)
                    resend = busy_now = True
                    continue
                if h.status != OK:
                    old = struct.unpack(">Q", payload)[0] if len(payload) == 8 else None
                    err = ClioError(h.status, "request %#x" % opcode, old)
                    err.payload = payload
                    raise err
                answers[h.offset] = (h, payload)
                if sized_answer:
                    need = max(1, -(-h.total_len // self.mtu))
            if len(answers) >= need:
                return [answers[k] for k in sorted(answers)]
            attempt += 1
            self.stats["retries"] += 1
            if busy_now:
                # BUSY: nothing was executed; back off before the retry (section 8).
                attempt -= 1
                time.sleep(min(0.0005 * busy, 0.02))
            elif attempt > self.retries:
                raise Timeout("request %#x: no answer after %d attempts" % (opcode, attempt))
            req_id = self._new_id()

    # -- section 9: handshake -------------------------------------------------
    def info(self):
        """INFO (padded to 64 zero bytes); returns a dict of InfoResp (section 6)."""
        (h, p), = self._request(INFO, packets=[(0, bytes(INFO_RESP_LEN))], sessionless=True)
        f = struct.unpack(">16sIIQQQHBBIIHH", p[:INFO_RESP_LEN])
        info = dict(zip(("board", "firmware_version", "rtl_version", "build_id", "config_hash",
                         "dram_bytes", "mtu", "page_shift", "slots_per_bucket",
                         "tlb_entries", "epoch", "sessions", "max_resp_kib"), f))
        info["board"] = info["board"].rstrip(b"\0").decode("ascii")
        self.mtu = info["mtu"]
        # The response bound (0: none stated): larger reads are split (section 6).
        self.max_resp = info["max_resp_kib"] * 1024 or None
        return info

    def open(self, join_session=0, join_key=0, join_pid=0):
        """OPEN_SESSION: a new address space, or join (join_session, join_key) of join_pid."""
        if self.mtu is None:
            self.info()
        req = struct.pack(">HHIQ16x", join_session, 0, 0, join_key)
        assert len(req) == OPEN_SESSION_LEN
        (h, p), = self._request(OPEN_SESSION, packets=[(0, req)], sessionless=True,
                                pid=join_pid)
        (self.session, _, self.pid, self.key, self.epoch, self.dedup_quota,
         self.lock_quota, self.mem_quota_pages, _) = struct.unpack(">HHIQIHHII", p[:32])
        return self

    def close(self):
        """CLOSE_SESSION; BAD_SESSION on a retry means it is closed already."""
        try:
            self._request(CLOSE_SESSION)
        except ClioError as e:
            if e.status != BAD_SESSION:
                raise
        self.session = self.key = 0

    # -- section 5: operations ----------------------------------------------
    def alloc(self, size, perms=PERM_READ | PERM_WRITE, page_shift=0, fixed_va=None):
        """ALLOC; returns (va, size)."""
        req = struct.pack(">QBB6x", size, perms, page_shift)
        (h, p), = self._request(ALLOC, va=fixed_va or 0, packets=[(0, req)],
                                flags=FIXED_VA if fixed_va is not None else 0)
        got, _retries = struct.unpack(">QI", p[:12])
        return h.va, got

    def free(self, va, size):
        """FREE the range [va, va + size)."""
        self._request(FREE, va=va, packets=[(0, struct.pack(">Q", size))])

    def write(self, va, data):
        """WRITE `data` at `va`, cut into MTU-sized packets (section 7); above
        the board's response bound (InfoResp.max_resp_kib), several requests."""
        bound = self.max_resp
        if bound and len(data) > bound:
            for off in range(0, len(data), bound):
                self.write(va + off, data[off:off + bound])
            return
        mtu = self.mtu
        pkts = [(off, data[off:off + mtu]) for off in range(0, len(data), mtu)] or [(0, b"")]
        self._request(WRITE, va=va, total_len=len(data), packets=pkts)

    def read(self, va, n):
        """READ `n` bytes at `va`, reassembled from ⌈n / MTU⌉ chunks (section 7);
        above the board's response bound (InfoResp.max_resp_kib, a larger READ
        gets TOO_LARGE), several requests."""
        bound = self.max_resp
        if bound and n > bound:
            return b"".join(self.read(va + off, min(bound, n - off)) for off in range(0, n, bound))
        chunks = max(1, -(-n // self.mtu))
        answers = self._request(READ, va=va, total_len=n, want_chunks=chunks)
        out = bytearray(n)
        for h, p in answers:
            out[h.offset:h.offset + len(p)] = p
        return bytes(out)

    def _atomic(self, opcode, va, operands=b""):
        (h, p), = self._request(opcode, va=va, total_len=ATOMIC_WORD, packets=[(0, operands)])
        return struct.unpack(">Q", p[:8])[0]

    def faa(self, va, addend):
        """Fetch-and-add; returns the old value."""
        return self._atomic(FAA, va, struct.pack(">Q", addend & 0xFFFFFFFFFFFFFFFF))

    def cas(self, va, expected, new):
        """Compare-and-swap; returns the old value (swapped iff old == expected)."""
        return self._atomic(CAS, va, struct.pack(">QQ", expected, new))

    def tas(self, va):
        """Test-and-set; returns the old value."""
        return self._atomic(TAS, va)

    def lock(self, va):
        """LOCK; ClioError(BUSY) with .old if held."""
        return self._atomic(LOCK, va)

    def unlock(self, va):
        """UNLOCK; returns the old value."""
        return self._atomic(UNLOCK, va)

    # -- section 6: OffloadCallReq, OffloadBatchReq ---------------------------
    def offload_call(self, offload, op, args=b""):
        """OFFLOAD_CALL of operation `op` of offload `offload`; returns the
        result bytes (after the OffloadCallResp). The answer may span several
        packets: reassembled by offset up to its total_len. OFFLOAD_REFUSED
        raises ClioError with .code = the offload's reason."""
        req = struct.pack(">IHH", offload, op, 0) + args
        try:
            answers = self._request(OFFLOAD_CALL, packets=[(0, req)], sized_answer=True)
        except ClioError as e:
            if e.status == OFFLOAD_REFUSED:
                e.code = struct.unpack(">H", e.payload[:2])[0]
            raise
        total = max([h.total_len for h, _ in answers] + [len(p) for _, p in answers])
        out = bytearray(total)
        for h, p in answers:
            out[h.offset:h.offset + len(p)] = p
        self.last_answer_packets = len(answers)
        code, rsvd = struct.unpack(">HH", bytes(out[:4]))
        if code != 0 or rsvd != 0:
            raise WireError("OffloadCallResp of an OK answer: code %d reserved %d" % (code, rsvd))
        return bytes(out[4:])

    def offload_batch(self, offload, ops):
        """Several operations of one offload in one OFFLOAD_CALL (op 0xffff):
        `ops` is a list of (op, args); returns one (status, code, result) per
        operation, in order (OffloadBatchResult)."""
        body = struct.pack(">HH", len(ops), 0)
        for op, args in ops:
            body += struct.pack(">HH", op, len(args)) + args
        a = self.offload_call(offload, OFFLOAD_OP_BATCH, body)
        count, rsvd = struct.unpack(">HH", a[:4])
        if count != len(ops) or rsvd != 0:
            raise WireError("batch answer: count %d for %d operations" % (count, len(ops)))
        out, at = [], 4
        for _ in range(count):
            status, rsvd, code, n = struct.unpack(">BBHI", a[at:at + 8])
            if rsvd != 0 or at + 8 + n > len(a):
                raise WireError("OffloadBatchResult at %d" % at)
            out.append((status, code, a[at + 8:at + 8 + n]))
            at += 8 + n
        if at != len(a):
            raise WireError("batch answer: %d bytes after the last result" % (len(a) - at))
        return out


# Section 6, OffloadCallReq: Clio-KV (offload 1) and its call format.
OFFLOAD_OP_BATCH = 0xFFFF
KV_OFFLOAD = 1
KV_CREATE, KV_UPDATE, KV_READ, KV_DELETE, KV_PUT = range(1, 6)
KV_NOT_FOUND, KV_EXISTS = 3, 4


def kv_args(key, value=b""):
    """Clio-KV's arguments: key_len u16, reserved u16, value_len u32, key, value."""
    return struct.pack(">HHI", len(key), 0, len(value)) + key + value

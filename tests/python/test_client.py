"""Tests of the Python Clio client (clio_client.py).

Offline: the CRC check values and the worked packets of REFERENCE.md (the
client must produce those bytes exactly). Against a board: starts
`clio sim --listen 127.0.0.1:0` (the binary from $CLIO_BIN, else
target/release/clio, else target/debug/clio), reads the address it prints,
opens a session and runs alloc/write/read/FAA/CAS/TAS/lock/free, Clio-KV
calls and a batch OFFLOAD_CALL whose answer spans several packets, then
spoofing attempts from another socket (wrong key, another session's id,
stale epoch, forged PID) that must be refused with at most one header-only
answer no longer than the request, and change nothing.

Run: python3 tests/python/test_client.py  (prints 'N passed, N failed').
Set CLIO_PY_OFFLINE=1 to run only the offline tests.
"""

import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clio_client as cc  # noqa: E402

REFERENCE = os.path.join(ROOT, "host-sdk", "wire", "REFERENCE.md")


def worked_packets():
    """(title, bytes) of every worked packet in REFERENCE.md section 12."""
    text = open(REFERENCE, encoding="utf-8").read()
    sec = text[text.index("## 12. Worked packets"):]
    out = []
    for m in re.finditer(r"\n([^\n]+?), (\d+) bytes, crc (0x[0-9a-f]+):\n\n```text\n(.*?)\n```", sec, re.S):
        data = bytes.fromhex(m.group(4).replace("\n", " "))
        assert len(data) == int(m.group(2))
        out.append((m.group(1), data, int(m.group(3), 16)))
    return out


class Offline(unittest.TestCase):
    def test_crc_check_values(self):
        self.assertEqual(cc.crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(cc.crc32c(bytes(32)), 0x8A9136AA)
        self.assertEqual(cc.crc32c(b""), 0)

    def test_worked_packets_round_trip(self):
        pkts = worked_packets()
        self.assertGreaterEqual(len(pkts), 4, "REFERENCE.md section 12 has the worked packets")
        for title, data, crc in pkts:
            h, payload = cc.decode(data)
            self.assertEqual(h.crc, crc, title)
            again = cc.encode(h, payload)
            self.assertEqual(again, data, title)

    def test_worked_write_fields(self):
        # The WRITE example, built from its description in the reference.
        h = cc.Header(opcode=cc.WRITE, pid=7, req_id=12, va=0x1000, total_len=4,
                      session=3, epoch=0x11223344, key=0x0102030405060708, ack=10)
        mine = cc.encode(h, b"abcd")
        ref = [d for t, d, _ in worked_packets() if t.startswith("WRITE")][0]
        self.assertEqual(mine, ref)

    def test_corruption_detected(self):
        _, data, _ = worked_packets()[0]
        bad = bytearray(data)
        bad[60] ^= 1
        with self.assertRaises(cc.WireError):
            cc.decode(bytes(bad))


def find_clio():
    for p in (os.environ.get("CLIO_BIN"),
              os.path.join(ROOT, "target", "release", "clio"),
              os.path.join(ROOT, "target", "debug", "clio")):
        if p and os.access(p, os.X_OK):
            return p
    return None


class Sim:
    """`clio sim` on an ephemeral loopback port."""

    def __init__(self):
        exe = find_clio()
        if exe is None:
            raise RuntimeError("no clio binary: build it (cargo build --release -p clio-cli) or set CLIO_BIN")
        self.proc = subprocess.Popen([exe, "sim", "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.addr = None
        lines = []
        # The address comes on stderr ("serving on udp://A:P"); bounded by a 60 s watchdog.
        timer = threading.Timer(60, self.proc.kill)
        timer.start()
        try:
            for line in self.proc.stderr:
                lines.append(line)
                m = re.search(r"serving on udp://([0-9.]+):(\d+)", line)
                if m:
                    self.addr = (m.group(1), int(m.group(2)))
                    break
        finally:
            timer.cancel()
        if self.addr is None:
            self.proc.kill()
            raise RuntimeError("clio sim printed no address:\n" + "".join(lines))
        # Keep draining stderr so the board never blocks on a full pipe.
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def exchange(sock, addr, packet, barrier_id):
    """Send `packet` from `sock`, then an INFO as a barrier; return every
    datagram that arrived before the INFO's answer (the board answers in
    order, so the spoof's answers, if any, come first)."""
    sock.sendto(packet, addr)
    info = cc.encode(cc.Header(opcode=cc.INFO, req_id=barrier_id), bytes(cc.INFO_RESP_LEN))
    sock.sendto(info, addr)
    got = []
    sock.settimeout(5)
    while True:
        buf, _ = sock.recvfrom(65536)
        h, _ = cc.decode(buf)
        if h.opcode == cc.INFO | cc.RESPONSE_BIT and h.req_id == barrier_id:
            return got
        got.append((h, buf))


class AgainstSim(unittest.TestCase):
    sim = None

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim()

    @classmethod
    def tearDownClass(cls):
        if cls.sim:
            cls.sim.stop()

    def session(self):
        return cc.Session(self.sim.addr).open()

    def test_info(self):
        s = cc.Session(self.sim.addr)
        info = s.info()
        self.assertEqual(info["board"], "emulator")
        self.assertGreater(info["mtu"], 0)
        self.assertNotEqual(info["epoch"], 0)
        self.assertGreater(info["sessions"], 1)

    def test_reads_above_the_response_bound_are_split(self):
        s = self.session()
        self.assertEqual(s.max_resp, 64 * 1024)  # emulator.toml network.max_response_bytes
        va, size = s.alloc(1 << 20)
        data = os.urandom(200 * 1024 + 3)  # four requests each way
        s.write(va + 1, data)
        self.assertEqual(s.read(va + 1, len(data)), data)
        # One READ above the bound, unsplit: TOO_LARGE, nothing read.
        with self.assertRaises(cc.ClioError) as e:
            s._request(cc.READ, va=va, total_len=s.max_resp + 1, want_chunks=1)
        self.assertEqual(e.exception.status, cc.TOO_LARGE)

    def test_kv_calls_and_a_batch_answered_in_several_packets(self):
        s = self.session()
        tag = os.urandom(4).hex().encode()
        keys = [b"py-%s-%d" % (tag, i) for i in range(40)]
        vals = [os.urandom(1024) for _ in keys]
        for k, v in zip(keys, vals):
            self.assertEqual(s.offload_call(cc.KV_OFFLOAD, cc.KV_CREATE, cc.kv_args(k, v)), b"")
        self.assertEqual(s.offload_call(cc.KV_OFFLOAD, cc.KV_READ, cc.kv_args(keys[0])), vals[0])
        with self.assertRaises(cc.ClioError) as e:
            s.offload_call(cc.KV_OFFLOAD, cc.KV_READ, cc.kv_args(b"py-missing-" + tag))
        self.assertEqual((e.exception.status, e.exception.code),
                         (cc.OFFLOAD_REFUSED, cc.KV_NOT_FOUND))
        # One batch: 40 reads of 1 KiB (an answer of 41 KB, many packets),
        # a missing key, a create of an existing key, an update, its read.
        new = os.urandom(100)  # the request must fit one packet (MTU)
        ops = [(cc.KV_READ, cc.kv_args(k)) for k in keys]
        ops += [(cc.KV_READ, cc.kv_args(b"py-missing-" + tag)),
                (cc.KV_CREATE, cc.kv_args(keys[1], b"x")),
                (cc.KV_UPDATE, cc.kv_args(keys[2], new)),
                (cc.KV_READ, cc.kv_args(keys[2]))]
        got = s.offload_batch(cc.KV_OFFLOAD, ops)
        self.assertGreater(s.last_answer_packets, 1)
        # OffloadCallResp 4 + OffloadBatchReq 4 + 44 results of 8, 40 values of
        # 1 KiB and the 100-byte one, in packets of the MTU.
        self.assertEqual(s.last_answer_packets, -(-(4 + 4 + 44 * 8 + 40 * 1024 + 100) // s.mtu))
        for i in range(40):
            self.assertEqual(got[i], (cc.OK, 0, vals[i]), "read %d" % i)
        self.assertEqual(got[40], (cc.OFFLOAD_REFUSED, cc.KV_NOT_FOUND, b""))
        self.assertEqual(got[41], (cc.OFFLOAD_REFUSED, cc.KV_EXISTS, b""))
        self.assertEqual(got[42], (cc.OK, 0, b""))
        self.assertEqual(got[43], (cc.OK, 0, new))
        # 64 reads could outgrow the response bound (12 + 64 x (8 + 1024)
        # > 64 KiB): refused whole, nothing run (section 6).
        with self.assertRaises(cc.ClioError) as e:
            s.offload_batch(cc.KV_OFFLOAD, [(cc.KV_READ, cc.kv_args(b"k"))] * 64)
        self.assertEqual(e.exception.status, cc.TOO_LARGE)
        # A batch that does not parse: MALFORMED.
        with self.assertRaises(cc.ClioError) as e:
            s.offload_call(cc.KV_OFFLOAD, cc.OFFLOAD_OP_BATCH, struct.pack(">HH", 2, 0))
        self.assertEqual(e.exception.status, cc.MALFORMED)
        s.close()

    def test_short_info_is_refused_without_amplification(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        pkt = cc.encode(cc.Header(opcode=cc.INFO, req_id=5), b"")
        got = exchange(sock, self.sim.addr, pkt, 6)
        self.assertLessEqual(len(got), 1)
        for h, buf in got:
            self.assertEqual(h.status, cc.MALFORMED)
            self.assertLessEqual(len(buf), len(pkt))

    def test_alloc_larger_than_the_board_is_too_large(self):
        s = self.session()
        with self.assertRaises(cc.ClioError) as e:
            s.alloc(1 << 40)
        self.assertEqual(e.exception.status, cc.TOO_LARGE)

    def test_alloc_write_read_atomics_free(self):
        s = self.session()
        self.assertNotEqual(s.session, 0)
        self.assertNotEqual(s.pid, 0)
        va, size = s.alloc(1 << 20)
        self.assertGreaterEqual(size, 1 << 20)
        data = bytes((i * 7 + 3) & 0xFF for i in range(3 * s.mtu + 17))  # 4 packets each way
        s.write(va + 5, data)
        self.assertEqual(s.read(va + 5, len(data)), data)
        self.assertEqual(s.read(va, 5), bytes(5))
        w = va + 64 * 1024
        self.assertEqual(s.faa(w, 5), 0)
        self.assertEqual(s.faa(w, 7), 5)
        self.assertEqual(s.cas(w, 12, 100), 12)
        self.assertEqual(s.cas(w, 12, 200), 100)  # miss: unchanged
        self.assertEqual(struct.unpack("<Q", s.read(w, 8))[0], 100)  # LE in memory
        self.assertEqual(s.tas(w + 8), 0)
        self.assertEqual(s.tas(w + 8), 1)
        self.assertEqual(s.lock(w + 16), 0)
        with self.assertRaises(cc.ClioError) as e:
            s.lock(w + 16)
        self.assertEqual(e.exception.status, cc.BUSY)
        self.assertEqual(s.unlock(w + 16), 1)
        with self.assertRaises(cc.ClioError) as e:
            s.faa(w + 4, 1)  # unaligned atomic
        self.assertEqual(e.exception.status, cc.MALFORMED)
        s.free(va, size)
        with self.assertRaises(cc.ClioError) as e:
            s.read(va, 8)
        self.assertEqual(e.exception.status, cc.UNMAPPED)
        s.close()

    def test_join_shares_memory(self):
        a = self.session()
        va, size = a.alloc(1 << 20)
        a.write(va, b"shared")
        b = cc.Session(self.sim.addr).open(join_session=a.session, join_key=a.key, join_pid=a.pid)
        self.assertEqual(b.pid, a.pid)
        self.assertNotEqual(b.session, a.session)
        self.assertEqual(b.read(va, 6), b"shared")
        with self.assertRaises(cc.ClioError) as e:
            cc.Session(self.sim.addr).open(join_session=a.session, join_key=a.key ^ 1, join_pid=a.pid)
        self.assertEqual(e.exception.status, cc.BAD_SESSION)
        a.free(va, size)

    def test_spoofing_is_refused_and_changes_nothing(self):
        victim = self.session()
        other = self.session()
        va, size = victim.alloc(1 << 20)
        victim.write(va, b"secret!!")
        word = va + 4096
        victim.faa(word, 41)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        base = dict(pid=victim.pid, session=victim.session, epoch=victim.epoch,
                    key=victim.key, va=va)
        attempts = {
            "wrong key": dict(base, key=victim.key ^ 0x5A5A),
            "another session's id with its own key": dict(base, session=other.session, key=other.key),
            "stale epoch": dict(base, epoch=(victim.epoch + 1) & 0xFFFFFFFF or 1),
            "the victim's session and key with another pid": dict(base, pid=other.pid),
            "no session": dict(base, session=0, key=0),
        }
        expect = {"stale epoch": cc.RESTARTED}
        rid = 1000
        for what, fields in attempts.items():
            ops = [
                (cc.READ, dict(total_len=8), b""),
                (cc.WRITE, dict(total_len=8), b"pwned!!!"),
                (cc.FAA, dict(total_len=8, va=word), struct.pack(">Q", 1000)),
                (cc.FREE, dict(), struct.pack(">Q", size)),
                (cc.LOCK, dict(total_len=8, va=word + 8), b""),
                (cc.CLOSE_SESSION, dict(), b""),
            ]
            for op, extra, payload in ops:
                # Replay the victim's next request id too: dedup must not take it.
                rid += 1
                h = cc.Header(opcode=op, req_id=victim.next_id, **dict(fields, **extra))
                pkt = cc.encode(h, payload)
                got = exchange(sock, self.sim.addr, pkt, rid)
                self.assertLessEqual(len(got), 1, "%s, op %#x: %d answers" % (what, op, len(got)))
                for rh, buf in got:
                    self.assertLessEqual(len(buf), len(pkt), "%s, op %#x: amplified" % (what, op))
                    self.assertEqual(rh.payload_len, 0, what)
                    self.assertEqual(rh.status, expect.get(what, cc.BAD_SESSION),
                                     "%s, op %#x" % (what, op))
        # Nothing changed, and the victim's own next FAA executes (not a replay).
        self.assertEqual(victim.read(va, 8), b"secret!!")
        self.assertEqual(victim.faa(word, 1), 41)
        self.assertEqual(victim.read(word, 8), struct.pack("<Q", 42))
        self.assertEqual(victim.lock(word + 8), 0)
        victim.unlock(word + 8)
        victim.free(va, size)

    def test_a_late_network_duplicate_of_an_acknowledged_faa_is_not_applied(self):
        # The network delivers a copy of an FAA after its answer arrived and a
        # later request acknowledged it (its dedup record is freed). The
        # board must not apply it a second time: the client will never
        # retry an id it acknowledged, so such a packet can only be a copy.
        s = self.session()
        va, size = s.alloc(1 << 20)
        first = s.next_id
        s.faa(va, 5)
        dup = cc.encode(cc.Header(opcode=cc.FAA, pid=s.pid, req_id=first, va=va,
                                  total_len=8, session=s.session, epoch=s.epoch,
                                  key=s.key, ack=first),
                        struct.pack(">Q", 5))
        s.read(va, 8)  # its ack frees the FAA's record
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        exchange(sock, self.sim.addr, dup, 77)
        self.assertEqual(struct.unpack("<Q", s.read(va, 8))[0], 5,
                         "the late copy of an acknowledged FAA was applied again")
        s.free(va, size)

    def test_stale_epoch_is_restarted_for_the_client(self):
        s = self.session()
        s.epoch ^= 1
        with self.assertRaises(cc.BoardRestarted):
            s.read(0, 8)


class Result(unittest.TextTestResult):
    pass


def main():
    loader = unittest.TestLoader()
    suite = unittest.TestSuite([loader.loadTestsFromTestCase(Offline)])
    if not os.environ.get("CLIO_PY_OFFLINE"):
        suite.addTests(loader.loadTestsFromTestCase(AgainstSim))
    started = time.monotonic()
    r = unittest.TextTestRunner(verbosity=2, resultclass=Result).run(suite)
    failed = len(r.failures) + len(r.errors)
    print("%d passed, %d failed (%.1f s)" % (r.testsRun - failed, failed, time.monotonic() - started))
    return 1 if failed or r.testsRun == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

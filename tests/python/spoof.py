"""A spoofing client for the netns fault campaign (ci/suites/45-netns-faults.sh).

From its own address it learns the board's epoch and session-table size
with INFO (public), then sends forged requests that guess credentials:
every session id in a range with random keys, forged PIDs, stale epochs,
the next request ids a victim might use; WRITE, FAA, FREE, LOCK, UNLOCK,
CLOSE_SESSION, a large READ (an amplification attempt) and OPEN_SESSION
joins with guessed keys. After each batch an INFO is the barrier: every
answer to the batch arrives before the INFO's answer.

Passes (exit 0) when every forged request got at most one answer, each
answer is header-only, no longer than the request it answers, and has
status BAD_SESSION (or RESTARTED for a stale epoch); prints the counters.

Usage: python3 spoof.py HOST PORT [ROUNDS] [SEED]
"""

import random
import socket
import struct
import sys
import time

import clio_client as cc


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    addr = (host, port)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe = cc.Session(addr, sock=sock)
    info = probe.info()
    epoch, capacity = info["epoch"], info["sessions"]
    sessions = range(1, max(2, min(capacity, 64)))
    sent = sent_bytes = answers = answer_bytes = 0
    statuses = {}
    failures = []
    barrier = 0x70000000
    t0 = time.monotonic()
    for r in range(rounds):
        batch = {}
        for _ in range(16):
            stale = rng.random() < 0.2
            h = cc.Header(
                pid=rng.randint(1, 64),
                session=rng.choice(sessions),
                key=rng.getrandbits(64),
                epoch=(epoch ^ rng.randint(1, 0xFFFF)) if stale else epoch,
                req_id=rng.randint(1, 4096),
                va=rng.choice([0, 4 << 20, 8 << 20, 1 << 48]) + 8 * rng.randint(0, 511),
                ack=rng.choice([0, rng.getrandbits(32)]),
            )
            kind = rng.randrange(9)
            payload = b""
            if kind == 0:
                h.opcode, h.total_len, payload = cc.WRITE, 8, b"spoofed!"
            elif kind == 1:
                h.opcode, h.total_len, payload = cc.FAA, 8, struct.pack(">Q", 1 << 40)
            elif kind == 2:
                h.opcode, payload = cc.FREE, struct.pack(">Q", 4 << 20)
            elif kind == 3:
                h.opcode, h.total_len = cc.LOCK, 8
            elif kind == 4:
                h.opcode, h.total_len = cc.UNLOCK, 8
            elif kind == 5:
                h.opcode = cc.CLOSE_SESSION
            elif kind == 6:
                h.opcode, h.total_len = cc.READ, 8 << 20
            elif kind == 7:
                h.opcode, h.total_len = cc.CAS, 8
                payload = struct.pack(">QQ", 0, 0xDEAD)
            else:
                # A join with a guessed key: refused by the slow path.
                h.opcode, h.epoch, h.key = cc.OPEN_SESSION, 0, 0
                payload = struct.pack(">HHIQ16x", h.session, 0, 0, rng.getrandbits(64) | 1)
                h.session = 0
            h.req_id = (r * 16 + len(batch) + 1)  # unique per batch member
            pkt = cc.encode(h, payload)
            batch[h.req_id] = (h, len(pkt), stale)
            sock.sendto(pkt, addr)
            sent += 1
            sent_bytes += len(pkt)
        barrier += 1
        sock.sendto(cc.encode(cc.Header(opcode=cc.INFO, req_id=barrier), bytes(cc.INFO_RESP_LEN)), addr)
        got = {}
        sock.settimeout(10)
        while True:
            buf, _ = sock.recvfrom(65536)
            try:
                rh, _ = cc.decode(buf)
            except cc.WireError as e:
                failures.append("undecodable answer: %s" % e)
                continue
            if rh.opcode == cc.INFO | cc.RESPONSE_BIT and rh.req_id == barrier:
                break
            answers += 1
            answer_bytes += len(buf)
            name = cc.STATUS_NAMES[rh.status] if rh.status < len(cc.STATUS_NAMES) else str(rh.status)
            statuses[name] = statuses.get(name, 0) + 1
            req = batch.get(rh.req_id)
            if req is None:
                failures.append("answer to an unknown req_id %d" % rh.req_id)
                continue
            h, plen, stale = req
            got[rh.req_id] = got.get(rh.req_id, 0) + 1
            if got[rh.req_id] > 1:
                failures.append("req_id %d answered %d times" % (rh.req_id, got[rh.req_id]))
            if len(buf) > plen:
                failures.append("req_id %d: %d-byte answer to a %d-byte request" % (rh.req_id, len(buf), plen))
            if rh.payload_len != 0:
                failures.append("req_id %d: answer with a payload (status %s)" % (rh.req_id, name))
            ok = {cc.BAD_SESSION} if h.opcode == cc.OPEN_SESSION else (
                {cc.RESTARTED} if stale else {cc.BAD_SESSION})
            if rh.status not in ok:
                failures.append("req_id %d opcode %#x: status %s" % (rh.req_id, h.opcode, name))
    print("spoof: sent=%d sent_bytes=%d answers=%d answer_bytes=%d amplification=%.3f statuses=%s wall_s=%.1f"
          % (sent, sent_bytes, answers, answer_bytes, answer_bytes / max(1, sent_bytes),
             ",".join("%s:%d" % kv for kv in sorted(statuses.items())), time.monotonic() - t0))
    for f in failures[:20]:
        print("spoof: FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""clio_tx_reply: REPLY and SESSION_REPLY answered against a model forwarding slot and fence list.

The bench is the engine: it hands a TX command over in S_RP (`s_valid`,
`s_entry`: 0 reject, 1 REPLY, 2 SESSION_REPLY; `s_desc`), with the
forwarding slot the command's tag names (valid or not, its PID, opcode, VA,
epoch), the fences of the answered PID waiting (a count) and whether other
requests of that PID still wait (then no fence may answer). A send the stage
asks for (`m_send`) takes the engine away 1–4 cycles (S_SEND, S_SEND_W); a
fence answered leaves the list. The engine's hold (`s_en` low) comes now
and then; outputs stay low while the stage does not run. A reference here,
written from the wire formats (AllocResp, OpenSessionResp, the descriptor
offsets of the package), says cycle by cycle what must happen: the answer's
fields, the record, the session entry, each send (with the payload the
builder takes then), each fence, the verdict (poll on, or the command's
MALFORMED report) and the stage's cycles (one per state of the engine's
former S_RP_*, S_SR_* and S_CMD_REJECT states: the top's cycle counts
depend on it).
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from clio_tb import PKG, desc_put as put
from tb_base import engine_cycle, param, rng, start

P = PKG
REJECT, REPLY, SESSION = 0, 1, 2
SESSIONS = 1024  # from the compiled design (setup)
IDLE_IN = ("s_valid", "s_en", "s_entry", "s_desc", "s_fw_tag_ok", "s_fw_pid", "s_fw_opcode", "s_fw_va",
           "s_fw_epoch", "s_fw_pending", "s_fw_fence_wait", "s_epoch")
OUTS = ("m_done", "m_reject", "m_load", "m_load_rec", "m_rec", "m_send", "m_fence", "m_own_clear", "m_sess_set")
ALLOC, FREE, OPEN, CLOSE = P["OP_ALLOC"], P["OP_FREE"], P["OP_OPEN_SESSION"], P["OP_CLOSE_SESSION"]


def be(v, n):
    return v.to_bytes(n, "big")


def alloc_resp(size, retries):
    """AllocResp as the builder takes it: size u64, retries u32, big-endian."""
    return int.from_bytes(be(size, 8) + be(retries, 4), "little")


def open_session_resp(sess, pid, key, epoch, dq, lq, mq):
    """OpenSessionResp: session u16, 2 reserved, pid u32, key u64, epoch u32, quotas u16 u16 u32."""
    return int.from_bytes(be(sess, 2) + bytes(2) + be(pid, 4) + be(key, 8) + be(epoch, 4) + be(dq, 2)
                          + be(lq, 2) + be(mq, 4) + bytes(4), "little")


class Cmd:
    """A REPLY / SESSION_REPLY descriptor's fields, and the descriptor."""

    def __init__(self, r, kind):
        self.pid = r.choice([5, 6, r.getrandbits(32)])
        self.status = r.choice([0, 0, 0, 1, P["STATUS_OVER_QUOTA"], P["STATUS_OVER_QUOTA"] + 1, 0xff])
        self.tag = r.choice([0, r.getrandbits(32)]) if kind == SESSION else r.getrandbits(32)
        self.close = int(r.random() < 0.4)
        self.moved = int(r.random() < 0.3)
        self.va = r.getrandbits(64)                  # REPLY: the ALLOC's VA; SESSION_REPLY: the key
        self.size = r.getrandbits(64)
        self.retries = r.getrandbits(32)
        self.sess = r.choice([0, 1, SESSIONS - 1, SESSIONS, r.randrange(1, SESSIONS), 0xffff])
        self.dq, self.lq, self.mq = r.getrandbits(16), r.getrandbits(16), r.getrandbits(32)
        flags = (P["DESC_FLAG_FIXED_OR_MOVED"] if self.moved else 0) | (P["DESC_FLAG_CLOSE"] if self.close else 0)
        d = put(0, P["SLOT_OFF_KIND"], 1, P["DESC_REPLY"] if kind == REPLY else P["DESC_SESSION_REPLY"])
        d = put(d, P["SLOT_OFF_STATUS"], 1, self.status)
        d = put(d, P["SLOT_OFF_FLAGS"], 1, flags)
        d = put(d, P["SLOT_OFF_PID"], 4, self.pid)
        d = put(d, P["SLOT_OFF_TAG"], 4, self.tag)
        d = put(d, P["SLOT_OFF_A"], 8, self.va)
        if kind == REPLY:
            d = put(d, P["SLOT_OFF_B"], 8, self.size)
            d = put(d, P["SLOT_OFF_F"], 4, self.retries)
        else:
            d = put(d, P["SLOT_OFF_B"], 2, self.sess)
            d = put(d, P["SLOT_OFF_C"], 8, self.dq | self.lq << 16 | self.mq << 32)
        self.desc = d


class Fwd:
    """The forwarding slot the tag names, the PID's fences and its other requests."""

    def __init__(self, r, cmd):
        self.tag_ok = int(r.random() < 0.85)
        self.pid = cmd.pid if r.random() < 0.8 else r.getrandbits(32)
        self.op = r.choice([ALLOC, ALLOC, FREE, OPEN, CLOSE, P["OP_READ"]])
        self.va = r.getrandbits(64)
        self.epoch = r.getrandbits(32)
        self.fences = r.choice([0, 0, 1, 2, 3])
        self.pending = int(r.random() < 0.3)


def ans_status(s):
    return s if s <= P["STATUS_OVER_QUOTA"] else P["STATUS_MALFORMED"]


def expect(entry, c, f, epoch):
    """Per active cycle of the stage: the set of outputs it raises, with their values."""
    if entry == REJECT:
        return [{"done": 1}]
    steps = []
    if entry == REPLY:
        if not (f.tag_ok and f.pid == c.pid and f.op in (ALLOC, FREE)):
            return [{}, {"done": 1}]
        alloc = f.op == ALLOC
        steps.append({"load": (ans_status(c.status), P["FLAG_MOVED"] if alloc and c.moved else 0,
                               c.va if alloc else f.va, f.epoch, P["ALLOC_RESP_LEN"] if alloc else 0,
                               alloc_resp(c.size, c.retries)), "load_rec": 1})
        steps.append({"rec": 1})
        steps.append({"send": 0})
    else:
        ok = c.status == 0
        sess_in = 0 < c.sess < SESSIONS
        want_op = CLOSE if c.close else OPEN
        if (ok and not sess_in) or (c.tag != 0 and not (f.tag_ok and f.op == want_op
                                                        and (not c.close or f.pid == c.pid))):
            return [{}, {"done": 1}]
        first = {}
        if ok:
            first["sess"] = (c.sess, int(not c.close), c.pid, c.va, c.dq, c.lq)
        if c.tag == 0:
            first["done"] = 0                        # nobody waits
            return [first]
        opened = not c.close and ok
        first["load"] = (ans_status(c.status), 0, f.va, f.epoch if c.close else epoch,
                         P["OPEN_SESSION_RESP_LEN"] if opened else 0,
                         open_session_resp(c.sess, c.pid, c.va, epoch, c.dq, c.lq, c.mq))
        steps.append(first)
        steps.append({"send": int(opened)})
    fences = f.fences
    while not f.pending and fences:
        steps.append({"fence": 1, "send": None})
        fences -= 1
    steps.append({"own_clear": 1, "done": 0})
    return steps


async def run(dut, r, entry, c, f, epoch, hold_p=0.2):
    """Hand one command over and play the engine until the verdict; returns the active cycles' outputs."""
    steps, away, first = [], 0, True
    fences = f.fences

    def drive():
        dut.s_entry.value = entry
        dut.s_desc.value = c.desc
        dut.s_fw_tag_ok.value = f.tag_ok
        dut.s_fw_pid.value = f.pid
        dut.s_fw_opcode.value = f.op
        dut.s_fw_va.value = f.va
        dut.s_fw_epoch.value = f.epoch
        dut.s_fw_pending.value = f.pending
        dut.s_fw_fence_wait.value = int(fences > 0)
        dut.s_epoch.value = epoch

    while True:
        if not await engine_cycle(dut, r, away, hold_p, OUTS, drive):
            if away:
                away -= 1
            continue
        assert int(dut.s_ready.value) == int(first), "ready only while no command is inside"
        first = False
        o = {n[2:]: int(getattr(dut, n).value) for n in OUTS}
        step = {}
        if o["load"]:
            step["load"] = tuple(int(getattr(dut, "m_r_" + n).value)
                                 for n in ("status", "flags", "va", "epoch", "plen", "payload"))
        if o["load_rec"]:
            step["load_rec"] = 1
        if o["sess_set"]:
            step["sess"] = tuple(int(getattr(dut, "m_sess" + n).value)
                                 for n in ("", "_open", "_pid", "_key", "_dquota", "_lquota"))
        for n in ("rec", "fence", "own_clear"):
            if o[n]:
                step[n] = 1
        wr = int(dut.m_wr_state.value)
        if o["send"]:
            assert not o["done"], "a send and a verdict at once"
            if o["fence"]:
                assert not wr, "a fence's answer has no payload"
                step["send"] = None
            else:
                assert wr, "the answer's payload is written as it is sent"
                step["send"] = int(dut.m_wr_open.value)
            fences -= o["fence"]
            away = r.randrange(1, 5)                 # S_SEND, S_SEND_W
        else:
            assert not wr, "a payload written without a send"
        if o["done"]:
            step["done"] = o["reject"]
        else:
            assert not o["reject"], "a rejection without the verdict"
        steps.append(step)
        if o["done"]:
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
            await Timer(1, unit="ns")
            assert int(dut.s_ready.value) == 1, "the stage idles after its verdict"
            return steps
        assert len(steps) < 40, steps


async def setup(dut):
    global SESSIONS
    await start(dut, idle=IDLE_IN)
    assert param(dut, "DATA_WIDTH") == 512
    SESSIONS = param(dut, "SESSIONS")
    return rng()


def outcome(steps):
    last = steps[-1]
    return ("reject" if last["done"] else "poll", sum("fence" in s for s in steps), "sess" in steps[0],
            next((s["send"] for s in steps if s.get("send") is not None), "-"))


@cocotb.test()
async def replies(dut):
    """REPLY: the slot's checks, the answer's fields, the record, the send, the fences, the verdict."""
    r = await setup(dut)
    seen = set()
    for _ in range(400):
        c = Cmd(r, REPLY)
        f = Fwd(r, c)
        epoch = r.getrandbits(32)
        want = expect(REPLY, c, f, epoch)
        got = await run(dut, r, REPLY, c, f, epoch)
        assert got == want, (got, want)
        seen.add(outcome(got))
    assert {o[0] for o in seen} == {"reject", "poll"}, seen
    assert {o[1] for o in seen} >= {0, 1, 2, 3}, seen


@cocotb.test()
async def session_replies(dut):
    """SESSION_REPLY: installed or cleared entries, tagged answers (OpenSessionResp), untagged ones, rejections."""
    r = await setup(dut)
    seen = set()
    for _ in range(600):
        c = Cmd(r, SESSION)
        f = Fwd(r, c)
        if r.random() < 0.5:
            f.op = CLOSE if c.close else OPEN        # the slot holds what the tag names, more often
        epoch = r.getrandbits(32)
        want = expect(SESSION, c, f, epoch)
        got = await run(dut, r, SESSION, c, f, epoch)
        assert got == want, (got, want)
        seen.add(outcome(got))
    # Rejected, untagged (with and without an entry), answered with and without a payload, fences after.
    assert ("reject", 0, False, "-") in seen, seen
    assert ("poll", 0, True, "-") in seen and ("poll", 0, False, "-") in seen, seen
    assert {o[3] for o in seen} >= {0, 1}, seen
    assert {o[1] for o in seen} >= {1, 2}, seen


@cocotb.test()
async def rejections(dut):
    """The reject entry (a command clio_tx_cmd refused): the report verdict in the cycle it is taken."""
    r = await setup(dut)
    for _ in range(50):
        c = Cmd(r, r.choice([REPLY, SESSION]))
        f = Fwd(r, c)
        got = await run(dut, r, REJECT, c, f, r.getrandbits(32))
        assert got == [{"done": 1}], got


@cocotb.test()
async def reset_mid_reply(dut):
    """A reset while the engine is away on the answer's send leaves the stage idle for the next command."""
    r = await setup(dut)
    c = Cmd(r, REPLY)
    f = Fwd(r, c)
    f.tag_ok, f.pid, f.op = 1, c.pid, ALLOC
    dut.s_entry.value = REPLY
    dut.s_desc.value = c.desc
    dut.s_fw_tag_ok.value, dut.s_fw_pid.value, dut.s_fw_opcode.value = 1, c.pid, ALLOC
    dut.s_en.value = 1
    dut.s_valid.value = 1
    for _ in range(3):                               # the check, the record, the send
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    await Timer(1, unit="ns")
    assert int(dut.s_ready.value) == 0, "the reply is inside"
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    await Timer(1, unit="ns")
    assert int(dut.s_ready.value) == 1, "not ready after a reset with a reply inside"
    got = await run(dut, r, REJECT, c, f, 0)
    assert got == [{"done": 1}], got

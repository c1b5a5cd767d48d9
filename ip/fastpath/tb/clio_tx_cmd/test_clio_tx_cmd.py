"""clio_tx_cmd: TX-ring commands checked and carried out against a model page table, TLB and free list.

The bench is the engine: it hands a popped descriptor over (`s_valid`,
`s_desc`), performs the slot read the stage asks for (`m_call_valid`) against
a small page-table memory (64-byte beats, four 16-byte slots each), leaves
for a random number of cycles as the engine's memory states do, and comes
back with the slot (`s_old_pte`; random bytes before the read, so a stage
that uses it early is caught), and applies the slot write of a verdict 5
(`m_mem_wdata` under `m_mem_wstrb`) to the beat. The engine's hold (`s_en`
low) comes now and then. A reference here, written from the wire formats
(package offsets and flags), says per command what must happen: the verdict,
the TLB invalidations in order (exact ones with a page size, ranges with a
page count; one that does not invalidate still loads the fields), the beat
after the command, the free-list push, epoch and gate strobes, the VA a
rejection reports and the stage's cycles (one per state of the engine's
former S_CMD* states: the top's cycle counts depend on it).
"""

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from clio_tb import PKG, desc_put as put
from tb_base import engine_cycle, param, reset_with_one_inside, rng, start

P = PKG
POLL, REJECT, REPLY, SESSION, OF_ANS, WRITE_POLL = 0, 1, 2, 3, 4, 5
OF_ON = 1  # from the compiled design (setup)
IDLE_IN = ("s_valid", "s_en", "s_desc", "s_in_range", "s_slot_addr", "s_data_start", "s_data_end",
           "s_old_pte", "s_push_known", "s_push_ready", "s_gt_set_ok", "s_of_done", "s_of_answer")
OUTS = ("m_done", "m_call_valid", "m_va_load", "m_inv_load", "m_push", "m_epoch", "m_gt_set", "m_of_frag")
BEAT = 64
M64 = (1 << 64) - 1



def pte(pid, ppn, vpn, perms, flags):
    v = put(0, P["PTE_OFF_PID"], 4, pid)
    v = put(v, P["PTE_OFF_PPN"], 4, ppn)
    v = put(v, P["PTE_OFF_VPN"], 6, vpn)
    v = put(v, P["PTE_OFF_PERMS"], 1, perms)
    return put(v, P["PTE_OFF_FLAGS"], 1, flags)


def field(v, off, width):
    return (v >> (8 * off)) & ((1 << (8 * width)) - 1)


def flags_of(shift, alloc, valid, reserved=0):
    return ((shift & 31) << P["PTE_PAGE_SHIFT_SHIFT"]) | (P["PTE_FLAG_ALLOCATED"] if alloc else 0) \
        | (P["PTE_FLAG_VALID"] if valid else 0) | (P["PTE_FLAG_RESERVED"] if reserved else 0)


def parses(p):
    f = field(p, P["PTE_OFF_FLAGS"], 1)
    perms = field(p, P["PTE_OFF_PERMS"], 1)
    shift = (f >> P["PTE_PAGE_SHIFT_SHIFT"]) & 31
    alloc = f & P["PTE_FLAG_ALLOCATED"]
    valid = f & P["PTE_FLAG_VALID"]
    return (not f & P["PTE_FLAG_RESERVED"]) and (perms & ~(P["PERM_READ"] | P["PERM_WRITE"])) == 0 \
        and (not alloc or P["PTE_MIN_PAGE_SHIFT"] <= shift <= P["PTE_MAX_PAGE_SHIFT"]) \
        and (not valid or alloc)


def in_data(ppn, shift, lo, hi):
    s = ppn << shift
    return s >= lo and s + (1 << shift) <= hi


class Env:
    """The engine's surroundings for one command: page-table beat, data region, free list, gate, reassembler."""

    def __init__(self, r):
        self.r = r
        self.beat_addr = r.randrange(0, 1 << 20) * BEAT
        self.slot = r.randrange(4)
        self.beat = bytearray(r.getrandbits(8) for _ in range(BEAT))
        self.in_range = 1
        self.lo = r.randrange(0, 1 << 20) << 12
        self.hi = self.lo + (r.randrange(1, 64) << 12)
        self.push_known = 1
        self.push_ready = 1
        self.gt_set_ok = 1
        self.of_done = 0
        self.of_answer = 0
        self.read = False

    @property
    def addr(self):
        return self.beat_addr + 16 * self.slot

    def old(self):
        return int.from_bytes(self.beat[16 * self.slot:16 * self.slot + 16], "little")

    def set_old(self, v):
        self.beat[16 * self.slot:16 * self.slot + 16] = v.to_bytes(16, "little")

    def drive(self, dut):
        dut.s_in_range.value = self.in_range
        dut.s_slot_addr.value = self.addr
        dut.s_data_start.value = self.lo
        dut.s_data_end.value = self.hi
        dut.s_old_pte.value = self.old() if self.read else self.r.getrandbits(128)
        dut.s_push_known.value = self.push_known
        dut.s_push_ready.value = self.push_ready
        dut.s_gt_set_ok.value = self.gt_set_ok
        dut.s_of_done.value = self.of_done
        dut.s_of_answer.value = self.of_answer


async def run(dut, r, desc, env, hold_p=0.2):
    """Hand one command over and play the engine until the verdict; returns what happened."""
    out = {"inv": [], "push": 0, "epoch": 0, "gt_set": 0, "frag": 0, "va": [], "active": 0, "reads": 0}
    away = 0
    first = True

    def drive():
        dut.s_desc.value = desc
        env.drive(dut)

    while True:
        if not await engine_cycle(dut, r, away, hold_p, OUTS, drive):
            if away:
                away -= 1
                if away == 0:
                    env.read = True                  # the engine is back with the slot
            continue
        assert int(dut.s_ready.value) == int(first), "ready only while no command is inside"
        first = False
        out["active"] += 1
        if int(dut.m_va_load.value):
            out["va"].append(int(dut.m_va.value))
        if int(dut.m_inv_load.value):
            exact = int(dut.m_inv_exact.value)
            out["inv"].append((int(dut.m_inv_valid.value), exact, int(dut.m_inv_pid.value),
                               int(dut.m_inv_vpn.value),
                               int(dut.m_inv_shift.value) if exact else int(dut.m_inv_pages.value)))
        out["push"] += int(dut.m_push.value)
        out["epoch"] += int(dut.m_epoch.value)
        out["gt_set"] += int(dut.m_gt_set.value)
        out["frag"] += int(dut.m_of_frag.value)
        if int(dut.m_call_valid.value):
            assert not int(dut.m_done.value), "a read and a verdict at once"
            assert int(dut.m_mem_addr.value) == env.addr, "the read names another slot"
            out["reads"] += 1
            away = r.randrange(1, 4)                 # S_MEM_RD, S_MEM_RDW
            await RisingEdge(dut.clk)
            continue
        if int(dut.m_done.value):
            out["next"] = int(dut.m_next.value)
            if out["next"] == WRITE_POLL:
                data = int(dut.m_mem_wdata.value).to_bytes(BEAT, "little")
                strb = int(dut.m_mem_wstrb.value)
                for j in range(BEAT):
                    if strb >> j & 1:
                        env.beat[j] = data[j]
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
            await Timer(1, unit="ns")
            assert int(dut.s_ready.value) == 1, "the stage idles after its verdict"
            return out


def random_pte(r, env, pid=None, vpn=None):
    """A PTE with the flag mixes that matter: (not) allocated, valid, reserved, odd perms and sizes."""
    shift = r.choice([12, 12, 21, 30, 11, 31, r.randrange(32)])
    alloc, valid = r.choice([(1, 1), (1, 0), (0, 0), (0, 1), (1, 1)])
    reserved = int(r.random() < 0.1)
    perms = r.choice([1, 2, 3, 3, 0, 4 if r.random() < 0.2 else 3])
    span = max((env.hi - env.lo) >> shift, 1)
    ppn = (env.lo >> shift) + r.randrange(-1, span + 1) if r.random() < 0.8 else r.getrandbits(32)
    return pte(r.getrandbits(32) if pid is None else pid, ppn & 0xFFFFFFFF,
               r.getrandbits(48) if vpn is None else vpn, perms, flags_of(shift, alloc, valid, reserved))


def expect_pte_write(env, new, old):
    """PTE_WRITE: (verdict, invalidations, slot after, cycles, reads)."""
    f = field(new, P["PTE_OFF_FLAGS"], 1)
    shift = (f >> P["PTE_PAGE_SHIFT_SHIFT"]) & 31
    valid = f & P["PTE_FLAG_VALID"]
    if not env.in_range or (valid and not in_data(field(new, P["PTE_OFF_PPN"], 4), shift, env.lo, env.hi)):
        return REJECT, [], old, 1, 0
    of = field(old, P["PTE_OFF_FLAGS"], 1)
    inv = [(int(bool(parses(old) and of & P["PTE_FLAG_ALLOCATED"])), 1, field(old, P["PTE_OFF_PID"], 4),
            field(old, P["PTE_OFF_VPN"], 6), (of >> P["PTE_PAGE_SHIFT_SHIFT"]) & 31),
           (1, 1, field(new, P["PTE_OFF_PID"], 4), field(new, P["PTE_OFF_VPN"], 6), shift)]
    return WRITE_POLL, inv, new, 4, 1


def expect_pte_remove(env, pid, vpn, old):
    if not env.in_range:
        return REJECT, [], old, 1, 0
    of = field(old, P["PTE_OFF_FLAGS"], 1)
    if not of & P["PTE_FLAG_ALLOCATED"] or field(old, P["PTE_OFF_PID"], 4) != pid \
            or field(old, P["PTE_OFF_VPN"], 6) != vpn:
        return REJECT, [], old, 2, 1
    shift = (of >> P["PTE_PAGE_SHIFT_SHIFT"]) & 31 if parses(old) else 0
    return WRITE_POLL, [(1, 1, pid, vpn, shift)], 0, 3, 1


async def setup(dut):
    global OF_ON
    await start(dut, idle=IDLE_IN)
    assert param(dut, "DATA_WIDTH") == 512
    OF_ON = param(dut, "OF_ON")
    return rng()


def check_rest(o, env, before, slot_after):
    """The other three slots of the beat are untouched; the command's slot holds `slot_after`."""
    for k in range(4):
        got = bytes(env.beat[16 * k:16 * k + 16])
        want = slot_after.to_bytes(16, "little") if k == env.slot else before[16 * k:16 * k + 16]
        assert got == want, f"slot {k} of the beat: {got.hex()} != {want.hex()} ({o})"


@cocotb.test()
async def page_table_commands(dut):
    """PTE_WRITE and PTE_REMOVE: range and data-region checks, the old tag and the new one invalidated, the slot."""
    r = await setup(dut)
    seen = set()
    for _ in range(300):
        env = Env(r)
        env.in_range = int(r.random() < 0.9)
        old = random_pte(r, env)
        env.set_old(old)
        before = bytes(env.beat)
        if r.random() < 0.5:
            new = random_pte(r, env)
            desc = put(put(0, P["SLOT_OFF_KIND"], 1, P["DESC_PTE_WRITE"]), P["SLOT_OFF_A"], 16, new)
            desc |= r.getrandbits(32) << (8 * P["SLOT_OFF_PID"])          # unused by PTE_WRITE
            want = expect_pte_write(env, new, old)
            kind = "write"
        else:
            pid, vpn = field(old, P["PTE_OFF_PID"], 4), field(old, P["PTE_OFF_VPN"], 6)
            if r.random() < 0.3:
                pid ^= 1 << r.randrange(32)
            elif r.random() < 0.2:
                vpn ^= 1 << r.randrange(48)
            desc = put(put(put(0, P["SLOT_OFF_KIND"], 1, P["DESC_PTE_REMOVE"]), P["SLOT_OFF_PID"], 4, pid),
                       P["SLOT_OFF_A"], 8, vpn)
            want = expect_pte_remove(env, pid, vpn, old)
            kind = "remove"
        o = await run(dut, r, desc, env)
        nxt, inv, slot_after, active, reads = want
        seen.add((kind, nxt, active))
        assert o["next"] == nxt, (kind, o, want)
        assert o["inv"] == inv, (kind, o["inv"], inv)
        assert (o["active"], o["reads"]) == (active, reads), (kind, o, want)
        assert o["va"] == [0], o                     # a rejection reports VA 0
        assert (o["push"], o["epoch"], o["gt_set"], o["frag"]) == (0, 0, 0, 0), o
        check_rest(o, env, before, slot_after)
    assert seen >= {("write", REJECT, 1), ("write", WRITE_POLL, 4), ("remove", REJECT, 1),
                    ("remove", REJECT, 2), ("remove", WRITE_POLL, 3)}, seen


@cocotb.test()
async def other_commands(dut):
    """TLB_INVALIDATE, FREE_PA_PUSH, EPOCH, GATE_SET, OFFLOAD_REPLY, the replies and unknown kinds."""
    r = await setup(dut)
    seen = set()
    for _ in range(400):
        env = Env(r)
        desc = r.getrandbits(512) & ~0xFF
        kind = r.choice(["inv", "push", "epoch", "gate", "offload", "reply", "session", "unknown"])
        want = {"next": POLL, "inv": [], "push": 0, "epoch": 0, "gt_set": 0, "frag": 0, "va": [0], "active": 1}
        if kind == "inv":
            desc |= P["DESC_TLB_INVALIDATE"]
            want["inv"] = [(1, 0, field(desc, P["SLOT_OFF_PID"], 4), field(desc, P["SLOT_OFF_A"], 8),
                            field(desc, P["SLOT_OFF_F"], 4))]
        elif kind == "push":
            desc |= P["DESC_FREE_PA_PUSH"]
            shift = r.choice([12, 21, 30, 31, 32, 40, 63, 64, 200])
            span = max((env.hi - env.lo) >> min(shift, 63), 1)
            ppn = ((env.lo >> min(shift, 63)) + r.randrange(-1, span + 1)) & 0xFFFFFFFF
            desc = desc & ~(0xFF << (8 * P["SLOT_OFF_PAGE_SHIFT"])) & ~(0xFFFFFFFF << (8 * P["SLOT_OFF_B"]))
            desc = put(put(desc, P["SLOT_OFF_PAGE_SHIFT"], 1, shift), P["SLOT_OFF_B"], 4, ppn)
            env.push_known = int(r.random() < 0.9)
            env.push_ready = int(r.random() < 0.9)
            want["va"] = [(ppn << min(shift, 63)) & M64]
            ok = env.push_known and env.push_ready and shift <= 31 and in_data(ppn, shift, env.lo, env.hi)
            if ok:
                want.update(push=1, active=2)
            else:
                want["next"] = REJECT
            kind += " ok" if ok else " refused"
        elif kind == "epoch":
            desc |= P["DESC_EPOCH"]
            want["epoch"] = 1
        elif kind == "gate":
            desc |= P["DESC_GATE_SET"]
            env.gt_set_ok = r.getrandbits(1)
            if env.gt_set_ok:
                want["gt_set"] = 1
            else:
                want["next"] = REJECT
            kind += str(env.gt_set_ok)
        elif kind == "offload":
            desc |= P["DESC_OFFLOAD_REPLY"]
            env.of_done, env.of_answer = r.choice([(0, 0), (1, 1), (1, 0)])
            if not OF_ON:
                env.of_done = env.of_answer = 0      # tied off without the pass-through
                want["next"] = REJECT
            else:
                want["frag"] = 1
                want["next"] = {(0, 0): POLL, (1, 1): OF_ANS, (1, 0): REJECT}[(env.of_done, env.of_answer)]
            kind += str((env.of_done, env.of_answer))
        elif kind == "reply":
            desc |= P["DESC_REPLY"]
            want["next"] = REPLY
        elif kind == "session":
            desc |= P["DESC_SESSION_REPLY"]
            want["next"] = SESSION
        else:
            known = {P[k] for k in ("DESC_PTE_WRITE", "DESC_PTE_REMOVE", "DESC_TLB_INVALIDATE",
                                    "DESC_FREE_PA_PUSH", "DESC_REPLY", "DESC_SESSION_REPLY", "DESC_EPOCH",
                                    "DESC_GATE_SET", "DESC_OFFLOAD_REPLY")}
            desc |= r.choice([k for k in range(256) if k not in known])
            want["next"] = REJECT
        before = bytes(env.beat)
        o = await run(dut, r, desc, env)
        seen.add(kind)
        got = {k: o[k] for k in want}
        assert got == want, (kind, got, want)
        assert o["reads"] == 0 and bytes(env.beat) == before, (kind, o)
    # Three offload outcomes with the pass-through, one (rejected) without.
    assert len(seen) == (12 if OF_ON else 10), seen


@cocotb.test()
async def reset_mid_command(dut):
    """A reset while a PTE_WRITE waits on its slot read leaves the stage ready for the next command."""
    r = await setup(dut)
    env = Env(r)
    new = pte(1, env.lo >> 12, 5, 3, flags_of(12, 1, 1))
    dut.s_en.value = 1
    dut.s_valid.value = 1
    dut.s_desc.value = put(put(0, P["SLOT_OFF_KIND"], 1, P["DESC_PTE_WRITE"]), P["SLOT_OFF_A"], 16, new)
    env.drive(dut)
    await Timer(1, unit="ns")
    assert int(dut.m_call_valid.value) == 1
    await reset_with_one_inside(dut, "command")
    o = await run(dut, r, P["DESC_EPOCH"], Env(r), hold_p=0)
    assert (o["next"], o["epoch"], o["active"]) == (POLL, 1, 1), o

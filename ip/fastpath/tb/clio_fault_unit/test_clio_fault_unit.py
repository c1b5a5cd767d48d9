"""clio_fault_unit: per-size FIFOs, PTE image, TLB insert, PA_CONSUMED notice, fixed 1-cycle
latency, empty-FIFO failure, unknown sizes refused."""

import random

import cocotb
from cocotb.triggers import RisingEdge

from clio_tb import param, pte_bytes, reset, start_clock

SHIFTS = [22, 21, 12]  # the RTL default SHIFTS, entry 0 first


async def push(dut, shift, ppn):
    dut.s_push_shift.value, dut.s_push_ppn.value, dut.s_push_valid.value = shift, ppn, 1
    await RisingEdge(dut.clk)
    ok = bool(dut.s_push_ready.value)
    dut.s_push_valid.value = 0
    return ok


@cocotb.test()
async def faults(dut):
    """Random pushes and faults agree with per-size Python FIFOs; every fault takes one cycle."""
    depth = param(dut, "FIFO_DEPTH")  # the sweep point
    start_clock(dut)
    dut.s_valid.value = 0
    dut.s_push_valid.value = 0
    dut.m_ready.value = 1
    dut.m_pte_ready.value = 1
    dut.m_note_ready.value = 1
    await reset(dut)
    rng = random.Random(int(cocotb.RANDOM_SEED))
    fifos = {s: [] for s in SHIFTS}
    assert not await push(dut, 13, 1), "unknown page size must be refused"
    n_ok = n_empty = 0
    for n in range(400):
        if rng.random() < 0.5:
            s = rng.choice(SHIFTS)
            ppn = rng.getrandbits(32)
            accepted = await push(dut, s, ppn)
            assert accepted == (len(fifos[s]) < depth)
            if accepted:
                fifos[s].append(ppn)
            continue
        s = rng.choice(SHIFTS)
        req = dict(pid=rng.getrandbits(32), vpn=rng.getrandbits(48), bucket=rng.getrandbits(16),
                   slot=rng.getrandbits(4), perms=rng.randrange(1, 4), shift=s)
        dut.s_pid.value, dut.s_vpn.value, dut.s_bucket.value = req["pid"], req["vpn"], req["bucket"]
        dut.s_slot.value, dut.s_perms.value, dut.s_shift.value = req["slot"], req["perms"], s
        dut.s_user.value = n & 0xFF
        room = rng.random() < 0.85
        unknown = rng.random() < 0.05
        if unknown:
            dut.s_shift.value = 13
        dut.s_rx_room.value = int(room)
        dut.s_valid.value = 1
        await RisingEdge(dut.clk)
        assert dut.s_ready.value == 1
        dut.s_valid.value = 0
        await RisingEdge(dut.clk)
        # Exactly one cycle after acceptance the result and the side effects are out.
        assert dut.m_valid.value == 1 and int(dut.m_user.value) == n & 0xFF
        if unknown:
            assert dut.m_ok.value == 0 and int(dut.m_code.value) == 1
            assert dut.m_pte_valid.value == 0
        elif fifos[s] and not room:
            assert dut.m_ok.value == 0 and int(dut.m_code.value) == 3
            assert dut.m_pte_valid.value == 0 and dut.m_note_valid.value == 0
        elif fifos[s]:
            ppn = fifos[s].pop(0)
            assert int(dut.m_code.value) == 0
            n_ok += 1
            assert dut.m_ok.value == 1 and int(dut.m_ppn.value) == ppn
            assert dut.m_pte_valid.value == 1 and dut.m_tlb_valid.value == 1 and dut.m_note_valid.value == 1
            img = int(dut.m_pte_data.value).to_bytes(16, "little")
            assert img == pte_bytes(req["pid"], req["vpn"], ppn, req["perms"], True, True, s)
            assert (int(dut.m_pte_bucket.value), int(dut.m_pte_slot.value)) == (req["bucket"], req["slot"])
            assert (int(dut.m_tlb_pid.value), int(dut.m_tlb_vpn.value), int(dut.m_tlb_ppn.value),
                    int(dut.m_tlb_shift.value), int(dut.m_tlb_perms.value)) == (
                        req["pid"], req["vpn"], ppn, s, req["perms"])
            assert (int(dut.m_note_pid.value), int(dut.m_note_vpn.value), int(dut.m_note_ppn.value),
                    int(dut.m_note_shift.value)) == (req["pid"], req["vpn"], ppn, s)
        else:
            n_empty += 1
            assert dut.m_ok.value == 0 and int(dut.m_code.value) == 2
            assert dut.m_pte_valid.value == 0 and dut.m_tlb_valid.value == 0 and dut.m_note_valid.value == 0
    # Directed tail, whatever the seed drew: drain every size's FIFO, then
    # fault once more on each, which must find it empty.
    for s in SHIFTS:
        while True:
            dut.s_pid.value, dut.s_vpn.value, dut.s_bucket.value = 1, n, 0
            dut.s_slot.value, dut.s_perms.value, dut.s_shift.value = 0, 3, s
            dut.s_rx_room.value = 1
            dut.s_valid.value = 1
            await RisingEdge(dut.clk)
            dut.s_valid.value = 0
            await RisingEdge(dut.clk)
            assert dut.m_valid.value == 1
            if not fifos[s]:
                assert dut.m_ok.value == 0 and int(dut.m_code.value) == 2
                n_empty += 1
                break
            assert dut.m_ok.value == 1 and int(dut.m_ppn.value) == fifos[s].pop(0)
            n_ok += 1
    assert n_ok > 50 and n_empty >= len(SHIFTS), (n_ok, n_empty)

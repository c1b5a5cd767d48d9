"""clio_perm_check: exhaustive over found x perms x valid x needed access."""

import cocotb
from cocotb.triggers import Timer

from clio_tb import PKG as P


@cocotb.test()
async def exhaustive(dut):
    """Unmapped before permission before fault, for every combination."""
    for found in (0, 1):
        for perms in range(4):
            for valid in (0, 1):
                for need in (P["PERM_READ"], P["PERM_WRITE"]):
                    dut.found.value = found
                    dut.pte_perms.value = perms
                    dut.pte_flags.value = P["PTE_FLAG_ALLOCATED"] | (P["PTE_FLAG_VALID"] if valid else 0)
                    dut.need.value = need
                    await Timer(1, unit="ns")
                    if not found:
                        want, fault = P["STATUS_UNMAPPED"], 0
                    elif perms & need != need:
                        want, fault = P["STATUS_PERMISSION"], 0
                    else:
                        want, fault = P["STATUS_OK"], int(not valid)
                    assert int(dut.status.value) == want, (found, perms, valid, need)
                    assert int(dut.fault.value) == fault

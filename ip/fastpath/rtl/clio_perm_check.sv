// clio_perm_check: translation outcome and permission check of one page access.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// Combinational. Given the translation of one page (from the TLB or the
// bucket read) and the access the opcode needs, decides: UNMAPPED when no
// allocated slot of (pid, vpn) exists, PERMISSION when the page's bits lack
// the needed ones, otherwise OK; `fault` asks the fault unit for a physical
// page (allocated but not yet valid). Permission is checked before a fault
// so a forbidden first touch consumes no free page.
module clio_perm_check (
    input  wire       found,
    input  wire [7:0] pte_perms,
    input  wire [7:0] pte_flags,
    input  wire [7:0] need,
    output wire [7:0] status,
    output wire       fault
);

import clio_pkg::STATUS_OK;
import clio_pkg::STATUS_UNMAPPED;
import clio_pkg::STATUS_PERMISSION;
import clio_pkg::PTE_FLAG_VALID;

wire perm_ok = (pte_perms & need) == need;

assign status = !found ? STATUS_UNMAPPED : (!perm_ok ? STATUS_PERMISSION : STATUS_OK);
assign fault = found && perm_ok && (pte_flags & PTE_FLAG_VALID) == 8'd0;

endmodule

`resetall

// clio_sync_unit: the read-modify-write of the atomics and locks on one 8-byte word.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// One registered stage: from the opcode, the word's old value (little-endian
// in DRAM, given here as a number) and the operands, the value to store (if
// any) and the response status. TAS stores 1; CAS stores `new` when the word
// equals `expected`; FAA adds (wrapping); LOCK stores 1 when the word is 0
// and otherwise answers BUSY without writing; UNLOCK stores 0. The old value
// is always returned. The caller serialises operations on a word (the
// pipeline holds one atomic in flight), which is what makes them atomic.
module clio_sync_unit (
    input  wire        clk,
    input  wire        rst,

    input  wire [7:0]  s_opcode,
    input  wire [63:0] s_old,
    input  wire [63:0] s_arg0,
    input  wire [63:0] s_arg1,
    input  wire        s_valid,

    output wire [63:0] m_old,
    output wire [63:0] m_new,
    output wire        m_write,
    output wire [7:0]  m_status,
    output wire        m_valid
);

import clio_pkg::OP_TAS;
import clio_pkg::OP_CAS;
import clio_pkg::OP_FAA;
import clio_pkg::OP_LOCK;
import clio_pkg::OP_UNLOCK;
import clio_pkg::STATUS_OK;
import clio_pkg::STATUS_BUSY;
import clio_pkg::STATUS_MALFORMED;

reg [63:0] new_next;
reg        write_next;
reg [7:0]  status_next;

always_comb begin
    new_next = s_old;
    write_next = 1'b0;
    status_next = STATUS_OK;
    case (s_opcode)
        OP_TAS: begin
            new_next = 64'd1;
            write_next = 1'b1;
        end
        OP_CAS: begin
            new_next = s_arg1;
            write_next = s_old == s_arg0;
        end
        OP_FAA: begin
            new_next = s_old + s_arg0;
            write_next = 1'b1;
        end
        OP_LOCK: begin
            new_next = 64'd1;
            write_next = s_old == 64'd0;
            status_next = s_old == 64'd0 ? STATUS_OK : STATUS_BUSY;
        end
        OP_UNLOCK: begin
            new_next = 64'd0;
            write_next = 1'b1;
        end
        default: begin
            status_next = STATUS_MALFORMED;
        end
    endcase
end

reg [63:0] old_reg = 0;
reg [63:0] new_reg = 0;
reg        write_reg = 1'b0;
reg [7:0]  status_reg = 0;
reg        valid_reg = 1'b0;

always_ff @(posedge clk) begin
    valid_reg <= s_valid;
    if (s_valid) begin
        old_reg <= s_old;
        new_reg <= new_next;
        write_reg <= write_next;
        status_reg <= status_next;
    end
    if (rst) begin
        valid_reg <= 1'b0;
    end
end

assign m_old = old_reg;
assign m_new = new_reg;
assign m_write = write_reg;
assign m_status = status_reg;
assign m_valid = valid_reg;

endmodule

`resetall

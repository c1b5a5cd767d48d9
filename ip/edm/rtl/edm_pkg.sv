// edm_pkg: EDM 64b/66b block types and message field offsets.
// GENERATED from clio-wire (host-sdk/wire/src/edm.rs); do not edit.
// Regenerate: cargo run -p edm --bin edm-report -- --write-pkg ip/edm/rtl/edm_pkg.sv
`resetall
`timescale 1ns / 1ps
`default_nettype none

/* verilator lint_off UNUSEDPARAM */
package edm_pkg;

    localparam logic [1:0] SYNC_DATA = 2'b10;
    localparam logic [1:0] SYNC_CTRL = 2'b01;

    localparam logic [7:0] BT_IDLE        = 8'h1e;
    localparam logic [7:0] BT_CTRL_OS4    = 8'h2d;
    localparam logic [7:0] BT_CTRL_START4 = 8'h33;
    localparam logic [7:0] BT_OS0_START4  = 8'h66;
    localparam logic [7:0] BT_OS0_OS4     = 8'h55;
    localparam logic [7:0] BT_START0      = 8'h78;
    localparam logic [7:0] BT_OS0_CTRL    = 8'h4b;
    localparam logic [7:0] BT_TERM0       = 8'h87;
    localparam logic [7:0] BT_TERM1       = 8'h99;
    localparam logic [7:0] BT_TERM2       = 8'haa;
    localparam logic [7:0] BT_TERM3       = 8'hb4;
    localparam logic [7:0] BT_TERM4       = 8'hcc;
    localparam logic [7:0] BT_TERM5       = 8'hd2;
    localparam logic [7:0] BT_TERM6       = 8'he1;
    localparam logic [7:0] BT_TERM7       = 8'hff;
    localparam logic [7:0] BT_MS          = 8'h10;
    localparam logic [7:0] BT_MT          = 8'h20;
    localparam logic [7:0] BT_MST         = 8'h40;
    localparam logic [7:0] BT_N           = 8'h04;
    localparam logic [7:0] BT_G           = 8'h08;

    localparam logic [2:0] MSG_KIND_RREQ   = 3'd0;
    localparam logic [2:0] MSG_KIND_WREQ   = 3'd1;
    localparam logic [2:0] MSG_KIND_RMWREQ = 3'd2;
    localparam logic [2:0] MSG_KIND_RRES   = 3'd3;
    localparam logic [3:0] RMW_OP_CAS  = 4'd0; // operands 16 B, result 1 B
    localparam logic [3:0] RMW_OP_FAA  = 4'd1; // operands 8 B, result 8 B
    localparam logic [3:0] RMW_OP_SWAP = 4'd2; // operands 8 B, result 8 B
    localparam logic [3:0] RMW_OP_TAS  = 4'd3; // operands 0 B, result 1 B

    localparam int TYPE_LSB      = 0;
    localparam int MSG_KIND_LSB  = 8;
    localparam int MSG_LAST_BIT  = 11;
    localparam int MSG_OP_LSB    = 12;
    localparam int MSG_PEER_LSB  = 16;
    localparam int MSG_ID_LSB    = 32;
    localparam int MSG_LEN_LSB   = 40;
    localparam int MSG_BODY0_LSB = 56;
    localparam int CB_PEER_LSB   = 8;
    localparam int CB_ID_LSB     = 24;
    localparam int CB_LEN_LSB    = 32;
    localparam int CB_KIND_LSB   = 48;
    localparam int ADDR_BYTES    = 8;

    // Clio over EDM (host-sdk/wire/src/edm_clio.rs).
    localparam int CLIO_HEADER_LEN        = 56;
    localparam int CLIO_OP_READ           = 3;
    localparam int CLIO_OP_FIRST          = 1;
    localparam int CLIO_OP_LAST           = 15;
    localparam int CARRY_READ             = 1;
    localparam int CARRY_WRITE            = 2;
    localparam int CARRY_REFUSE           = 3;
    localparam int REFUSE_OPCODE          = 1;
    localparam int REFUSE_READ_LEN        = 2;
    localparam int REFUSE_PACKET_LEN      = 3;
    localparam int REFUSE_SHORT           = 4;
    localparam int EC_MAX_READ            = 57344;
    localparam int EC_MAX_RECORD_PACKET   = 4088;
    localparam int EC_READ_ANSWER_PAYLOAD = 512;
    localparam int EC_RECORD_HEADER       = 8;
    localparam int EC_SLOTS               = 8;
    localparam int EC_INBOX_BASE          = 0;
    localparam int EC_INBOX_SLOT_BYTES    = 4096;
    localparam int EC_OUTBOX_BASE         = 524288;
    localparam int EC_OUTBOX_SLOT_BYTES   = 65536;
    localparam int CLIO_VERSION           = 2;
    localparam int CLIO_OP_NACK           = 255;
    localparam int CLIO_RESPONSE_BIT      = 128;
    localparam int EC_STATUS_TOO_LARGE    = 12;
    localparam int EC_STATUS_OPCODE       = 8;
    localparam logic [31:0] CLIO_CRC32C_POLY_REFLECTED = 32'h82f63b78;

endpackage
/* verilator lint_on UNUSEDPARAM */

`resetall

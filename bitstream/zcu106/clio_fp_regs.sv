// clio_fp_regs: AXI4-Lite register block of the fast path (cfg_* inputs, reset, poll doorbell, status).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// The register map is host-sdk/wire/src/fpregs.rs; every offset and width
// here is a FPREG_* constant of the generated clio_pkg. 32-bit registers;
// a field wider than 32 bits spans consecutive words, low word first.
// wstrb is honoured byte by byte on read-write registers.
// Responses: an offset no register holds (within the ADDR_WIDTH window) is
// answered SLVERR, reads returning 0; so is a write to a read-only register
// (nothing changes). DOORBELL is write-only: reads return 0 (OKAY).
// CONTROL.RESET is set out of reset: the firmware writes the configuration,
// then clears it to release the fast path (`fp_rst`). A doorbell write with
// bit 0 set pulses `poll` for one cycle (ignored while CONTROL.RESET is
// set), and STATUS.POLL_BUSY stays set until `poll_done`.
// CONTROL.READ_STREAMS drives `cfg_streams_on` (long READ answers of
// different clients interleaved packet by packet). The fast path takes it as
// static, so it changes only in a write made while CONTROL.RESET is set
// (the release write carries it) or in one that sets RESET; a write while the
// fast path runs keeps it (and reads back what the fast path sees).
// `rst` sets CONTROL.RESET, clears CONTROL.READ_STREAMS and the doorbell state, POLL_COUNT,
// RX_OVERFLOW, RX_DROPS and TX_DROPS; the configuration registers (the
// board's MAC, IPV4 and UDP_PORT included) keep their values (power-on 0).
// RX_DROPS and TX_DROPS count the `rx_drop` / `tx_drop` pulses of the
// Ethernet/IPv4/UDP layer (clio_udp_shim), wrapping; CONTROL.RESET does not
// clear them (the layer runs while the fast path is held in reset).
// Address bits [1:0] are ignored (the word is addressed; wstrb picks the
// bytes). One write and one read are handled at a time; AW and W may come in
// any order. Every input here must already be in this clock domain.
module clio_fp_regs #(
    parameter ADDR_WIDTH = 12
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [ADDR_WIDTH-1:0] s_axil_awaddr,
    input  wire                  s_axil_awvalid,
    output wire                  s_axil_awready,
    input  wire [31:0]           s_axil_wdata,
    input  wire [3:0]            s_axil_wstrb,
    input  wire                  s_axil_wvalid,
    output wire                  s_axil_wready,
    output wire [1:0]            s_axil_bresp,
    output wire                  s_axil_bvalid,
    input  wire                  s_axil_bready,
    input  wire [ADDR_WIDTH-1:0] s_axil_araddr,
    input  wire                  s_axil_arvalid,
    output wire                  s_axil_arready,
    output wire [31:0]           s_axil_rdata,
    output wire [1:0]            s_axil_rresp,
    output wire                  s_axil_rvalid,
    input  wire                  s_axil_rready,

    // To the fast path.
    output wire                  fp_rst,
    output wire [63:0]           cfg_table_base,
    output wire [63:0]           cfg_rx_base,
    output wire [31:0]           cfg_rx_slots,
    output wire [63:0]           cfg_tx_base,
    output wire [31:0]           cfg_tx_slots,
    output wire [63:0]           cfg_data_start,
    output wire [63:0]           cfg_data_end,
    output wire [5:0]            cfg_va_bits,
    output wire [31:0]           cfg_class_shift,
    output wire [31:0]           cfg_max_pid,
    output wire [15:0]           cfg_mtu,
    output wire [511:0]          cfg_info,
    output wire                  cfg_streams_on,
    output wire                  poll,

    // To the Ethernet/IPv4/UDP layer: the board's addresses.
    output wire [47:0]           cfg_mac,
    output wire [31:0]           cfg_ipv4,
    output wire [15:0]           cfg_udp_port,

    // From the fast path and the MACs (synchronized to clk).
    input  wire                  poll_done,
    input  wire                  idle,
    input  wire [1:0]            link_up,
    input  wire                  rx_overflow,
    input  wire                  rx_drop,
    input  wire                  tx_drop
);

import clio_pkg::*;

localparam INFO_WORDS = FPREG_INFO_BITS / 32;

// Offsets as ADDR_WIDTH-bit values.
localparam [ADDR_WIDTH-1:0] A_ID = ADDR_WIDTH'(FPREG_ID);
localparam [ADDR_WIDTH-1:0] A_VERSION = ADDR_WIDTH'(FPREG_VERSION);
localparam [ADDR_WIDTH-1:0] A_CONTROL = ADDR_WIDTH'(FPREG_CONTROL);
localparam [ADDR_WIDTH-1:0] A_STATUS = ADDR_WIDTH'(FPREG_STATUS);
localparam [ADDR_WIDTH-1:0] A_DOORBELL = ADDR_WIDTH'(FPREG_DOORBELL);
localparam [ADDR_WIDTH-1:0] A_POLL_COUNT = ADDR_WIDTH'(FPREG_POLL_COUNT);
localparam [ADDR_WIDTH-1:0] A_TABLE_BASE = ADDR_WIDTH'(FPREG_TABLE_BASE);
localparam [ADDR_WIDTH-1:0] A_RX_BASE = ADDR_WIDTH'(FPREG_RX_BASE);
localparam [ADDR_WIDTH-1:0] A_TX_BASE = ADDR_WIDTH'(FPREG_TX_BASE);
localparam [ADDR_WIDTH-1:0] A_RX_SLOTS = ADDR_WIDTH'(FPREG_RX_SLOTS);
localparam [ADDR_WIDTH-1:0] A_TX_SLOTS = ADDR_WIDTH'(FPREG_TX_SLOTS);
localparam [ADDR_WIDTH-1:0] A_DATA_START = ADDR_WIDTH'(FPREG_DATA_START);
localparam [ADDR_WIDTH-1:0] A_DATA_END = ADDR_WIDTH'(FPREG_DATA_END);
localparam [ADDR_WIDTH-1:0] A_VA_BITS = ADDR_WIDTH'(FPREG_VA_BITS);
localparam [ADDR_WIDTH-1:0] A_CLASS_SHIFT = ADDR_WIDTH'(FPREG_CLASS_SHIFT);
localparam [ADDR_WIDTH-1:0] A_MAX_PID = ADDR_WIDTH'(FPREG_MAX_PID);
localparam [ADDR_WIDTH-1:0] A_MTU = ADDR_WIDTH'(FPREG_MTU);
localparam [ADDR_WIDTH-1:0] A_MAC = ADDR_WIDTH'(FPREG_MAC);
localparam [ADDR_WIDTH-1:0] A_IPV4 = ADDR_WIDTH'(FPREG_IPV4);
localparam [ADDR_WIDTH-1:0] A_UDP_PORT = ADDR_WIDTH'(FPREG_UDP_PORT);
localparam [ADDR_WIDTH-1:0] A_RX_DROPS = ADDR_WIDTH'(FPREG_RX_DROPS);
localparam [ADDR_WIDTH-1:0] A_TX_DROPS = ADDR_WIDTH'(FPREG_TX_DROPS);
localparam [ADDR_WIDTH-1:0] A_INFO = ADDR_WIDTH'(FPREG_INFO);

initial begin
    if (ADDR_WIDTH < $clog2(FPREGS_BLOCK_LEN) || ADDR_WIDTH > 32) begin
        $error("Error: ADDR_WIDTH must cover FPREGS_BLOCK_LEN and be at most 32 (instance %m)");
        $finish;
    end
    if (FPREG_INFO_BITS != 512 || FPREG_VA_BITS_BITS != 6 || FPREG_MTU_BITS != 16
            || FPREG_TABLE_BASE_BITS != 64 || FPREG_CONTROL_BITS != 2 || FPREG_MAC_BITS != 48
            || FPREG_IPV4_BITS != 32 || FPREG_UDP_PORT_BITS != 16 || FPREG_RX_DROPS_BITS != 32
            || FPREG_TX_DROPS_BITS != 32) begin
        $error("Error: the register widths of clio_pkg do not match this block's ports (instance %m)");
        $finish;
    end
end

// Merge a write into a 32-bit word under its byte strobes.
function [31:0] merge(input [31:0] old, input [31:0] data, input [3:0] strb);
    integer i;
    begin
        for (i = 0; i < 4; i = i + 1) begin
            merge[i*8 +: 8] = strb[i] ? data[i*8 +: 8] : old[i*8 +: 8];
        end
    end
endfunction

// ---------------------------------------------------------------------------
// Registers.
// ---------------------------------------------------------------------------
reg        control_reset_reg = 1'b1;
reg        control_streams_reg = 1'b0;
reg [63:0] table_base_reg = 0, rx_base_reg = 0, tx_base_reg = 0;
reg [63:0] data_start_reg = 0, data_end_reg = 0;
reg [31:0] rx_slots_reg = 0, tx_slots_reg = 0, class_shift_reg = 0, max_pid_reg = 0;
reg [5:0]  va_bits_reg = 0;
reg [15:0] mtu_reg = 0;
reg [31:0] info_reg [0:INFO_WORDS-1];
reg        poll_reg = 1'b0;
reg        poll_busy_reg = 1'b0;
reg [31:0] poll_count_reg = 0;
reg        rx_overflow_reg = 1'b0;
reg [47:0] mac_reg = 0;
reg [31:0] ipv4_reg = 0;
reg [15:0] udp_port_reg = 0;
reg [31:0] rx_drops_reg = 0, tx_drops_reg = 0;

wire [31:0] status_word = 32'(
      ({31'd0, idle} << FPREG_STATUS_BIT_IDLE)
    | ({31'd0, poll_busy_reg} << FPREG_STATUS_BIT_POLL_BUSY)
    | ({31'd0, link_up[0]} << FPREG_STATUS_BIT_LINK0_UP)
    | ({31'd0, link_up[1]} << FPREG_STATUS_BIT_LINK1_UP)
    | ({31'd0, rx_overflow_reg} << FPREG_STATUS_BIT_RX_OVERFLOW)
    | ({31'd0, control_reset_reg} << FPREG_STATUS_BIT_IN_RESET));

// Word offset inside the INFO field, and whether an address falls in it.
function in_info(input [ADDR_WIDTH-1:0] a);
    in_info = a >= A_INFO && a < A_INFO + ADDR_WIDTH'(4 * INFO_WORDS);
endfunction

function [3:0] info_index(input [ADDR_WIDTH-1:0] a);
    info_index = 4'((a - A_INFO) >> 2);
endfunction

// ---------------------------------------------------------------------------
// Read decode (combinational on the read address).
// ---------------------------------------------------------------------------
wire [ADDR_WIDTH-1:0] ra;
reg [31:0] rd_word;
reg        rd_ok;

always @* begin
    rd_word = 32'd0;
    rd_ok = 1'b1;
    case (ra)
        A_ID: rd_word = FPREGS_ID;
        A_VERSION: rd_word = 32'(FPREGS_VERSION);
        A_CONTROL: rd_word = (control_reset_reg ? FPREG_CONTROL_RESET : 32'd0)
            | (control_streams_reg ? FPREG_CONTROL_READ_STREAMS : 32'd0);
        A_STATUS: rd_word = status_word;
        A_DOORBELL: rd_word = 32'd0;
        A_POLL_COUNT: rd_word = poll_count_reg;
        A_TABLE_BASE: rd_word = table_base_reg[31:0];
        A_TABLE_BASE + 4: rd_word = table_base_reg[63:32];
        A_RX_BASE: rd_word = rx_base_reg[31:0];
        A_RX_BASE + 4: rd_word = rx_base_reg[63:32];
        A_TX_BASE: rd_word = tx_base_reg[31:0];
        A_TX_BASE + 4: rd_word = tx_base_reg[63:32];
        A_RX_SLOTS: rd_word = rx_slots_reg;
        A_TX_SLOTS: rd_word = tx_slots_reg;
        A_DATA_START: rd_word = data_start_reg[31:0];
        A_DATA_START + 4: rd_word = data_start_reg[63:32];
        A_DATA_END: rd_word = data_end_reg[31:0];
        A_DATA_END + 4: rd_word = data_end_reg[63:32];
        A_VA_BITS: rd_word = {26'd0, va_bits_reg};
        A_CLASS_SHIFT: rd_word = class_shift_reg;
        A_MAX_PID: rd_word = max_pid_reg;
        A_MTU: rd_word = {16'd0, mtu_reg};
        A_MAC: rd_word = mac_reg[31:0];
        A_MAC + 4: rd_word = {16'd0, mac_reg[47:32]};
        A_IPV4: rd_word = ipv4_reg;
        A_UDP_PORT: rd_word = {16'd0, udp_port_reg};
        A_RX_DROPS: rd_word = rx_drops_reg;
        A_TX_DROPS: rd_word = tx_drops_reg;
        default: begin
            if (in_info(ra)) begin
                rd_word = info_reg[info_index(ra)];
            end else begin
                rd_ok = 1'b0;
            end
        end
    endcase
end

// ---------------------------------------------------------------------------
// AXI-Lite handshakes (clio_axil_regif); writes applied below.
// ---------------------------------------------------------------------------
wire                  wr_en;
wire [ADDR_WIDTH-1:0] wa;
wire [31:0]           wd;
wire [3:0]            ws;
reg                   wr_err_reg = 1'b0;

clio_axil_regif #(
    .ADDR_WIDTH(ADDR_WIDTH)
) regif_inst (
    .clk(clk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .rd_addr(ra),
    .rd_data(rd_word),
    .rd_ok(rd_ok),
    .wr_en(wr_en),
    .wr_addr(wa),
    .wr_data(wd),
    .wr_strb(ws),
    .wr_err(wr_err_reg)
);

always @(posedge clk) begin
    poll_reg <= 1'b0;
    if (poll_done) begin
        poll_busy_reg <= 1'b0;
        poll_count_reg <= poll_count_reg + 1'b1;
    end
    if (rx_overflow) begin
        rx_overflow_reg <= 1'b1;
    end
    if (rx_drop) begin
        rx_drops_reg <= rx_drops_reg + 1'b1;
    end
    if (tx_drop) begin
        tx_drops_reg <= tx_drops_reg + 1'b1;
    end
    if (wr_en) begin
        wr_err_reg <= 1'b0;
        case (wa)
            A_CONTROL: if (ws[0]) begin
                control_reset_reg <= (wd & FPREG_CONTROL_RESET) != 0;
                // Held before or after the write: the fast path is not running.
                if (control_reset_reg || (wd & FPREG_CONTROL_RESET) != 0) begin
                    control_streams_reg <= (wd & FPREG_CONTROL_READ_STREAMS) != 0;
                end
            end
            A_DOORBELL: begin
                if (ws[0] && (wd & FPREG_DOORBELL_RING) != 0 && !control_reset_reg) begin
                    poll_reg <= 1'b1;
                    poll_busy_reg <= 1'b1;
                end
            end
            A_TABLE_BASE: table_base_reg[31:0] <= merge(table_base_reg[31:0], wd, ws);
            A_TABLE_BASE + 4: table_base_reg[63:32] <= merge(table_base_reg[63:32], wd, ws);
            A_RX_BASE: rx_base_reg[31:0] <= merge(rx_base_reg[31:0], wd, ws);
            A_RX_BASE + 4: rx_base_reg[63:32] <= merge(rx_base_reg[63:32], wd, ws);
            A_TX_BASE: tx_base_reg[31:0] <= merge(tx_base_reg[31:0], wd, ws);
            A_TX_BASE + 4: tx_base_reg[63:32] <= merge(tx_base_reg[63:32], wd, ws);
            A_RX_SLOTS: rx_slots_reg <= merge(rx_slots_reg, wd, ws);
            A_TX_SLOTS: tx_slots_reg <= merge(tx_slots_reg, wd, ws);
            A_DATA_START: data_start_reg[31:0] <= merge(data_start_reg[31:0], wd, ws);
            A_DATA_START + 4: data_start_reg[63:32] <= merge(data_start_reg[63:32], wd, ws);
            A_DATA_END: data_end_reg[31:0] <= merge(data_end_reg[31:0], wd, ws);
            A_DATA_END + 4: data_end_reg[63:32] <= merge(data_end_reg[63:32], wd, ws);
            A_VA_BITS: if (ws[0]) va_bits_reg <= wd[5:0];
            A_CLASS_SHIFT: class_shift_reg <= merge(class_shift_reg, wd, ws);
            A_MAX_PID: max_pid_reg <= merge(max_pid_reg, wd, ws);
            A_MTU: mtu_reg <= 16'(merge({16'd0, mtu_reg}, wd, ws));
            A_MAC: mac_reg[31:0] <= merge(mac_reg[31:0], wd, ws);
            A_MAC + 4: mac_reg[47:32] <= 16'(merge({16'd0, mac_reg[47:32]}, wd, ws));
            A_IPV4: ipv4_reg <= merge(ipv4_reg, wd, ws);
            A_UDP_PORT: udp_port_reg <= 16'(merge({16'd0, udp_port_reg}, wd, ws));
            default: begin
                if (in_info(wa)) begin
                    info_reg[info_index(wa)] <= merge(info_reg[info_index(wa)], wd, ws);
                end else begin
                    // Read-only (ID, VERSION, STATUS, POLL_COUNT, RX_DROPS,
                    // TX_DROPS) or unmapped.
                    wr_err_reg <= 1'b1;
                end
            end
        endcase
    end
    if (control_reset_reg) begin
        rx_overflow_reg <= 1'b0;
        poll_busy_reg <= 1'b0;
    end
    if (rst) begin
        control_reset_reg <= 1'b1;
        control_streams_reg <= 1'b0;
        poll_reg <= 1'b0;
        poll_busy_reg <= 1'b0;
        poll_count_reg <= 0;
        rx_overflow_reg <= 1'b0;
        rx_drops_reg <= 0;
        tx_drops_reg <= 0;
    end
end

// ---------------------------------------------------------------------------
// Outputs.
// ---------------------------------------------------------------------------
genvar gi;
generate
    for (gi = 0; gi < INFO_WORDS; gi = gi + 1) begin : g_info
        initial info_reg[gi] = 32'd0;
        assign cfg_info[gi*32 +: 32] = info_reg[gi];
    end
endgenerate

assign fp_rst = rst || control_reset_reg;
assign cfg_table_base = table_base_reg;
assign cfg_rx_base = rx_base_reg;
assign cfg_rx_slots = rx_slots_reg;
assign cfg_tx_base = tx_base_reg;
assign cfg_tx_slots = tx_slots_reg;
assign cfg_data_start = data_start_reg;
assign cfg_data_end = data_end_reg;
assign cfg_va_bits = va_bits_reg;
assign cfg_class_shift = class_shift_reg;
assign cfg_max_pid = max_pid_reg;
assign cfg_mtu = mtu_reg;
assign poll = poll_reg;
assign cfg_streams_on = control_streams_reg;
assign cfg_mac = mac_reg;
assign cfg_ipv4 = ipv4_reg;
assign cfg_udp_port = udp_port_reg;

endmodule

`resetall

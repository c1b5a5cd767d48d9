// edm_ring_ram: on-chip card memory of the PCIe packet rings: a 512-bit AXI4 slave (XDMA) and a 64-bit word port (ring engine).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// MEM_BYTES of block RAM (or UltraRAM: Vivado picks it from the size), as
// eight banks of 64-bit words so that the AXI side writes a whole 64-byte
// beat (with its byte strobes) while the ring engine reads or writes one
// 64-bit word, each on its own RAM port. Card byte address A is AXI address
// A and word A / 8 of the word port.
// AXI side: one burst at a time, reads and writes taken in turn when both
// wait. INCR bursts of any length and size (the address moves by the beat
// size; a narrow read returns the whole 64-byte word, the master picks its
// lanes); FIXED and WRAP bursts are served as INCR (the XDMA issues only
// INCR). A beat whose address is at or past MEM_BYTES writes nothing and
// reads 0; its burst answers DECERR (reads per beat). Read data comes from a
// four-entry buffer refilled ahead, so RVALID stays high under a ready master:
// one beat per cycle both ways.
// Word port: `mem_en` with `mem_we` writes `mem_wdata`, without reads;
// read data one cycle later. Collisions between the two sides on one word
// are the user's to avoid (the ring protocol orders them: a slot is handed
// over by a register write after its last byte).
module edm_ring_ram #(
    parameter MEM_BYTES = 262144,
    parameter ADDR_WIDTH = 64,
    parameter ID_WIDTH = 4,
    parameter MEM_AW = $clog2(MEM_BYTES / 8)
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [ID_WIDTH-1:0]   s_axi_awid,
    input  wire [ADDR_WIDTH-1:0] s_axi_awaddr,
    input  wire [7:0]            s_axi_awlen,
    input  wire [2:0]            s_axi_awsize,
    input  wire [1:0]            s_axi_awburst,
    input  wire                  s_axi_awvalid,
    output wire                  s_axi_awready,
    input  wire [511:0]          s_axi_wdata,
    input  wire [63:0]           s_axi_wstrb,
    input  wire                  s_axi_wlast,
    input  wire                  s_axi_wvalid,
    output wire                  s_axi_wready,
    output wire [ID_WIDTH-1:0]   s_axi_bid,
    output wire [1:0]            s_axi_bresp,
    output wire                  s_axi_bvalid,
    input  wire                  s_axi_bready,
    input  wire [ID_WIDTH-1:0]   s_axi_arid,
    input  wire [ADDR_WIDTH-1:0] s_axi_araddr,
    input  wire [7:0]            s_axi_arlen,
    input  wire [2:0]            s_axi_arsize,
    input  wire [1:0]            s_axi_arburst,
    input  wire                  s_axi_arvalid,
    output wire                  s_axi_arready,
    output wire [ID_WIDTH-1:0]   s_axi_rid,
    output wire [511:0]          s_axi_rdata,
    output wire [1:0]            s_axi_rresp,
    output wire                  s_axi_rlast,
    output wire                  s_axi_rvalid,
    input  wire                  s_axi_rready,

    input  wire                  mem_en,
    input  wire                  mem_we,
    input  wire [MEM_AW-1:0]     mem_addr,
    input  wire [63:0]           mem_wdata,
    output wire [63:0]           mem_rdata
);

localparam ROWS = MEM_BYTES / 64;
localparam RW = $clog2(ROWS);
localparam [1:0] RESP_OKAY = 2'b00, RESP_DECERR = 2'b11;

initial begin
    if (MEM_BYTES < 128 || (MEM_BYTES & (MEM_BYTES - 1)) != 0) begin
        $error("Error: MEM_BYTES must be a power of two of at least 128 (instance %m)");
        $finish;
    end
    if (MEM_AW != $clog2(MEM_BYTES / 8) || ADDR_WIDTH <= RW + 6 || ID_WIDTH < 1) begin
        $error("Error: MEM_AW must be log2(MEM_BYTES / 8), ADDR_WIDTH wider than the memory (instance %m)");
        $finish;
    end
end

// ---------------------------------------------------------------------------
// Burst state (one burst at a time).
// ---------------------------------------------------------------------------
localparam [1:0] S_IDLE = 2'd0, S_WRITE = 2'd1, S_RESP = 2'd2, S_READ = 2'd3;
reg [1:0]            state_reg = S_IDLE;
reg                  last_was_read_reg = 1'b0;
reg [ID_WIDTH-1:0]   id_reg = 0;
reg [ADDR_WIDTH-1:0] addr_reg = 0;
reg [2:0]            size_reg = 0;
reg [8:0]            left_reg = 0;    // read beats still to fetch
reg                  err_reg = 1'b0;  // a write beat fell outside

wire take_read = s_axi_arvalid && (!s_axi_awvalid || !last_was_read_reg);
assign s_axi_awready = state_reg == S_IDLE && s_axi_awvalid && !take_read;
assign s_axi_arready = state_reg == S_IDLE && take_read;
assign s_axi_wready = state_reg == S_WRITE;
assign s_axi_bvalid = state_reg == S_RESP;
assign s_axi_bid = id_reg;
assign s_axi_bresp = err_reg ? RESP_DECERR : RESP_OKAY;

function in_range(input [ADDR_WIDTH-1:0] a);
    in_range = (a >> (RW + 6)) == 0;
endfunction

wire [ADDR_WIDTH-1:0] addr_step = ADDR_WIDTH'(1) << size_reg;

// ---------------------------------------------------------------------------
// Read side: fetch ahead into a four-entry buffer (read data one cycle late).
// ---------------------------------------------------------------------------
reg [511:0] rbuf_data [0:3];
reg [1:0]   rbuf_resp [0:3];
reg         rbuf_last [0:3];
reg [1:0]   rbuf_wr_reg = 0, rbuf_rd_reg = 0;
reg [2:0]   rbuf_count_reg = 0;
reg         fetch_reg = 1'b0;          // a row read is in flight
reg         fetch_ok_reg = 1'b0;
reg         fetch_last_reg = 1'b0;

wire fetch = state_reg == S_READ && left_reg != 0 && rbuf_count_reg + 3'(fetch_reg) < 3'd3;
wire r_pop = s_axi_rvalid && s_axi_rready;
assign s_axi_rvalid = rbuf_count_reg != 0;
assign s_axi_rdata = rbuf_data[rbuf_rd_reg];
assign s_axi_rresp = rbuf_resp[rbuf_rd_reg];
assign s_axi_rlast = rbuf_last[rbuf_rd_reg];
assign s_axi_rid = id_reg;

// ---------------------------------------------------------------------------
// The memory: eight 64-bit banks, port A (AXI, one row), port B (word port).
// ---------------------------------------------------------------------------
wire          a_write = state_reg == S_WRITE && s_axi_wvalid && in_range(addr_reg);
wire [RW-1:0] a_row = addr_reg[RW + 5:6];
wire [511:0]  a_rdata;
wire [63:0]   b_rdata_bank [0:7];
reg  [2:0]    b_bank_reg = 0;

genvar gb;
generate
    for (gb = 0; gb < 8; gb = gb + 1) begin : g_bank
        reg [63:0] mem [0:ROWS-1];
        reg [63:0] a_q = 0;
        reg [63:0] b_q = 0;
        integer i, j;
        initial begin
            for (i = 0; i < ROWS; i = i + 1) begin
                mem[i] = 64'd0;
            end
        end
        // Port A.
        always @(posedge clk) begin
            if (fetch) begin
                a_q <= mem[a_row];
            end
            for (i = 0; i < 8; i = i + 1) begin
                if (a_write && s_axi_wstrb[8 * gb + i]) begin
                    mem[a_row][8 * i +: 8] <= s_axi_wdata[64 * gb + 8 * i +: 8];
                end
            end
        end
        // Port B (written in the same byte-enable form as port A, so both
        // ports match the true-dual-port byte-write RAM template).
        always @(posedge clk) begin
            if (mem_en && mem_addr[2:0] == 3'(gb)) begin
                if (!mem_we) begin
                    b_q <= mem[mem_addr[MEM_AW-1:3]];
                end
                for (j = 0; j < 8; j = j + 1) begin
                    if (mem_we) begin
                        mem[mem_addr[MEM_AW-1:3]][8 * j +: 8] <= mem_wdata[8 * j +: 8];
                    end
                end
            end
        end
        assign a_rdata[64 * gb +: 64] = a_q;
        assign b_rdata_bank[gb] = b_q;
    end
endgenerate

assign mem_rdata = b_rdata_bank[b_bank_reg];

always @(posedge clk) begin
    if (mem_en && !mem_we) begin
        b_bank_reg <= mem_addr[2:0];
    end
    fetch_reg <= fetch;
    if (fetch) begin
        fetch_ok_reg <= in_range(addr_reg);
        fetch_last_reg <= left_reg == 1;
        addr_reg <= addr_reg + addr_step;
        left_reg <= left_reg - 1'b1;
    end
    if (fetch_reg) begin
        rbuf_data[rbuf_wr_reg] <= fetch_ok_reg ? a_rdata : 512'd0;
        rbuf_resp[rbuf_wr_reg] <= fetch_ok_reg ? RESP_OKAY : RESP_DECERR;
        rbuf_last[rbuf_wr_reg] <= fetch_last_reg;
        rbuf_wr_reg <= rbuf_wr_reg + 1'b1;
    end
    if (r_pop) begin
        rbuf_rd_reg <= rbuf_rd_reg + 1'b1;
    end
    rbuf_count_reg <= rbuf_count_reg + 3'(fetch_reg) - 3'(r_pop);

    case (state_reg)
        S_IDLE: begin
            if (s_axi_arvalid && s_axi_arready) begin
                id_reg <= s_axi_arid;
                addr_reg <= s_axi_araddr;
                size_reg <= s_axi_arsize;
                left_reg <= {1'b0, s_axi_arlen} + 9'd1;
                last_was_read_reg <= 1'b1;
                state_reg <= S_READ;
            end else if (s_axi_awvalid && s_axi_awready) begin
                id_reg <= s_axi_awid;
                addr_reg <= s_axi_awaddr;
                size_reg <= s_axi_awsize;
                err_reg <= 1'b0;
                last_was_read_reg <= 1'b0;
                state_reg <= S_WRITE;
            end
        end
        S_WRITE: begin
            if (s_axi_wvalid) begin
                if (!in_range(addr_reg)) begin
                    err_reg <= 1'b1;
                end
                addr_reg <= addr_reg + addr_step;
                if (s_axi_wlast) begin
                    state_reg <= S_RESP;
                end
            end
        end
        S_RESP: begin
            if (s_axi_bready) begin
                state_reg <= S_IDLE;
            end
        end
        S_READ: begin
            // Done once every beat was fetched and handed over.
            if (left_reg == 0 && !fetch_reg && (rbuf_count_reg == 0
                    || (rbuf_count_reg == 1 && r_pop))) begin
                state_reg <= S_IDLE;
            end
        end
        default: state_reg <= S_IDLE;
    endcase
    if (rst) begin
        state_reg <= S_IDLE;
        fetch_reg <= 1'b0;
        rbuf_wr_reg <= 0;
        rbuf_rd_reg <= 0;
        rbuf_count_reg <= 0;
    end
end

// The burst type is not looked at (INCR for all), nor AWLEN (WLAST ends a
// write burst), nor the low address bits of
// a row (the byte strobes place a write; reads return the whole row).
/* verilator lint_off UNUSEDSIGNAL */
wire unused = ^{s_axi_awburst, s_axi_arburst, s_axi_awlen};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall

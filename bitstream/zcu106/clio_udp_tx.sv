// clio_udp_tx: prepends Ethernet II / IPv4 / UDP headers to the fast path's responses and sends ARP replies.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// 64-bit AXI4-Stream of Clio packets (one per frame, packed tkeep) in;
// Ethernet frames (no FCS: the MAC adds it) out.
//
// The Clio header's beats (CLIO_HEADER_LEN / 8: 7 for the 56-byte header)
// are held; the response's `pid`
// is looked up (`lookup_pid` -> `lookup_hit` and the client's MAC, IPv4 and
// UDP port, combinational, registered the cycle after the header is
// complete; the header is built from them the cycle after that). A
// response with no entry for its pid, or shorter than a Clio header, is
// consumed and `drop` pulses. Otherwise the frame sent is
//   Ethernet: client MAC <- cfg_mac, type 0x0800;
//   IPv4: version 4, IHL 5, TOS 0, total length, id 0, DF, TTL 64, UDP,
//         header checksum, cfg_ipv4 -> client IPv4;
//   UDP: cfg_udp_port -> client port, length, checksum 0 (none; legal in IPv4);
//   the Clio packet, CLIO_HEADER_LEN + its `payload_len` bytes: the lengths
//   come from that field, so the headers go out before the payload arrives.
//   A packet longer than that is cut, a shorter one padded with zero bytes
//   (the client's CRC32C check then rejects it); the fast path emits exactly
//   that length.
// The header is 42 bytes = 5 beats + 2 bytes: output beat 5 + k is
// {packet beat k [47:0], packet beat k-1 [63:48]} (beat -1 = header bytes
// 40..41).
//
// ARP: `arp_valid` with `arp_ready` latches one request's sender (SHA, SPA);
// before the next response (responses are not interrupted) the reply goes
// out: 60 bytes (42 of ARP + zero padding to the Ethernet minimum), operation
// 2, sender cfg_mac / cfg_ipv4, target the requester. `arp_ready` is low while
// a reply is pending.
//
// `m_axis_tdest` (constant over a frame) is the Ethernet port to send it on:
// the client's (`lookup_dest`) for a response, the request's (`arp_dest`)
// for an ARP reply.
module clio_udp_tx #(
    parameter DEST_WIDTH = 1
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [47:0] cfg_mac,
    input  wire [31:0] cfg_ipv4,
    input  wire [15:0] cfg_udp_port,

    input  wire [63:0] s_axis_tdata,
    input  wire [7:0]  s_axis_tkeep,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,

    output wire [63:0] m_axis_tdata,
    output wire [7:0]  m_axis_tkeep,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,
    output wire        m_axis_tlast,
    output wire [DEST_WIDTH-1:0] m_axis_tdest,

    output wire [31:0] lookup_pid,
    input  wire        lookup_hit,
    input  wire [47:0] lookup_mac,
    input  wire [31:0] lookup_ipv4,
    input  wire [15:0] lookup_port,
    input  wire [DEST_WIDTH-1:0] lookup_dest,

    input  wire        arp_valid,
    output wire        arp_ready,
    input  wire [47:0] arp_sha,
    input  wire [31:0] arp_spa,
    input  wire [DEST_WIDTH-1:0] arp_dest,

    output wire        drop
);

import clio_pkg::*;

// The Clio header's beats (7 for the 56-byte header of wire v2).
localparam PKT_BEATS = CLIO_HEADER_LEN / 8;
// Whole beats of the 42-byte Ethernet/IPv4/UDP header (its last two bytes
// start the first shifted packet beat).
localparam ETH_BEATS = 5;
localparam ARP_BEATS = 8;
localparam [7:0]  IP_TTL = 8'd64;
localparam [7:0]  IP_UDP = 8'd17;
localparam [15:0] IP_DF = 16'h4000;

initial begin
    if (CLIO_HEADER_LEN != 8 * PKT_BEATS || PKT_BEATS > 7 || CLIO_OFF_PID + 4 > CLIO_HEADER_LEN
            || CLIO_OFF_PAYLOAD_LEN + 2 > CLIO_HEADER_LEN) begin
        $error("Error: the Clio header must be whole beats (at most 7) holding pid and payload_len (instance %m)");
        $finish;
    end
end

// Byte-swap helpers: a big-endian field placed at byte offset o of a
// little-endian lane vector is v[8*o +: W] = swapW(field).
function [15:0] sw16(input [15:0] x);
    sw16 = {x[7:0], x[15:8]};
endfunction

function [31:0] sw32(input [31:0] x);
    sw32 = {x[7:0], x[15:8], x[23:16], x[31:24]};
endfunction

function [47:0] sw48(input [47:0] x);
    sw48 = {x[7:0], x[15:8], x[23:16], x[31:24], x[39:32], x[47:40]};
endfunction

localparam [2:0]
    T_IDLE = 3'd0,
    T_PKT = 3'd1,
    T_LOOK = 3'd2,
    T_HDR = 3'd3,
    T_SEND = 3'd4,
    T_DRAIN = 3'd5,
    T_ARP = 3'd6,
    T_BUILD = 3'd7;

reg [2:0]   state_reg = T_IDLE, state_next;
reg [8*8*PKT_BEATS-1:0] pkt_reg = 0, pkt_next;
reg [2:0]   beat_reg = 0, beat_next;
reg         in_done_reg = 1'b0, in_done_next;
reg         short_reg = 1'b0, short_next;
// Bytes 0..39 of the 42-byte header (byte i at [8i +: 8]); 40..41 start prev.
reg [319:0] hdr_reg = 0, hdr_next;
reg [15:0]  rem_reg = 0, rem_next;
reg [15:0]  prev_reg = 0, prev_next;

// The client's entry, registered from the table read (T_LOOK).
reg         lk_hit_reg = 1'b0, lk_hit_next;
reg [47:0]  lk_mac_reg = 0, lk_mac_next;
reg [31:0]  lk_ipv4_reg = 0, lk_ipv4_next;
reg [15:0]  lk_port_reg = 0, lk_port_next;
reg [DEST_WIDTH-1:0] lk_dest_reg = 0, lk_dest_next;

reg         arp_pending_reg = 1'b0, arp_pending_next;
reg [47:0]  arp_sha_reg = 0, arp_sha_next;
reg [31:0]  arp_spa_reg = 0, arp_spa_next;
reg [DEST_WIDTH-1:0] arp_dest_reg = 0, arp_dest_next;

reg [63:0]  out_data_reg = 0, out_data_next;
reg [7:0]   out_keep_reg = 0, out_keep_next;
reg         out_last_reg = 1'b0, out_last_next;
reg [DEST_WIDTH-1:0] out_dest_reg = 0, out_dest_next;
reg         out_valid_reg = 1'b0, out_valid_next;
reg         drop_reg = 1'b0, drop_next;
reg         s_ready;

wire [31:0] pkt_pid = sw32(pkt_reg[8*CLIO_OFF_PID +: 32]);
wire [15:0] pkt_plen = sw16(pkt_reg[8*CLIO_OFF_PAYLOAD_LEN +: 16]);
wire [15:0] clio_len = 16'(CLIO_HEADER_LEN) + pkt_plen;
wire [15:0] ip_len = clio_len + 16'd28;
wire [15:0] udp_len = clio_len + 16'd8;

// IPv4 header checksum over the fixed fields and the lengths/addresses.
reg [19:0] csum_acc;
reg [16:0] csum_fold1;
reg [15:0] csum_fold2;
always @* begin
    csum_acc = {4'd0, 16'h4500} + {4'd0, ip_len} + {4'd0, IP_DF} + {4'd0, IP_TTL, IP_UDP}
        + {4'd0, cfg_ipv4[31:16]} + {4'd0, cfg_ipv4[15:0]}
        + {4'd0, lk_ipv4_reg[31:16]} + {4'd0, lk_ipv4_reg[15:0]};
    csum_fold1 = {1'b0, csum_acc[15:0]} + {13'd0, csum_acc[19:16]};
    csum_fold2 = csum_fold1[15:0] + {15'd0, csum_fold1[16]};
end

// The response header, built from the registered lookup (T_BUILD).
wire [335:0] resp_hdr = {
    16'd0,                       // 40: UDP checksum (none)
    sw16(udp_len),               // 38
    sw16(lk_port_reg),           // 36
    sw16(cfg_udp_port),          // 34
    sw32(lk_ipv4_reg),           // 30
    sw32(cfg_ipv4),              // 26
    sw16(~csum_fold2),           // 24
    IP_UDP, IP_TTL,              // 22
    sw16(IP_DF),                 // 20: flags / fragment offset
    16'd0,                       // 18: identification
    sw16(ip_len),                // 16
    8'h00, 8'h45,                // 14: version/IHL, TOS
    sw16(16'h0800),              // 12
    sw48(cfg_mac),               // 6
    sw48(lk_mac_reg)             // 0
};

// The ARP reply, 60 bytes in 8 beats.
wire [8*8*ARP_BEATS-1:0] arp_frame = {
    32'd0, 144'd0,               // 42..63: padding
    sw32(arp_spa_reg),           // 38: target IPv4
    sw48(arp_sha_reg),           // 32: target MAC
    sw32(cfg_ipv4),              // 28: sender IPv4
    sw48(cfg_mac),               // 22: sender MAC
    sw16(16'd2),                 // 20: operation: reply
    8'd4, 8'd6,                  // 18: hardware / protocol lengths
    sw16(16'h0800),              // 16
    sw16(16'd1),                 // 14
    sw16(16'h0806),              // 12
    sw48(cfg_mac),               // 6
    sw48(arp_sha_reg)            // 0
};

reg        need_in;
reg [63:0] src;
reg        src_ok;
wire       out_free = !out_valid_reg || m_axis_tready;

always @* begin
    state_next = state_reg;
    pkt_next = pkt_reg;
    beat_next = beat_reg;
    in_done_next = in_done_reg;
    short_next = short_reg;
    hdr_next = hdr_reg;
    rem_next = rem_reg;
    prev_next = prev_reg;
    lk_hit_next = lk_hit_reg;
    lk_mac_next = lk_mac_reg;
    lk_ipv4_next = lk_ipv4_reg;
    lk_port_next = lk_port_reg;
    lk_dest_next = lk_dest_reg;
    arp_pending_next = arp_pending_reg;
    arp_sha_next = arp_sha_reg;
    arp_spa_next = arp_spa_reg;
    arp_dest_next = arp_dest_reg;
    out_data_next = out_data_reg;
    out_keep_next = out_keep_reg;
    out_last_next = out_last_reg;
    out_dest_next = out_dest_reg;
    out_valid_next = out_valid_reg && !m_axis_tready;
    drop_next = 1'b0;
    s_ready = 1'b0;
    need_in = 1'b0;
    src = 64'd0;
    src_ok = 1'b0;

    if (arp_valid && !arp_pending_reg) begin
        arp_pending_next = 1'b1;
        arp_sha_next = arp_sha;
        arp_spa_next = arp_spa;
        arp_dest_next = arp_dest;
    end

    case (state_reg)
        T_IDLE: begin
            beat_next = 0;
            in_done_next = 1'b0;
            if (arp_pending_reg) begin
                state_next = T_ARP;
            end else if (s_axis_tvalid) begin
                state_next = T_PKT;
            end
        end
        T_PKT: begin
            s_ready = 1'b1;
            if (s_axis_tvalid) begin
                pkt_next[64*beat_reg +: 64] = s_axis_tdata;
                beat_next = beat_reg + 1'b1;
                if (s_axis_tlast || beat_reg == 3'(PKT_BEATS - 1)) begin
                    short_next = beat_reg != 3'(PKT_BEATS - 1)
                        || (s_axis_tlast && s_axis_tkeep != 8'hff);
                    in_done_next = s_axis_tlast;
                    state_next = T_LOOK;
                end
            end
        end
        T_LOOK: begin
            lk_hit_next = lookup_hit;
            lk_mac_next = lookup_mac;
            lk_ipv4_next = lookup_ipv4;
            lk_port_next = lookup_port;
            lk_dest_next = lookup_dest;
            state_next = T_BUILD;
        end
        T_BUILD: begin
            beat_next = 0;
            hdr_next = resp_hdr[319:0];
            rem_next = 16'd42 + clio_len;
            prev_next = resp_hdr[8*40 +: 16];
            if (short_reg || !lk_hit_reg) begin
                drop_next = 1'b1;
                state_next = in_done_reg ? T_IDLE : T_DRAIN;
            end else begin
                state_next = T_HDR;
            end
        end
        T_HDR: begin
            if (out_free) begin
                out_valid_next = 1'b1;
                out_data_next = hdr_reg[64*beat_reg +: 64];
                out_dest_next = lk_dest_reg;
                out_keep_next = 8'hff;
                out_last_next = 1'b0;
                rem_next = rem_reg - 16'd8;
                beat_next = beat_reg + 1'b1;
                if (beat_reg == 3'(ETH_BEATS - 1)) begin
                    beat_next = 0;
                    state_next = T_SEND;
                end
            end
        end
        T_SEND: begin
            // Source beat k: held (k < PKT_BEATS), then the input, or zero once the
            // packet has ended; a last beat needing only prev's two bytes
            // takes none.
            if (beat_reg < 3'(PKT_BEATS)) begin
                src = pkt_reg[64*beat_reg +: 64];
                src_ok = 1'b1;
            end else if (!in_done_reg && rem_reg > 16'd2) begin
                need_in = 1'b1;
                src = s_axis_tdata;
                src_ok = s_axis_tvalid;
            end else begin
                src_ok = 1'b1;
            end
            if (src_ok && out_free) begin
                s_ready = need_in;
                out_valid_next = 1'b1;
                out_data_next = {src[47:0], prev_reg};
                out_keep_next = rem_reg >= 16'd8 ? 8'hff : 8'((9'd1 << rem_reg[2:0]) - 9'd1);
                out_last_next = rem_reg <= 16'd8;
                prev_next = src[63:48];
                rem_next = rem_reg - 16'd8;
                if (beat_reg < 3'(PKT_BEATS)) begin
                    beat_next = beat_reg + 1'b1;
                end
                if (need_in && s_axis_tlast) begin
                    in_done_next = 1'b1;
                end
                if (rem_reg <= 16'd8) begin
                    state_next = (in_done_reg || (need_in && s_axis_tlast)) ? T_IDLE : T_DRAIN;
                end
            end
        end
        T_DRAIN: begin
            s_ready = 1'b1;
            if (s_axis_tvalid && s_axis_tlast) begin
                state_next = T_IDLE;
            end
        end
        T_ARP: begin
            if (out_free) begin
                out_valid_next = 1'b1;
                out_data_next = arp_frame[64*beat_reg +: 64];
                out_dest_next = arp_dest_reg;
                out_keep_next = beat_reg == 3'(ARP_BEATS - 1) ? 8'h0f : 8'hff;
                out_last_next = beat_reg == 3'(ARP_BEATS - 1);
                beat_next = beat_reg + 1'b1;
                if (beat_reg == 3'(ARP_BEATS - 1)) begin
                    beat_next = 0;
                    arp_pending_next = 1'b0;
                    state_next = T_IDLE;
                end
            end
        end
        default: state_next = T_IDLE;
    endcase
end

always @(posedge clk) begin
    state_reg <= state_next;
    pkt_reg <= pkt_next;
    beat_reg <= beat_next;
    in_done_reg <= in_done_next;
    short_reg <= short_next;
    hdr_reg <= hdr_next;
    rem_reg <= rem_next;
    prev_reg <= prev_next;
    lk_hit_reg <= lk_hit_next;
    lk_mac_reg <= lk_mac_next;
    lk_ipv4_reg <= lk_ipv4_next;
    lk_port_reg <= lk_port_next;
    lk_dest_reg <= lk_dest_next;
    arp_pending_reg <= arp_pending_next;
    arp_sha_reg <= arp_sha_next;
    arp_spa_reg <= arp_spa_next;
    arp_dest_reg <= arp_dest_next;
    out_data_reg <= out_data_next;
    out_keep_reg <= out_keep_next;
    out_last_reg <= out_last_next;
    out_dest_reg <= out_dest_next;
    out_valid_reg <= out_valid_next;
    drop_reg <= drop_next;
    if (rst) begin
        state_reg <= T_IDLE;
        beat_reg <= 0;
        arp_pending_reg <= 1'b0;
        out_valid_reg <= 1'b0;
        drop_reg <= 1'b0;
    end
end

assign s_axis_tready = s_ready;
assign m_axis_tdata = out_data_reg;
assign m_axis_tkeep = out_keep_reg;
assign m_axis_tvalid = out_valid_reg;
assign m_axis_tlast = out_last_reg;
assign m_axis_tdest = out_dest_reg;
assign lookup_pid = pkt_pid;
assign arp_ready = !arp_pending_reg;
assign drop = drop_reg;

endmodule

`resetall

// clio_udp_rx: Ethernet II / IPv4 / UDP receive filter: strips the 42-byte header of the board's Clio datagrams, flags ARP requests.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// 64-bit AXI4-Stream of whole Ethernet frames (no FCS, packed tkeep: all
// ones except on the last beat, as the MAC delivers them) in; UDP payloads
// out, one frame per datagram, packed tkeep, cut to the UDP length.
//
// The first 7 beats (56 bytes: Ethernet, IPv4, UDP and the first 14 payload
// bytes, which hold the Clio `pid`) are held, then checked in one cycle. A
// frame is passed when all of these hold:
//   destination MAC = cfg_mac, EtherType 0x0800, version 4 with IHL 5 (no
//   options), not a fragment (MF clear, offset 0), protocol 17 (UDP), IPv4
//   header checksum correct, destination IPv4 = cfg_ipv4, destination port =
//   cfg_udp_port, UDP length = IPv4 total length - 20, and a payload of at
//   least one Clio header (CLIO_HEADER_LEN bytes).
// Its sender (MAC, IPv4, UDP port) is then reported on `learn_*` for one
// cycle, with the payload's `pid`. An ARP request (Ethernet type 0x0806,
// hardware 1, protocol 0x0800, lengths 6 and 4, operation 1) sent to
// cfg_mac or broadcast for cfg_ipv4 (non-zero) is reported on `arp_*` for
// one cycle when `arp_ready` is high. Every other frame, and an ARP request
// met with `arp_ready` low, pulses `drop` once and is consumed.
//
// The payload starts at byte 42 = 5 beats + 2 bytes: output beat k is
// {input beat 6+k [15:0], input beat 5+k [63:16]}. Bytes after the UDP length
// (Ethernet padding) are discarded. A frame that ends before its UDP length
// (possible only from a sender lying in the IPv4 length with a correct FCS)
// is passed padded with zero bytes to the UDP length, so its Clio CRC32C fails
// in the fast path (which NACKs it), and `drop` pulses. A frame shorter than
// 7 beats is dropped (the MAC delivers at least 60 bytes).
//
// `s_axis_tdest` names the Ethernet port a frame came in on (constant over
// the frame); it is reported with the frame's `learn_*` and `arp_*`.
module clio_udp_rx #(
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
    input  wire [DEST_WIDTH-1:0] s_axis_tdest,

    output wire [63:0] m_axis_tdata,
    output wire [7:0]  m_axis_tkeep,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,
    output wire        m_axis_tlast,

    output wire        learn_valid,
    output wire [31:0] learn_pid,
    output wire [47:0] learn_mac,
    output wire [31:0] learn_ipv4,
    output wire [15:0] learn_port,
    output wire [DEST_WIDTH-1:0] learn_dest,

    output wire        arp_valid,
    input  wire        arp_ready,
    output wire [47:0] arp_sha,
    output wire [31:0] arp_spa,
    output wire [DEST_WIDTH-1:0] arp_dest,

    output wire        drop
);

import clio_pkg::*;

localparam HDR_BEATS = 7;
localparam [15:0] ETH_IPV4 = 16'h0800;
localparam [15:0] ETH_ARP = 16'h0806;
localparam [7:0]  IP_UDP = 8'd17;
localparam [15:0] MIN_UDP_LEN = 16'(8 + CLIO_HEADER_LEN);

initial begin
    if (CLIO_OFF_PID != 4 || CLIO_HEADER_LEN < 8 || CLIO_HEADER_LEN > 1000) begin
        $error("Error: the pid must sit at payload bytes 4..7, inside the held beats (instance %m)");
        $finish;
    end
end

// Big-endian field of `n` bytes at byte offset `o` of the held header.
function [47:0] be48(input [8*8*HDR_BEATS-1:0] h, input integer o);
    integer i;
    begin
        be48 = 0;
        for (i = 0; i < 6; i = i + 1) begin
            be48[8*(5-i) +: 8] = h[8*(o+i) +: 8];
        end
    end
endfunction

function [31:0] be32(input [8*8*HDR_BEATS-1:0] h, input integer o);
    be32 = {h[8*o +: 8], h[8*(o+1) +: 8], h[8*(o+2) +: 8], h[8*(o+3) +: 8]};
endfunction

function [15:0] be16(input [8*8*HDR_BEATS-1:0] h, input integer o);
    be16 = {h[8*o +: 8], h[8*(o+1) +: 8]};
endfunction

localparam [2:0]
    S_HDR = 3'd0,
    S_CHECK = 3'd1,
    S_PASS = 3'd2,
    S_DRAIN = 3'd3;

reg [2:0]   state_reg = S_HDR, state_next;
reg [8*8*HDR_BEATS-1:0] hdr_reg = 0, hdr_next;
// The port of the frame held in hdr_reg (taken with its first beat).
reg [DEST_WIDTH-1:0] dest_reg = 0, dest_next;
reg [2:0]   beat_reg = 0, beat_next;
reg         short_reg = 1'b0, short_next;
reg         in_done_reg = 1'b0, in_done_next;
reg         first_reg = 1'b0, first_next;
reg [63:0]  prev_reg = 0, prev_next;
reg [15:0]  rem_reg = 0, rem_next;
// Payload bytes (from byte 42 on) of the frame consumed so far.
reg [15:0]  have_reg = 0, have_next;

reg [63:0]  out_data_reg = 0, out_data_next;
reg [7:0]   out_keep_reg = 0, out_keep_next;
reg         out_last_reg = 1'b0, out_last_next;
reg         out_valid_reg = 1'b0, out_valid_next;

reg         learn_reg = 1'b0, learn_next;
reg         arp_reg = 1'b0, arp_next;
reg         drop_reg = 1'b0, drop_next;
reg         s_ready;

// Header fields.
wire [47:0] f_dst_mac = be48(hdr_reg, 0);
wire [47:0] f_src_mac = be48(hdr_reg, 6);
wire [15:0] f_type = be16(hdr_reg, 12);
wire [7:0]  f_ver_ihl = hdr_reg[8*14 +: 8];
wire [15:0] f_ip_len = be16(hdr_reg, 16);
// MF (bit 13) and the fragment offset; DF and the reserved bit are ignored.
wire [13:0] f_frag = 14'(be16(hdr_reg, 20));
wire [7:0]  f_proto = hdr_reg[8*23 +: 8];
wire [31:0] f_src_ip = be32(hdr_reg, 26);
wire [31:0] f_dst_ip = be32(hdr_reg, 30);
wire [15:0] f_src_port = be16(hdr_reg, 34);
wire [15:0] f_dst_port = be16(hdr_reg, 36);
wire [15:0] f_udp_len = be16(hdr_reg, 38);
wire [31:0] f_pid = be32(hdr_reg, 42 + CLIO_OFF_PID);
// ARP fields.
wire [15:0] a_htype = be16(hdr_reg, 14);
wire [15:0] a_ptype = be16(hdr_reg, 16);
wire [15:0] a_lens = be16(hdr_reg, 18);
wire [15:0] a_oper = be16(hdr_reg, 20);
wire [47:0] a_sha = be48(hdr_reg, 22);
wire [31:0] a_spa = be32(hdr_reg, 28);
wire [31:0] a_tpa = be32(hdr_reg, 38);

// IPv4 header checksum: the one's-complement sum of its ten words is 0xffff.
reg [19:0] csum_acc;
reg [16:0] csum_fold1;
reg [15:0] csum_fold2;
integer ci;
always @* begin
    csum_acc = 0;
    for (ci = 0; ci < 10; ci = ci + 1) begin
        csum_acc = csum_acc + {4'd0, be16(hdr_reg, 14 + 2 * ci)};
    end
    csum_fold1 = {1'b0, csum_acc[15:0]} + {13'd0, csum_acc[19:16]};
    csum_fold2 = csum_fold1[15:0] + {15'd0, csum_fold1[16]};
end
// Registered: the IPv4 header (bytes 14..33, beats 1..4) is complete at
// least two cycles before S_CHECK, so the register holds its result then.
reg csum_ok_reg = 1'b0;
always @(posedge clk) begin
    csum_ok_reg <= csum_fold2 == 16'hffff;
end
wire csum_ok = csum_ok_reg;

wire udp_ok = !short_reg && f_dst_mac == cfg_mac && f_type == ETH_IPV4 && f_ver_ihl == 8'h45
    && f_frag == 14'd0 && f_proto == IP_UDP && csum_ok && f_dst_ip == cfg_ipv4
    && f_dst_port == cfg_udp_port && f_udp_len == f_ip_len - 16'd20 && f_udp_len >= MIN_UDP_LEN;
wire arp_ok = !short_reg && (f_dst_mac == cfg_mac || f_dst_mac == 48'hffff_ffff_ffff)
    && f_type == ETH_ARP && a_htype == 16'd1 && a_ptype == ETH_IPV4 && a_lens == 16'h0604
    && a_oper == 16'd1 && a_tpa == cfg_ipv4 && cfg_ipv4 != 32'd0;

// Bytes under a packed tkeep.
function [3:0] keep_count(input [7:0] k);
    integer i;
    begin
        keep_count = 0;
        for (i = 0; i < 8; i = i + 1) begin
            keep_count = keep_count + {3'd0, k[i]};
        end
    end
endfunction

// Output step of S_PASS: the next source beat and whether it is available.
reg        need_in;
reg [63:0] src;
reg        src_ok;

always @* begin
    state_next = state_reg;
    hdr_next = hdr_reg;
    dest_next = dest_reg;
    beat_next = beat_reg;
    short_next = short_reg;
    in_done_next = in_done_reg;
    first_next = first_reg;
    prev_next = prev_reg;
    rem_next = rem_reg;
    have_next = have_reg;
    out_data_next = out_data_reg;
    out_keep_next = out_keep_reg;
    out_last_next = out_last_reg;
    out_valid_next = out_valid_reg && !m_axis_tready;
    learn_next = 1'b0;
    arp_next = 1'b0;
    drop_next = 1'b0;
    s_ready = 1'b0;
    need_in = 1'b0;
    src = 64'd0;
    src_ok = 1'b0;

    case (state_reg)
        S_HDR: begin
            s_ready = 1'b1;
            if (s_axis_tvalid) begin
                hdr_next[64*beat_reg +: 64] = s_axis_tdata;
                if (beat_reg == 0) begin
                    dest_next = s_axis_tdest;
                end
                beat_next = beat_reg + 1'b1;
                if (beat_reg == 3'(HDR_BEATS - 1)) begin
                    // Bytes 42.. of the frame held so far: 14 of beat 5 and 6.
                    have_next = 16'd6 + {12'd0, keep_count(s_axis_tkeep)};
                end
                if (s_axis_tlast || beat_reg == 3'(HDR_BEATS - 1)) begin
                    short_next = beat_reg != 3'(HDR_BEATS - 1);
                    in_done_next = s_axis_tlast;
                    state_next = S_CHECK;
                end
            end
        end
        S_CHECK: begin
            beat_next = 0;
            if (udp_ok) begin
                learn_next = 1'b1;
                first_next = 1'b1;
                prev_next = hdr_reg[64*5 +: 64];
                rem_next = f_udp_len - 16'd8;
                state_next = S_PASS;
            end else begin
                if (arp_ok && arp_ready) begin
                    arp_next = 1'b1;
                end else begin
                    drop_next = 1'b1;
                end
                state_next = in_done_reg ? S_HDR : S_DRAIN;
            end
        end
        S_PASS: begin
            // Beats beyond the held ones come from the input, or are zero once
            // the frame has ended; a last beat needing only prev's top six
            // bytes takes no input.
            need_in = !first_reg && !in_done_reg && rem_reg > 16'd6;
            if (first_reg) begin
                src = hdr_reg[64*6 +: 64];
                src_ok = 1'b1;
            end else if (need_in) begin
                src = s_axis_tdata;
                src_ok = s_axis_tvalid;
            end else begin
                src_ok = 1'b1;
            end
            if (src_ok && (!out_valid_reg || m_axis_tready)) begin
                s_ready = need_in;
                out_valid_next = 1'b1;
                out_data_next = {src[15:0], prev_reg[63:16]};
                out_keep_next = rem_reg >= 16'd8 ? 8'hff : 8'((9'd1 << rem_reg[2:0]) - 9'd1);
                out_last_next = rem_reg <= 16'd8;
                prev_next = src;
                first_next = 1'b0;
                rem_next = rem_reg - 16'd8;
                if (need_in) begin
                    have_next = have_reg + {12'd0, keep_count(s_axis_tkeep)};
                    if (s_axis_tlast) begin
                        in_done_next = 1'b1;
                    end
                end
                if (rem_reg <= 16'd8) begin
                    // Done: the frame is short of its UDP length if it ended
                    // before holding every payload byte.
                    if ((in_done_reg || (need_in && s_axis_tlast))
                            && have_next < f_udp_len - 16'd8) begin
                        drop_next = 1'b1;
                    end
                    state_next = (in_done_reg || (need_in && s_axis_tlast)) ? S_HDR : S_DRAIN;
                end
            end
        end
        S_DRAIN: begin
            s_ready = 1'b1;
            if (s_axis_tvalid && s_axis_tlast) begin
                state_next = S_HDR;
            end
        end
        default: state_next = S_HDR;
    endcase
end

always @(posedge clk) begin
    state_reg <= state_next;
    hdr_reg <= hdr_next;
    dest_reg <= dest_next;
    beat_reg <= beat_next;
    short_reg <= short_next;
    in_done_reg <= in_done_next;
    first_reg <= first_next;
    prev_reg <= prev_next;
    rem_reg <= rem_next;
    have_reg <= have_next;
    out_data_reg <= out_data_next;
    out_keep_reg <= out_keep_next;
    out_last_reg <= out_last_next;
    out_valid_reg <= out_valid_next;
    learn_reg <= learn_next;
    arp_reg <= arp_next;
    drop_reg <= drop_next;
    if (rst) begin
        state_reg <= S_HDR;
        beat_reg <= 0;
        out_valid_reg <= 1'b0;
        learn_reg <= 1'b0;
        arp_reg <= 1'b0;
        drop_reg <= 1'b0;
    end
end

// The learn/ARP outputs are registered one cycle after S_CHECK; the held
// header and its port are unchanged then (the next frame's are written only
// after the current frame is consumed, at least one cycle later).
assign s_axis_tready = s_ready;
assign m_axis_tdata = out_data_reg;
assign m_axis_tkeep = out_keep_reg;
assign m_axis_tvalid = out_valid_reg;
assign m_axis_tlast = out_last_reg;
assign learn_valid = learn_reg;
assign learn_pid = f_pid;
assign learn_mac = f_src_mac;
assign learn_ipv4 = f_src_ip;
assign learn_port = f_src_port;
assign learn_dest = dest_reg;
assign arp_valid = arp_reg;
assign arp_sha = a_sha;
assign arp_spa = a_spa;
assign arp_dest = dest_reg;
assign drop = drop_reg;

endmodule

`resetall

// clio_rtlsim: server-mode Verilator harness of clio_fastpath_top, the fast
// path of an emulated board (`clio sim --fast-path rtl`).
//
//   clio_rtlsim DRAM_FILE CFG_FILE
//
// DRAM_FILE is the board DRAM, a file shared with the process that runs the
// slow path (DRAM offset = file offset; the size is the file's). This harness
// is the AXI4 slave of the top's memory port over that mapping, with the
// timing of rtl/clio_axi_ram.sv (reads queued up to 8, first beat after
// READ_LATENCY cycles, then one beat per cycle; one write burst at a time,
// acknowledged WRITE_LATENCY cycles after its last beat; a write address is
// accepted only while no read is queued or offered). CFG_FILE holds the
// `name hex` lines of the top's static configuration (clio-fastpath-cosim's
// `config_lines`), plus `streams 1` to turn READ streams on (`cfg_streams_on`;
// the top must be built with STREAMS > 0).
//
// Lock step with the caller over stdin/stdout, frames of
// `kind:u8 len:u32le payload`:
//   in   'P' packet   one packet into the ingress; run until the top settles
//        'R'          pulse `poll` (drain the TX ring); run until done and settled
//        'S'          pump one packet of the open READ streams; run until settled
//        'Q'          exit
//   out  'H' u64      ready after reset (payload: DRAM bytes)
//        'O' bytes    one response packet
//        'D' u64 u32  command finished (payload: cycles so far, open READ streams)
//        'E' text     the design misbehaved (did not go idle); the harness exits
// Settled: idle for three cycles in a row, or the engine has just started
// pumping a stream packet (`ev_pump_q`): the clock stops there, with
// everything taken in before executed, and the next command (a packet, or
// 'S') runs that pump to its end (the RTL's own order: a request that
// arrives meanwhile is taken in after it, then the next stream packet is
// pumped). 'S' thus sends one stream packet each: the one being pumped.
// (Between two pumps the engine never waits idle: it starts the next while
// the response builder still sends the last, so idle cannot mark the point.)
// Between commands the harness blocks in read(2) and the design is not
// clocked, so the caller may touch DRAM (the slow path's rings) freely. EOF
// on stdin ends the harness, so it never outlives its caller.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "Vclio_fastpath_top.h"
#include "Vclio_fastpath_top___024root.h"
#include "verilated.h"

using Bytes = std::vector<uint8_t>;

static const unsigned READ_LATENCY = 4;
static const unsigned WRITE_LATENCY = 2;
static const unsigned READ_QUEUE = 8;
static const unsigned BEAT = 64;
// Cycles a command may run before the design counts as hung.
static const uint64_t MAX_COMMAND_CYCLES = 2000000;

[[noreturn]] static void die(const std::string& msg) {
    fprintf(stderr, "clio_rtlsim: %s\n", msg.c_str());
    exit(2);
}

static bool read_full(int fd, void* buf, size_t n) {
    auto* p = static_cast<uint8_t*>(buf);
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r == 0) return false;
        if (r < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static void write_full(int fd, const void* buf, size_t n) {
    auto* p = static_cast<const uint8_t*>(buf);
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            // The caller is gone; nothing left to serve.
            exit(0);
        }
        p += r;
        n -= (size_t)r;
    }
}

static void send_frame(uint8_t kind, const uint8_t* data, uint32_t len) {
    uint8_t h[5] = {kind, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    write_full(1, h, 5);
    if (len) write_full(1, data, len);
}

static void send_u64(uint8_t kind, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    send_frame(kind, b, 8);
}

static Bytes unhex(const std::string& s) {
    Bytes b(s.size() / 2);
    for (size_t i = 0; i < b.size(); i++) b[i] = (uint8_t)std::stoul(s.substr(2 * i, 2), nullptr, 16);
    return b;
}

template <size_t N>
static void set_wide(VlWide<N>& w, const uint8_t* b, size_t n) {
    for (size_t i = 0; i < N; i++) w[i] = 0;
    for (size_t i = 0; i < n; i++) w[i / 4] |= (uint32_t)b[i] << (8 * (i % 4));
}

// AXI4 slave over the shared DRAM mapping (behaviour of clio_axi_ram).
struct Ram {
    uint8_t* mem = nullptr;
    uint64_t base = 0;
    uint64_t words = 0;

    struct Burst { uint64_t word; uint32_t len, id, time; };
    Burst q[READ_QUEUE] = {};
    uint32_t q_wr = 0, q_rd = 0, now = 0, beat = 0;
    enum { W_IDLE, W_DATA, W_WAIT, W_RESP } wstate = W_IDLE;
    uint32_t wid = 0, wleft = 0, wwait = 0;
    uint64_t wword = 0;

    bool q_empty() const { return q_wr == q_rd; }
    bool q_full() const { return q_wr - q_rd == READ_QUEUE; }
    const Burst& head() const { return q[q_rd % READ_QUEUE]; }
    bool r_ready_now() const { return !q_empty() && now - head().time >= READ_LATENCY; }
    uint64_t word_of(uint64_t addr) const { return (addr - base) / BEAT; }

    bool awready(const Vclio_fastpath_top& t) const { return wstate == W_IDLE && q_empty() && !t.m_axi_arvalid; }

    // Slave outputs from the state and the master's current outputs.
    void drive(Vclio_fastpath_top& t) const {
        t.m_axi_arready = !q_full() && wstate == W_IDLE;
        t.m_axi_awready = awready(t);
        t.m_axi_wready = wstate == W_DATA;
        bool rv = r_ready_now();
        t.m_axi_rvalid = rv;
        uint64_t w = rv ? head().word + beat : 0;
        if (rv && w < words) memcpy(t.m_axi_rdata.data(), mem + w * BEAT, BEAT);
        else memset(t.m_axi_rdata.data(), 0, BEAT);
        t.m_axi_rlast = rv && beat == head().len;
        t.m_axi_rid = rv ? head().id : 0;
        t.m_axi_rresp = 0;
        t.m_axi_bvalid = wstate == W_RESP;
        t.m_axi_bid = wid;
        t.m_axi_bresp = 0;
    }

    // What the master presented at this edge.
    struct Edge {
        bool ar, r, aw, w, b, wlast;
        uint64_t araddr, awaddr;
        uint32_t arlen, arid, awlen, awid;
        uint64_t wstrb;
        uint8_t wdata[BEAT];
    };

    Edge sample(Vclio_fastpath_top& t) const {
        Edge e;
        e.ar = t.m_axi_arvalid && t.m_axi_arready;
        e.r = t.m_axi_rvalid && t.m_axi_rready;
        e.aw = t.m_axi_awvalid && t.m_axi_awready;
        e.w = t.m_axi_wvalid && t.m_axi_wready;
        e.b = t.m_axi_bvalid && t.m_axi_bready;
        e.araddr = t.m_axi_araddr;
        e.awaddr = t.m_axi_awaddr;
        e.arlen = t.m_axi_arlen;
        e.arid = t.m_axi_arid;
        e.awlen = t.m_axi_awlen;
        e.awid = t.m_axi_awid;
        e.wlast = t.m_axi_wlast;
        e.wstrb = t.m_axi_wstrb;
        memcpy(e.wdata, t.m_axi_wdata.data(), BEAT);
        return e;
    }

    void clock(const Edge& e) {
        uint32_t t = now;
        now++;
        if (e.ar) {
            q[q_wr % READ_QUEUE] = Burst{word_of(e.araddr), e.arlen, e.arid, t};
            q_wr++;
        }
        if (e.r) {
            if (beat == head().len) {
                beat = 0;
                q_rd++;
            } else {
                beat++;
            }
        }
        switch (wstate) {
        case W_IDLE:
            if (e.aw) {
                wid = e.awid;
                wword = word_of(e.awaddr);
                wleft = e.awlen;
                wstate = W_DATA;
            }
            break;
        case W_DATA:
            if (e.w) {
                if (wword < words) {
                    uint8_t* d = mem + wword * BEAT;
                    for (unsigned i = 0; i < BEAT; i++)
                        if (e.wstrb >> i & 1) d[i] = e.wdata[i];
                }
                wword++;
                bool last = wleft == 0 || e.wlast;
                wleft--;
                if (last) {
                    wwait = WRITE_LATENCY;
                    wstate = W_WAIT;
                }
            }
            break;
        case W_WAIT:
            if (wwait <= 1) wstate = W_RESP;
            wwait--;
            break;
        case W_RESP:
            if (e.b) wstate = W_IDLE;
            break;
        }
    }
};

struct Sim {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vclio_fastpath_top> top;
    Ram ram;
    uint64_t cycles = 0;
    Bytes cur;
    std::vector<Bytes> done;

    // One clock cycle; returns whether an input beat was accepted.
    bool tick() {
        auto& t = *top;
        t.clk = 0;
        ram.drive(t);
        t.eval();
        // The slave's awready follows the master's arvalid: settle again
        // only when the new arvalid changes it.
        if (ram.awready(t) != (bool)t.m_axi_awready) {
            ram.drive(t);
            t.eval();
        }
        bool in_fire = t.s_axis_tvalid && t.s_axis_tready;
        if (t.m_axis_tvalid && t.m_axis_tready) {
            uint64_t keep = t.m_axis_tkeep;
            for (unsigned i = 0; i < BEAT; i++)
                if (keep >> i & 1) cur.push_back((uint8_t)(t.m_axis_tdata[i / 4] >> (8 * (i % 4))));
            if (t.m_axis_tlast) {
                done.push_back(cur);
                cur.clear();
            }
        }
        Ram::Edge e = ram.sample(t);
        t.clk = 1;
        t.eval();
        ram.clock(e);
        cycles++;
        return in_fire;
    }

    // Open READ streams (the top's stream table).
    uint32_t streams() const { return top->rootp->clio_fastpath_top__DOT__sq_cnt; }
    bool pumped() const { return top->rootp->clio_fastpath_top__DOT__ev_pump_q; }

    // Clock until the top settles (see the header).
    bool wait_idle(uint64_t start) {
        int quiet = 0;
        while (cycles - start < MAX_COMMAND_CYCLES) {
            tick();
            if (pumped()) return true;
            quiet = top->idle ? quiet + 1 : 0;
            if (quiet >= 3) return true;
        }
        return false;
    }
};

int main(int argc, char** argv) {
    if (argc < 3) die("usage: clio_rtlsim DRAM_FILE CFG_FILE");
    std::map<std::string, std::string> cfg;
    {
        std::ifstream f(argv[2]);
        if (!f) die(std::string("cannot read ") + argv[2]);
        std::string k, v;
        while (f >> k >> v) cfg[k] = v;
    }
    auto num = [&](const char* k) -> uint64_t {
        if (!cfg.count(k)) die(std::string(argv[2]) + " lacks " + k);
        return std::stoull(cfg[k], nullptr, 16);
    };

    int fd = open(argv[1], O_RDWR);
    if (fd < 0) die(std::string("cannot open ") + argv[1] + ": " + strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size % BEAT != 0)
        die(std::string(argv[1]) + ": size must be a positive multiple of 64 bytes");
    void* m = mmap(nullptr, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) die(std::string("mmap ") + argv[1] + ": " + strerror(errno));
    close(fd);

    Sim s;
    s.ctx.reset(new VerilatedContext);
    s.ctx->commandArgs(argc, argv);
    s.top.reset(new Vclio_fastpath_top(s.ctx.get()));
    s.ram.mem = static_cast<uint8_t*>(m);
    s.ram.words = (uint64_t)st.st_size / BEAT;
    s.ram.base = num("dram_base");

    auto& t = *s.top;
    t.cfg_table_base = num("table_base");
    t.cfg_rx_base = num("rx_base");
    t.cfg_rx_slots = num("rx_slots");
    t.cfg_tx_base = num("tx_base");
    t.cfg_tx_slots = num("tx_slots");
    t.cfg_data_start = num("data_start");
    t.cfg_data_end = num("data_end");
    t.cfg_va_bits = num("va_bits");
    t.cfg_class_shift = num("class_shift");
    t.cfg_max_pid = num("max_pid");
    t.cfg_mtu = num("mtu");
    t.cfg_streams_on = cfg.count("streams") ? num("streams") != 0 : 0;
    Bytes info = unhex(cfg["info"]);
    set_wide(t.cfg_info, info.data(), info.size());

    t.m_axis_tready = 1;
    t.s_axis_tvalid = 0;
    t.poll = 0;
    t.rst = 1;
    for (int i = 0; i < 4; i++) s.tick();
    t.rst = 0;
    s.tick();
    if (!s.wait_idle(s.cycles)) die("the design is not idle after reset");
    send_u64('H', (uint64_t)st.st_size);

    auto flush = [&]() {
        for (auto& r : s.done) send_frame('O', r.data(), (uint32_t)r.size());
        s.done.clear();
        uint8_t d[12];
        uint32_t open = s.streams();
        for (int i = 0; i < 8; i++) d[i] = (uint8_t)(s.cycles >> (8 * i));
        for (int i = 0; i < 4; i++) d[8 + i] = (uint8_t)(open >> (8 * i));
        send_frame('D', d, sizeof d);
    };
    auto hung = [&](const std::string& what) {
        std::string msg = what + " (after " + std::to_string(MAX_COMMAND_CYCLES) + " cycles)";
        send_frame('E', reinterpret_cast<const uint8_t*>(msg.data()), (uint32_t)msg.size());
        fprintf(stderr, "clio_rtlsim: %s\n", msg.c_str());
        exit(1);
    };

    Bytes p;
    for (;;) {
        uint8_t h[5];
        if (!read_full(0, h, 5)) return 0;
        uint32_t len = h[1] | h[2] << 8 | h[3] << 16 | (uint32_t)h[4] << 24;
        p.resize(len);
        if (len && !read_full(0, p.data(), len)) return 0;
        uint64_t start = s.cycles;
        switch (h[0]) {
        case 'P': {
            size_t sent = 0;
            while (sent < p.size()) {
                size_t n = std::min<size_t>(BEAT, p.size() - sent);
                set_wide(t.s_axis_tdata, p.data() + sent, n);
                t.s_axis_tkeep = n == BEAT ? ~0ULL : ((1ULL << n) - 1);
                t.s_axis_tlast = sent + n >= p.size();
                t.s_axis_tvalid = 1;
                while (!s.tick())
                    if (s.cycles - start > MAX_COMMAND_CYCLES) hung("the ingress stopped accepting beats");
                sent += n;
            }
            t.s_axis_tvalid = 0;
            if (!s.wait_idle(start)) hung("the design did not return to idle after a packet");
            flush();
            break;
        }
        case 'R': {
            t.poll = 1;
            s.tick();
            t.poll = 0;
            bool ok = false;
            while (!ok && s.cycles - start < MAX_COMMAND_CYCLES) {
                ok = t.poll_done;
                s.tick();
            }
            if (!ok) hung("the TX-ring poll did not finish");
            if (!s.wait_idle(start)) hung("the design did not return to idle after a TX-ring poll");
            flush();
            break;
        }
        case 'S': {
            // Settled with streams open means a pump has just started: run
            // it to its end (the next pump's start, or idle).
            if (s.streams() != 0 && !s.wait_idle(start)) hung("the design did not settle after a stream packet");
            flush();
            break;
        }
        case 'Q':
            return 0;
        default:
            die("unknown command frame " + std::to_string(h[0]));
        }
    }
}

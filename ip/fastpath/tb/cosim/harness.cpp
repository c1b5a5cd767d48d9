// Verilator harness of the differential co-simulation: replays a case written
// by `clio-cosim gen` into clio_fastpath_sim and requires bit-identical
// responses and an identical final memory image. Exit 0 on agreement; on the
// first difference prints the seed, the event and both versions, exit 1.
//
// `X pa bytes` lines (the slow path reading an RX slot, a GATE_DIRTY report
// or an OFFLOAD_REQ fragment) compare the RTL's memory there with the
// model's at that point. With COSIM_EVENT_CYCLES=FILE set, each event's
// cycles (from its start until the top is idle again) are written there.
// `CASE_DIR --order-log`: the same run and pacing, but every response and the
// final memory are logged (rtl_events.txt, rtl_final.bin, as --replay writes
// them) for `clio-cosim check` instead of compared in the model's order here
// (tb/cosim/classes.sh runs its streams so).
// `CASE_DIR --replay on|off` (READ streams on or off): the RTL's own order decides. Packets go
// in back to back; the ARM's memory writes and polls wait until the fast path
// is quiet (which may be between two pumped packets of an open READ stream,
// so a page can go away under it). What the RTL reports (request taken in,
// stream packet pumped, poll started; `K pid va` a hit-lane TLB lookup that hit (a miss
// touches no entry: the lane hands the request over),
// `I pid vpn shift` a TLB insert) and its responses are logged in order
// to CASE_DIR/rtl_events.txt, its final memory to CASE_DIR/rtl_final.bin;
// `clio-cosim check` then drives the model in that order (a request in the
// order of its answer, each answer sent ahead of an earlier request's checked
// against the ordering rule) and compares. Also
// prints, per path class of the case, first beat in -> first beat of the
// answer (matched by req_id).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vclio_fastpath_sim.h"
#include "Vclio_fastpath_sim___024root.h"
#include "verilated.h"

using Bytes = std::vector<uint8_t>;

static Bytes unhex(const std::string& s) {
    Bytes b(s.size() / 2);
    for (size_t i = 0; i < b.size(); i++) b[i] = (uint8_t)std::stoul(s.substr(2 * i, 2), nullptr, 16);
    return b;
}

static std::string hex(const Bytes& b) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (auto x : b) { s += d[x >> 4]; s += d[x & 15]; }
    return s;
}

static Bytes read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) { fprintf(stderr, "cosim: cannot read %s\n", p.c_str()); exit(2); }
    return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

template <size_t N>
static void set_wide(VlWide<N>& w, const uint8_t* b, size_t n) {
    for (size_t i = 0; i < N; i++) w[i] = 0;
    for (size_t i = 0; i < n; i++) w[i / 4] |= (uint32_t)b[i] << (8 * (i % 4));
}

struct Sim {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vclio_fastpath_sim> top;
    uint64_t cycles = 0;
    uint64_t in_beats = 0;
    Bytes cur;                     // response being received
    std::vector<Bytes> done;       // completed responses
    std::vector<uint64_t> done_at; // cycle of each response's first beat
    uint64_t first_beat_at = 0;
    bool in_packet = false;
    FILE* olog = nullptr;          // `CASE_DIR --order-log`: rtl_events.txt, as --replay writes it
    uint64_t logged = 0;           // responses logged there

    Sim(int argc, char** argv) : ctx(new VerilatedContext), top(nullptr) {
        ctx->commandArgs(argc, argv);
        top.reset(new Vclio_fastpath_sim(ctx.get()));
    }

    // One clock cycle; returns whether an input beat was accepted at this edge.
    bool tick() {
        size_t done_before = done.size();
        top->clk = 0;
        top->eval();
        bool in_fire = top->s_axis_tvalid && top->s_axis_tready;
        if (top->m_axis_tvalid && top->m_axis_tready) {
            if (!in_packet) { first_beat_at = cycles; in_packet = true; }
            uint64_t keep = top->m_axis_tkeep;
            for (int i = 0; i < 64; i++)
                if (keep >> i & 1) cur.push_back((uint8_t)(top->m_axis_tdata[i / 4] >> (8 * (i % 4))));
            if (top->m_axis_tlast) {
                done.push_back(cur);
                done_at.push_back(first_beat_at);
                cur.clear();
                in_packet = false;
            }
        }
        top->clk = 1;
        top->eval();
        cycles++;
        if (in_fire) in_beats++;
        if (olog) log_events(done_before);
        return in_fire;
    }

    // What the RTL reports at this edge, in --replay's order and format
    // (see run_replay), then the responses completed in this cycle.
    void log_events(size_t from) {
        auto* r = top->rootp;
        if (r->clio_fastpath_sim__DOT__top_inst__DOT__ev_pump_q) fputs("P\n", olog);
        if (r->clio_fastpath_sim__DOT__top_inst__DOT__ev_poll_q) fputs("R\n", olog);
        if (r->clio_fastpath_sim__DOT__top_inst__DOT__ev_take_q) fputs("T\n", olog);
        if (r->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_q)
            fprintf(olog, "I %x %llx %x\n", (unsigned)r->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_pid,
                    (unsigned long long)r->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_vpn,
                    (unsigned)r->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_shift);
        if (r->clio_fastpath_sim__DOT__top_inst__DOT__ev_look_q)
            fprintf(olog, "K %x %llx\n", (unsigned)r->clio_fastpath_sim__DOT__top_inst__DOT__ev_look_pid,
                    (unsigned long long)r->clio_fastpath_sim__DOT__top_inst__DOT__ev_look_va);
        for (size_t k = from; k < done.size(); k++) {
            fprintf(olog, "O %s\n", hex(done[k]).c_str());
            logged++;
        }
    }

    uint8_t* mem_word(size_t w) {
        return reinterpret_cast<uint8_t*>(top->rootp->clio_fastpath_sim__DOT__ram_inst__DOT__mem[w].data());
    }
};

static uint32_t be32(const Bytes& b, size_t at) {
    return (uint32_t)b[at] << 24 | (uint32_t)b[at + 1] << 16 | (uint32_t)b[at + 2] << 8 | b[at + 3];
}

static int run_replay(Sim& s, const std::string& dir, uint64_t seed, uint64_t dram_base, size_t words,
                      std::map<size_t, std::string>& path_of) {
    auto& t = *s.top;
    auto* root = t.rootp;
    FILE* log = fopen((dir + "/rtl_events.txt").c_str(), "w");
    if (!log) { fprintf(stderr, "cosim: cannot write %s/rtl_events.txt\n", dir.c_str()); return 2; }
    uint64_t last_in = 0, takes = 0, pumps = 0, polls = 0, outs = 0, packets = 0;
    std::map<uint32_t, std::pair<std::string, uint64_t>> waiting;  // req_id -> (class, first beat in)
    std::map<std::string, std::vector<uint64_t>> lat;
    auto step = [&]() -> bool {
        bool fire = s.tick();
        if (fire) last_in = s.cycles;
        // One edge may start a pump or a poll and take a lane request in:
        // the engine's step comes first (the lane request waits for it).
        if (root->clio_fastpath_sim__DOT__top_inst__DOT__ev_pump_q) { fputs("P\n", log); pumps++; }
        if (root->clio_fastpath_sim__DOT__top_inst__DOT__ev_poll_q) { fputs("R\n", log); polls++; }
        if (root->clio_fastpath_sim__DOT__top_inst__DOT__ev_take_q) { fputs("T\n", log); takes++; }
        // The hit lane's TLB lookups and the engine's TLB inserts (the
        // order check of answers sent ahead of an earlier request's). An
        // insert and a lookup at one edge: the insert is logged first (the
        // TLB's recency update keeps the insert's, not the lookup's).
        if (root->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_q)
            fprintf(log, "I %x %llx %x\n", (unsigned)root->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_pid,
                    (unsigned long long)root->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_vpn,
                    (unsigned)root->clio_fastpath_sim__DOT__top_inst__DOT__ev_ins_shift);
        if (root->clio_fastpath_sim__DOT__top_inst__DOT__ev_look_q)
            fprintf(log, "K %x %llx\n", (unsigned)root->clio_fastpath_sim__DOT__top_inst__DOT__ev_look_pid,
                    (unsigned long long)root->clio_fastpath_sim__DOT__top_inst__DOT__ev_look_va);
        for (size_t k = 0; k < s.done.size(); k++) {
            fprintf(log, "O %s\n", hex(s.done[k]).c_str());
            outs++;
            if (s.done[k].size() >= 12) {
                auto w = waiting.find(be32(s.done[k], 8));
                if (w != waiting.end()) {
                    lat[w->second.first].push_back(s.done_at[k] - w->second.second);
                    waiting.erase(w);
                }
            }
        }
        s.done.clear();
        s.done_at.clear();
        return fire;
    };
    auto fail = [&](const char* what) {
        fclose(log);
        printf("COSIM REPLAY FAILED seed=%llu: %s (cycle %llu)\n", (unsigned long long)seed, what,
               (unsigned long long)s.cycles);
        return 1;
    };
    // Quiet: the engine idle between two steps, the lane empty, nothing in
    // the parser for a few cycles.
    auto wait_quiet = [&]() {
        for (uint64_t n = 0; n < 2000000; n++) {
            if (t.idle && s.cycles - last_in >= 4) return true;
            step();
        }
        return false;
    };
    std::ifstream stim(dir + "/stim.txt");
    std::string line;
    size_t ev = 0;
    while (std::getline(stim, line)) {
        if (line.empty() || line[0] == 'S') continue;
        if (line[0] == 'P') {
            Bytes p = unhex(line.substr(2));
            uint64_t start = s.cycles;
            size_t sent = 0;
            do {
                size_t n = std::min<size_t>(64, p.size() - sent);
                set_wide(t.s_axis_tdata, p.data() + sent, n);
                t.s_axis_tkeep = n == 64 ? ~0ULL : ((1ULL << n) - 1);
                t.s_axis_tlast = sent + n >= p.size();
                t.s_axis_tvalid = 1;
                if (sent == 0) start = s.cycles;
                uint64_t n_wait = 0;
                while (!step())
                    if (++n_wait > 2000000) return fail("input stalled");
                sent += n;
            } while (sent < p.size());
            t.s_axis_tvalid = 0;
            if (path_of.count(ev) && p.size() >= 12) waiting[be32(p, 8)] = {path_of[ev], start};
            packets++;
        } else if (line[0] == 'M') {
            if (!wait_quiet()) return fail("no quiet cycle for an ARM memory write");
            std::istringstream ls(line.substr(2));
            std::string a, h;
            ls >> a >> h;
            uint64_t pa = std::stoull(a, nullptr, 16) - dram_base;
            Bytes b = unhex(h);
            for (size_t i = 0; i < b.size(); i++) s.mem_word((pa + i) / 64)[(pa + i) % 64] = b[i];
            fputs("M\n", log);
        } else if (line[0] == 'G') {
            t.s_axis_tvalid = 0;
            for (long n = std::stol(line.substr(2)); n > 0; n--) step();
        } else if (line[0] == 'R') {
            if (!wait_quiet()) return fail("no quiet cycle for a poll");
            t.poll = 1;
            step();
            t.poll = 0;
            bool ok = false;
            for (uint64_t n = 0; n < 2000000 && !ok; n++) { step(); ok = t.poll_done; }
            if (!ok) return fail("TX ring poll did not finish");
        }
        ev++;
    }
    // The end: idle for three cycles (an open stream would have been pumped).
    int quiet = 0;
    for (uint64_t n = 0; n < 20000000 && quiet < 3; n++) {
        step();
        quiet = t.idle ? quiet + 1 : 0;
    }
    if (quiet < 3) return fail("RTL did not return to idle");
    fclose(log);
    Bytes fin(words * 64);
    for (size_t w = 0; w < words; w++) memcpy(&fin[w * 64], s.mem_word(w), 64);
    std::ofstream(dir + "/rtl_final.bin", std::ios::binary).write((const char*)fin.data(), fin.size());
    printf("replay seed=%llu: %llu packets in, %llu taken, %llu stream packets pumped, %llu polls, %llu responses, "
           "%llu cycles\n",
           (unsigned long long)seed, (unsigned long long)packets, (unsigned long long)takes,
           (unsigned long long)pumps, (unsigned long long)polls, (unsigned long long)outs,
           (unsigned long long)s.cycles);
    for (auto& kv : lat) {
        auto& v = kv.second;
        std::sort(v.begin(), v.end());
        printf("latency %-5s first beat in -> first beat of its answer: min %llu median %llu p99 %llu max %llu cycles "
               "over %zu requests\n",
               kv.first.c_str(), (unsigned long long)v.front(), (unsigned long long)v[v.size() / 2],
               (unsigned long long)v[std::min(v.size() - 1, v.size() * 99 / 100)], (unsigned long long)v.back(),
               v.size());
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s CASE_DIR [+verilator args]\n", argv[0]); return 2; }
    std::string dir = argv[1];
    Sim s(argc, argv);
    auto& t = *s.top;

    // Configuration.
    std::map<std::string, std::string> cfg;
    {
        std::ifstream f(dir + "/cfg.txt");
        std::string k, v;
        while (f >> k >> v) cfg[k] = v;
    }
    auto num = [&](const char* k) -> uint64_t {
        if (!cfg.count(k)) { fprintf(stderr, "cosim: cfg.txt lacks %s\n", k); exit(2); }
        return std::stoull(cfg[k], nullptr, 16);
    };
    uint64_t seed = num("seed");
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
    uint64_t dram_base = num("dram_base");
    Bytes info = unhex(cfg["info"]);
    set_wide(t.cfg_info, info.data(), info.size());

    // Memory image.
    Bytes init = read_file(dir + "/init.bin");
    const size_t words = init.size() / 64;
    for (size_t w = 0; w < words; w++) memcpy(s.mem_word(w), &init[w * 64], 64);

    // Expected outputs.
    std::vector<std::pair<size_t, Bytes>> expect;
    std::map<size_t, std::string> path_of;
    {
        std::ifstream f(dir + "/expect.txt");
        std::string line;
        while (std::getline(f, line)) {
            std::istringstream ls(line);
            std::string tag, h;
            size_t idx;
            ls >> tag >> idx >> h;
            if (tag == "O") expect.push_back({idx, unhex(h)});
            else if (tag == "L") path_of[idx] = h;
        }
    }

    t.cfg_streams_on = 0;  // READs answered whole: the order the case was generated in
    t.m_axis_tready = 1;
    t.s_axis_tvalid = 0;
    t.poll = 0;
    t.rst = 1;
    for (int i = 0; i < 4; i++) s.tick();
    t.rst = 0;
    s.tick();
    s.done.clear();
    s.done_at.clear();
    if (argc >= 4 && std::string(argv[2]) == "--replay") {
        t.cfg_streams_on = std::string(argv[3]) == "on";
        return run_replay(s, dir, seed, dram_base, words, path_of);
    }

    // `CASE_DIR --order-log`: the same run, but the responses are not
    // compared here: what the RTL reports and sends is logged to
    // rtl_events.txt as --replay logs it, the final memory to rtl_final.bin,
    // and `clio-cosim check` compares in the RTL's answer order (which may
    // answer a hit before a walk in front of it).
    const bool order_log = argc >= 3 && std::string(argv[2]) == "--order-log";
    if (order_log) {
        s.olog = fopen((dir + "/rtl_events.txt").c_str(), "w");
        if (!s.olog) { fprintf(stderr, "cosim: cannot write %s/rtl_events.txt\n", dir.c_str()); return 2; }
    }

    std::ifstream stim(dir + "/stim.txt");
    std::string line;
    size_t ev = 0, next_out = 0, packets = 0, expects = 0;
    // COSIM_EVENT_CYCLES=FILE: each event's index, kind and cycles until the
    // top was idle again (tb/cosim/offload_cost.sh reads it).
    FILE* ev_log = getenv("COSIM_EVENT_CYCLES") ? fopen(getenv("COSIM_EVENT_CYCLES"), "w") : nullptr;
    std::map<std::string, std::pair<uint64_t, uint64_t>> lat;  // class -> (min, max)
    std::map<std::string, uint64_t> lat_n;
    std::map<std::string, std::pair<uint64_t, uint64_t>> span; // class -> (min, max) to the last packet
    auto fail = [&](const std::string& what, const std::string& ctx_line) {
        printf("COSIM MISMATCH seed=%llu event=%zu: %s\n  stimulus: %s\n", (unsigned long long)seed, ev,
               what.c_str(), ctx_line.substr(0, 400).c_str());
        exit(1);
    };
    auto check_outputs = [&](const std::string& ctx_line) {
        if (order_log) {
            s.done.clear();
            s.done_at.clear();
            return;
        }
        for (size_t k = 0; k < s.done.size(); k++) {
            if (next_out >= expect.size()) fail("unexpected response " + hex(s.done[k]), ctx_line);
            auto& e = expect[next_out];
            if (e.first != ev) fail("response " + hex(s.done[k]) + " where the model answered event " + std::to_string(e.first), ctx_line);
            if (e.second != s.done[k]) fail("response differs\n  model: " + hex(e.second) + "\n  rtl:   " + hex(s.done[k]), ctx_line);
            next_out++;
        }
        s.done.clear();
        s.done_at.clear();
        if (next_out < expect.size() && expect[next_out].first <= ev)
            fail("missing response, model sent " + hex(expect[next_out].second), ctx_line);
    };
    auto wait_idle = [&](const std::string& ctx_line) {
        int quiet = 0;
        for (uint64_t n = 0; n < 2000000; n++) {
            s.tick();
            quiet = t.idle ? quiet + 1 : 0;
            if (quiet >= 3) return;
        }
        fail("RTL did not return to idle", ctx_line);
    };

    // Throughput run: after an `S` line, packets go in back to back.
    bool stream = false;
    uint64_t st_start = 0, st_end = 0, st_idle = 0, st_stalls = 0, st_beats = 0, st_packets = 0;
    // Stall cycles by the engine's state (eng_state_t's value), "+held" with a
    // packet in hand, "+walk" with the hit lane running beside a walk.
    std::map<std::string, uint64_t> st_stall_at;
    // Per path class of a stream packet (a class stream sending with path
    // probes, e.g. hitmiss): first beat accepted -> first beat of its answer.
    std::map<size_t, uint64_t> st_in;                 // stream event -> cycle its first beat entered
    std::map<uint32_t, size_t> st_req;                // --order-log: req_id -> stream event
    std::map<std::string, std::vector<uint64_t>> st_lat;
    auto drain_in_order = [&](const std::string& ctx_line) {
        if (order_log) {
            // Answers in the RTL's order: matched to their packet by req_id.
            for (size_t k = 0; k < s.done.size(); k++) {
                if (s.done[k].size() < 12) continue;
                auto r = st_req.find(be32(s.done[k], 8));
                if (r == st_req.end()) continue;
                size_t e = r->second;
                st_req.erase(r);
                if (st_in.count(e)) {
                    st_lat[path_of[e]].push_back(s.done_at[k] - st_in[e]);
                    st_in.erase(e);
                }
            }
            s.done.clear();
            s.done_at.clear();
            return;
        }
        for (size_t k = 0; k < s.done.size(); k++) {
            auto& got = s.done[k];
            if (next_out >= expect.size()) fail("unexpected response " + hex(got), ctx_line);
            if (expect[next_out].second != got)
                fail("response differs\n  model: " + hex(expect[next_out].second) + "\n  rtl:   " + hex(got), ctx_line);
            size_t e = expect[next_out].first;
            if (path_of.count(e) && st_in.count(e)) {
                st_lat[path_of[e]].push_back(s.done_at[k] - st_in[e]);
                st_in.erase(e);  // from the first beat of the packet the model answered
            }
            next_out++;
        }
        s.done.clear();
        s.done_at.clear();
    };

    while (std::getline(stim, line)) {
        if (line.empty()) continue;
        uint64_t ev_start = s.cycles;
        if (line[0] == 'S') {
            stream = true;
            st_start = s.cycles;
            continue;
        }
        if (line[0] == 'P' && stream) {
            Bytes p = unhex(line.substr(2));
            size_t sent = 0;
            do {
                size_t n = std::min<size_t>(64, p.size() - sent);
                set_wide(t.s_axis_tdata, p.data() + sent, n);
                t.s_axis_tkeep = n == 64 ? ~0ULL : ((1ULL << n) - 1);
                t.s_axis_tlast = sent + n >= p.size();
                t.s_axis_tvalid = 1;
                uint64_t waited = 0;
                while (!s.tick()) {
                    // A top that takes no beat for this long is stuck, not slow.
                    if (++waited >= 2000000) fail("RTL took no beat of the stream in 2000000 cycles", line);
                    st_stalls++;
                    // Where the engine is while the offered beat waits (what a
                    // request's own latency, from its first beat in, hides).
                    auto* r = s.top->rootp;
                    char key[48];
                    // (clio_engine's state and held packet, public to Verilator)
                    snprintf(key, sizeof key, "%d%s%s",
                             (int)r->clio_fastpath_sim__DOT__top_inst__DOT__eng_inst__DOT__state_reg,
                             r->clio_fastpath_sim__DOT__top_inst__DOT__eng_inst__DOT__pkt_have_reg ? "+held" : "",
                             r->clio_fastpath_sim__DOT__top_inst__DOT__lane_walk ? "+walk" : "");
                    st_stall_at[key]++;
                }
                if (sent == 0 && path_of.count(ev)) {
                    st_in[ev] = s.cycles - 1;
                    if (order_log && p.size() >= 12) st_req[be32(p, 8)] = ev;
                }
                st_beats++;
                sent += n;
            } while (sent < p.size());
            st_packets++;
            drain_in_order(line);
            ev++;
            continue;
        }
        if (stream) {
            // The slow path's turn inside a stream (a class stream's FIFO
            // refill): the stream pauses until the top is idle, so the ring
            // traffic meets the state the model saw.
            t.s_axis_tvalid = 0;
            wait_idle(line);
            drain_in_order(line);
        }
        if (line[0] == 'P') {
            Bytes p = unhex(line.substr(2));
            uint64_t start = s.cycles;
            size_t sent = 0;
            do {
                size_t n = std::min<size_t>(64, p.size() - sent);
                set_wide(t.s_axis_tdata, p.data() + sent, n);
                t.s_axis_tkeep = n == 64 ? ~0ULL : ((1ULL << n) - 1);
                t.s_axis_tlast = sent + n >= p.size();
                t.s_axis_tvalid = 1;
                if (sent == 0) start = s.cycles;
                for (uint64_t waited = 0; !s.tick();)
                    if (++waited >= 2000000) fail("RTL took no beat of the packet in 2000000 cycles", line);
                sent += n;
            } while (sent < p.size());
            t.s_axis_tvalid = 0;
            wait_idle(line);
            if (path_of.count(ev) && !s.done_at.empty()) {
                uint64_t l = s.done_at[0] - start;
                auto& c = path_of[ev];
                // Multi-packet answers: also first beat in -> last packet's first beat out.
                uint64_t e = s.done_at.back() - start;
                if (!lat_n[c]) span[c] = {e, e};
                span[c].first = std::min(span[c].first, e);
                span[c].second = std::max(span[c].second, e);
                if (!lat_n[c]) lat[c] = {l, l};
                lat[c].first = std::min(lat[c].first, l);
                lat[c].second = std::max(lat[c].second, l);
                lat_n[c]++;
            }
            packets++;
        } else if (line[0] == 'R') {
            t.poll = 1;
            s.tick();
            t.poll = 0;
            bool ok = false;
            for (uint64_t n = 0; n < 2000000 && !ok; n++) { ok = t.poll_done; s.tick(); }
            if (!ok) fail("TX ring poll did not finish", line);
            wait_idle(line);
        } else if (line[0] == 'M') {
            std::istringstream ls(line.substr(2));
            std::string a, h;
            ls >> a >> h;
            uint64_t pa = std::stoull(a, nullptr, 16) - dram_base;
            Bytes b = unhex(h);
            for (size_t i = 0; i < b.size(); i++) s.mem_word((pa + i) / 64)[(pa + i) % 64] = b[i];
            if (s.olog) fputs("M\n", s.olog);
        } else if (line[0] == 'G') {
            for (long n = std::stol(line.substr(2)); n > 0; n--) s.tick();
        } else if (line[0] == 'X') {
            // The slow path reads an RX slot (a GATE_DIRTY report or an
            // OFFLOAD_REQ fragment): the RTL's ring must hold the model's
            // bytes there.
            std::istringstream ls(line.substr(2));
            std::string a, h;
            ls >> a >> h;
            uint64_t pa = std::stoull(a, nullptr, 16) - dram_base;
            Bytes b = unhex(h);
            Bytes got(b.size());
            for (size_t i = 0; i < b.size(); i++) got[i] = s.mem_word((pa + i) / 64)[(pa + i) % 64];
            if (got != b) fail("RX slot differs\n  model: " + hex(b) + "\n  rtl:   " + hex(got), line);
            expects++;
        }
        if (ev_log) fprintf(ev_log, "%zu %c %llu\n", ev, line[0], (unsigned long long)(s.cycles - ev_start));
        check_outputs(line);
        ev++;
    }
    if (ev_log) fclose(ev_log);
    if (stream) {
        st_end = s.cycles;
        t.s_axis_tvalid = 0;
        wait_idle("end of the back-to-back stream");
        // wait_idle returns after three quiet cycles.
        st_idle = s.cycles - 3;
        drain_in_order("end of the back-to-back stream");
    }
    if (order_log) {
        fclose(s.olog);
        s.olog = nullptr;
        next_out = s.logged;
        Bytes rtl(words * 64);
        for (size_t w = 0; w < words; w++) memcpy(&rtl[w * 64], s.mem_word(w), 64);
        std::ofstream(dir + "/rtl_final.bin", std::ios::binary).write((const char*)rtl.data(), rtl.size());
    } else if (next_out != expect.size()) {
        fail("the model sent more responses than the RTL", "end of trace");
    }

    Bytes fin = read_file(dir + "/final.bin");
    for (size_t w = 0; w < words && !order_log; w++) {
        const uint8_t* m = s.mem_word(w);
        for (int i = 0; i < 64; i++) {
            if (m[i] != fin[w * 64 + i]) {
                char buf[200];
                snprintf(buf, sizeof buf, "final memory differs at %#llx: model %02x rtl %02x",
                         (unsigned long long)(dram_base + w * 64 + i), fin[w * 64 + i], m[i]);
                ev = (size_t)-1;
                fail(buf, "final image");
            }
        }
    }
    if (order_log)
        printf("cosim seed=%llu: %zu events, %zu packets, %zu responses, %llu cycles; responses and memory logged "
               "for clio-cosim check\n",
               (unsigned long long)seed, ev, packets + (size_t)st_packets, next_out, (unsigned long long)s.cycles);
    else
        printf("cosim seed=%llu: %zu events, %zu packets, %zu responses, %llu cycles, %zu bytes of memory identical\n",
               (unsigned long long)seed, ev, packets + (size_t)st_packets, next_out, (unsigned long long)s.cycles,
               fin.size());
    if (expects) printf("RX slots read by the slow path: %zu identical\n", expects);
    if (stream)
        printf("stream: %llu packets (%llu beats) offered back to back, accepted in %llu cycles, %llu stall cycles%s; "
               "idle after %llu cycles\n",
               (unsigned long long)st_packets, (unsigned long long)st_beats,
               (unsigned long long)(st_end - st_start), (unsigned long long)st_stalls,
               st_stalls == 0 ? " (II = 1)" : "", (unsigned long long)(st_idle - st_start));
    if (stream && st_stalls) {
        std::vector<std::pair<uint64_t, std::string>> by;
        for (auto& kv : st_stall_at) by.push_back({kv.second, kv.first});
        std::sort(by.rbegin(), by.rend());
        printf("stream stall cycles by engine state (eng_state_t, +held: a packet in hand, +walk: the lane beside a walk):");
        for (auto& b : by) printf(" %s %llu", b.second.c_str(), (unsigned long long)b.first);
        printf("\n");
    }
    for (auto& kv : st_lat) {
        auto v = kv.second;
        std::sort(v.begin(), v.end());
        uint64_t sum = 0;
        for (auto x : v) sum += x;
        printf("stream latency %-5s first beat in -> first beat out: min %llu median %llu mean %.1f p99 %llu max %llu cycles over %zu requests\n",
               kv.first.c_str(), (unsigned long long)v.front(), (unsigned long long)v[v.size() / 2],
               (double)sum / v.size(), (unsigned long long)v[v.size() * 99 / 100], (unsigned long long)v.back(), v.size());
    }
    for (auto& kv : lat) {
        printf("latency %-5s first beat in -> first beat out: min %llu max %llu cycles over %llu requests\n",
               kv.first.c_str(), (unsigned long long)kv.second.first, (unsigned long long)kv.second.second,
               (unsigned long long)lat_n[kv.first]);
        if (kv.first == "bound")
            printf("latency %-5s first beat in -> last packet's first beat out: min %llu max %llu cycles\n",
                   kv.first.c_str(), (unsigned long long)span[kv.first].first,
                   (unsigned long long)span[kv.first].second);
    }
    return 0;
}

//! The model: state, construction, packet intake and the data operations.

use clio_config::BoardConfig;
use clio_wire::clio::{flags, serial_before, HEADER_LEN, RESPONSE_BIT};
use clio_wire::payload::{perms, AtomicArgs, AtomicResp, ChaseReq, ChaseResp, InfoResp};
use clio_wire::ring::{Consumer, Direction, Producer};
use clio_wire::{Header, Opcode, Packet, Status};

use crate::config::{ConfigError, Layout, ModelOptions, Span, MAX_PAGE_SIZES};
use crate::control::{Fence, Pending};
use crate::cycles::{beats, Trace};
use crate::dedup::{Dedup, DedupKey, Recorded};
use crate::response::Resp;
use crate::session::Sessions;
use crate::stats::Stats;
use crate::tlb::Tlb;
use crate::Dram;

/// Version of the behaviour this model specifies, reported as `rtl_version` in `InfoResp`
/// ([`clio_wire::payload::FASTPATH_VERSION`]).
pub const MODEL_VERSION: u32 = clio_wire::payload::FASTPATH_VERSION;

/// Largest `max_hops` of a pointer chase (bounds the extend path's time per request).
pub const CHASE_MAX_HOPS: u32 = clio_wire::payload::ChaseReq::MAX_HOPS;

/// The dedup key of request `h`: its session, its first attempt's id
/// (`retry_of` of a retry, else `req_id`), the packet offset of a write, the opcode.
pub(crate) fn dedup_key(h: &Header) -> DedupKey {
    DedupKey {
        session: h.session,
        id: if h.retry_of != 0 {
            h.retry_of
        } else {
            h.req_id
        },
        offset: if h.opcode == Opcode::Write {
            h.offset
        } else {
            0
        },
        opcode: h.opcode.raw(),
    }
}

/// Opaque identity of a packet's sender (e.g. a UDP address), echoed to the
/// output callback so the shell knows where a response goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClientId(pub u64);

/// A contiguous piece of a translated access: DRAM offset and length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seg {
    pub(crate) off: usize,
    pub(crate) len: usize,
}

/// The fast-path reference model over board memory `D`.
#[derive(Clone)]
pub struct FastPath<D: Dram> {
    pub(crate) lay: Layout,
    pub(crate) opts: ModelOptions,
    pub(crate) dram: D,
    pub(crate) tlb: Tlb,
    pub(crate) dedup: Dedup,
    pub(crate) sessions: Sessions,
    /// This boot's epoch (0 until the slow path's `Epoch` descriptor).
    pub(crate) epoch: u32,
    pub(crate) fifos: [std::collections::VecDeque<u32>; MAX_PAGE_SIZES],
    pub(crate) pending: Vec<Pending>,
    pub(crate) fences: Vec<Option<Fence>>,
    /// Fences waiting (so the common case skips the scan).
    pub(crate) fences_live: usize,
    pub(crate) rx: Producer,
    pub(crate) tx: Consumer,
    pub(crate) stats: Stats,
    pub(crate) trace: Trace,
    pub(crate) unreported: u32,
    pub(crate) buf: Vec<u8>,
    pub(crate) segs: Vec<Seg>,
    pub(crate) info: InfoResp,
    /// The offload port's queue (`None`: no port, `OffloadCall` is
    /// answered `Unsupported` as the RTL does).
    pub(crate) offloads: Option<std::collections::VecDeque<crate::OffloadJob>>,
    /// Open READ answers sent packet by packet ([`FastPath::pump`]).
    pub(crate) streams: crate::interleave::Streams,
    /// Rack control datagrams passed to the slow path (`rackctl.rs`).
    pub(crate) ctl: crate::rackctl::ControlLink,
    /// `OffloadCall`s passed to the slow path's offloads over the rings
    /// (`None`: off, as in the RTL; `offload.rs`).
    pub(crate) offload_link: Option<Box<crate::offload::OffloadLink>>,
    /// The region gate (`gate.rs`): ranges the slow path holds back.
    pub(crate) gate: crate::gate::GateTable,
}

impl<D: Dram> core::fmt::Debug for FastPath<D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FastPath")
            .field("layout", &self.lay)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Bytes of the response buffer: the largest response packet.
fn buf_len(mtu: usize) -> usize {
    HEADER_LEN
        + mtu
            .max(InfoResp::LEN)
            .max(ChaseResp::LEN + ChaseReq::MAX_VALUE as usize)
}

impl<D: Dram> FastPath<D> {
    /// Attach to board memory whose rings are already initialised (by the
    /// firmware, or by [`FastPath::format`]).
    pub fn new(board: &BoardConfig, opts: ModelOptions, dram: D) -> Result<Self, ConfigError> {
        let lay = Layout::new(board, dram.bytes().len())?;
        let ring_err = |key: &'static str, e: clio_wire::Error| ConfigError {
            key,
            reason: format!("ring header: {e}"),
        };
        let rx = Producer::attach(
            &dram.bytes()[lay.rx_ring.start..lay.rx_ring.end],
            Direction::Rx,
        )
        .map_err(|e| ring_err("rings.rx", e))?;
        let tx = Consumer::attach(
            &dram.bytes()[lay.tx_ring.start..lay.tx_ring.end],
            Direction::Tx,
        )
        .map_err(|e| ring_err("rings.tx", e))?;
        if rx.slot_count() != board.rings.rx.slots {
            return Err(ConfigError {
                key: "rings.rx.slots",
                reason: "ring header disagrees with the config".into(),
            });
        }
        if tx.slot_count() != board.rings.tx.slots {
            return Err(ConfigError {
                key: "rings.tx.slots",
                reason: "ring header disagrees with the config".into(),
            });
        }
        let info = InfoResp {
            board: InfoResp::board_field(board.board.name.as_str()),
            firmware_version: 0,
            rtl_version: MODEL_VERSION,
            build_id: 0,
            config_hash: board.config_hash(),
            dram_bytes: board.dram.size,
            mtu: lay.mtu.min(u16::MAX as usize) as u16,
            page_shift: lay.default_shift,
            slots_per_bucket: lay.table.slots_per_bucket.min(255) as u8,
            tlb_entries: lay.tlb_entries as u32,
            epoch: 0,
            sessions: lay.sessions as u16,
            max_resp_kib: (lay.max_resp / 1024).min(u16::MAX.into()) as u16,
        };
        Ok(FastPath {
            tlb: Tlb::new(lay.tlb_entries),
            dedup: Dedup::new(lay.dedup_entries, lay.sessions),
            sessions: Sessions::new(lay.sessions),
            epoch: 0,
            fifos: core::array::from_fn(|_| {
                std::collections::VecDeque::with_capacity(lay.fifo_depth)
            }),
            pending: vec![Pending::new(); opts.pending_slots.clamp(1, 1 << 16)],
            fences: vec![None; opts.fence_slots.max(1)],
            fences_live: 0,
            rx,
            tx,
            stats: Stats::default(),
            trace: Trace::default(),
            unreported: 0,
            buf: vec![0; buf_len(lay.mtu)],
            segs: Vec::with_capacity(64),
            info,
            offloads: None,
            streams: Default::default(),
            ctl: crate::rackctl::ControlLink::new(),
            offload_link: None,
            gate: crate::gate::GateTable::new(opts.gate_entries),
            lay,
            opts,
            dram,
        })
    }

    /// Boot-time formatting, then [`FastPath::new`]: both ring headers are
    /// initialised empty and the page table is cleared.
    pub fn format(
        board: &BoardConfig,
        opts: ModelOptions,
        mut dram: D,
    ) -> Result<Self, ConfigError> {
        let lay = Layout::new(board, dram.bytes().len())?;
        let mem = dram.bytes_mut();
        let init = |mem: &mut [u8], span: Span, slots: u32, key: &'static str| {
            clio_wire::ring::init(&mut mem[span.start..span.end], slots).map_err(|e| ConfigError {
                key,
                reason: e.to_string(),
            })
        };
        init(mem, lay.rx_ring, board.rings.rx.slots, "rings.rx")?;
        init(mem, lay.tx_ring, board.rings.tx.slots, "rings.tx")?;
        let pt = lay.offset(lay.table.base);
        mem[pt..pt + lay.table.table_bytes() as usize].fill(0);
        Self::new(board, opts, dram)
    }

    /// Set the firmware identity reported by `Info` (the slow path knows it).
    pub fn set_firmware_identity(&mut self, firmware_version: u32, build_id: u64) {
        self.info.firmware_version = firmware_version;
        self.info.build_id = build_id;
    }

    /// The resolved layout.
    pub fn layout(&self) -> &Layout {
        &self.lay
    }
    /// Cumulative counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The trace of the last `receive`.
    pub fn last_trace(&self) -> &Trace {
        &self.trace
    }
    /// The TLB (for inspection).
    pub fn tlb(&self) -> &Tlb {
        &self.tlb
    }
    /// The dedup buffer (for inspection).
    pub fn dedup(&self) -> &Dedup {
        &self.dedup
    }
    /// The session table (for inspection).
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }
    /// This boot's epoch as the fast path knows it (0 before the slow
    /// path's `Epoch` descriptor).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }
    /// Board memory.
    pub fn dram(&self) -> &D {
        &self.dram
    }
    /// Board memory, writable (the slow path's and tests' view).
    pub fn dram_mut(&mut self) -> &mut D {
        &mut self.dram
    }
    /// Give the memory back.
    pub fn into_dram(self) -> D {
        self.dram
    }
    /// Free PAs queued for pages of `1 << page_shift` bytes.
    pub fn fifo_len(&self, page_shift: u8) -> usize {
        self.lay
            .fifo_of(page_shift)
            .map_or(0, |i| self.fifos[i].len())
    }

    /// Handle one incoming packet from `src`; responses go to `out`. Returns
    /// the request's trace (also kept as [`FastPath::last_trace`]).
    pub fn receive<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        packet: &[u8],
        out: &mut F,
    ) -> Trace {
        self.trace = Trace::default();
        self.stats.packets_in += 1;
        self.intake(src, packet, out);
        self.stats.cycles += self.trace.cycles;
        self.stats.dram_accesses += u64::from(self.trace.dram_accesses);
        self.stats.tlb_hits += u64::from(self.trace.tlb_hits);
        self.stats.tlb_misses += u64::from(self.trace.tlb_misses);
        self.stats.faults += u64::from(self.trace.faults);
        self.trace
    }

    fn intake<F: FnMut(ClientId, &[u8])>(&mut self, src: ClientId, packet: &[u8], out: &mut F) {
        // Rack control datagrams are the slow path's (they may be shorter
        // than a Clio header).
        if packet.starts_with(&clio_control::MAGIC) {
            return self.forward_control(src, packet);
        }
        if packet.len() < HEADER_LEN {
            self.stats.runts += 1;
            return;
        }
        let p = Packet::new_unchecked(packet);
        self.trace.opcode = p.opcode_raw();
        let c = self.opts.costs;
        let declared = HEADER_LEN + p.payload_len() as usize;
        let beat = self.lay.beat_bytes;
        self.trace.cycles += u64::from(c.rx_fixed)
            + u64::from(c.rx_per_beat) * beats(declared.min(packet.len()) as u64, beat);
        if packet.len() < declared || p.verify_crc().is_err() {
            self.stats.nacks += 1;
            let r = Resp::raw(&p, Opcode::Nack, Status::Corrupt);
            self.send(src, &r, 0, out);
            return;
        }
        if p.opcode_raw() & RESPONSE_BIT != 0 {
            self.stats.stray_responses += 1;
            return;
        }
        let h = match Header::parse(&p) {
            Ok(h) => h,
            Err(e) => {
                let op = Opcode::parse(p.opcode_raw())
                    .ok()
                    .and_then(Opcode::response)
                    .unwrap_or(Opcode::Nack);
                // An opcode this board does not know is not damage: say so,
                // so the client does not retry it.
                let status = if e.field == "clio.opcode" {
                    Status::Unsupported
                } else {
                    Status::Malformed
                };
                let r = Resp::raw(&p, op, status);
                self.send(src, &r, 0, out);
                return;
            }
        };
        let payload = &packet[HEADER_LEN..declared];
        // Session credentials before anything else: a request without them
        // changes nothing and gets one header-only answer.
        let mut session = None;
        if h.opcode.needs_session() {
            // Epoch 0: no `Epoch` descriptor yet, so no session exists.
            if self.epoch == 0 || h.epoch != self.epoch {
                let mut r = Resp::of(&h);
                r.status = Status::Restarted;
                r.epoch = self.epoch;
                if h.opcode == Opcode::Read {
                    r.offset = 0;
                }
                return self.send(src, &r, 0, out);
            }
            let Some(e) = self.sessions.check(h.session, h.key, h.pid).copied() else {
                return self.fail(src, &h, Status::BadSession, out);
            };
            session = Some(e);
            if h.ack != 0 {
                self.stats.dedup_acked += self.dedup.ack(h.session, h.ack) as u64;
                if let Some(s) = self.sessions.get_mut(h.session) {
                    if s.ack_floor == 0 || serial_before(s.ack_floor, h.ack) {
                        s.ack_floor = h.ack;
                    }
                }
            }
        }
        if h.status != Status::Ok
            || h.flags & !flags::FIXED_VA != 0
            || h.payload_len as usize > self.lay.mtu
        {
            return self.fail(src, &h, Status::Malformed, out);
        }
        match h.opcode {
            Opcode::Info => return self.info(src, &h, out),
            Opcode::OpenSession => return self.open_session(src, &h, payload, out),
            _ => {}
        }
        let Some(sess) = session else {
            // Every other request opcode needs a session (checked above).
            return self.fail(src, &h, Status::Malformed, out);
        };
        if h.pid == 0 || h.pid > self.lay.max_pid {
            return self.fail(src, &h, Status::BadPid, out);
        }
        if h.opcode.is_slow_path() && self.retarget(src, &h) {
            return;
        }
        if self.fence_waiting(h.pid) {
            return self.fail(src, &h, Status::Busy, out);
        }
        if self.gate_check(src, &h, out) {
            return;
        }
        if h.opcode == Opcode::OffloadCall && self.offloads.is_some() {
            // The offload engine keeps its own exactly-once records.
            return self.offload(src, &h, payload, out);
        }
        if h.opcode == Opcode::OffloadCall && self.offload_link.is_some() {
            // The slow path's offload host keeps the exactly-once records.
            return self.forward_offload(src, &h, payload, out);
        }
        if h.opcode.is_non_idempotent() {
            let key = dedup_key(&h);
            let floor = self.sessions.get(h.session).map_or(0, |s| s.ack_floor);
            if floor != 0 && serial_before(key.id, floor) {
                // Answered and acknowledged already (the record was freed by
                // the ack): a late network duplicate. Executing it would
                // apply it twice; the client waits for nothing, so no answer.
                self.stats.stale_duplicates += 1;
                return;
            }
            if let Some(rec) = self.dedup.get(&key) {
                return self.replay(src, &h, &rec, out);
            }
            // Records are never evicted: without room the request waits for
            // the client's acknowledgements (it retries after `Busy`).
            if self.dedup.room(h.session, sess.dedup_quota).is_err() {
                self.stats.dedup_busy += 1;
                return self.fail(src, &h, Status::Busy, out);
            }
        }
        match h.opcode {
            Opcode::Read => self.read(src, &h, out),
            Opcode::Write => self.write(src, &h, payload, out),
            Opcode::TestAndSet
            | Opcode::CompareAndSwap
            | Opcode::FetchAndAdd
            | Opcode::Lock
            | Opcode::Unlock => self.atomic(src, &h, payload, out),
            Opcode::Fence => self.fence(src, &h, out),
            Opcode::Alloc | Opcode::Free | Opcode::CloseSession => {
                self.forward(src, &h, payload, out)
            }
            Opcode::PointerChase => self.chase(src, &h, payload, out),
            Opcode::OffloadCall => self.fail(src, &h, Status::Unsupported, out),
            // Info and OpenSession were answered above; responses were dropped above.
            _ => self.fail(src, &h, Status::Malformed, out),
        }
    }

    /// `Info`: the board's identity, with this boot's epoch. The request
    /// must be at least as long as the answer (no amplification).
    fn info<F: FnMut(ClientId, &[u8])>(&mut self, src: ClientId, h: &Header, out: &mut F) {
        if (h.payload_len as usize) < InfoResp::LEN {
            return self.fail(src, h, Status::Malformed, out);
        }
        let mut r = Resp::of(h);
        r.epoch = self.epoch;
        let n = InfoResp::LEN;
        self.info.epoch = self.epoch;
        // The buffer always holds an InfoResp (see `buf_len`).
        let _ = self.info.emit(&mut self.buf[HEADER_LEN..HEADER_LEN + n]);
        self.send(src, &r, n, out)
    }

    /// Answer a non-idempotent request from its dedup record.
    fn replay<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        rec: &Recorded,
        out: &mut F,
    ) {
        self.stats.duplicates += 1;
        self.trace.duplicate = true;
        let n = rec.payload_len as usize;
        self.buf[HEADER_LEN..HEADER_LEN + n].copy_from_slice(&rec.payload[..n]);
        let r = Resp::replayed(h, rec);
        self.send(src, &r, n, out);
    }

    /// Send a payload-less error (or plain) response to `h`.
    pub(crate) fn fail<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        status: Status,
        out: &mut F,
    ) {
        let mut r = Resp::of(h);
        r.status = status;
        if h.opcode == Opcode::Read {
            // A read response without data says so with offset 0.
            r.offset = 0;
        }
        self.send(src, &r, 0, out);
    }

    /// Emit the response whose payload already sits in `buf[HEADER_LEN..]`.
    pub(crate) fn send<F: FnMut(ClientId, &[u8])>(
        &mut self,
        dst: ClientId,
        r: &Resp,
        plen: usize,
        out: &mut F,
    ) {
        let len = HEADER_LEN + plen;
        r.emit(&mut self.buf[..len]);
        out(dst, &self.buf[..len]);
        let c = self.opts.costs;
        self.trace.cycles += u64::from(c.tx_fixed)
            + u64::from(c.tx_per_beat) * beats(len as u64, self.lay.beat_bytes);
        self.trace.packets_out += 1;
        self.trace.status = Some(r.status);
        self.stats.packets_out += 1;
        match r.status {
            Status::Malformed => self.stats.malformed += 1,
            Status::BadPid => self.stats.bad_pid += 1,
            Status::Unmapped => self.stats.unmapped += 1,
            Status::Permission => self.stats.permission += 1,
            Status::Busy => self.stats.busy += 1,
            Status::Unsupported => self.stats.unsupported += 1,
            Status::BadSession => self.stats.bad_session += 1,
            Status::Restarted => self.stats.restarted += 1,
            Status::OverQuota => self.stats.over_quota += 1,
            Status::TooLarge => self.stats.too_large += 1,
            _ => {}
        }
    }

    /// Account one DRAM read burst of `bytes` (latency + beats).
    #[inline]
    pub(crate) fn dram_read_cost(&mut self, bytes: u64) {
        self.trace.dram_accesses += 1;
        self.trace.dram_bytes += bytes;
        self.trace.cycles +=
            u64::from(self.opts.costs.dram_read_latency) + beats(bytes, self.lay.beat_bytes);
    }

    /// Account one DRAM write burst of `bytes` (posted: latency + beats).
    #[inline]
    pub(crate) fn dram_write_cost(&mut self, bytes: u64) {
        self.trace.dram_accesses += 1;
        self.trace.dram_bytes += bytes;
        self.trace.cycles +=
            u64::from(self.opts.costs.dram_write_latency) + beats(bytes, self.lay.beat_bytes);
    }

    fn read<F: FnMut(ClientId, &[u8])>(&mut self, src: ClientId, h: &Header, out: &mut F) {
        if h.payload_len != 0 || h.offset != 0 {
            return self.fail(src, h, Status::Malformed, out);
        }
        // One request may not hold the port for more than the bound (the
        // INFO reply states it; clients split): refused before translation,
        // header-only, so its cost is one header in and one out.
        if h.total_len > self.lay.max_resp {
            return self.fail(src, h, Status::TooLarge, out);
        }
        if let Err(s) = self.translate_range(h.pid, h.va, u64::from(h.total_len), perms::READ) {
            return self.fail(src, h, s, out);
        }
        let total = h.total_len as usize;
        let mtu = self.lay.mtu;
        // DRAM: one read burst per page piece, issued back to back (of the
        // first packet only when the rest is streamed: `pump` reads it).
        let mut left = if self.streams.on {
            mtu.min(total)
        } else {
            total
        };
        for i in 0..self.segs.len() {
            let n = self.segs[i].len.min(left);
            if n == 0 && i > 0 {
                break;
            }
            left -= n;
            self.dram_read_cost(n as u64);
        }
        let mut sent = 0usize;
        let mut seg = 0usize;
        let mut seg_pos = 0usize;
        loop {
            let n = (total - sent).min(mtu);
            let mut filled = 0;
            while filled < n {
                let s = self.segs[seg];
                let take = (s.len - seg_pos).min(n - filled);
                let from = &self.dram.bytes()[s.off + seg_pos..s.off + seg_pos + take];
                self.buf[HEADER_LEN + filled..HEADER_LEN + filled + take].copy_from_slice(from);
                filled += take;
                seg_pos += take;
                if seg_pos == s.len {
                    seg += 1;
                    seg_pos = 0;
                }
            }
            let mut r = Resp::of(h);
            r.offset = sent as u32;
            self.send(src, &r, n, out);
            sent += n;
            if sent >= total {
                break;
            }
            if self.streams.on {
                // The rest leaves packet by packet, between other requests.
                return self.open_stream(src, h, sent as u32);
            }
        }
    }

    fn write<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let va = h.va + u64::from(h.offset);
        if let Err(s) = self.translate_range(h.pid, va, payload.len() as u64, perms::WRITE) {
            return self.fail(src, h, s, out);
        }
        let mut pos = 0;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            self.dram.bytes_mut()[s.off..s.off + s.len].copy_from_slice(&payload[pos..pos + s.len]);
            pos += s.len;
            self.dram_write_cost(s.len as u64);
        }
        let r = Resp::of(h);
        self.record(h, &r, 0);
        self.send(src, &r, 0, out);
    }

    fn atomic<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let args = match h.opcode {
            Opcode::CompareAndSwap if payload.len() == AtomicArgs::CAS_LEN => {
                AtomicArgs::parse_cas(payload).ok()
            }
            Opcode::FetchAndAdd if payload.len() == AtomicArgs::FAA_LEN => {
                AtomicArgs::parse_faa(payload).ok()
            }
            Opcode::TestAndSet | Opcode::Lock | Opcode::Unlock if payload.is_empty() => None,
            _ => return self.fail(src, h, Status::Malformed, out),
        };
        if (matches!(h.opcode, Opcode::CompareAndSwap | Opcode::FetchAndAdd) && args.is_none())
            || h.total_len != 8
            || h.offset != 0
            || h.va % 8 != 0
        {
            return self.fail(src, h, Status::Malformed, out);
        }
        if let Err(s) = self.translate_range(h.pid, h.va, 8, perms::WRITE) {
            return self.fail(src, h, s, out);
        }
        self.trace.cycles += u64::from(self.opts.costs.sync_unit);
        let off = self.segs[0].off;
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.dram.bytes()[off..off + 8]);
        let old = u64::from_le_bytes(w);
        self.dram_read_cost(8);
        let (held, quota) = self
            .sessions
            .get(h.session)
            .map_or((0, 0), |e| (e.locks, e.lock_quota));
        let (new, status) = match (h.opcode, args) {
            (Opcode::TestAndSet, _) => (Some(1), Status::Ok),
            (Opcode::CompareAndSwap, Some(AtomicArgs::CompareAndSwap { expected, new })) => {
                (if old == expected { Some(new) } else { None }, Status::Ok)
            }
            (Opcode::FetchAndAdd, Some(AtomicArgs::FetchAndAdd { addend })) => {
                (Some(old.wrapping_add(addend)), Status::Ok)
            }
            // A lock that would be taken while the session holds its quota of locks.
            (Opcode::Lock, _) if old == 0 && held >= quota => (None, Status::OverQuota),
            (Opcode::Lock, _) if old == 0 => (Some(1), Status::Ok),
            (Opcode::Lock, _) => (None, Status::Busy),
            (Opcode::Unlock, _) => (Some(0), Status::Ok),
            _ => (None, Status::Malformed),
        };
        if let Some(v) = new {
            self.dram.bytes_mut()[off..off + 8].copy_from_slice(&v.to_le_bytes());
            self.dram_write_cost(8);
        }
        if status == Status::OverQuota {
            return self.fail(src, h, status, out);
        }
        if status == Status::Ok {
            if let Some(e) = self.sessions.get_mut(h.session) {
                match h.opcode {
                    Opcode::Lock => e.locks = e.locks.saturating_add(1),
                    Opcode::Unlock => e.locks = e.locks.saturating_sub(1),
                    _ => {}
                }
            }
        }
        let n = AtomicResp::LEN;
        // The buffer always holds 8 payload bytes.
        let _ = AtomicResp { old }.emit(&mut self.buf[HEADER_LEN..HEADER_LEN + n]);
        let mut r = Resp::of(h);
        r.status = status;
        self.record(h, &r, n);
        self.send(src, &r, n, out);
    }

    fn chase<F: FnMut(ClientId, &[u8])>(
        &mut self,
        src: ClientId,
        h: &Header,
        payload: &[u8],
        out: &mut F,
    ) {
        let req = match ChaseReq::parse(payload) {
            Ok(r)
                if payload.len() == ChaseReq::LEN
                    && r.max_hops != 0
                    && r.max_hops <= CHASE_MAX_HOPS
                    && ChaseResp::LEN + r.value_len as usize <= self.lay.mtu =>
            {
                r
            }
            _ => return self.fail(src, h, Status::Malformed, out),
        };
        let mut cur = h.va;
        let mut hops = 0u32;
        let found = loop {
            if hops == req.max_hops {
                break None;
            }
            hops += 1;
            self.trace.cycles += u64::from(self.opts.costs.chase_step);
            let key = match self.read_word(h.pid, cur.wrapping_add(u64::from(req.key_offset))) {
                Ok(k) => k,
                Err(s) => return self.fail(src, h, s, out),
            };
            if key == req.key {
                break Some(cur);
            }
            let next = match self.read_word(h.pid, cur.wrapping_add(u64::from(req.next_offset))) {
                Ok(n) => n,
                Err(s) => return self.fail(src, h, s, out),
            };
            if next == 0 {
                break None;
            }
            cur = next;
        };
        let mut vlen = 0usize;
        if let Some(node) = found {
            vlen = req.value_len as usize;
            let va = node.wrapping_add(u64::from(req.value_offset));
            if let Err(s) = self.translate_range(h.pid, va, vlen as u64, perms::READ) {
                return self.fail(src, h, s, out);
            }
            let mut at = HEADER_LEN + ChaseResp::LEN;
            for i in 0..self.segs.len() {
                let s = self.segs[i];
                self.buf[at..at + s.len].copy_from_slice(&self.dram.bytes()[s.off..s.off + s.len]);
                at += s.len;
                self.dram_read_cost(s.len as u64);
            }
        }
        let resp = ChaseResp {
            node_va: found.unwrap_or(0),
            hops,
            found: found.is_some(),
        };
        let _ = resp.emit(&mut self.buf[HEADER_LEN..HEADER_LEN + ChaseResp::LEN]);
        let r = Resp::of(h);
        self.send(src, &r, ChaseResp::LEN + vlen, out);
    }

    /// Read the little-endian word at `va` (any alignment) through translation.
    fn read_word(&mut self, pid: u32, va: u64) -> Result<u64, Status> {
        if va.checked_add(8).is_none() {
            return Err(Status::Unmapped);
        }
        self.translate_range(pid, va, 8, perms::READ)?;
        let mut w = [0u8; 8];
        let mut at = 0;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            w[at..at + s.len].copy_from_slice(&self.dram.bytes()[s.off..s.off + s.len]);
            at += s.len;
            self.dram_read_cost(s.len as u64);
        }
        Ok(u64::from_le_bytes(w))
    }
}

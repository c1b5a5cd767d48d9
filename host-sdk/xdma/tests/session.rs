//! A `clio::Session` over PCIe: the SDK's transport is an `XdmaLink` on
//! stand-in device files, and the card is a software card serving a small
//! memory board (alloc, write, read, info) behind the rings.

use std::time::Duration;

use clio::{ClientConfig, ClioError, Session};
use clio_wire::clio::HEADER_LEN;
use clio_wire::payload::{perms, AllocReq, AllocResp, InfoResp, OpenSessionResp};
use clio_wire::{Header, Opcode, Packet, Status};
use clio_xdma::{FileCard, XdmaLink};

const BASE: u64 = 0x1_0000_0000;
const MTU: usize = 1450;

/// One range of board memory, handed out by a bump allocator.
struct Board {
    mem: Vec<u8>,
    next: u64,
}

impl Board {
    fn handle(&mut self, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        let Ok(p) = Packet::new_checked(pkt) else {
            return;
        };
        let Ok(h) = Header::parse_verified(&p) else {
            return;
        };
        let reply = |out: &mut dyn FnMut(&[u8]), status: Status, va: u64, off: u32, body: &[u8]| {
            let r = Header {
                opcode: h.opcode.response().unwrap_or(Opcode::Nack),
                flags: 0,
                status,
                pid: h.pid,
                req_id: h.req_id,
                retry_of: 0,
                va,
                total_len: h.total_len,
                offset: off,
                payload_len: body.len() as u16,
                session: h.session,
                epoch: h.epoch,
                key: 0,
                ack: 0,
            };
            let mut buf = vec![0u8; HEADER_LEN + body.len()];
            let n = r.emit_with_payload(&mut buf, body).unwrap();
            out(&buf[..n]);
        };
        let range = |va: u64, len: u64| {
            (va >= BASE && va + len <= BASE + self.mem.len() as u64)
                .then(|| (va - BASE) as usize..(va - BASE + len) as usize)
        };
        match h.opcode {
            Opcode::Info => {
                let mut b = [0u8; InfoResp::LEN];
                let info = InfoResp {
                    board: InfoResp::board_field("alveo-u200"),
                    firmware_version: 0x0001_0000,
                    rtl_version: 0x0001_0000,
                    build_id: 1,
                    config_hash: 2,
                    dram_bytes: self.mem.len() as u64,
                    mtu: MTU as u16,
                    page_shift: 12,
                    slots_per_bucket: 16,
                    tlb_entries: 64,
                    epoch: 1,
                    sessions: 2,
                    max_resp_kib: 64,
                };
                let n = info.emit(&mut b).unwrap();
                reply(out, Status::Ok, 0, 0, &b[..n]);
            }
            Opcode::Alloc => {
                let req = AllocReq::parse(p.payload()).unwrap();
                let size = req.size.div_ceil(4096) * 4096;
                let va = self.next;
                if range(va, size).is_none() {
                    return reply(out, Status::OutOfMemory, 0, 0, &[]);
                }
                self.next += size;
                let mut b = [0u8; AllocResp::LEN];
                let n = AllocResp { size, retries: 0 }.emit(&mut b).unwrap();
                reply(out, Status::Ok, va, 0, &b[..n]);
            }
            Opcode::Write => match range(h.va + h.offset as u64, h.payload_len as u64) {
                Some(r) => {
                    self.mem[r].copy_from_slice(p.payload());
                    reply(out, Status::Ok, h.va, h.offset, &[]);
                }
                None => reply(out, Status::Unmapped, h.va, h.offset, &[]),
            },
            Opcode::Read => match range(h.va, h.total_len as u64) {
                Some(r) => {
                    let data = self.mem[r].to_vec();
                    for (i, c) in data.chunks(MTU).enumerate() {
                        reply(out, Status::Ok, h.va, (i * MTU) as u32, c);
                    }
                }
                None => reply(out, Status::Unmapped, h.va, 0, &[]),
            },
            // One session, never checked: this board only exercises the link.
            Opcode::OpenSession => {
                let mut b = [0u8; OpenSessionResp::LEN];
                let r = OpenSessionResp {
                    session: 1,
                    pid: 1,
                    key: 1,
                    epoch: 1,
                    dedup_quota: 1024,
                    lock_quota: 16,
                    mem_quota_pages: 1024,
                };
                let n = r.emit(&mut b).unwrap();
                reply(out, Status::Ok, 0, 0, &b[..n]);
            }
            Opcode::CloseSession => reply(out, Status::Ok, 0, 0, &[]),
            _ => reply(out, Status::Unsupported, h.va, 0, &[]),
        }
    }
}

#[test]
fn session_allocates_writes_and_reads_over_xdma() {
    let dir = tempfile::tempdir().unwrap();
    let card = FileCard::create(dir.path(), "xdma0", FileCard::DEFAULT_GEOMETRY).unwrap();
    let prefix = card.prefix().to_path_buf();
    let mut board = Board {
        mem: vec![0; 1 << 20],
        next: BASE,
    };
    let thread = card.spawn(move |p, out| board.handle(p, out));

    let link = XdmaLink::open(&prefix).unwrap();
    let mut s = Session::open_with(link, ClientConfig::default()).unwrap();
    let info = s.board_info().unwrap();
    assert_eq!(info.board_name().unwrap(), "alveo-u200");

    let a = s.ralloc(64 * 1024, perms::RW).unwrap();
    assert_eq!(a.va, BASE);
    // Larger than the MTU: split into many packets, answered in several
    // read-response packets, all through the rings.
    let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    s.rwrite(a.va + 100, &data).unwrap();
    let mut back = vec![0u8; data.len()];
    s.rread(a.va + 100, &mut back).unwrap();
    assert_eq!(back, data);

    let e = s.rread(BASE + (2 << 20), &mut [0u8; 8]).unwrap_err();
    assert!(matches!(e, ClioError::Unmapped { .. }), "{e}");

    let link = s.transport_mut();
    assert_eq!(link.stats().dropped, 0);
    assert!(link.stats().sent >= 16, "{:?}", link.stats());
    let card = thread.stop().unwrap();
    assert_eq!(card.stats().malformed, 0);
}

#[test]
fn session_over_a_silent_card_times_out_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let card = FileCard::create(dir.path(), "xdma0", FileCard::DEFAULT_GEOMETRY).unwrap();
    // A card that swallows every packet.
    let thread = card.spawn(|_p, _out| {});
    let link = XdmaLink::open(dir.path().join("xdma0")).unwrap();
    let cfg = ClientConfig {
        request_timeout_ns: Duration::from_millis(200).as_nanos() as u64,
        ..ClientConfig::default()
    };
    let e = Session::open_with(link, cfg).unwrap_err();
    assert!(matches!(e, ClioError::Timeout { .. }), "{e}");
    // The error names the card.
    let want = format!(
        "from the board at xdma://{}",
        dir.path().join("xdma0").display()
    );
    assert!(e.to_string().contains(&want), "{e}");
    let card = thread.stop().unwrap();
    assert!(card.stats().requests >= 1);
}

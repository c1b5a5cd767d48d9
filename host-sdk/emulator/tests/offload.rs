//! The offload framework: `OFFLOAD_CALL` through the fast path's offload
//! port to a registered offload that works in its own address space through
//! the board's ordinary memory interface; unknown ids, refusals, faults and
//! panics get their own statuses and the board keeps serving.

use clio::backend::InProcess;
use clio::{ClientConfig, ClioError, OpKind, Session};
use clio_config::BoardConfig;
use clio_emu::sdk::Emu;
use clio_emu::{Board, Offload, OffloadError, OffloadMem};

/// A test offload. op 1: store the args in its own memory and return them
/// read back; op 2: read an unmapped VA; op 3: panic; op 4: refuse with
/// code 7; op 5: return more than a packet; op 6: return its PID and the
/// VA it stored at; op 7: read 8 bytes at the VA in the args (big-endian)
/// in the caller's address space and return them with the PID it worked
/// under; op 8: return 16 bytes, over the 4 it declares; op 9: write a
/// pattern across the boundary of two 4 MiB pages and return it as
/// `read_with` hands it over, with what `read` reads (the two must agree);
/// op 10: return how many batches it was shown before they ran. Its
/// `prepare` prefetches an unmapped VA and its own memory, and panics
/// when the batch holds op 3.
#[derive(Default)]
struct Probe {
    va: Option<u64>,
    prepared: u32,
}

impl Offload for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn prepare(&mut self, mem: &mut OffloadMem<'_>, ops: &[(u16, &[u8])]) {
        self.prepared += 1;
        mem.prefetch(0x7fff_0000_0000, 4096);
        if let Some(va) = self.va {
            mem.prefetch(va, 64 << 10);
        }
        if ops.iter().any(|&(op, _)| op == 3) {
            panic!("probe offload panics in prepare on purpose");
        }
    }
    fn max_result(&self, op: u16) -> Option<usize> {
        match op {
            6 => Some(12),
            8 => Some(4),
            _ => None,
        }
    }
    fn call(
        &mut self,
        mem: &mut OffloadMem<'_>,
        op: u16,
        args: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), OffloadError> {
        match op {
            1 => {
                let va = match self.va {
                    Some(v) => v,
                    None => *self.va.insert(mem.alloc(64 << 10)?),
                };
                mem.write(va, args)?;
                let mut back = vec![0u8; args.len()];
                mem.read(va, &mut back)?;
                out.extend_from_slice(&back);
                Ok(())
            }
            2 => {
                let mut b = [0u8; 8];
                mem.read(0x7fff_0000_0000, &mut b)?;
                Ok(())
            }
            3 => panic!("probe offload panics on purpose"),
            4 => Err(OffloadError::Refused(7)),
            5 => {
                out.resize(64 << 10, 1);
                Ok(())
            }
            6 => {
                out.extend_from_slice(&mem.pid()?.to_be_bytes());
                out.extend_from_slice(&self.va.unwrap_or(0).to_be_bytes());
                Ok(())
            }
            7 => {
                let va = u64::from_be_bytes(args.try_into().map_err(|_| OffloadError::Refused(2))?);
                let pid = mem.use_caller_space()?;
                let mut b = [0u8; 8];
                mem.read(va, &mut b)?;
                out.extend_from_slice(&b);
                out.extend_from_slice(&pid.to_be_bytes());
                out.extend_from_slice(&mem.pid()?.to_be_bytes());
                Ok(())
            }
            8 => {
                out.extend_from_slice(&[8; 16]);
                Ok(())
            }
            9 => {
                let page = 4u64 << 20;
                let base = mem.alloc(2 * page)?;
                let at = (base + 100).next_multiple_of(page) - 100;
                let pattern: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
                mem.write(at, &pattern)?;
                // Prefetching changes nothing either.
                mem.prefetch(at, 200);
                mem.read_with(at, 200, |b| out.extend_from_slice(b))?;
                let mut back = vec![0u8; 200];
                mem.read(at, &mut back)?;
                out.extend_from_slice(&back);
                // A refused view reports the read's error, `f` not run.
                let r = mem.read_with(0x7fff_0000_0000, 8, |_| panic!("not readable"));
                if r.is_ok() {
                    return Err(OffloadError::Fault("unmapped view read".into()));
                }
                Ok(())
            }
            10 => {
                out.extend_from_slice(&self.prepared.to_be_bytes());
                Ok(())
            }
            _ => Err(OffloadError::Refused(1)),
        }
    }
}

fn session() -> Session<InProcess<Emu>> {
    let c = BoardConfig::embedded("emulator").unwrap();
    let mut board = Board::new(&c).unwrap();
    board.register_offload(9, Box::<Probe>::default()).unwrap();
    assert!(board.register_offload(9, Box::<Probe>::default()).is_err());
    assert!(board.register_offload(0, Box::<Probe>::default()).is_err());
    Session::open_with(InProcess::new(Emu(board), 1), ClientConfig::from_board(&c)).unwrap()
}

#[test]
fn calls_reach_the_offload_in_its_own_address_space() {
    let mut s = session();
    let r = s.offload_call(9, 1, b"hello offload").unwrap();
    assert_eq!(r, b"hello offload");
    let r = s.offload_call(9, 6, &[]).unwrap();
    let pid = u32::from_be_bytes(r[..4].try_into().unwrap());
    let va = u64::from_be_bytes(r[4..12].try_into().unwrap());
    // Its own PID, not the caller's: the caller cannot read its memory.
    assert_ne!(pid, s.pid().unwrap());
    let mut b = [0u8; 8];
    assert!(matches!(
        s.rread(va, &mut b),
        Err(ClioError::Unmapped { .. }) | Err(ClioError::Permission { .. })
    ));
}

#[test]
fn bad_calls_get_distinct_statuses_and_the_board_keeps_serving() {
    let mut s = session();
    assert!(matches!(
        s.offload_call(12345, 1, b"x"),
        Err(ClioError::NoSuchOffload {
            op: OpKind::OffloadCall
        })
    ));
    assert!(matches!(
        s.offload_call(9, 2, &[]),
        Err(ClioError::OffloadFault { .. })
    ));
    assert!(matches!(
        s.offload_call(9, 3, &[]),
        Err(ClioError::OffloadFault { .. })
    ));
    assert!(matches!(
        s.offload_call(9, 4, &[]),
        Err(ClioError::OffloadRefused { code: 7, .. })
    ));
    assert!(matches!(
        s.offload_call(9, 5, &[]),
        Err(ClioError::OffloadFault { .. })
    ));
    // Arguments over one packet are refused by the SDK before sending.
    assert!(matches!(
        s.offload_call(9, 1, &vec![0u8; 4096]),
        Err(ClioError::InvalidArgument { .. })
    ));
    // The offload and the board still serve.
    assert_eq!(s.offload_call(9, 1, b"again").unwrap(), b"again");
    let a = s.ralloc(4096, clio_wire::payload::perms::RW).unwrap();
    s.rwrite(a.va, b"data").unwrap();
    let c = s.transport_mut().board().0.offload_counters();
    assert_eq!((c.unknown, c.faults, c.refused), (1, 3, 1));
    assert_eq!(c.ok, 1);
}

#[test]
fn many_calls_do_not_leak_offload_dedup_or_quota() {
    let mut s = session();
    for i in 0..3000u32 {
        let r = s.offload_call(9, 1, &i.to_be_bytes()).unwrap();
        assert_eq!(r, i.to_be_bytes());
    }
}

#[test]
fn an_offload_works_in_the_callers_space_for_one_call() {
    let mut s = session();
    let a = s.ralloc(4096, clio_wire::payload::perms::RW).unwrap();
    s.rwrite(a.va, b"callers!").unwrap();
    let sessions = s.transport_mut().board().0.slow().open_sessions();
    for _ in 0..50 {
        let r = s.offload_call(9, 7, &a.va.to_be_bytes()).unwrap();
        assert_eq!(&r[..8], b"callers!");
        let pid = s.pid().unwrap();
        assert_eq!(r[8..12], pid.to_be_bytes());
        assert_eq!(r[12..16], pid.to_be_bytes());
    }
    // Each call joined the caller's PID and left it: no session outlives a call.
    assert_eq!(s.transport_mut().board().0.slow().open_sessions(), sessions);
    // The next call starts in its own space again (op 1 stores in its own memory).
    assert_eq!(s.offload_call(9, 1, b"own").unwrap(), b"own");
    // A VA the caller never mapped: a fault of the offload's (it did not map it).
    assert!(matches!(
        s.offload_call(9, 7, &0x7f00_0000_0000u64.to_be_bytes()),
        Err(ClioError::OffloadFault { .. })
    ));
    assert_eq!(
        s.transport_mut().board().0.slow().open_sessions(),
        sessions + 1
    );
}

/// A batch's answer is sized by the results its operations declare: with
/// jumbo frames a packet's worth per operation would refuse even eight
/// calls (8 × 8916 B > 64 KiB), while 64 calls of a 12-byte result fit;
/// a result over its declared bound is the offload's fault.
#[test]
fn a_batch_is_sized_by_declared_results_under_jumbo_frames() {
    use clio_wire::payload::{
        OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OFFLOAD_OP_BATCH,
    };
    use clio_wire::Status;
    let c = BoardConfig::embedded("emulator-jumbo").unwrap();
    let mut board = Board::new(&c).unwrap();
    board.register_offload(9, Box::<Probe>::default()).unwrap();
    let mut s =
        Session::open_with(InProcess::new(Emu(board), 1), ClientConfig::from_board(&c)).unwrap();
    let batch = |ops: &[u16]| {
        let mut b = OffloadBatchReq {
            count: ops.len() as u16,
        }
        .to_bytes()
        .to_vec();
        for &op in ops {
            b.extend_from_slice(&OffloadBatchOp { op, args_len: 0 }.to_bytes());
        }
        b
    };
    let a = s
        .offload_call(9, OFFLOAD_OP_BATCH, &batch(&[6; 64]))
        .unwrap();
    assert_eq!(
        a.len(),
        OffloadBatchReq::LEN + 64 * (OffloadBatchResult::LEN + 12)
    );
    assert!(matches!(
        s.offload_call(9, OFFLOAD_OP_BATCH, &batch(&[1; 8])),
        Err(ClioError::TooLarge { .. })
    ));
    // Seven undeclared results fit (7 × 8924 B + 12 < 64 KiB).
    assert!(s.offload_call(9, OFFLOAD_OP_BATCH, &batch(&[1; 7])).is_ok());
    let a = s
        .offload_call(9, OFFLOAD_OP_BATCH, &batch(&[8, 6]))
        .unwrap();
    let (r, v, rest) = OffloadBatchResult::parse_with_result(&a[OffloadBatchReq::LEN..]).unwrap();
    assert_eq!((r.status, v.len()), (Status::OffloadFault, 0));
    let (r, v, _) = OffloadBatchResult::parse_with_result(rest).unwrap();
    assert_eq!((r.status, v.len()), (Status::Ok, 12));
}

/// `read_with` hands over the same bytes as `read`, also across a page
/// boundary (two physical runs, gathered) and through Clio packets when
/// direct access is off.
#[test]
fn read_with_agrees_with_read_across_pages_direct_or_not() {
    for direct in [true, false] {
        let c = BoardConfig::embedded("emulator").unwrap();
        let mut board = Board::new(&c).unwrap();
        board.set_offload_direct(direct);
        board.register_offload(9, Box::<Probe>::default()).unwrap();
        let mut s = Session::open_with(InProcess::new(Emu(board), 1), ClientConfig::from_board(&c))
            .unwrap();
        let r = s.offload_call(9, 9, &[]).unwrap();
        let pattern: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
        assert_eq!(&r[..200], &pattern[..], "direct {direct}");
        assert_eq!(&r[200..], &pattern[..], "direct {direct}");
    }
}

/// A batch is shown to `prepare` before it runs; a panicking `prepare`
/// changes no answer, and a fault in the middle of a batch fails only its
/// own operation.
#[test]
fn prepare_is_a_hint_and_a_fault_mid_batch_fails_only_its_op() {
    use clio_wire::payload::{
        OffloadBatchOp, OffloadBatchReq, OffloadBatchResult, OFFLOAD_OP_BATCH,
    };
    use clio_wire::Status;
    let mut s = session();
    let mut b = OffloadBatchReq { count: 5 }.to_bytes().to_vec();
    for (op, args) in [
        (1u16, &b"ab"[..]),
        (2, b""),
        (3, b""),
        (1, b"cd"),
        (10, b""),
    ] {
        b.extend_from_slice(
            &OffloadBatchOp {
                op,
                args_len: args.len() as u16,
            }
            .to_bytes(),
        );
        b.extend_from_slice(args);
    }
    let a = s.offload_call(9, OFFLOAD_OP_BATCH, &b).unwrap();
    let mut rest = &a[OffloadBatchReq::LEN..];
    let mut got = Vec::new();
    for _ in 0..5 {
        let (r, v, tail) = OffloadBatchResult::parse_with_result(rest).unwrap();
        got.push((r.status, v.to_vec()));
        rest = tail;
    }
    assert_eq!(got[0], (Status::Ok, b"ab".to_vec()));
    assert_eq!(got[1], (Status::OffloadFault, vec![]));
    assert_eq!(got[2], (Status::OffloadFault, vec![]));
    assert_eq!(got[3], (Status::Ok, b"cd".to_vec()));
    // `prepare` ran once for this batch (and panicked).
    assert_eq!(got[4], (Status::Ok, 1u32.to_be_bytes().to_vec()));
    // A single call is not a batch: not shown to `prepare`.
    assert_eq!(s.offload_call(9, 10, &[]).unwrap(), 1u32.to_be_bytes());
}

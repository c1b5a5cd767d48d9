//! Jumbo frames end to end: the same Clio-KV batches and multi-packet
//! reads and writes over UDP against the emulated board at the standard
//! payload (`emulator`, 1450 B) and at the wire's largest
//! (`emulator-jumbo`, 8916 B). The SDK takes the payload the board's INFO
//! advertises and the KV client packs as many operations as fit it.

use clio::{AsyncSession, ClientConfig, Session};
use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions, ServerHandle};
use clio_kv::{AsyncKvClient, KvClient, KvOffload, KvOp, OFFLOAD_ID};

fn serve(cfg: &BoardConfig) -> ServerHandle {
    let mut b = Board::new(cfg).unwrap();
    b.register_offload(OFFLOAD_ID, Box::new(KvOffload::new(64)))
        .unwrap();
    clio_emu::spawn(
        b,
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::for_board(cfg),
    )
    .unwrap()
}

fn value(i: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (i * 131 + j * 7 + j / 251) as u8)
        .collect()
}

/// Packets of a run of batches: (request packets the client sent after
/// the session opened, answer packets the board sent in all: the batches'
/// and the INFO, OPEN_SESSION and CLOSE_SESSION answers).
fn batch_packets(board: &str) -> (u64, u64, u64) {
    let cfg = BoardConfig::embedded(board).unwrap();
    let h = serve(&cfg);
    // The client starts from the standard config: the payload it uses is
    // the one the board advertises.
    let s = Session::open(h.addr(), ClientConfig::default()).unwrap();
    assert_eq!(
        s.connection().config().mtu_payload,
        cfg.network.mtu_payload as usize,
        "{board}: the session took the board's advertised payload"
    );
    let mut kv = KvClient::new(vec![s]).unwrap();
    let keys: Vec<Vec<u8>> = (0..48).map(|i| format!("jumbo-{i}").into_bytes()).collect();
    let vals: Vec<Vec<u8>> = (0..48).map(|i| value(i, 1024)).collect();
    let before_sent = kv.sessions()[0].connection().stats().packets_sent;
    // 48 creates of 1 KiB (48 KiB of values), then the 48 reads.
    let creates: Vec<_> = keys
        .iter()
        .zip(&vals)
        .map(|(k, v)| KvOp::Create(k, v))
        .collect();
    for r in kv.batch(&creates).unwrap() {
        r.unwrap();
    }
    let reads: Vec<_> = keys.iter().map(|k| KvOp::Read(k)).collect();
    for (i, r) in kv.batch(&reads).unwrap().into_iter().enumerate() {
        assert_eq!(r.unwrap(), vals[i], "{board}: read {i}");
    }
    let sent = kv.sessions()[0].connection().stats().packets_sent - before_sent;
    let retries = kv.sessions()[0].connection().stats().retries;
    drop(kv);
    let answers = h.stop().unwrap().sent;
    (sent, answers, retries)
}

#[test]
fn a_48_kib_batch_takes_far_fewer_packets_with_jumbo_frames() {
    let (std_req, std_ans, _) = batch_packets("emulator");
    let (jumbo_req, jumbo_ans, jumbo_retries) = batch_packets("emulator-jumbo");
    eprintln!(
        "request / answer packets: standard {std_req} / {std_ans}, jumbo {jumbo_req} / {jumbo_ans}"
    );
    // Standard: one 1 KiB create per request packet (48), 48 answers to
    // them, the reads in one request answered in 35 packets (49.5 KB).
    // Jumbo: 8 creates per packet (6 packets, 6 answers), the reads'
    // answer in 6 packets. Both: 3 answers of the session's set-up and
    // close. A retry on a loaded host resends: the exact jumbo bounds hold
    // when nothing was retried.
    assert!(
        std_req >= 49 && std_ans >= 48 + 35 + 3,
        "standard: {std_req} / {std_ans}"
    );
    if jumbo_retries == 0 {
        assert!(jumbo_req <= 7, "jumbo: {jumbo_req} request packets");
        // (+1: the close on drop, after the count of retries, may be resent.)
        assert!(
            jumbo_ans <= 6 + 6 + 3 + 1,
            "jumbo: {jumbo_ans} answer packets"
        );
        assert!(jumbo_req * 5 < std_req && jumbo_ans * 5 < std_ans);
    }
    assert!(jumbo_req * 3 < std_req && jumbo_ans * 3 < std_ans);
}

#[test]
fn reads_and_writes_spanning_jumbo_packets_stay_correct() {
    use clio_wire::clio::MAX_PAYLOAD;
    let cfg = BoardConfig::embedded("emulator-jumbo").unwrap();
    let h = serve(&cfg);
    let mut s = Session::open(h.addr(), ClientConfig::from_board(&cfg)).unwrap();
    assert_eq!(s.connection().config().mtu_payload, MAX_PAYLOAD);
    let a = s.ralloc(4 << 20, clio_wire::payload::perms::RW).unwrap();
    let mtu = MAX_PAYLOAD;
    // Around one jumbo payload, several, a response bound's worth and more
    // (split into bounded requests), at unaligned offsets.
    let mut at = a.va + 3;
    for (i, len) in [1, mtu - 1, mtu, mtu + 1, 3 * mtu + 17, 64 << 10, 200_000]
        .into_iter()
        .enumerate()
    {
        let data = value(i, len);
        let before = s.connection().stats();
        s.rwrite(at, &data).unwrap();
        let after = s.connection().stats();
        let packets = after.packets_sent - before.packets_sent;
        // Cut into requests of the response bound (64 KiB), each into
        // packets of the jumbo payload.
        let bound = cfg.network.max_response_bytes as usize;
        let want = (len / bound) * bound.div_ceil(mtu) + (len % bound).div_ceil(mtu);
        // Exactly, unless a retry (an RTO on a loaded host) resent some.
        if after.retries == before.retries {
            assert_eq!(packets, want as u64, "write of {len} B");
        } else {
            assert!(packets > want as u64, "write of {len} B");
        }
        let mut back = vec![0u8; len];
        s.rread(at, &mut back).unwrap();
        assert!(back == data, "read back {len} B at {at:#x}");
        at += len as u64 + 5;
    }

    // The tokio client: batches of 1 KiB updates spanning several jumbo
    // packets, read back in one call.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = AsyncSession::open(h.addr(), ClientConfig::default())
            .await
            .unwrap();
        assert_eq!(usize::from(s.board_info().mtu), MAX_PAYLOAD);
        let kv = AsyncKvClient::new(vec![s]).unwrap();
        let keys: Vec<Vec<u8>> = (0..64).map(|i| format!("t-{i}").into_bytes()).collect();
        for round in 0..3 {
            let vals: Vec<Vec<u8>> = (0..64).map(|i| value(i + round * 64, 1024)).collect();
            let puts: Vec<_> = keys
                .iter()
                .zip(&vals)
                .map(|(k, v)| KvOp::Put(k, v))
                .collect();
            for r in kv.batch(&puts).await.unwrap() {
                r.unwrap();
            }
            let reads: Vec<_> = keys.iter().map(|k| KvOp::Read(k)).collect();
            for (i, r) in kv.batch(&reads).await.unwrap().into_iter().enumerate() {
                assert_eq!(r.unwrap(), vals[i], "round {round} key {i}");
            }
        }
    });
}

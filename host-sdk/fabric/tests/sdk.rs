//! An SDK program over the emulated rack: `clio::Session` on an `XdmaLink` opened on
//! an emulated U200 card's device files; its requests cross the card's translator,
//! the EDM switch and a Clio memory node (the emulator's board on an EDM port).

use clio::{ClientConfig, ClioError, Session};
use clio_config::BoardConfig;
use clio_fabric::{Rack, RackOptions};
use clio_wire::payload::perms;
use clio_xdma::XdmaLink;

fn rack(cards: usize, nodes: usize, dir: &std::path::Path) -> Rack {
    Rack::start(RackOptions {
        cards,
        nodes,
        dir: dir.to_path_buf(),
        board: BoardConfig::embedded("emulator").unwrap(),
    })
    .unwrap()
}

#[test]
fn alloc_write_read_atomics_free_through_card_switch_and_memory_node() {
    let dir = tempfile::tempdir().unwrap();
    let rack = rack(2, 2, dir.path());
    for card in 0..2 {
        let link = XdmaLink::open(rack.card(card)).unwrap();
        let mut s = Session::open_with(link, ClientConfig::default()).unwrap();
        let info = s.info().unwrap();
        assert!(info.dram_bytes > 0);
        let a = s.ralloc(64 * 1024, perms::RW).unwrap();
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + card as u32) as u8).collect();
        s.rwrite(a.va + 100, &data).unwrap();
        let mut back = vec![0u8; data.len()];
        s.rread(a.va + 100, &mut back).unwrap();
        assert_eq!(back, data);
        let mut small = [0u8; 64];
        s.rread(a.va + 100, &mut small).unwrap();
        assert_eq!(&small[..], &data[..64]);
        // Atomics on a word of their own.
        let w = a.va + 8192;
        assert_eq!(s.faa(w, 5).unwrap(), 0);
        assert_eq!(s.faa(w, 2).unwrap(), 5);
        assert_eq!(s.cas(w, 7, 40).unwrap(), 7);
        assert_eq!(s.tas(w + 8).unwrap(), 0);
        assert_ne!(s.tas(w + 8).unwrap(), 0);
        let mut word = [0u8; 8];
        s.rread(w, &mut word).unwrap();
        assert_eq!(u64::from_le_bytes(word), 40);
        s.rfree(a.va, 64 * 1024).unwrap();
        // The freed range faults: the memory node's Clio error comes back over EDM.
        let e = s.rread(a.va, &mut [0u8; 8]).unwrap_err();
        assert!(
            !matches!(e, ClioError::Transport(_) | ClioError::Timeout { .. }),
            "{e:?}"
        );
    }
    let st = rack.stats();
    assert!(st.answers >= st.requests && st.requests > 20, "{st:?}");
    assert_eq!(st.counters.bad_records + st.counters.timeouts, 0, "{st:?}");
    assert!(st.latencies.iter().any(|(r, _)| *r));
    rack.stop().unwrap();
}

#[test]
fn a_read_too_long_for_one_rreq_is_refused_by_the_card_as_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let rack = rack(1, 1, dir.path());
    let link = XdmaLink::open(rack.card(0)).unwrap();
    let mut s = Session::open_with(link, ClientConfig::default()).unwrap();
    let a = s.ralloc(256 * 1024, perms::RW).unwrap();
    let e = s.rread(a.va, &mut vec![0u8; 128 * 1024]).unwrap_err();
    assert!(matches!(e, ClioError::TooLarge { .. }), "{e:?}");
    let st = rack.stats();
    assert!(
        st.refused.iter().any(|(f, _)| f == "clio.total_len"),
        "{st:?}"
    );
    rack.stop().unwrap();
}

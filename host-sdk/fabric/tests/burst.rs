//! Many packets in flight through one card: a write of 16 MTU-sized packets and
//! its read back.

use clio::{ClientConfig, Session};
use clio_config::BoardConfig;
use clio_fabric::{Rack, RackOptions};
use clio_wire::payload::perms;
use clio_xdma::XdmaLink;

#[test]
fn a_burst_of_sixteen_packets_is_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let rack = Rack::start(RackOptions {
        cards: 1,
        nodes: 1,
        dir: dir.path().to_path_buf(),
        board: BoardConfig::embedded("emulator").unwrap(),
    })
    .unwrap();
    let link = XdmaLink::open(rack.card(0)).unwrap();
    let mut s = Session::open_with(link, ClientConfig::default()).unwrap();
    let a = s.ralloc(1 << 20, perms::RW).unwrap();
    let data: Vec<u8> = (0..23_168u32).map(|i| (i % 251) as u8).collect();
    s.rwrite(a.va, &data).unwrap_or_else(|e| {
        let st = rack.stats();
        panic!(
            "{e:?} {:?} req {} ans {} refused {:?}",
            st.counters, st.requests, st.answers, st.refused
        )
    });
    let mut back = vec![0u8; data.len()];
    s.rread(a.va, &mut back).unwrap();
    assert_eq!(back, data);
    let st = rack.stats();
    assert_eq!(st.counters.bad_records + st.counters.timeouts, 0, "{st:?}");
    rack.stop().unwrap();
}

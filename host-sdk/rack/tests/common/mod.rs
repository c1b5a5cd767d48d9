//! Shared test helpers: a three-node rack and hello messages.
#![allow(dead_code)]

use clio_control::{Message, NodeId};
use clio_rack::RackConfig;

/// Three nodes: mn0 (4 GiB), mn1 (2 GiB), mn2 (8 GiB).
pub const RACK: &str = r#"
[controller]
listen = "127.0.0.1:7800"
dead_after_ms = 1000

[[node]]
name = "mn0"
address = "10.0.0.2:7700"
capacity = "4 GiB"

[[node]]
name = "mn1"
address = "10.0.0.3:7700"
capacity = "2 GiB"

[[node]]
name = "mn2"
address = "10.0.0.4:7700"
capacity = 8589934592
"#;

pub fn rack() -> RackConfig {
    clio_rack::config::load_str("rack.toml", RACK).unwrap()
}

pub fn hello(cfg: &RackConfig, node: NodeId, boot_epoch: u32) -> Message {
    let n = cfg.node(node).unwrap();
    Message::Hello {
        node,
        addr: n.node_addr(),
        capacity: n.capacity,
        boot_epoch,
    }
}

//! Rack-file validation: every error names the file, the node and the key.

use clio_rack::config::{load, load_str, DEFAULT_DEAD_AFTER_MS};

const GOOD: &str = r#"
[[node]]
name = "mn0"
address = "10.0.0.2:7700"
capacity = "2 GiB"

[[node]]
name = "mn1"
address = "[fd00::3]:7700"
capacity = 3221225472
"#;

fn err(text: &str) -> String {
    load_str("racks/lab.toml", text).unwrap_err().to_string()
}

#[test]
fn a_good_file_loads_with_defaults() {
    let c = load_str("rack.toml", GOOD).unwrap();
    assert_eq!(c.nodes.len(), 2);
    assert_eq!(
        (c.nodes[0].id, c.nodes[0].name.as_str(), c.nodes[0].capacity),
        (1, "mn0", 2 << 30)
    );
    assert_eq!(c.nodes[1].region_slots(), 3);
    assert_eq!(c.nodes[1].address.to_string(), "[fd00::3]:7700");
    assert_eq!(c.listen.to_string(), "127.0.0.1:7800");
    assert_eq!(c.dead_after_ms, DEFAULT_DEAD_AFTER_MS);
    assert_eq!(c.node_by_name("mn1").unwrap().id, 2);
    assert!(c.node(0).is_none() && c.node(3).is_none());
}

#[test]
fn unknown_keys_name_the_node_and_key() {
    let e = err(&GOOD.replace("capacity = \"2 GiB\"", "capacity = \"2 GiB\"\nport = 1"));
    assert_eq!(e, "racks/lab.toml: unknown key 'node[0].port' (node 'mn0') (known keys here: name, address, capacity, join)");
    let e = err(&format!(
        "[controller]\nlisten = \"127.0.0.1:7800\"\nlog = \"x\"\n{GOOD}"
    ));
    assert!(
        e.starts_with("racks/lab.toml: unknown key 'controller.log'"),
        "{e}"
    );
    let e = err(&format!("nodes = 3\n{GOOD}"));
    assert!(
        e.starts_with("racks/lab.toml: unknown key 'nodes' (known keys here: controller, node)"),
        "{e}"
    );
}

#[test]
fn duplicates_name_both_nodes() {
    let e = err(&GOOD.replace("name = \"mn1\"", "name = \"mn0\""));
    assert_eq!(e, "racks/lab.toml: key 'node[1].name' (node 'mn0') = \"mn0\": duplicate name: node[0] has it too");
    let e = err(&GOOD.replace("[fd00::3]:7700", "10.0.0.2:7700"));
    assert_eq!(e, "racks/lab.toml: key 'node[1].address' (node 'mn1') = \"10.0.0.2:7700\": duplicate address: node[0] 'mn0' has it too");
}

#[test]
fn capacities_must_hold_a_region() {
    let e = err(&GOOD.replace("capacity = 3221225472", "capacity = 0"));
    assert_eq!(e, "racks/lab.toml: key 'node[1].capacity' (node 'mn1') = 0: must not be zero: a node offers at least one vRegion (1 GiB)");
    let e = err(&GOOD.replace("\"2 GiB\"", "\"512 MiB\""));
    assert!(e.ends_with("key 'node[0].capacity' (node 'mn0') = \"512 MiB\": must be at least one vRegion (1 GiB)"), "{e}");
    let e = err(&GOOD.replace("\"2 GiB\"", "\"2 GB\""));
    assert!(
        e.contains("key 'node[0].capacity' (node 'mn0') = \"2 GB\": expected bytes"),
        "{e}"
    );
    let e = err(&GOOD.replace("capacity = 3221225472", "capacity = -1"));
    assert!(
        e.contains("key 'node[1].capacity' (node 'mn1') = -1"),
        "{e}"
    );
}

#[test]
fn missing_and_malformed_values() {
    let e = err(&GOOD.replace("address = \"10.0.0.2:7700\"\n", ""));
    assert_eq!(e, "racks/lab.toml: missing key 'node[0].address' (node 'mn0'): expected IP:port, e.g. \"10.0.0.2:7700\"");
    let e = err(&GOOD.replace("name = \"mn1\"\n", ""));
    assert_eq!(
        e,
        "racks/lab.toml: missing key 'node[1].name' (node 'node[1]'): expected the node's name"
    );
    let e = err(&GOOD.replace("10.0.0.2:7700", "mn0.lab:7700"));
    assert!(
        e.contains("key 'node[0].address' (node 'mn0') = \"mn0.lab:7700\": expected \"IP:port\""),
        "{e}"
    );
    let e = err(&GOOD.replace("\"mn1\"", "\"mn 1\""));
    assert!(
        e.contains("key 'node[1].name'") && e.contains("A-Za-z0-9._-"),
        "{e}"
    );
    assert_eq!(
        err(""),
        "racks/lab.toml: missing key 'node': expected at least one [[node]] table"
    );
    assert!(err("node = 1").contains("key 'node' = 1: expected an array"));
    assert!(err("[controller]\ndead_after_ms = 0\n")
        .contains("key 'controller.dead_after_ms' = 0: must be in 1..=3600000"));
    assert!(err("[[node]\n").starts_with("racks/lab.toml: invalid TOML"));
    let e = load("/nonexistent/rack.toml").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/rack.toml: cannot read file"),
        "{e}"
    );
    assert_eq!(e.key(), None);
    let e = load_str(
        "r.toml",
        &GOOD
            .replace("capacity = 0", "")
            .replace("capacity = 3221225472", "capacity = 0"),
    )
    .unwrap_err();
    assert_eq!((e.key(), e.node()), (Some("node[1].capacity"), Some("mn1")));
}

#[test]
fn the_example_rack_file_loads() {
    let c = load(concat!(env!("CARGO_MANIFEST_DIR"), "/rack.example.toml")).unwrap();
    let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["zcu106-a", "zcu106-b", "u200-a"]);
    assert_eq!(c.nodes[2].region_slots(), 64);
    assert_eq!(c.dead_after_ms, 3000);
}

#[test]
fn the_protocol_regions_are_the_boards_vregions() {
    // clio-control fixes 1 GiB vRegions of a 50-bit space; every shipped board must agree.
    for (name, board) in clio_config::boards::ALL {
        assert_eq!(
            board.va.vregion_bytes,
            clio_control::VREGION_BYTES,
            "{name}: va.vregion_bytes"
        );
        assert_eq!(board.va.bits, clio_control::VA_BITS, "{name}: va.bits");
    }
}

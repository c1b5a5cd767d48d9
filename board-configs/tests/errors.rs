//! One test per error class: every message names the file, the dotted key and
//! the allowed range or the rule.

mod common;

use clio_config::{load, ConfigError};
use common::{child, zcu106_with, Files};

fn with_child(text: &str) -> Files {
    Files::shipped().with("bad.toml", &child(text))
}

#[test]
fn out_of_range_value_names_file_key_and_range() {
    let msg = with_child("[page_table]\nslots_per_bucket = 0\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'page_table.slots_per_bucket' = 0: \
         must be a power of two in 1..=64"
    );
    let msg = with_child("[network]\nmtu_payload = 9001\n").error("bad.toml");
    assert_eq!(
        msg,
        format!(
            "board-configs/bad.toml: key 'network.mtu_payload' = 9001: must be in 256..={}",
            clio_wire::clio::MAX_PAYLOAD
        )
    );
    let msg = with_child("[page_table]\nslot_factor = -1\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'page_table.slot_factor' = -1: must be in 1..=8"
    );
    let msg = with_child("[pages]\nsizes = [\"3 KiB\"]\n").error("bad.toml");
    assert!(msg.starts_with("board-configs/bad.toml: key 'pages.sizes' = \"3 KiB\": must be a power of two in 4096..=1073741824"), "{msg}");
}

#[test]
fn a_jumbo_payload_one_byte_over_the_wire_limit_is_refused_naming_the_key() {
    // The largest payload loads (the shipped jumbo file inherits from the
    // emulator); one byte more is refused, naming the file and key.
    let files = Files::shipped()
        .with(
            "max.toml",
            "inherit = \"emulator-jumbo.toml\"\n[network]\nmtu_payload = 8916\n",
        )
        .with(
            "over.toml",
            "inherit = \"emulator-jumbo.toml\"\n[network]\nmtu_payload = 8917\n",
        );
    assert_eq!(files.load("max.toml").unwrap().network.mtu_payload, 8916);
    assert_eq!(
        files.error("over.toml"),
        "board-configs/over.toml: key 'network.mtu_payload' = 8917: must be in 256..=8916"
    );
}

#[test]
fn a_bad_value_in_the_parent_names_the_parent_file() {
    let files = Files::shipped()
        .with("zcu106.toml", &zcu106_with("entries = 64", "entries = 0"))
        .with("child.toml", &child("[network]\nudp_port = 1234\n"));
    let msg = files.error("child.toml");
    assert_eq!(
        msg,
        "board-configs/zcu106.toml: key 'tlb.entries' = 0: must be in 1..=4096"
    );
}

#[test]
fn bad_type_names_found_and_expected() {
    let msg = with_child("[tlb]\nentries = \"sixty-four\"\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'tlb.entries' has type string: expected an integer in 1..=4096"
    );
    let msg = with_child("[dram]\nsize = true\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'dram.size' has type boolean: expected a byte count"
        ),
        "{msg}"
    );
    let msg = with_child("[dram]\nsize = \"2 GB\"\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'dram.size' = \"2 GB\": expected a byte count"
        ),
        "{msg}"
    );
    let msg = with_child("[network]\nipv4 = \"10.0.0.256\"\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'network.ipv4' = \"10.0.0.256\": must be an IPv4 address"
        ),
        "{msg}"
    );
    let msg = with_child("[network]\nmac = \"02:00:00:00:00\"\n").error("bad.toml");
    assert!(
        msg.starts_with("board-configs/bad.toml: key 'network.mac'"),
        "{msg}"
    );
    let msg = with_child("[network]\nport_kind = \"rj45\"\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'network.port_kind' = \"rj45\": \
         must be one of \"sfp+\", \"qsfp28\", \"loopback\""
    );
    for bad in ["0", "16777217"] {
        let msg = with_child(&format!("[network]\nclients = {bad}\n")).error("bad.toml");
        assert!(
            msg.starts_with(&format!(
                "board-configs/bad.toml: key 'network.clients' = {bad}: must be"
            )),
            "{msg}"
        );
    }
    for (bad, why) in [
        ("0", "must be in 1..=1024"),
        ("1025", "must be in 1..=1024"),
        ("\"x\"", "integer"),
        (
            "512",
            "must be at most 511 (records of network.max_response_bytes + 64 in half of regions.firmware)",
        ),
    ] {
        let msg = with_child(&format!("[dedup]\noffload_answers = {bad}\n")).error("bad.toml");
        assert!(
            msg.starts_with("board-configs/bad.toml: key 'dedup.offload_answers'")
                && msg.contains(why),
            "{msg}"
        );
    }
    for (bad, why) in [
        ("0", "must be"),
        ("\"64 MiB\"", "must be"),
        ("1500", "must be a multiple of 0x400"),
        (
            "1024",
            "must be at least 1450 (network.mtu_payload: one full packet)",
        ),
    ] {
        let msg = with_child(&format!("[network]\nmax_response_bytes = {bad}\n")).error("bad.toml");
        assert!(
            msg.starts_with("board-configs/bad.toml: key 'network.max_response_bytes' = ")
                && msg.contains(why),
            "{msg}"
        );
    }
    let msg = Files::shipped()
        .with("bad.toml", "inherit = 3\n")
        .error("bad.toml");
    assert!(
        msg.starts_with("board-configs/bad.toml: key 'inherit' has type integer"),
        "{msg}"
    );
}

#[test]
fn unknown_key_is_named_with_the_known_ones() {
    let msg = with_child("[page_table]\nslot_per_bucket = 16\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: unknown key 'page_table.slot_per_bucket' \
         (known keys here: slot_factor, slots_per_bucket)"
    );
    let msg = with_child("[dramm]\nsize = 1\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: unknown key 'dramm' (known keys here: inherit, board, "
        ),
        "{msg}"
    );
    let msg = with_child("[regions]\ndata = { base = 0x0800_0000, size = \"1 GiB\", align = 4 }\n")
        .error("bad.toml");
    assert!(msg.starts_with("board-configs/bad.toml: unknown key 'regions.data.align' (known keys here: base, size)"), "{msg}");
}

#[test]
fn missing_key_names_the_key_and_what_it_holds() {
    let text = zcu106_with("entries = 64\n", "");
    let msg = Files::default().with("z.toml", &text).error("z.toml");
    assert_eq!(
        msg,
        "board-configs/z.toml: missing key 'tlb.entries': expected an integer in 1..=4096"
    );
}

#[test]
fn overlapping_regions_name_both() {
    let msg = with_child("[regions]\ndata = { base = 0x0700_0000 }\n").error("bad.toml");
    assert!(
        msg.starts_with("board-configs/bad.toml: key 'regions.data' = 0x7000000..0x7f000000: overlaps 'regions.page_table' (0x6000000..0x8000000)"),
        "{msg}"
    );
}

#[test]
fn region_outside_dram_and_rings_outside_their_region() {
    let msg = with_child("[dram]\nsize = \"1 GiB\"\n").error("bad.toml");
    assert!(msg.starts_with("board-configs/zcu106.toml: key 'regions.data' = 0x8000000..0x80000000: must lie inside DRAM 0x0..0x40000000"), "{msg}");
    let msg = with_child("[rings]\ntx = { base = 0x0420_0000 }\n").error("bad.toml");
    assert!(msg.starts_with("board-configs/bad.toml: key 'rings.tx.base' = 0x4200000..0x4240080: must lie inside 'regions.rings'"), "{msg}");
    let msg = with_child("[rings]\ntx = { base = 0x0402_0000 }\n").error("bad.toml");
    assert!(msg.starts_with("board-configs/bad.toml: key 'rings.tx.base' = 0x4020000..0x4060080: overlaps 'rings.rx'"), "{msg}");
}

#[test]
fn page_table_region_must_hold_the_derived_table() {
    let msg = with_child("[regions]\npage_table = { size = \"8 MiB\" }\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'regions.page_table' = 0x6000000..0x6800000: \
         must be at least 16777216 (bytes of the derived page table)"
    );
    // Dropping 4 KiB pages shrinks the table enough.
    let ok = with_child(
        "[regions]\npage_table = { size = \"8 MiB\" }\n[pages]\nsizes = [\"2 MiB\", \"4 MiB\"]\n",
    );
    // 1920 MiB / 2 MiB = 960 pages, x2 = 1920 slots, /16 = 120 -> 128 buckets of 256 B.
    assert_eq!(ok.load("bad.toml").unwrap().page_table_bytes(), 128 * 256);
}

#[test]
fn relations_between_keys_are_checked() {
    let msg = with_child("[pages]\ndefault_size = \"1 GiB\"\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'pages.default_size' = 1073741824: must be one of 'pages.sizes'"
    );
    let msg = with_child("[timeouts]\nrto_max_us = 10\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'timeouts.rto_max_us' = 10: must be at least 20"
        ),
        "{msg}"
    );
    let msg = with_child("[pcie]\nvendor_id = 1\ndevice_id = 2\nuser_bar = 0\nuser_offset = 0\nh2c_channels = 1\nc2h_channels = 1\nxdma_instance = 0\n")
        .error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'pcie' = present: is not allowed for board kind 'zcu106'"
    );
    let msg = with_child("[board]\nkind = \"alveo-u200\"\n").error("bad.toml");
    assert!(
        msg.ends_with("key 'pcie' = absent: is required for board kind 'alveo-u200'"),
        "{msg}"
    );
    let msg = with_child("[rings]\nslot_bytes = 128\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'rings.slot_bytes' = 128: must be 64 (the ring slot of clio-wire)"
    );
    let msg = with_child("[board]\nname = \"has space\"\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'board.name' = \"has space\": must be 1 to 32 characters"
        ),
        "{msg}"
    );
}

#[test]
fn sessions_keys_are_checked() {
    let msg = with_child("[sessions]\ncapacity = 1000\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'sessions.capacity' = 1000: must be a power of two in 2..=32768"
    );
    let msg = with_child("[sessions]\ndedup_per_session = 0\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'sessions.dedup_per_session' = 0: must be in 1..=65535"
    );
    let msg = with_child("[sessions]\nlocks_per_session = 65536\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'sessions.locks_per_session' = 65536: must be in 1..=65535"
    );
    // More records per session than the whole buffer has (1536).
    let msg = with_child("[sessions]\ndedup_per_session = 2000\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'sessions.dedup_per_session' = 2000: must be at most 1536"
        ),
        "{msg}"
    );
    // Not a whole number of default (4 MiB) pages.
    let msg = with_child("[sessions]\nmem_quota_bytes = \"6 MiB\"\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'sessions.mem_quota_bytes' = 6291456: must be a multiple of 0x400000"
    );
    let msg = with_child("[sessions]\nmem_quota_bytes = \"4 GiB\"\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/bad.toml: key 'sessions.mem_quota_bytes' = 4294967296: \
             must be at most 2013265920 (regions.data.size)"
        ),
        "{msg}"
    );
    let msg = Files::shipped()
        .with("zcu106.toml", &zcu106_with("capacity = 1024\n", ""))
        .error("zcu106.toml");
    assert!(
        msg.starts_with("board-configs/zcu106.toml: missing key 'sessions.capacity'"),
        "{msg}"
    );
}

#[test]
fn a_dedup_buffer_too_small_for_the_line_rate_names_the_key_to_raise() {
    // The paper's 30 KiB (960 records) is short of 1154 on a ZCU106.
    let msg = with_child("[dedup]\nbuffer_bytes = \"30 KiB\"\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'dedup.buffer_bytes' = 30720: must be at least 36928 \
         (raise dedup.buffer_bytes: records of 3 x timeouts.rto_min_us of the smallest \
         recorded requests at the line rate (network.ports x network.port_gbps))"
    );
    // The rule follows the line rate and the SDK's RTO floor: one port is enough...
    let files = Files::shipped().with(
        "one.toml",
        &child("[dedup]\nbuffer_bytes = \"30 KiB\"\n[network]\nports = 1\n"),
    );
    let c = files.load("one.toml").unwrap();
    assert_eq!(c.dedup_entries_needed(), 577);
    // ...but a higher RTO floor needs more records again (the error names
    // the file that set the buffer size, the parent here).
    let msg = with_child("[timeouts]\nrto_min_us = 40\n").error("bad.toml");
    assert!(
        msg.starts_with(
            "board-configs/zcu106.toml: key 'dedup.buffer_bytes' = 49152: must be at least 73856"
        ),
        "{msg}"
    );
    // Exactly the needed size loads.
    let files = Files::shipped().with("exact.toml", &child("[dedup]\nbuffer_bytes = 36928\n"));
    assert_eq!(files.load("exact.toml").unwrap().dedup_entries(), 1154);
}

#[test]
fn fastpath_regs_base_is_checked_against_the_kind_and_the_hpm0_window() {
    let msg = with_child("[fastpath]\nregs_base = 0xA000_0800\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'fastpath.regs_base' = 0xa0000800: must be a multiple of 0x1000"
    );
    let msg = with_child("[fastpath]\nregs_base = 0x9000_0000\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'fastpath.regs_base' = 0x90000000: \
         must lie inside 'M_AXI_HPM0_FPD' (0xa0000000..0xb0000000)"
    );
    let msg = with_child("[fastpath]\nregs_base = 0x1_0000_0000\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'fastpath.regs_base' = 4294967296: must be in 0..=4294967295"
    );
    let msg = with_child("[fastpath]\nregs_base = \"high\"\n").error("bad.toml");
    assert!(
        msg.starts_with("board-configs/bad.toml: key 'fastpath.regs_base' has type string"),
        "{msg}"
    );
    // The last page of the window holds the whole 256-byte block.
    let ok = with_child("[fastpath]\nregs_base = 0xAFFF_F000\n");
    assert_eq!(
        ok.load("bad.toml").unwrap().fastpath.regs_base,
        Some(0xafff_f000)
    );
    // A ZCU106 without it: the firmware could not program its fast path.
    let files = Files::default().with(
        "bad.toml",
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/zcu106.toml"))
            .unwrap()
            .replace("regs_base = 0xA000_0000\n", ""),
    );
    assert_eq!(
        files.error("bad.toml"),
        "board-configs/bad.toml: key 'fastpath.regs_base' = (absent): is required for board kind 'zcu106'"
    );
    // An Alveo card has no ARM to program one.
    let files = Files::default().with(
        "bad.toml",
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/alveo-u200.toml"))
            .unwrap()
            .replace(
                "datapath_bits = 512\n",
                "datapath_bits = 512\nregs_base = 0xA000_0000\n",
            ),
    );
    assert_eq!(
        files.error("bad.toml"),
        "board-configs/bad.toml: key 'fastpath.regs_base' = 0xa0000000: is not allowed for board kind 'alveo-u200'"
    );
}

#[test]
fn missing_inherit_file_names_it() {
    let files = Files::default().with("bad.toml", "inherit = \"nope.toml\"\n");
    let msg = files.error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'inherit' = \"nope.toml\": cannot read board-configs/nope.toml: No such file or directory"
    );
}

#[test]
fn inherit_cycle_shows_the_chain() {
    let files = Files::default()
        .with("a.toml", "inherit = \"b.toml\"\n")
        .with("b.toml", "inherit = \"c.toml\"\n")
        .with("c.toml", "inherit = \"a.toml\"\n");
    let msg = files.error("a.toml");
    assert_eq!(
        msg,
        "board-configs/c.toml: key 'inherit': inheritance cycle: \
         board-configs/a.toml -> board-configs/b.toml -> board-configs/c.toml -> board-configs/a.toml"
    );
    let selfish = Files::default().with("s.toml", "inherit = \"s.toml\"\n");
    assert!(selfish.error("s.toml").contains("inheritance cycle"));
}

#[test]
fn toml_syntax_error_names_file_and_line() {
    let msg = with_child("[tlb\nentries = 1\n").error("bad.toml");
    // Line 1 is the `inherit` the helper adds.
    assert!(
        msg.starts_with("board-configs/bad.toml: invalid TOML: at line 2, column 5: "),
        "{msg}"
    );
    let msg = Files::default()
        .with("bad.toml", "[a]\nx = \"é\" y\n")
        .error("bad.toml");
    assert!(
        msg.starts_with("board-configs/bad.toml: invalid TOML: at line 2, column 9: "),
        "{msg}"
    );
}

#[test]
fn errors_from_the_file_system_name_the_path() {
    let dir = std::env::temp_dir().join(format!("clio-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let zcu = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("zcu106.toml");
    std::fs::copy(zcu, dir.join("zcu106.toml")).unwrap();
    std::fs::write(dir.join("child.toml"), child("[tlb]\nentries = 5000\n")).unwrap();
    let err = load(dir.join("child.toml")).unwrap_err();
    let shown = dir.join("child.toml").display().to_string();
    assert_eq!(
        err.to_string(),
        format!("{shown}: key 'tlb.entries' = 5000: must be in 1..=4096")
    );
    assert_eq!(err.file(), shown);
    assert_eq!(err.key(), Some("tlb.entries"));
    let missing = load(dir.join("absent.toml")).unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }));
    assert!(missing
        .to_string()
        .starts_with(&dir.join("absent.toml").display().to_string()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_embedded_board_is_an_error() {
    let err = clio_config::BoardConfig::embedded("zcu999").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("board-configs/zcu999.toml: cannot read file"),
        "{err}"
    );
}

#[test]
fn the_network_front_end_is_typed_and_only_for_memory_boards() {
    use clio_config::FrontEnd;
    // Absent: UDP, as before the key existed (and the same config hash).
    let files = Files::shipped();
    let plain = files.load("zcu106.toml").unwrap();
    assert_eq!(plain.network.front_end, FrontEnd::Udp);
    let edm = with_child("[network]\nfront_end = \"edm\"\n")
        .load("bad.toml")
        .unwrap();
    assert_eq!(edm.network.front_end, FrontEnd::Edm);
    assert_ne!(edm.config_hash(), plain.config_hash());
    let udp = with_child("[network]\nfront_end = \"udp\"\n")
        .load("bad.toml")
        .unwrap();
    assert_eq!(udp.config_hash(), plain.config_hash());
    // The canonical form carries it, and reads back the same.
    let again = Files::default()
        .with("again.toml", &edm.to_toml())
        .load("again.toml")
        .unwrap();
    assert_eq!(again.network.front_end, FrontEnd::Edm);
    let msg = with_child("[network]\nfront_end = \"tcp\"\n").error("bad.toml");
    assert_eq!(
        msg,
        "board-configs/bad.toml: key 'network.front_end' = \"tcp\": must be one of \"udp\", \"edm\""
    );
    let msg = with_child("[network]\nfront_end = 1\n").error("bad.toml");
    assert!(
        msg.starts_with("board-configs/bad.toml: key 'network.front_end'"),
        "{msg}"
    );
    // A U200 is the compute node's EDM NIC, not a memory board's front end.
    let files = Files::default().with(
        "bad.toml",
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/alveo-u200.toml"))
            .unwrap()
            .replace("[network]\n", "[network]\nfront_end = \"edm\"\n"),
    );
    assert_eq!(
        files.error("bad.toml"),
        "board-configs/bad.toml: key 'network.front_end' = edm: is not allowed for board kind 'alveo-u200'"
    );
}

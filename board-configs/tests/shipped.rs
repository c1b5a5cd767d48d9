//! The shipped board files: they load, validate, inherit, and their derived values.

mod common;

use std::path::Path;

use clio_config::{boards, keys, load, BoardConfig, BoardKind, PortKind, EMBEDDED_FILES};
use common::Files;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn file(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

#[test]
fn every_shipped_file_loads_from_disk_and_embedded_and_matches_the_generated_const() {
    let consts = [
        ("zcu106", boards::ZCU106),
        ("alveo-u200", boards::ALVEO_U200),
        ("emulator", boards::EMULATOR),
        ("emulator-jumbo", boards::EMULATOR_JUMBO),
    ];
    for ((name, file_name, _), (const_name, constant)) in EMBEDDED_FILES.iter().zip(consts) {
        assert_eq!(*name, const_name);
        let from_disk = load(file(file_name)).unwrap_or_else(|e| panic!("{e}"));
        let embedded = BoardConfig::embedded(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(from_disk, embedded);
        assert_eq!(from_disk, constant);
        assert_eq!(constant.validate(), Ok(()));
        assert_eq!(constant.board.name.as_str(), *name);
    }
    for (name, c) in boards::ALL {
        assert_eq!(boards::by_name(name), Some(c));
        assert_eq!(BoardConfig::embedded(name).unwrap(), c);
    }
    assert_eq!(boards::by_name("zcu999"), None);
    assert_eq!(
        BoardConfig::embedded_names().collect::<Vec<_>>(),
        ["zcu106", "alveo-u200", "emulator", "emulator-jumbo"]
    );
}

#[test]
fn zcu106_has_the_prototype_numbers_and_derived_values() {
    let c = boards::ZCU106;
    assert_eq!(c.board.kind, BoardKind::Zcu106);
    assert_eq!((c.dram.base, c.dram.size), (0, 2 * GIB));
    assert_eq!(c.regions.firmware.base, 0);
    assert_eq!(c.regions.firmware.size, 64 * MIB);
    assert_eq!(c.pages.default_size, 4 * MIB);
    assert_eq!(
        c.pages.sizes.iter().collect::<Vec<_>>(),
        [4096, 2 * MIB, 4 * MIB]
    );
    assert_eq!(
        (c.page_table.slots_per_bucket, c.page_table.slot_factor),
        (16, 2)
    );
    assert_eq!(c.tlb.entries, 64);
    assert_eq!(c.free_pa_fifo.depth, 32);
    assert_eq!((c.fastpath.clock_mhz, c.fastpath.datapath_bits), (250, 512));
    assert_eq!(c.fastpath.regs_base, Some(0xa000_0000));
    assert_eq!(c.datapath_gbps(), 128);
    assert_eq!(c.network.mtu_payload, 1450);
    assert_eq!((c.network.ports, c.network.port_gbps), (2, 10));
    assert_eq!(c.network.port_kind, PortKind::SfpPlus);
    assert_eq!(c.va.bits, 50);
    assert_eq!(c.va.vregion_bytes, GIB);
    assert_eq!(c.pcie, None);

    // Page table: 1920 MiB of data in 4 KiB pages = 491520 pages, x2 slots,
    // /16 per bucket = 61440 buckets, rounded up to 65536 (a mask index).
    assert_eq!(c.page_table_sizing_page(), 4096);
    assert_eq!(c.data_pages(4096), 491_520);
    assert_eq!(c.data_pages(4 * MIB), 480);
    assert_eq!(c.page_table_slots_needed(), 983_040);
    assert_eq!(c.bucket_count(), 65_536);
    assert_eq!(c.bucket_index_bits(), 16);
    assert_eq!(c.page_table_slots(), 1_048_576);
    assert_eq!(c.bucket_bytes(), 256);
    assert_eq!(c.page_table_bytes(), 16 * MIB);
    assert!(c.regions.page_table.size >= c.page_table_bytes());
    assert_eq!(c.dedup_entries(), 48 * 1024 / 32);
    // 3 x 20 us x 20 Gbit/s of 130-byte frames = 1 200 000 bit / 1040 bit.
    assert_eq!(clio_config::MIN_RECORDED_FRAME_BYTES, 130);
    assert_eq!(c.dedup_entries_needed(), 1154);
    assert_eq!(c.dedup_buffer_bytes_needed(), 1154 * 32);
    // 1536 records x 1040 bit / 20 Gbit/s = 79 872 ns.
    assert_eq!(c.dedup_coverage_ns(), 79_872);
    assert_eq!(c.session_capacity(), 1024);
    assert_eq!(c.max_sessions(), 1023);
    assert_eq!((c.dedup_quota(), c.lock_quota()), (256, 64));
    assert_eq!(c.sessions.mem_quota_bytes, 512 * MIB);
    assert_eq!(c.mem_quota_pages(), 128);
    let m = c.boot_seed_mailbox();
    assert_eq!((m.base, m.size), (c.regions.net_buffers.base, 32));
    assert!(c.regions.net_buffers.contains(&m));
    assert_eq!(c.free_pa_fifo_entries(), 3 * 32);
    assert_eq!(c.ring_bytes(&c.rings.rx), 128 + 4096 * 64);
    let g = c.page_table_geometry();
    assert_eq!(g.table_bytes(), c.page_table_bytes());
    assert_eq!(g.bucket_bytes(), c.bucket_bytes());
    assert_eq!(g.base, c.regions.page_table.base);
    assert_eq!(c.vregion_count(), 1 << 20);
}

#[test]
fn emulator_inherits_zcu106_and_overrides_memory_and_ports() {
    let emu = boards::EMULATOR;
    let z = boards::ZCU106;
    assert_eq!(emu.board.kind, BoardKind::Emulator);
    assert_eq!(emu.dram.size, 256 * MIB);
    assert_eq!(emu.network.ipv4, [127, 0, 0, 1]);
    assert_eq!(emu.network.port_kind, PortKind::Loopback);
    assert_ne!(emu.network.udp_port, z.network.udp_port);
    assert_eq!(emu.timeouts.rto_min_us, 500);
    // The client table: set in the file, the default elsewhere, and a value
    // equal to the default leaves the canonical form (and hash) unchanged.
    assert_eq!(emu.network.clients, clio_config::DEFAULT_CLIENTS);
    assert_eq!(z.network.clients, clio_config::DEFAULT_CLIENTS);
    assert!(!emu.to_toml().contains("clients ="));
    let mut more = emu;
    more.network.clients = 100_000;
    assert!(more.to_toml().contains("clients = 100000"));
    assert_ne!(more.config_hash(), emu.config_hash());
    // Offload answers remembered: the default on the ZCU106, set for the
    // emulator; the default leaves the canonical form (and hash) unchanged.
    assert_eq!(
        z.dedup.offload_answers,
        clio_config::DEFAULT_OFFLOAD_ANSWERS
    );
    assert_eq!(emu.dedup.offload_answers, 256);
    assert!(!z.to_toml().contains("offload_answers"));
    assert!(emu.to_toml().contains("offload_answers = 256"));
    let mut fewer = z;
    fewer.dedup.offload_answers = 8;
    assert_ne!(fewer.config_hash(), z.config_hash());
    // The response bound: every shipped board states the default 64 KiB,
    // which leaves the canonical form unchanged.
    assert_eq!(emu.network.max_response_bytes, 64 * 1024);
    assert_eq!(
        z.network.max_response_bytes,
        clio_config::DEFAULT_MAX_RESPONSE_BYTES
    );
    assert!(!emu.to_toml().contains("max_response_bytes"));
    more.network.max_response_bytes = 16 * 1024;
    assert!(more.to_toml().contains("max_response_bytes = 16384"));
    // Inherited unchanged, including keys inside partially overridden tables.
    assert_eq!(emu.regions.firmware, z.regions.firmware);
    assert_eq!(emu.regions.rings, z.regions.rings);
    assert_eq!(emu.rings, z.rings);
    assert_eq!(emu.network.mtu_payload, z.network.mtu_payload);
    assert_eq!(emu.network.mac, z.network.mac);
    assert_eq!(emu.timeouts.rto_max_us, z.timeouts.rto_max_us);
    assert_eq!(emu.page_table, z.page_table);
    assert_eq!(emu.fastpath, z.fastpath);
    assert_eq!(emu.pages, z.pages);
    assert!(emu.regions.page_table.size >= emu.page_table_bytes());
    assert_eq!(emu.page_table_bytes(), 2 * MIB);
    // Sessions: the ZCU106's table and per-session quotas, a smaller memory
    // quota for the smaller DRAM; 1 Gbit/s of loopback for the dedup check
    // (3 x 500 us x 1 Gbit/s / 1040 bit = 1443 records of 1536).
    assert_eq!(emu.sessions.capacity, z.sessions.capacity);
    assert_eq!(emu.sessions.dedup_per_session, z.sessions.dedup_per_session);
    assert_eq!(emu.sessions.mem_quota_bytes, 64 * MIB);
    assert_eq!(emu.mem_quota_pages(), 16);
    assert_eq!(emu.network.port_gbps, 1);
    assert_eq!(emu.dedup_entries_needed(), 1443);
    assert!(emu.dedup_entries() >= emu.dedup_entries_needed());
}

#[test]
fn emulator_jumbo_is_the_emulator_with_the_largest_payload_the_wire_allows() {
    let j = boards::EMULATOR_JUMBO;
    let mut emu = boards::EMULATOR;
    assert_eq!(j.network.mtu_payload as usize, clio_wire::clio::MAX_PAYLOAD);
    assert_eq!(j.network.mtu_payload, 8916);
    // Nothing else differs.
    emu.board.name = j.board.name;
    emu.network.mtu_payload = j.network.mtu_payload;
    assert_eq!(emu, j);
    // A 64 KiB answer is 8 jumbo packets instead of 46.
    assert_eq!(
        (j.network.max_response_bytes as usize).div_ceil(j.network.mtu_payload as usize),
        8
    );
}

#[test]
fn alveo_u200_has_64_gib_qsfp28_and_xdma() {
    let c = boards::ALVEO_U200;
    assert_eq!(c.dram.size, 64 * GIB);
    assert_eq!(c.network.port_kind, PortKind::Qsfp28);
    assert_eq!((c.network.ports, c.network.port_gbps), (2, 100));
    let p = c.pcie.expect("alveo has pcie");
    assert_eq!(p.vendor_id, 0x10ee);
    assert_eq!(c.regions.data.end(), c.dram.region().end());
    assert!(c.regions.page_table.size >= c.page_table_bytes());
    // 3 x 20 us x 200 Gbit/s / 1040 bit = 11 539 records of 12 288.
    assert_eq!(c.dedup_entries_needed(), 11_539);
    assert_eq!(c.dedup_entries(), 12_288);
    assert_eq!(c.session_capacity(), 4096);
}

#[test]
fn a_child_can_override_a_single_key_inside_an_inline_table() {
    let files = Files::shipped().with(
        "small-data.toml",
        &common::child("[regions]\ndata = { size = \"1024 MiB\" }\n"),
    );
    let c = files.load("small-data.toml").unwrap();
    assert_eq!(c.regions.data.base, boards::ZCU106.regions.data.base);
    assert_eq!(c.regions.data.size, GIB);
    assert_eq!(c.page_table_bytes(), 8 * MIB);
}

#[test]
fn canonical_toml_loads_back_to_the_same_config_and_hash() {
    for (name, _, _) in EMBEDDED_FILES {
        let c = BoardConfig::embedded(name).unwrap();
        let files = Files::default().with("canonical.toml", &c.to_toml());
        let back = files
            .load("canonical.toml")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, c);
        assert_eq!(back.config_hash(), c.config_hash());
    }
}

#[test]
fn config_hash_depends_on_values_not_spelling() {
    let z = boards::ZCU106;
    // Same values written differently (bytes as integers, other key order).
    let respelled = common::zcu106_with("size = \"2 GiB\"", "size = 2147483648");
    let files = Files::shipped().with("respelled.toml", &respelled);
    assert_eq!(
        files.load("respelled.toml").unwrap().config_hash(),
        z.config_hash()
    );
    // A different value changes it.
    let mut other = z;
    other.tlb.entries = 63;
    assert_ne!(other.config_hash(), z.config_hash());
    let hashes = [
        boards::ZCU106.config_hash(),
        boards::ALVEO_U200.config_hash(),
        boards::EMULATOR.config_hash(),
    ];
    assert!(hashes[0] != hashes[1] && hashes[1] != hashes[2] && hashes[0] != hashes[2]);
    // FNV-1a reference vector: "a" -> 0xaf63dc4c8601ec8c.
    let mut h = clio_config::Fnv1a64::new();
    h.update(b"a");
    assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
}

/// The dotted keys of a TOML table's values, depth first.
fn leaves(t: &toml::Table, prefix: &str, keys: &mut Vec<String>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => leaves(inner, &key, keys),
            _ => keys.push(key),
        }
    }
}

#[test]
fn the_key_table_is_exactly_what_the_canonical_form_writes() {
    // The Alveo file is the only one with [pcie]; the optional keys are set
    // to non-defaults so the canonical form writes them too.
    let mut c = boards::ALVEO_U200;
    c.fastpath.regs_base = Some(0xa000_0000);
    c.network.front_end = clio_config::FrontEnd::Edm;
    c.network.clients = 7;
    c.network.max_response_bytes = 2048;
    c.fastpath.read_streams = true;
    let table: toml::Table = c.to_toml().parse().unwrap();
    let mut written = Vec::new();
    leaves(&table, "", &mut written);
    written.sort();
    let mut table_keys: Vec<String> = keys::LEAVES.iter().map(|k| k.to_string()).collect();
    table_keys.sort();
    assert_eq!(written, table_keys);
}

#[test]
fn readme_documents_every_key() {
    let readme = std::fs::read_to_string(file("README.md")).unwrap();
    for key in keys::LEAVES.iter().chain([&keys::INHERIT]) {
        assert!(
            readme.contains(&format!("`{key}`")),
            "README.md does not document `{key}`"
        );
    }
}

#[test]
fn read_streams_defaults_by_kind_is_typed_and_refused_on_an_alveo() {
    // Shipped: on for the ZCU106 and the emulator (inherited default), off
    // for the U200; the default leaves the canonical form (and the hash) alone.
    let streams = |f: &str| load(file(f)).unwrap().fastpath.read_streams;
    assert!(streams("zcu106.toml"));
    assert!(streams("emulator.toml"));
    assert!(!streams("alveo-u200.toml"));
    assert!(!boards::ZCU106.to_toml().contains("read_streams"));
    let dir = std::env::temp_dir().join(format!("clio-read-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let load = |name: &str, parent: &str, extra: &str| {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!(
                "inherit = {:?}\n{extra}",
                file(parent).display().to_string()
            ),
        )
        .unwrap();
        load(&p)
    };
    let off = load(
        "off.toml",
        "zcu106.toml",
        "[fastpath]\nread_streams = false\n",
    )
    .unwrap();
    assert!(!off.fastpath.read_streams);
    assert!(off.to_toml().contains("read_streams = false"));
    assert_ne!(off.config_hash(), boards::ZCU106.config_hash());
    let e = load(
        "typed.toml",
        "zcu106.toml",
        "[fastpath]\nread_streams = 1\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("fastpath.read_streams") && e.contains("true or false"),
        "{e}"
    );
    let e = load(
        "alveo.toml",
        "alveo-u200.toml",
        "[fastpath]\nread_streams = true\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("fastpath.read_streams") && e.contains("alveo-u200"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

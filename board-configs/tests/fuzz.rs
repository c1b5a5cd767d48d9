//! Property tests: arbitrary text and mutated files never panic the loader;
//! whatever loads is valid and round-trips; derived geometry holds its invariants.

mod common;

use clio_config::{boards, BoardConfig, PageSizes};
use common::Files;
use proptest::prelude::*;

/// TOML-looking fragments, so random text often parses and reaches the typed reader.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[board]\n".to_owned()),
        Just("[regions]\n".to_owned()),
        Just("[pages]\n".to_owned()),
        Just("[page_table]\n".to_owned()),
        Just("[network]\n".to_owned()),
        Just("[pcie]\n".to_owned()),
        Just("inherit = \"zcu106.toml\"\n".to_owned()),
        Just("inherit = \"emulator.toml\"\n".to_owned()),
        Just("[[x]]\n".to_owned()),
        "[a-z_]{1,12} = -?[0-9]{1,20}\n",
        "[a-z_.]{1,20} = \"[ -~]{0,12}\"\n",
        "[a-z_]{1,12} = \\{ base = [0-9]{1,12}, size = \"[0-9]{1,5} [KMGT]iB\" \\}\n",
        "[a-z_]{1,12} = \\[[0-9, \"a-zA-Z]{0,20}\\]\n",
        "[ -~\n]{0,40}",
    ]
}

fn check_loaded(result: Result<BoardConfig, clio_config::ConfigError>) {
    match result {
        Ok(c) => {
            assert_eq!(c.validate(), Ok(()));
            let back = Files::default()
                .with("canonical.toml", &c.to_toml())
                .load("canonical.toml")
                .unwrap_or_else(|e| panic!("canonical form does not load: {e}"));
            assert_eq!(back, c);
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("board-configs/"), "{msg}");
        }
    }
}

/// Values to put in place of a shipped value.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..=70_000).prop_map(|v| v.to_string()),
        (0u32..40).prop_map(|s| format!("{:#x}", 1u64 << s)),
        "\"[0-9]{1,4} [KMG]iB\"",
        "\"[ -~]{0,10}\"",
        Just("true".to_owned()),
        Just("1.5".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
        Just("[\"4 KiB\", \"4 KiB\"]".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(parts in prop::collection::vec(fragment(), 0..12)) {
        let text: String = parts.concat();
        check_loaded(Files::shipped().with("fuzz.toml", &text).load("fuzz.toml"));
    }

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        check_loaded(Files::shipped().with("fuzz.toml", &text).load("fuzz.toml"));
    }

    #[test]
    fn mutated_shipped_values_never_panic(
        file in 0usize..3,
        edits in prop::collection::vec((any::<prop::sample::Index>(), value()), 1..4),
    ) {
        let (_, name, text) = clio_config::EMBEDDED_FILES[file];
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (index, v) in edits {
            // Replace the value of a `key = value` line (inline tables included).
            let i = index.index(lines.len());
            if let Some((key, _)) = lines[i].split_once(" = ") {
                lines[i] = format!("{key} = {v}");
            }
        }
        let mutated = lines.join("\n");
        check_loaded(Files::shipped().with(name, &mutated).load(name));
        // And through inheritance: the emulator over a mutated zcu106.
        if file == 0 {
            check_loaded(Files::shipped().with(name, &mutated).load("emulator.toml"));
        }
    }

    #[test]
    fn mutated_configs_validate_or_name_a_key_and_never_panic(
        dram_size in 0u64..=(1 << 41),
        data_size_mib in 0u64..=4096,
        k_log in 0u32..8,
        factor in 0u32..10,
        sizes in 0u64..(1 << 31),
        slot_bytes_log in 4u32..8,
        tx_base in 0x0400_0000u64..0x0420_0000,
        mtu in 0u32..10_000,
    ) {
        let mut c = boards::ZCU106;
        c.dram.size = dram_size;
        c.regions.data.size = data_size_mib << 20;
        c.page_table.slots_per_bucket = 1 << k_log;
        c.page_table.slot_factor = factor;
        c.pages.sizes = PageSizes(sizes & !0xfff);
        c.rings.slot_bytes = 1 << slot_bytes_log;
        c.rings.tx.base = tx_base;
        c.network.mtu_payload = mtu;
        // Derived values never panic, whatever the input.
        let _ = (c.bucket_count(), c.page_table_bytes(), c.dedup_entries(), c.vregion_count());
        match c.validate() {
            Ok(()) => {
                let back = Files::default()
                    .with("canonical.toml", &c.to_toml())
                    .load("canonical.toml")
                    .unwrap_or_else(|e| panic!("valid config does not reload: {e}"));
                prop_assert_eq!(back, c);
                let src = clio_config::to_rust_source(&c);
                let needle = format!("mtu_payload: {}", c.network.mtu_payload);
                prop_assert!(src.contains(&needle), "{} not in {}", needle, src);
            }
            Err(v) => {
                let msg = v.to_string();
                prop_assert!(msg.starts_with("key '"), "{}", msg);
                // The same config written to a file fails to load with that key named.
                let err = Files::default()
                    .with("canonical.toml", &c.to_toml())
                    .load("canonical.toml")
                    .expect_err("invalid config loaded");
                prop_assert!(err.to_string().starts_with("board-configs/canonical.toml: "), "{}", err);
            }
        }
    }

    #[test]
    fn bucket_count_is_the_smallest_power_of_two_holding_the_slots(
        data_pages in 1u64..(1 << 24),
        k_log in 0u32..7,
        factor in 1u32..=8,
    ) {
        let mut c = boards::ZCU106;
        c.pages.sizes = PageSizes::EMPTY.with(4096);
        c.regions.data.size = data_pages * 4096;
        c.page_table.slots_per_bucket = 1 << k_log;
        c.page_table.slot_factor = factor;
        let k = u64::from(c.page_table.slots_per_bucket);
        let buckets = c.bucket_count();
        prop_assert!(buckets.is_power_of_two());
        prop_assert_eq!(c.page_table_slots_needed(), u64::from(factor) * data_pages);
        prop_assert!(buckets * k >= c.page_table_slots_needed());
        prop_assert!(buckets == 1 || (buckets / 2) * k < c.page_table_slots_needed());
        prop_assert_eq!(c.page_table_bytes(), buckets * k * 16);
        prop_assert_eq!(1u64 << c.bucket_index_bits(), buckets);
    }
}

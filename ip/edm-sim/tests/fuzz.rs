//! Property tests of the parsers that read files. CDFs: arbitrary text never panics the
//! parser, and whatever it accepts is a distribution every scheme simulates to the last byte.
//! CSV traces: arbitrary text never panics, mutated records fail naming the line and the field
//! (or parse to sane records that render back to themselves), and well-formed traces round-trip
//! byte for byte and simulate to the last byte in both metrics.

use edm_pim::Priority;
use edm_sim::workload::MAX_MESSAGE_BYTES;
use edm_sim::{
    generate, paper, run_scheme, trace, Kind, Scheme, SimConfig, SimError, SizeCdf, Sizes,
    WorkloadSpec,
};
use proptest::prelude::*;

/// Numbers a CDF line may hold, the awkward ones included.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("1e300".to_string()),
        Just("1.0000001".to_string()),
        Just("1".to_string()),
        Just("1e6".to_string()),
        (0.0f64..2.0).prop_map(|x| format!("{x}")),
        (1u32..50).prop_map(|x| x.to_string()),
        "[0-9a-z.e+-]{0,6}",
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (number(), number()).prop_map(|(a, b)| format!("{a} 1 {b}")),
        1 => (number(), number(), number()).prop_map(|(a, b, c)| format!("{a} {b} {c} 7")),
        1 => Just("# comment".to_string()),
        1 => Just(String::new()),
        1 => number(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        if let Err(e) = SizeCdf::parse("fuzz", &text, 1460) {
            prop_assert!(e.to_string().contains("CDF `fuzz`"), "{e}");
        }
    }

    #[test]
    fn accepted_cdfs_are_valid_and_simulate(
        lines in prop_oneof![
            proptest::collection::vec(line(), 0..6),
            // Well-formed ones (sizes in packets, probabilities rising to 1), so the
            // simulation below runs on many cases.
            proptest::collection::vec((0.01f64..40.0, 0.0f64..1.0), 1..5).prop_map(|mut v| {
                v.sort_by(|a, b| a.1.total_cmp(&b.1));
                v.last_mut().unwrap().1 = 1.0;
                v.iter().map(|(s, c)| format!("{s} 1 {c}")).collect()
            }),
        ]
    ) {
        let text = lines.join("\n");
        let cdf = match SizeCdf::parse("fuzz", &text, 1460) {
            Ok(c) => c,
            Err(SimError::Cdf { line, .. }) => {
                prop_assert!(line <= lines.len());
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("unexpected error {e}"))),
        };
        prop_assert!(!cdf.points.is_empty());
        prop_assert!(cdf.points.windows(2).all(|w| w[0].1 <= w[1].1));
        prop_assert!((cdf.points.last().unwrap().1 - 1.0).abs() <= 1e-6);
        prop_assert!(cdf.points.iter().all(|&(b, _)| (1..=MAX_MESSAGE_BYTES).contains(&b)));
        // Simulate only what is quick to simulate (at most 64 KiB per message).
        if cdf.points.iter().any(|&(b, _)| b > 64 << 10) {
            return Ok(());
        }
        let cfg = SimConfig { nodes: 3, ..SimConfig::default() };
        let spec = WorkloadSpec {
            load: 0.5,
            write_ratio: 0.5,
            sizes: Sizes::Cdf(cdf),
            messages: 6,
            seed: 1,
        };
        let msgs = generate(&spec, &cfg).unwrap();
        for scheme in [Scheme::Edm(Priority::Srpt), Scheme::Dctcp, Scheme::Cxl] {
            let r = run_scheme(scheme, &cfg, &msgs).unwrap();
            for m in &msgs {
                prop_assert_eq!(r.delivered[m.id as usize], m.bytes);
            }
        }
    }
}

#[test]
fn sizes_beyond_a_gibibyte_are_refused_naming_the_line() {
    let e = SizeCdf::parse("big", "1 1 0.5\n1e9 1 1", 1460).unwrap_err();
    assert_eq!(
        e.to_string(),
        "CDF `big` line 2: size must be 1 byte to 1 GiB"
    );
    let cfg = SimConfig::default();
    let spec = WorkloadSpec {
        load: 0.5,
        write_ratio: 0.5,
        sizes: Sizes::Fixed(MAX_MESSAGE_BYTES + 1),
        messages: 1,
        seed: 1,
    };
    assert!(generate(&spec, &cfg)
        .unwrap_err()
        .to_string()
        .contains("1073741825"));
}

/// A CSV field: numbers, awkward numbers and junk.
fn csv_field() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..20).prop_map(|x| x.to_string()),
        Just("0".to_string()),
        Just("1".to_string()),
        Just("64".to_string()),
        Just("16".to_string()),
        Just("-1".to_string()),
        Just("18446744073709551616".to_string()),
        Just("read".to_string()),
        Just("W".to_string()),
        Just(" 3 ".to_string()),
        "[0-9a-z.\"-]{0,5}",
    ]
}

/// A well-formed record line with slot `slot` and id `id`.
fn good_record(id: u64, slot: u64) -> impl Strategy<Value = String> {
    (any::<bool>(), 0u16..8, 1u16..8, 1u64..5000).prop_map(move |(read, s, d, b)| {
        let d = (s + d) % 8;
        format!(
            "{id},{},{s},{d},{b},{},{slot}",
            u8::from(read),
            if read { 16 } else { 0 }
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn csv_arbitrary_text_never_panics(text in any::<String>()) {
        if let Err(e) = trace::parse("fuzz.csv", &text) {
            prop_assert!(e.to_string().starts_with("trace `fuzz.csv` line "), "{e}");
        }
    }

    #[test]
    fn csv_mutated_records_fail_naming_line_and_field_or_parse_sanely(
        fields in proptest::collection::vec(proptest::collection::vec(csv_field(), 5..9), 0..6)
    ) {
        let body: Vec<String> = fields.iter().map(|f| f.join(",")).collect();
        let text = format!("{}\n{}\n", trace::HEADER, body.join("\n"));
        match trace::parse("fuzz.csv", &text) {
            Ok(recs) => {
                prop_assert!(recs.len() <= fields.len());
                prop_assert!(recs.windows(2).all(|w| w[0].start_slot <= w[1].start_slot));
                prop_assert!(recs.iter().all(|r| r.src != r.dst && r.bytes > 0
                    && (r.kind == Kind::Read) == (r.rreq_bytes > 0)));
                // Accepted records render to text that parses to the same records.
                prop_assert_eq!(trace::parse("again", &trace::render(&recs)).unwrap(), recs);
            }
            Err(SimError::Trace { line, why, .. }) => {
                prop_assert!(line >= 2 && line <= fields.len() + 1, "line {line}: {why}");
                prop_assert!(why.contains("field") || why.contains("fields"), "{why}");
            }
            Err(e) => return Err(TestCaseError::fail(format!("unexpected error {e}"))),
        }
    }

    #[test]
    fn csv_well_formed_traces_round_trip_and_simulate(
        recs in proptest::collection::vec((0u64..3).prop_flat_map(|gap| good_record(0, gap)), 1..12)
    ) {
        // Renumber ids and make slots non-decreasing.
        let mut slot = 0u64;
        let lines: Vec<String> = recs.iter().enumerate().map(|(i, l)| {
            let cols: Vec<&str> = l.split(',').collect();
            slot += cols[6].parse::<u64>().unwrap();
            format!("{i},{},{},{},{},{},{slot}", cols[1], cols[2], cols[3], cols[4], cols[5])
        }).collect();
        let text = format!("{}\n{}\n", trace::HEADER, lines.join("\n"));
        let parsed = trace::parse("ok.csv", &text).unwrap();
        prop_assert_eq!(trace::render(&parsed), text);
        let msgs = trace::to_messages("ok.csv", &parsed, 8).unwrap();
        let cfg = SimConfig { nodes: 8, ..SimConfig::default() };
        for scheme in [Scheme::Edm(Priority::Srpt), Scheme::Cxl] {
            let r = run_scheme(scheme, &cfg, &msgs).unwrap();
            for m in &msgs {
                prop_assert_eq!(r.delivered[m.id as usize], m.bytes);
            }
        }
        let pcfg = paper::PaperConfig { nodes: 8, run_to_completion: true, ..Default::default() };
        let run = paper::run_edm(&pcfg, &parsed).unwrap();
        prop_assert!(run.legs.iter().all(|l| l.done.is_some()));
        prop_assert!(run.summary().mean >= 1.0);
    }
}

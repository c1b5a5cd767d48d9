//! Dependencies point one way: every workspace crate sits in a layer of the
//! top README's "Crate order" table and uses only crates of lower layers.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The README's table: crate name -> layer.
fn layers(readme: &str) -> BTreeMap<String, u32> {
    let section = readme
        .split("## Crate order")
        .nth(1)
        .expect("README.md has a '## Crate order' section");
    let mut out = BTreeMap::new();
    for line in section.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        for name in cells[2].split(',') {
            let name = name.trim().trim_matches('`');
            if !name.is_empty() {
                assert!(
                    out.insert(name.to_string(), layer).is_none(),
                    "{name} is listed twice in the crate order"
                );
            }
        }
    }
    out
}

/// Workspace crates and their dependencies on workspace crates, from
/// `cargo metadata`: (crate, dependency, kind).
fn edges(root: &Path) -> (Vec<String>, Vec<(String, String, String)>) {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let pkgs = v["packages"].as_array().expect("packages");
    let names: Vec<String> = pkgs
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    let mut e = Vec::new();
    for p in pkgs {
        let from = p["name"].as_str().unwrap();
        for d in p["dependencies"].as_array().unwrap() {
            let to = d["name"].as_str().unwrap();
            if names.iter().any(|n| n == to) && to != from {
                let kind = d["kind"].as_str().unwrap_or("normal").to_string();
                e.push((from.to_string(), to.to_string(), kind));
            }
        }
    }
    (names, e)
}

#[test]
fn every_dependency_points_down_the_crate_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let table = layers(&std::fs::read_to_string(root.join("README.md")).unwrap());
    let (names, deps) = edges(root);
    let mut bad = Vec::new();
    for n in &names {
        if !table.contains_key(n) {
            bad.push(format!("{n}: not in README.md's crate order"));
        }
    }
    for (from, to, kind) in &deps {
        if let (Some(a), Some(b)) = (table.get(from), table.get(to)) {
            if b >= a {
                bad.push(format!(
                    "{from} (layer {a}) has a {kind} dependency on {to} (layer {b})"
                ));
            }
        }
    }
    assert!(deps.len() > 20, "only {} workspace edges found", deps.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_table_parser_reads_rows_and_stops_at_the_next_section() {
    let md = "## Crate order\n\n| layer | crates |\n|---|---|\n| 0 | `a`, `b` |\n| 2 | `c` |\n\n## Next\n| 9 | `z` |\n";
    let t = layers(md);
    assert_eq!(t.len(), 3);
    assert_eq!((t["a"], t["b"], t["c"]), (0, 0, 2));
}

//! Docs that cannot drift: every relative link in a Markdown file of the
//! repository, and every repository path quoted in backticks (`ip/...`,
//! `host-sdk/...`), names a file or directory that exists.

use std::path::{Path, PathBuf};

/// Directories that hold build output or vendored trees, not our docs.
const SKIP_DIRS: &[&str] = &["target", ".git", "node_modules", "sim_build", "__pycache__"];

/// Top-level directories a quoted repository path starts with.
const TOPS: &[&str] = &[
    "host-sdk/",
    "ip/",
    "firmware-arm/",
    "bitstream/",
    "board-configs/",
    "ci/",
    "tests/",
    ".ci/",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
        .to_path_buf()
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with("sim_build") {
                markdown_files(&p, out);
            }
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// Targets of `[text](target)` links that point into the repository.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let is_url = target.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_lowercase())
        });
        if !target.is_empty() && !target.contains(char::is_whitespace) && !is_url {
            if let Some(path) = target.split('#').next().filter(|p| !p.is_empty()) {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// Repository paths quoted in backticks (no wildcards or placeholders).
fn quoted_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|t| t.trim_end_matches(['.', ',', ':', ';']))
        .filter(|t| TOPS.iter().any(|top| t.starts_with(top)))
        .filter(|t| !t.contains(|c: char| c.is_whitespace() || "*{}<>$[]|".contains(c)))
        // `path:line` and `path::item` name the file.
        .map(|t| t.split(':').next().unwrap_or(t).to_string())
        .collect()
}

#[test]
fn every_link_and_quoted_path_in_the_docs_exists() {
    let root = repo_root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(
        files.len() > 10,
        "found only {} Markdown files",
        files.len()
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let here = f.parent().unwrap();
        for l in relative_links(&text) {
            checked += 1;
            if !here.join(&l).exists() {
                broken.push(format!("{}: link {l}", f.display()));
            }
        }
        for p in quoted_paths(&text) {
            checked += 1;
            if !root.join(&p).exists() && !here.join(&p).exists() {
                broken.push(format!("{}: path `{p}`", f.display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} links and paths checked");
    assert!(
        broken.is_empty(),
        "{} broken of {checked}:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_scanners_find_what_they_should() {
    let md = "see [a](../x/y.md#sec), [web](https://e.x/a), [top](#here) and \
              `ip/fastpath/rtl/README.md`, `host-sdk/wire/src/clio.rs:40`, `ip/*/tb/run.sh`, \
              `cargo test`.";
    assert_eq!(relative_links(md), vec!["../x/y.md"]);
    assert_eq!(
        quoted_paths(md),
        vec!["ip/fastpath/rtl/README.md", "host-sdk/wire/src/clio.rs"]
    );
}

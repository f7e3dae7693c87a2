//! ARCH-1 (issue 19 item 6): REQUIREMENTS.md lists every requirement id the code and docs
//! cite — `CMP-6` in a comment or doc, `cmp_6_…` at the start of a Rust test's name or a
//! JS test's title — so a reader can look up what a citation means.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const PREFIXES: [&str; 15] = ["CORE", "LLM", "CMP", "MEM", "SUB", "ISO", "FFI", "NAPI", "STORE", "OHOS", "PERF", "REL", "DX", "PAR", "ARCH"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Ids written `PREFIX-N` (N of one or two digits, not part of a longer word or number).
fn upper_ids(text: &str, out: &mut BTreeSet<String>) {
    let bytes = text.as_bytes();
    for prefix in PREFIXES {
        let mut from = 0;
        while let Some(at) = text[from..].find(prefix).map(|i| i + from) {
            from = at + prefix.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let rest = &bytes[at + prefix.len()..];
            if rest.first() != Some(&b'-') {
                continue;
            }
            let digits = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            let after = rest.get(1 + digits);
            if (1..=2).contains(&digits) && !after.is_some_and(|b| b.is_ascii_alphanumeric()) {
                out.insert(format!("{prefix}-{}", std::str::from_utf8(&rest[1..1 + digits]).unwrap()));
            }
        }
    }
}

/// Ids leading a test name: `prefix_N_` repeated (`store_1_store_4_…`).
fn lower_ids(name: &str, out: &mut BTreeSet<String>) {
    let mut parts = name.split('_').peekable();
    while let Some(word) = parts.next() {
        let upper = word.to_ascii_uppercase();
        let Some(n) = parts.peek().filter(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit())) else {
            break;
        };
        if !PREFIXES.contains(&upper.as_str()) {
            break;
        }
        out.insert(format!("{upper}-{n}"));
        parts.next();
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | "libs" | "corpus" | "artifacts" | ".git") {
                walk(&path, files);
            }
        } else if [".rs", ".c", ".h", ".js", ".ts", ".ets", ".sh", ".md", ".json5", ".py"].iter().any(|e| name.ends_with(e)) {
            files.push(path);
        }
    }
}

#[test]
fn arch_1_every_cited_requirement_id_is_in_the_glossary() {
    let glossary = std::fs::read_to_string(root().join("REQUIREMENTS.md")).unwrap();
    let mut listed = BTreeSet::new();
    for line in glossary.lines().filter(|l| l.starts_with("| ")) {
        upper_ids(line.split('|').nth(1).unwrap_or_default(), &mut listed);
    }
    assert!(listed.len() >= 80, "REQUIREMENTS.md lists {} ids", listed.len());

    let mut files = Vec::new();
    for dir in ["src", "bindings", "tests", "include", "ohos", "scripts", "examples", "benches", "fuzz"] {
        walk(&root().join(dir), &mut files);
    }
    for doc in ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", "RELIABILITY.md"] {
        files.push(root().join(doc));
    }
    let mut cited: BTreeSet<(String, String)> = BTreeSet::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let shown = file.strip_prefix(root()).unwrap_or(file).display().to_string();
        let mut ids = BTreeSet::new();
        upper_ids(&text, &mut ids);
        for line in text.lines() {
            let line = line.trim_start();
            let name = line
                .strip_prefix("fn ")
                .or_else(|| line.strip_prefix("async fn "))
                .or_else(|| line.strip_prefix("test('"))
                .or_else(|| line.strip_prefix("it('"));
            if let Some(name) = name {
                lower_ids(name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or_default(), &mut ids);
            }
        }
        cited.extend(ids.into_iter().map(|id| (id, shown.clone())));
    }
    assert!(cited.len() > 100, "the scan found {} citations", cited.len());
    let missing: Vec<_> = cited.iter().filter(|(id, _)| !listed.contains(id)).collect();
    assert!(missing.is_empty(), "cited but not in REQUIREMENTS.md: {missing:?}");
}

#[test]
fn arch_1_the_id_scanner_reads_both_spellings() {
    let mut ids = BTreeSet::new();
    upper_ids("CMP-6, (STORE-2) ISO-3166 XCMP-1 CMP-12a STORE-27182818 SUB-9.", &mut ids);
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), ["CMP-6", "STORE-2", "SUB-9"]);
    let mut ids = BTreeSet::new();
    lower_ids("store_1_store_4_migrated_titles", &mut ids);
    lower_ids("perf_2_a_host", &mut ids);
    lower_ids("helper_1_x", &mut ids);
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), ["PERF-2", "STORE-1", "STORE-4"]);
}

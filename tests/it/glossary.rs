//! ARCH-1 (issue 19 item 6): REQUIREMENTS.md lists every requirement id the code and docs
//! cite — `CMP-6` in a comment or doc, `cmp_6_…` at the start of a Rust test's name or a
//! JS test's title — so a reader can look up what a citation means.
//!
//! Issue 28 item 13: every id has a test named after it, and REQUIREMENTS.md's count and
//! listing of those tests ("Tests by requirement", written by scripts/gen-requirements.py)
//! is what the test names say now — recomputed here by the generator's rules (its
//! docstring): a Rust `#[test]` / `#[tokio::test]` fn named `prefix_n_…` under src/,
//! bindings/, tests/ or examples/, a JS `test('…')` / `it('…')` (a `.js` file there, or an
//! ohosTest `*.test.ets` under ohos/) whose title starts with that spelling or names
//! `PREFIX-N`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const PREFIXES: [&str; 23] =
    ["CORE", "LLM", "CMP", "MEM", "SUB", "ISO", "FFI", "NAPI", "STORE", "OHOS", "PERF", "REL", "DX", "PAR", "ARCH", "COST", "WIRE", "IMG", "THINK", "BND", "TOOL", "CHAT", "MCP"];
const TESTS_HEADING: &str = "## Tests by requirement";
const REGENERATE: &str = "regenerate it: python3 scripts/gen-requirements.py";

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

// ---------------------------------------------------------------- tests per id (issue 28 item 13)

/// The ids of REQUIREMENTS.md's tables, in order, with the test count each row states.
fn listed_rows(glossary: &str) -> Vec<(String, String)> {
    let table = glossary.split(TESTS_HEADING).next().unwrap_or_default();
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| id "))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            (cells[0].to_string(), cells.last().copied().unwrap_or_default().to_string())
        })
        .collect()
}

/// The test fns of a Rust file (an attribute `#[test]` / `#[tokio::test…]`, then the
/// first line that is no attribute, comment or blank: `fn name`).
fn rust_tests(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("#[test]") || line.starts_with("#[tokio::test") {
            pending = true;
            continue;
        }
        if !pending || line.is_empty() || line.starts_with("#[") || line.starts_with("//") {
            continue;
        }
        pending = false;
        let mut rest = line;
        if let Some(r) = rest.strip_prefix("pub") {
            rest = r.strip_prefix('(').and_then(|r| r.split_once(')')).map_or(r, |(_, r)| r).trim_start();
        }
        rest = rest.strip_prefix("async ").map_or(rest, str::trim_start);
        if let Some(r) = rest.strip_prefix("fn ") {
            let name: String = r.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The titles of a JS file's `test(…)` / `it(…)` calls (a string literal first, unescaped;
/// a backtick in a title is shown as `'`).
fn js_tests(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("test(").or_else(|| line.strip_prefix("it(")) else { continue };
        let mut chars = rest.trim_start().chars();
        let Some(quote) = chars.next().filter(|q| "'\"`".contains(*q)) else { continue };
        let mut title = String::new();
        while let Some(c) = chars.next() {
            match c {
                c if c == quote => break,
                '\\' => title.extend(chars.next()),
                c => title.push(c),
            }
        }
        out.push(title.replace('`', "'"));
    }
    out
}

/// The ids a test carries: a Rust name's leading `prefix_n_`s; a JS title's leading ones
/// (first word) and every `PREFIX-N` in it.
fn test_ids(name: &str, js: bool) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    if js {
        lower_ids(name.split_whitespace().next().unwrap_or_default(), &mut ids);
        upper_ids(name, &mut ids);
    } else {
        lower_ids(name, &mut ids);
    }
    ids
}

fn walk_tests(root: &Path, dir: &Path, ohos: bool, found: &mut BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | "oh_modules" | "fixtures" | ".git") {
                walk_tests(root, &path, ohos, found);
            }
            continue;
        }
        let js = if ohos { name.ends_with(".test.ets") } else { name.ends_with(".js") };
        if !(js || (!ohos && name.ends_with(".rs"))) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        for test in if js { js_tests(&text) } else { rust_tests(&text) } {
            for id in test_ids(&test, js) {
                found.entry(id).or_default().entry(rel.clone()).or_default().insert(test.clone());
            }
        }
    }
}

/// id → file → the tests in it carrying the id, over the generator's directories.
fn tests_by_id(root: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut found = BTreeMap::new();
    for dir in ["src", "bindings", "tests", "examples", "ohos"] {
        walk_tests(root, &root.join(dir), dir == "ohos", &mut found);
    }
    found
}

/// The "Tests by requirement" section as the generator writes it, for `ids` in order.
fn render_tests(ids: &[String], found: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> String {
    let mut out = String::new();
    for id in ids {
        out.push_str(&format!("\n### {id}\n\n"));
        let files = found.get(id).cloned().unwrap_or_default();
        if files.is_empty() {
            out.push_str("- none\n");
        }
        for (file, tests) in &files {
            let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
            out.push_str(&format!("- `{file}`: {}\n", names.join(", ")));
        }
    }
    out
}

#[test]
fn arch_1_every_requirement_id_has_a_test_and_requirements_md_lists_them() {
    let glossary = std::fs::read_to_string(root().join("REQUIREMENTS.md")).unwrap();
    let rows = listed_rows(&glossary);
    assert!(rows.len() >= 100, "REQUIREMENTS.md lists {} ids", rows.len());
    // Every prefix the tables use is one the scanners know (COST, WIRE, IMG included).
    let prefixes: BTreeSet<&str> = rows.iter().filter_map(|(id, _)| id.split_once('-').map(|(p, _)| p)).collect();
    let unknown: Vec<_> = prefixes.iter().filter(|p| !PREFIXES.contains(p)).collect();
    assert!(unknown.is_empty(), "REQUIREMENTS.md uses prefixes the glossary does not scan for: {unknown:?}");
    let generator = std::fs::read_to_string(root().join("scripts/gen-requirements.py")).unwrap();
    let theirs = generator.lines().find(|l| l.starts_with("PREFIXES = ")).unwrap_or_default();
    let ours: Vec<String> = PREFIXES.iter().map(|p| format!("'{p}'")).collect();
    assert_eq!(theirs, format!("PREFIXES = [{}]", ours.join(", ")), "scripts/gen-requirements.py scans other prefixes");

    let found = tests_by_id(&root());
    let untested: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).filter(|id| !found.contains_key(*id)).collect();
    assert!(untested.is_empty(), "requirement ids no test is named after (name one `core_1_…`, or 'CORE-1 …' in JS): {untested:?}");
    let stale: Vec<String> = rows
        .iter()
        .filter_map(|(id, count)| {
            let n: usize = found.get(id).map_or(0, |files| files.values().map(BTreeSet::len).sum());
            (count != &n.to_string()).then(|| format!("{id}: the table says {count} tests, the names say {n}"))
        })
        .collect();
    assert!(stale.is_empty(), "REQUIREMENTS.md's test counts are stale ({REGENERATE}):\n{}", stale.join("\n"));
    let ids: Vec<String> = rows.into_iter().map(|(id, _)| id).collect();
    let listing = glossary.split_once(TESTS_HEADING).map(|(_, rest)| rest).unwrap_or_default();
    let listing = listing.split_once("\n### ").map(|(_, rest)| format!("\n### {rest}")).unwrap_or_default();
    let expected = render_tests(&ids, &found);
    if listing != expected {
        let differ: Vec<&String> = ids
            .iter()
            .filter(|id| listing.split(&format!("\n### {id}\n")).nth(1).map(|s| s.split("\n### ").next()) != expected.split(&format!("\n### {id}\n")).nth(1).map(|s| s.split("\n### ").next()))
            .collect();
        panic!("REQUIREMENTS.md's \"{TESTS_HEADING}\" is stale for {differ:?} ({REGENERATE})");
    }
}

#[test]
fn arch_1_the_test_name_scanner_reads_rust_and_js_tests() {
    let rust = "#[test]\nfn core_1_a() {}\n#[tokio::test(flavor = \"multi_thread\")]\n#[cfg_attr(miri, ignore)]\n// note\nasync fn store_1_store_4_b() {}\nfn cmp_6_not_a_test() {}\n#[test]\npub(crate) fn helper_x() {}\n";
    assert_eq!(rust_tests(rust), ["core_1_a", "store_1_store_4_b", "helper_x"]);
    let js = "test('COST-1 COST-2 sums; CMP-6 too', () => {});\n  it(\"cmp_12 model_request\", x);\ntest(`img_1_img_2_a (${f})`, () => {});\ntest('a \\'quoted\\' CORE-4x title');\nconst t = test;\n";
    let titles = js_tests(js);
    assert_eq!(titles, ["COST-1 COST-2 sums; CMP-6 too", "cmp_12 model_request", "img_1_img_2_a (${f})", "a 'quoted' CORE-4x title"]);
    let ids: Vec<BTreeSet<String>> = titles.iter().map(|t| test_ids(t, true)).collect();
    let show = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
    assert_eq!(show(&ids[0]), ["CMP-6", "COST-1", "COST-2"]);
    assert_eq!(show(&ids[1]), ["CMP-12"]);
    assert_eq!(show(&ids[2]), ["IMG-1", "IMG-2"]);
    assert!(ids[3].is_empty());
    assert_eq!(show(&test_ids("store_1_store_4_b", false)), ["STORE-1", "STORE-4"]);
}

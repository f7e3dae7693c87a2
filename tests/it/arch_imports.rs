//! ARCH-1 (issue 19 item 6): each module imports only what ARCHITECTURE.md's import table
//! says, arrows point down the layers, no two files import each other (directly or round a
//! circle) in any of the three crates, and no source file is over 600 lines.
//!
//! The graph is read from the source text: every `crate::…`, `super::…`, `self::…` path (in
//! `use` trees and inline) is resolved to the file that defines it, following `pub use`
//! re-exports of a `mod.rs`/`lib.rs` to the child that really holds the item. A `pub use`
//! is not itself an arrow (a directory re-exporting its children is its shape, not a
//! dependency); `#[cfg(test)]` modules and `*_tests.rs` files are left out. Run with
//! `ARCH_REPORT=1 cargo test --test it arch_1 -- --nocapture` to print the graph.
//!
//! ARCH-2 (issue 26 item 2): every function of the three crates' non-test source is at
//! most 80 lines long and nests blocks at most 4 deep — how both are measured is written
//! down at "function sizes" below.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------- tokens

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Punct(char),
}

/// Tokens of Rust source with comments, strings and chars removed.
fn tokenize(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r' && (b.get(i + 1) == Some(&b'#') || b.get(i + 1) == Some(&b'"')) && !prev_ident(b, i) {
            // raw string r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(Tok::Ident("r".into()));
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == b'\'' {
            // a char literal ('a', '\n', '\u{..}') or a lifetime ('a)
            if b.get(i + 2) == Some(&b'\'') {
                i += 3;
            } else if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                i += 1; // lifetime: the identifier follows
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[s..i].to_string()));
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push(Tok::Path);
            i += 2;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(c as char));
            i += 1;
        }
    }
    out
}

fn prev_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Drops `#[cfg(test)]` items (a `mod` with its block or `;`, or a `use`).
fn drop_test_items(toks: Vec<Tok>) -> Vec<Tok> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    let is = |t: &Tok, s: &str| matches!(t, Tok::Ident(x) if x == s);
    while i < toks.len() {
        let cfg_test = toks[i] == Tok::Punct('#')
            && toks.get(1 + i) == Some(&Tok::Punct('['))
            && toks.get(2 + i).is_some_and(|t| is(t, "cfg"))
            && toks.get(3 + i) == Some(&Tok::Punct('('))
            && toks.get(4 + i).is_some_and(|t| is(t, "test"))
            && toks.get(5 + i) == Some(&Tok::Punct(')'))
            && toks.get(6 + i) == Some(&Tok::Punct(']'));
        if !cfg_test {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        // skip the attribute, further attributes, then the item up to `;` or its block
        i += 7;
        let mut depth = 0;
        while i < toks.len() {
            match &toks[i] {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                Tok::Punct(';') if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------- paths

/// One path a file names, and whether it came from a `pub use` (a re-export).
struct Named {
    path: Vec<String>,
    reexport: bool,
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// Expands a use tree starting at `toks[*i]` into full paths.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(s)) if s == "as" => {
                *i += 2;
                out.push(path);
                return;
            }
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                *i += 1;
                if toks.get(*i) == Some(&Tok::Path) {
                    *i += 1;
                } else {
                    if toks.get(*i).and_then(|t| ident(Some(t))) == Some("as") {
                        *i += 2;
                    }
                    out.push(path);
                    return;
                }
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push(path);
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        None => return,
                        _ => {
                            let mut sub = Vec::new();
                            use_tree(toks, i, path.clone(), &mut sub);
                            // `self` inside braces names the prefix itself
                            for mut p in sub {
                                if p.last().is_some_and(|s| s == "self") {
                                    p.pop();
                                }
                                out.push(p);
                            }
                        }
                    }
                }
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// Every path a file names: use trees (flagged when `pub`) and inline `crate::`/`super::`
/// /`self::`/`arkagent::` chains.
fn named_paths(toks: &[Tok]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if ident(toks.get(i)) == Some("use") {
            // `pub use` / `pub(crate) use`
            let reexport = i >= 1 && (ident(toks.get(i - 1)) == Some("pub") || (i >= 4 && ident(toks.get(i - 4)) == Some("pub") && toks.get(i - 1) == Some(&Tok::Punct(')'))));
            let reexport = reexport && !(i >= 4 && toks.get(i - 1) == Some(&Tok::Punct(')')) && ident(toks.get(i - 2)) != Some("crate") && ident(toks.get(i - 2)) != Some("super"));
            i += 1;
            if toks.get(i) == Some(&Tok::Path) {
                i += 1;
            }
            let mut paths = Vec::new();
            use_tree(toks, &mut i, Vec::new(), &mut paths);
            out.extend(paths.into_iter().map(|path| Named { path, reexport }));
            continue;
        }
        let head = ident(toks.get(i));
        let after_path = i == 0 || toks.get(i - 1) != Some(&Tok::Path);
        if after_path && matches!(head, Some("crate" | "super" | "self" | "arkagent")) && toks.get(i + 1) == Some(&Tok::Path) {
            let mut path = vec![head.unwrap_or_default().to_string()];
            let mut j = i + 1;
            while toks.get(j) == Some(&Tok::Path) {
                match toks.get(j + 1) {
                    Some(Tok::Ident(s)) => {
                        path.push(s.clone());
                        j += 2;
                    }
                    _ => break,
                }
            }
            out.push(Named { path, reexport: false });
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------- crates

/// A module (one file) of a crate.
struct Module {
    file: PathBuf,
    lines: usize,
    named: Vec<Named>,
}

struct Crate {
    name: &'static str,
    /// module path ("" for the root) → module
    modules: BTreeMap<String, Module>,
}

fn join(parts: &[String]) -> String {
    parts.join("::")
}

fn load_crate(name: &'static str, src: &Path) -> Option<Crate> {
    if !src.join("lib.rs").exists() {
        return None;
    }
    let mut modules = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            if stem.ends_with("_tests") || stem == "tests" {
                continue; // unit tests in sibling files (codex-rs style)
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut segs: Vec<String> = rel.parent().unwrap().components().map(|c| c.as_os_str().to_string_lossy().to_string()).collect();
            let dir_module = stem == "mod" || (stem == "lib" && segs.is_empty());
            if !dir_module {
                segs.push(stem);
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let toks = drop_test_items(tokenize(&text));
            modules.insert(join(&segs), Module { file: path.clone(), lines: text.lines().count(), named: named_paths(&toks) });
        }
    }
    Some(Crate { name, modules })
}

impl Crate {
    /// The absolute module path a path names from module `at`, and the rest of it.
    fn absolute(&self, at: &str, path: &[String]) -> Option<Vec<String>> {
        let here: Vec<String> = if at.is_empty() { vec![] } else { at.split("::").map(String::from).collect() };
        let first = path.first()?;
        let mut abs = match first.as_str() {
            "crate" => vec![],
            "self" => here.clone(),
            "super" => {
                let mut p = here.clone();
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    p.pop();
                    k += 1;
                }
                p.extend(path[k..].iter().cloned());
                return Some(p);
            }
            // a child module named without `self::` (`use child::X` in a mod.rs)
            child if self.modules.contains_key(&join(&[here.clone(), vec![child.to_string()]].concat())) => {
                let mut p = here.clone();
                p.push(child.to_string());
                p.extend(path[1..].iter().cloned());
                return Some(p);
            }
            _ => return None, // another crate
        };
        abs.extend(path[1..].iter().cloned());
        Some(abs)
    }

    /// The file-module that defines what `abs` names, following `pub use` re-exports.
    fn resolve(&self, abs: &[String], depth: usize) -> Option<String> {
        let mut k = abs.len();
        while !self.modules.contains_key(&join(&abs[..k])) {
            k = k.checked_sub(1)?;
        }
        let module = join(&abs[..k]);
        let Some(item) = abs.get(k) else { return Some(module) };
        if depth > 8 {
            return Some(module);
        }
        // a re-export of `item` in that module?
        let m = &self.modules[&module];
        for named in m.named.iter().filter(|n| n.reexport) {
            if named.path.last() == Some(item) {
                if let Some(target) = self.absolute(&module, &named.path) {
                    if target != abs[..=k] {
                        return self.resolve(&target, depth + 1);
                    }
                }
            }
        }
        Some(module)
    }

    /// file-module → file-modules it imports (re-exports and a module's own descendants
    /// through them are not arrows).
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut edges = BTreeMap::new();
        for (at, m) in &self.modules {
            let set: &mut BTreeSet<String> = edges.entry(at.clone()).or_default();
            for named in m.named.iter().filter(|n| !n.reexport) {
                let Some(abs) = self.absolute(at, &named.path) else { continue };
                let Some(target) = self.resolve(&abs, 0) else { continue };
                if &target != at && !target.is_empty() {
                    set.insert(target);
                }
            }
        }
        edges
    }
}

/// Circles: the strongly connected components with more than one member (Tarjan).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        let edges = t.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T { edges, index: BTreeMap::new(), low: BTreeMap::new(), on: BTreeSet::new(), stack: Vec::new(), out: Vec::new() };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or("")
}

/// Top-level module → top-level modules it imports.
fn top_edges(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in edges {
        if from.is_empty() {
            continue;
        }
        let entry = out.entry(top(from).to_string()).or_default();
        for to in tos {
            if top(to) != top(from) {
                entry.insert(top(to).to_string());
            }
        }
    }
    out
}

/// The rows of ARCHITECTURE.md's import table under "## Import table": layer, module
/// cell, imports cell.
fn import_rows() -> Vec<(u32, String, String)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text.split("## Import table").nth(1).expect("ARCHITECTURE.md has an '## Import table' section");
    let section = section.split("\n## ").next().unwrap();
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let Ok(layer) = cells[0].parse::<u32>() else { continue };
        rows.push((layer, cells[1].to_string(), cells[2].to_string()));
    }
    rows
}

/// The first `code` span of a table cell (`` `fuzzing` (feature `fuzzing`) `` → fuzzing).
fn first_code(cell: &str) -> String {
    cell.split('`').nth(1).unwrap_or(cell).to_string()
}

/// ARCHITECTURE.md's import table: `| layer | `module` | `a`, `b` |` rows.
fn import_table() -> BTreeMap<String, (u32, BTreeSet<String>)> {
    let mut table = BTreeMap::new();
    for (layer, module, imports) in import_rows() {
        let imports = imports.split(',').map(|s| s.trim().trim_matches('`').to_string()).filter(|s| !s.is_empty() && s != "—").collect();
        table.insert(first_code(&module), (layer, imports));
    }
    table
}

/// The import table's feature-gated modules: a module cell reading
/// `` `m` (feature `f`, off by default) `` → (m, f).
fn gated_in_table() -> BTreeMap<String, String> {
    import_rows()
        .into_iter()
        .filter_map(|(_, cell, _)| cell.split_once("(feature `").map(|(_, rest)| (first_code(&cell), rest.split('`').next().unwrap_or("").to_string())))
        .collect()
}

/// The top-level modules src/lib.rs declares under `#[cfg(feature = "…")]` (only
/// attributes and doc comments between the gate and `pub mod`): module → feature.
fn gated_in_lib_rs(lib_rs: &str) -> BTreeMap<String, String> {
    let mut gated = BTreeMap::new();
    let mut gate: Option<String> = None;
    for line in lib_rs.lines().map(str::trim) {
        if let Some(feature) = line.strip_prefix("#[cfg(feature = \"").and_then(|r| r.strip_suffix("\")]")) {
            gate = Some(feature.to_string());
        } else if let Some(module) = line.strip_prefix("pub mod ").and_then(|r| r.strip_suffix(';')) {
            if let Some(feature) = gate.take() {
                gated.insert(module.to_string(), feature);
            }
        } else if !(line.starts_with("#[") || line.starts_with("///")) {
            gate = None;
        }
    }
    gated
}

/// The features a manifest's `default = [...]` line turns on.
fn default_features(manifest: &str) -> Vec<String> {
    let line = manifest.lines().find(|l| l.trim_start().starts_with("default =")).unwrap_or("");
    line.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

fn crates() -> Vec<Crate> {
    [("arkagent", "src"), ("arkagent-c", "bindings/c/src"), ("arkagent-napi", "bindings/napi/src")]
        .into_iter()
        .filter_map(|(name, dir)| load_crate(name, &root().join(dir)))
        .collect()
}

fn report(c: &Crate, edges: &BTreeMap<String, BTreeSet<String>>) {
    if std::env::var_os("ARCH_REPORT").is_none() {
        return;
    }
    let tops = top_edges(edges);
    let arrows: usize = tops.values().map(BTreeSet::len).sum();
    let file_arrows: usize = edges.values().map(BTreeSet::len).sum();
    println!("== {}: {} files, {} file arrows; {} top-level modules, {} top-level arrows", c.name, c.modules.len(), file_arrows, tops.len(), arrows);
    for (from, tos) in &tops {
        println!("  {from} -> {}", tos.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    for circle in circles(edges) {
        println!("  FILE CIRCLE: {}", circle.join(" <-> "));
    }
    for circle in circles(&tops) {
        println!("  MODULE CIRCLE: {}", circle.join(" <-> "));
    }
    let mut big: Vec<_> = c.modules.values().filter(|m| m.lines > MAX_LINES).map(|m| format!("{} ({})", m.file.display(), m.lines)).collect();
    big.sort();
    for b in big {
        println!("  OVER {MAX_LINES}: {b}");
    }
}

#[test]
fn arch_1_no_import_circles_in_any_crate() {
    let mut found = Vec::new();
    for c in crates() {
        let edges = c.edges();
        report(&c, &edges);
        for circle in circles(&edges) {
            found.push(format!("{}: {}", c.name, circle.join(" <-> ")));
        }
        for circle in circles(&top_edges(&edges)) {
            found.push(format!("{} (modules): {}", c.name, circle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn arch_1_core_imports_match_the_architecture_table_and_point_down() {
    let table = import_table();
    let core = crates().into_iter().find(|c| c.name == "arkagent").unwrap();
    let tops = top_edges(&core.edges());
    let mut problems = Vec::new();
    for (module, imports) in &tops {
        let Some((layer, allowed)) = table.get(module) else {
            problems.push(format!("module `{module}` is not in ARCHITECTURE.md's import table"));
            continue;
        };
        if imports != allowed {
            problems.push(format!("`{module}` imports {imports:?} but the table says {allowed:?}"));
        }
        for to in imports {
            match table.get(to) {
                Some((l, _)) if l < layer => {}
                Some((l, _)) => problems.push(format!("`{module}` (layer {layer}) imports `{to}` (layer {l}): an arrow pointing up")),
                None => problems.push(format!("`{module}` imports `{to}`, which the table does not list")),
            }
        }
    }
    for module in table.keys() {
        if !tops.contains_key(module) {
            problems.push(format!("the table lists `{module}`, which is not a module of the core"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Issue 26 item 5: a module the table marks as feature-gated (`fuzzing`, REL-3's checks)
/// is declared under that `cfg` in src/lib.rs, its feature is not a default one, and
/// neither binding nor the demo turns it on — so it is no part of the library's public
/// build; every feature-gated top-level module is marked in the table.
#[test]
fn arch_1_feature_gated_modules_stay_out_of_the_default_build() {
    let table = gated_in_table();
    assert_eq!(table.get("fuzzing").map(String::as_str), Some("fuzzing"), "the import table marks `fuzzing` as feature-gated: {table:?}");
    let lib_rs = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    assert_eq!(gated_in_lib_rs(&lib_rs), table, "src/lib.rs's #[cfg(feature)] modules and the import table's disagree");
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let defaults = default_features(&manifest);
    assert!(defaults.contains(&"sqlite".to_string()), "the default line was not read: {defaults:?}");
    for feature in table.values() {
        assert!(manifest.lines().any(|l| l.starts_with(&format!("{feature} = ["))), "Cargo.toml defines no feature `{feature}`");
        assert!(!defaults.contains(feature), "feature `{feature}` is a default feature of the core");
        for consumer in ["bindings/c/Cargo.toml", "bindings/napi/Cargo.toml", "examples/demo/Cargo.toml"] {
            let text = std::fs::read_to_string(root().join(consumer)).unwrap();
            let deps = text.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("");
            let line = deps.lines().find(|l| l.starts_with("arkagent =")).unwrap_or("");
            assert!(!line.contains(&format!("\"{feature}\"")), "{consumer} turns on `{feature}`: {line}");
        }
    }
    // The reader itself: a gate reaches through attributes and docs, not past an item.
    let sample = "#[cfg(feature = \"x\")]\n/// doc\n#[doc(hidden)]\npub mod a;\npub mod b;\n#[cfg(feature = \"y\")]\nuse c;\npub mod d;\n";
    assert_eq!(gated_in_lib_rs(sample), BTreeMap::from([("a".to_string(), "x".to_string())]));
    assert_eq!(default_features("[features]\ndefault = [\"a\", \"b\"]\n"), ["a", "b"]);
}

#[test]
fn arch_1_no_source_file_over_600_lines() {
    let mut big = Vec::new();
    for c in crates() {
        for m in c.modules.values() {
            if m.lines > MAX_LINES {
                big.push(format!("{} has {} lines", m.file.display(), m.lines));
            }
        }
    }
    assert!(big.is_empty(), "files over {MAX_LINES} lines (move tests to a sibling *_tests.rs file or split by noun):\n{}", big.join("\n"));
}

#[test]
fn arch_1_the_graph_reader_sees_what_it_should() {
    // The reader itself: a use tree with groups, `self`, aliases and a `pub use`.
    let toks = drop_test_items(tokenize(
        "pub use crate::a::{b::{C, self}, d as e};\nuse super::f::G; // crate::x::y\nfn h() { let _ = \"crate::s::t\"; crate::i::j(); }\n#[cfg(test)]\nmod tests { use crate::k::L; }",
    ));
    let named = named_paths(&toks);
    let shown: Vec<(String, bool)> = named.iter().map(|n| (n.path.join("::"), n.reexport)).collect();
    assert_eq!(
        shown,
        vec![
            ("crate::a::b::C".to_string(), true),
            ("crate::a::b".to_string(), true),
            ("crate::a::d".to_string(), true),
            ("super::f::G".to_string(), false),
            ("crate::i::j".to_string(), false),
        ]
    );
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    edges.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    edges.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&edges), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}

// ---------------------------------------------------------------- function sizes (ARCH-2)
//
// STYLE rule 14: a function fits on a screen. Two limits, over the non-test source of the
// three crates (`src/`, `bindings/c/src/`, `bindings/napi/src/`):
//
// - **Length**: the lines from the one holding `fn` to the one holding the body's closing
//   brace, both counted (what /work/shared/tools/fn_lengths.py measures: a function
//   starts on a line that begins, after `pub`/`pub(…)`, `const`, `async`, `unsafe` and
//   `extern "ABI"`, with `fn name`; one with no body before a `;` is a declaration).
//   At most MAX_FN_LINES.
// - **Nesting**: the deepest stack of blocks open at once inside the body, the body's own
//   braces not counted. A block is a brace pair that opens code: after `if`/`else`/
//   `match`/`for`/`while`/`loop`/`unsafe`/`async`/`move`, a condition or scrutinee, `=>`,
//   `=`, `|…|`, `;` or another block. Braces that only delimit data are not blocks: a
//   struct literal or struct pattern (after a CamelCase name: `Foo {`, `Self {`,
//   `Enum::Variant {`), a macro body (after `!`, `(`, `[`, `,` or `:`, e.g. `json!({…})`)
//   and a use tree (after `::`). (A condition ending in a CamelCase unit value, `if x ==
//   Foo::Bar {`, reads as a struct literal and is undercounted.) At most MAX_NESTING.
//   A closure's body is a block of the function that holds it; a nested `fn` is measured
//   on its own as well.
//
// Test code is exempt: `#[cfg(test)]` items, `*_tests.rs` / `tests.rs` files and
// `tests/` directories. Comments, strings and char literals are blanked first.
// `ARCH_REPORT=1 cargo test --test it arch_2 -- --nocapture` prints the ten longest and the
// ten deepest.

const MAX_FN_LINES: usize = 80;
const MAX_NESTING: usize = 4;

/// One function: where it starts, its name, its length in lines and its nesting.
#[derive(Debug, Clone, PartialEq)]
struct FnSize {
    at: String,
    name: String,
    lines: usize,
    nesting: usize,
}

/// `src` with comments, string and char literals replaced by spaces (newlines kept), and
/// every `#[cfg(test)]` item blanked too.
fn blank_non_code(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i..].starts_with(b"//") {
            i = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (b[i] == b'r' || b[i..].starts_with(b"br")) && !prev_ident(b, i) && raw_string_end(b, i).is_some() {
            i = raw_string_end(b, i).unwrap_or(b.len());
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if b[i] == b'\'' {
            // 'a', '\n', '\'', '\u{1F600}' — or a lifetime, left alone.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p + 1)
            } else if b.get(i + 2) == Some(&b'\'') || (b.get(i + 1).is_some_and(|&c| c >= 0x80)) {
                src[i + 1..].chars().next().map(|c| i + 1 + c.len_utf8() + 1).filter(|&e| b.get(e - 1) == Some(&b'\''))
            } else {
                None
            };
            i = end.unwrap_or(i + 1);
            if end.is_none() {
                continue;
            }
        } else {
            i += 1;
            continue;
        }
        blank(&mut out, start, i);
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    // `#[cfg(test)]` items: the attribute, then the item up to its `;` or its block's end.
    while let Some(at) = text.find("#[cfg(test)]") {
        let bytes = text.as_bytes();
        let mut end = at;
        let mut depth = 0usize;
        while end < bytes.len() {
            match bytes[end] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end += 1;
                    break;
                }
                _ => {}
            }
            end += 1;
        }
        let blanked: String = text[at..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        text.replace_range(at..end, &blanked);
    }
    text
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one does.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + if b[i] == b'b' { 2 } else { 1 };
    let mut hashes = 0;
    while b.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// The name of the function whose `fn` begins `line` (after visibility and qualifiers).
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        if let Some(r) = r.strip_prefix('(') {
            rest = &r[r.find(')')? + 1..];
        } else if r.starts_with(char::is_whitespace) {
            rest = r;
        } else {
            return None;
        }
        rest = rest.trim_start();
    }
    for qualifier in ["const", "async", "unsafe", "extern"] {
        if let Some(r) = rest.strip_prefix(qualifier).filter(|r| r.starts_with(char::is_whitespace)) {
            rest = r.trim_start();
        }
    }
    if let Some(abi) = rest.strip_prefix('"') {
        rest = abi[abi.find('"')? + 1..].trim_start(); // `extern "C"` before blanking
    }
    let r = rest.strip_prefix("fn")?;
    let name = r.trim_start();
    if !r.starts_with(char::is_whitespace) {
        return None;
    }
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(name.len());
    (end > 0).then(|| &name[..end])
}

/// Whether a `{` after `prev` (the last token before it) opens a block (see the rules above).
fn opens_block(prev: &str) -> bool {
    let camel = prev.starts_with(|c: char| c.is_ascii_uppercase()) && prev.chars().any(|c| c.is_ascii_lowercase());
    !(camel || matches!(prev, "!" | "(" | "[" | "," | ":" | "::"))
}

/// The functions of one (blanked) source text.
fn fn_sizes(file: &str, text: &str) -> Vec<FnSize> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut offsets = Vec::with_capacity(lines.len());
    let mut offset = 0;
    for line in &lines {
        offsets.push(offset);
        offset += line.len() + 1;
    }
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        if let Some((end, nesting)) = measure_body(&text[offsets[n]..]) {
            let last = n + text[offsets[n]..offsets[n] + end].matches('\n').count();
            out.push(FnSize { at: format!("{file}:{}", n + 1), name: name.to_owned(), lines: last - n + 1, nesting });
        }
    }
    out
}

/// From a `fn` to its body's closing brace: that brace's byte offset and the body's
/// nesting; `None` for a declaration without a body.
fn measure_body(text: &str) -> Option<(usize, usize)> {
    let mut blocks: Vec<bool> = Vec::new();
    let (mut open, mut deepest) = (0usize, 0usize);
    let mut prev = String::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b';' && blocks.is_empty() {
            return None;
        }
        if c == b'{' {
            let block = !blocks.is_empty() && opens_block(&prev);
            blocks.push(block);
            open += usize::from(block);
            deepest = deepest.max(open);
        } else if c == b'}' {
            open -= usize::from(blocks.pop()?);
            if blocks.is_empty() {
                return Some((i, deepest));
            }
        }
        // The token just read (identifiers whole, `::`, `=>` and single punctuation).
        if c.is_ascii_alphanumeric() || c == b'_' {
            let end = bytes[i..].iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'_')).map_or(bytes.len(), |p| i + p);
            prev = text[i..end].to_owned();
            i = end;
            continue;
        }
        if !c.is_ascii_whitespace() {
            prev = if bytes[i..].starts_with(b"::") || bytes[i..].starts_with(b"=>") {
                i += 1;
                text[i - 1..=i].to_owned()
            } else {
                (c as char).to_string()
            };
        }
        i += 1;
    }
    None
}

/// Every function of the three crates' non-test source.
fn all_fn_sizes() -> Vec<FnSize> {
    let mut out = Vec::new();
    for dir in ["src", "bindings/c/src", "bindings/napi/src"] {
        let mut stack = vec![root().join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if path.is_dir() {
                    if name != "tests" {
                        stack.push(path);
                    }
                    continue;
                }
                if !name.ends_with(".rs") || name.ends_with("tests.rs") {
                    continue;
                }
                let text = blank_non_code(&std::fs::read_to_string(&path).unwrap());
                let shown = path.strip_prefix(root()).unwrap().display().to_string();
                out.extend(fn_sizes(&shown, &text));
            }
        }
    }
    out
}

#[test]
fn arch_2_every_function_fits_on_a_screen() {
    let sizes = all_fn_sizes();
    assert!(sizes.len() > 500, "the reader found {} functions", sizes.len());
    if std::env::var_os("ARCH_REPORT").is_some() {
        let mut by_length = sizes.clone();
        by_length.sort_by_key(|f| std::cmp::Reverse(f.lines));
        let mut by_nesting = sizes.clone();
        by_nesting.sort_by_key(|f| std::cmp::Reverse(f.nesting));
        for f in by_length.iter().take(10) {
            println!("{:5} lines {} {}", f.lines, f.at, f.name);
        }
        for f in by_nesting.iter().take(10) {
            println!("{:5} deep  {} {}", f.nesting, f.at, f.name);
        }
    }
    let over: Vec<String> = sizes
        .iter()
        .filter(|f| f.lines > MAX_FN_LINES || f.nesting > MAX_NESTING)
        .map(|f| format!("{} {}: {} lines, nesting {}", f.at, f.name, f.lines, f.nesting))
        .collect();
    assert!(over.is_empty(), "functions over {MAX_FN_LINES} lines or nested deeper than {MAX_NESTING} (split them):\n{}", over.join("\n"));
}

#[test]
fn arch_2_the_function_measure_sees_what_it_should() {
    let src = r##"
/// fn not_a_function() { { { { { } } } } }
pub(crate) async fn sample(x: u32) -> Foo {
    let s = "}{ fn inside_a_string() {";
    let c = '{';
    let v = json!({ "a": { "b": 1 } });
    if x > MAX {
        for i in 0..x {
            match i {
                0 => {
                    let f = |y: u32| {
                        Foo { a: Bar { b: y } }
                    };
                }
                _ => {}
            }
        }
    }
    Foo { a: r#"{"#.into() }
}
pub extern "C" fn exported() {}
fn declared(x: u32);
#[cfg(test)]
mod tests {
    fn ignored() { { { { { { } } } } } }
}
"##;
    let sizes = fn_sizes("sample.rs", &blank_non_code(src));
    let shown: Vec<(&str, usize, usize)> = sizes.iter().map(|f| (f.name.as_str(), f.lines, f.nesting)).collect();
    assert_eq!(shown, vec![("sample", 18, 5), ("exported", 1, 0)]);
    assert_eq!(sizes[0].at, "sample.rs:3");
    assert_eq!(fn_name("    pub unsafe extern \"C\" fn arkagent_x(a: i32) {"), Some("arkagent_x"));
    assert_eq!(fn_name("    let fnord = 1;"), None);
    assert!(!opens_block("Foo") && !opens_block("Self") && !opens_block("!") && opens_block("MAX") && opens_block("x") && opens_block(")"));
}

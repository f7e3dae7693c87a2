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

/// ARCHITECTURE.md's import table: `| layer | `module` | `a`, `b` |` rows under
/// "## Import table".
fn import_table() -> BTreeMap<String, (u32, BTreeSet<String>)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text.split("## Import table").nth(1).expect("ARCHITECTURE.md has an '## Import table' section");
    let section = section.split("\n## ").next().unwrap();
    let mut table = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let Ok(layer) = cells[0].parse::<u32>() else { continue };
        let module = cells[1].trim_matches('`').to_string();
        let imports = cells[2].split(',').map(|s| s.trim().trim_matches('`').to_string()).filter(|s| !s.is_empty() && s != "—").collect();
        table.insert(module, (layer, imports));
    }
    table
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

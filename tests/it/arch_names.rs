//! ARCH-1 (issue 28 item 11): every code name ARCHITECTURE.md cites exists in the source,
//! and its event list is the runtime's.
//!
//! The names are the document's inline code spans (`` `session/redact.rs` ``,
//! `` `Session::push_answer` ``, `` `session_committed` ``, `` `arkagent-c` ``) and the
//! code-like words of its fenced diagram (snake_case, CamelCase with a hump, `a::b`, a path
//! with `/` or a file extension). Each is checked by its shape:
//!
//! - a **path** (a `/` or a file extension): some file or directory of the repository is
//!   it or ends with it (`encode.rs`, `llm/format/mod.rs`, `callbacks/`); `*` is a
//!   wildcard, a `<name>` template is checked up to the template;
//! - **`Type::member`** (`Type.field` alike): `member` is a `fn`, `const` or `type` in an
//!   `impl` of `Type` or in trait `Type`, a variant of enum `Type` or a field of struct
//!   `Type`; a trailing `*` matches a prefix (`ChatClient::send*`);
//! - **`module::item`** (lowercase segments first): `item` is defined in a file of that
//!   module (`format::protocol`, `llm::host_call::HostCall`), then members as above;
//! - a **bare name**: an item, field, variant or module of some Rust file, a word of a
//!   string literal of the crates' source (event types, JSON fields, SQL columns), a crate
//!   name, or a name of the ArkTS / C surfaces (index.d.ts, the `.ets` files, arkagent.h).
//!
//! A span with a space, a quote or an `=` is a code fragment (a command, a JSON shape) and
//! is not checked; nor are Rust keywords, `std` types and the few product names of the
//! diagram listed in [`PROSE`]. The section "## Events" must name every event type
//! `EventKind` serializes, read from serde itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Words of the diagram that look like code but are names of products.
const PROSE: &[&str] = &["ArkTS", "DevEco", "OpenAI", "HarmonyOS", "OpenHarmony", "NetworkKit", "HiLog"];
/// Names the standard library defines.
const STD: &[&str] = &["Arc", "Box", "Clone", "Debug", "Default", "HashMap", "Mutex", "Option", "Result", "Send", "String", "Sync", "Vec"];
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "const", "dyn", "enum", "fn", "for", "if", "impl", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "type", "unsafe", "use", "where", "while",
];
/// Extensions that make a name a path.
const EXTENSIONS: &[&str] = &["rs", "md", "js", "ts", "ets", "toml", "sh", "h", "c", "py", "json", "json5", "txt"];
/// Build outputs: named, never in the repository.
const OUTPUTS: &[&str] = &["so", "a", "node", "har"];

// ---------------------------------------------------------------- Rust source

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Path, // ::
    Punct(char),
}

/// Tokens of Rust (or C / TypeScript) source; comments dropped, string contents kept.
fn tokenize(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"//") {
            i = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
        } else if b[i..].starts_with(b"/*") {
            i = src[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
        } else if (c == b'r' || c == b'b') && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) && raw_string(src, i).is_some() {
            let (text, end) = raw_string(src, i).unwrap_or_default();
            out.push(Tok::Str(text));
            i = end;
        } else if c == b'"' || c == b'`' {
            let mut j = i + 1;
            while j < b.len() && b[j] != c {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(Tok::Str(src.get(i + 1..j.min(b.len())).unwrap_or_default().to_string()));
            i = j + 1;
        } else if c == b'\'' {
            // 'a', '\n' — or a lifetime / a TypeScript string: skip the quote only.
            let char_end = if b.get(i + 1) == Some(&b'\\') { b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 3 + p) } else { None };
            i = match char_end {
                Some(end) => end,
                None if b.get(i + 2) == Some(&b'\'') => i + 3,
                None => i + 1,
            };
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[s..i].to_string()));
        } else if b[i..].starts_with(b"::") {
            out.push(Tok::Path);
            i += 2;
        } else {
            if !c.is_ascii_whitespace() {
                out.push(Tok::Punct(c as char));
            }
            i += 1;
        }
    }
    out
}

/// A raw string (`r"…"`, `r#"…"#`, `br"…"`) at `i`: its contents and where it ends.
fn raw_string(src: &str, i: usize) -> Option<(String, usize)> {
    let b = src.as_bytes();
    let mut j = i + if b[i] == b'b' { 1 } else { 0 };
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let end = src[j + 1..].find(&close).map_or(b.len(), |p| j + 1 + p);
    Some((src[j + 1..end].to_string(), (end + close.len()).min(b.len())))
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// What the source defines.
#[derive(Default)]
struct Index {
    /// Repository paths (files, and directories with a trailing `/`).
    paths: Vec<String>,
    /// Items, fields, variants, modules and parameters of every Rust file.
    defined: BTreeSet<String>,
    /// Type or trait → its methods, consts, variants and fields.
    members: BTreeMap<String, BTreeSet<String>>,
    /// A Rust file's module path in its crate (`["llm", "format", "openai"]`) → what it
    /// defines or re-exports.
    modules: Vec<(Vec<String>, BTreeSet<String>)>,
    /// The words of the string literals in the crates' source.
    string_words: BTreeSet<String>,
    /// The string literals themselves (for names like `x-api-key`).
    strings: Vec<String>,
    /// Package and dependency names.
    crates: BTreeSet<String>,
    /// Identifiers of the C header, index.d.ts and the `.ets` files.
    surfaces: BTreeSet<String>,
}

/// The body of the block opening at or after `toks[from]`: the token range inside it.
fn block_after(toks: &[Tok], from: usize) -> Option<(usize, usize)> {
    let open = (from..toks.len()).find(|&k| toks[k] == Tok::Punct('{') || toks[k] == Tok::Punct(';'))?;
    if toks[open] == Tok::Punct(';') {
        return None;
    }
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return Some((open + 1, k));
                }
            }
            _ => {}
        }
    }
    Some((open + 1, toks.len()))
}

/// The type names of an `impl` header (`impl<T> Trait for Type<T> where …`): the trait
/// (if any) and the type, each the last identifier outside angle brackets.
fn impl_names(toks: &[Tok]) -> Vec<String> {
    let mut names = Vec::new();
    let (mut angle, mut last) = (0i32, None::<String>);
    for (k, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('<') => angle += 1,
            Tok::Punct('>') if k == 0 || toks[k - 1] != Tok::Punct('-') => angle -= 1,
            Tok::Ident(s) if angle == 0 && s == "for" => names.extend(last.take()),
            Tok::Ident(s) if angle == 0 && s == "where" => break,
            Tok::Ident(s) if angle == 0 && !KEYWORDS.contains(&s.as_str()) => last = Some(s.clone()),
            _ => {}
        }
    }
    names.extend(last);
    names
}

/// Names directly inside a block (depth 1): `fn`/`const`/`type` items, and for an enum or
/// a struct its variants / fields.
fn block_members(toks: &[Tok], kind: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (mut depth, mut parens) = (0, 0);
    for k in 0..toks.len() {
        match &toks[k] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth -= 1,
            Tok::Punct('(' | '[') => parens += 1,
            Tok::Punct(')' | ']') => parens -= 1,
            Tok::Ident(s) if depth == 0 && parens == 0 => {
                let prev = if k == 0 { Some(&Tok::Punct('{')) } else { toks.get(k - 1) };
                let item = matches!(ident(prev), Some("fn" | "const" | "type"));
                let variant = kind == "enum" && matches!(prev, Some(Tok::Punct('{' | ',' | ']')));
                let field = kind == "struct" && toks.get(k + 1) == Some(&Tok::Punct(':'));
                if item || variant || field {
                    out.insert(s.clone());
                }
            }
            _ => {}
        }
    }
    out
}

impl Index {
    /// Reads one Rust file: `module` is its module path, `crate_src` whether its strings
    /// count (the crates' own source, not their tests).
    fn add_rust(&mut self, text: &str, module: Vec<String>, crate_src: bool) {
        let toks = tokenize(text);
        let mut here = BTreeSet::new();
        for (k, t) in toks.iter().enumerate() {
            match t {
                Tok::Str(s) if crate_src => {
                    self.string_words.extend(s.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).map(str::to_string));
                    self.strings.push(s.clone());
                }
                Tok::Ident(kw) => {
                    let next = ident(toks.get(k + 1));
                    if matches!(kw.as_str(), "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "mod" | "union") {
                        here.extend(next.filter(|n| !KEYWORDS.contains(n)).map(str::to_string));
                    }
                    if toks.get(k + 1) == Some(&Tok::Punct(':')) {
                        here.insert(kw.clone());
                    }
                    if kw == "macro_rules" {
                        here.extend(ident(toks.get(k + 2)).map(str::to_string));
                    }
                    let item_level = k == 0 || matches!(toks[k - 1], Tok::Punct('}' | ';' | ']' | '{')) || ident(toks.get(k - 1)) == Some("unsafe");
                    if item_level || kw != "impl" {
                        self.add_block(&toks, k, kw, next);
                    }
                    if kw == "use" && k > 0 && (ident(toks.get(k - 1)) == Some("pub") || toks.get(k - 1) == Some(&Tok::Punct(')'))) {
                        let end = (k..toks.len()).find(|&j| toks[j] == Tok::Punct(';')).unwrap_or(toks.len());
                        let leaves = (k + 1..end).filter(|&j| matches!(toks.get(j + 1), Some(Tok::Punct(',' | '}' | ';'))));
                        here.extend(leaves.filter_map(|j| ident(toks.get(j)).map(str::to_string)));
                    }
                }
                _ => {}
            }
        }
        self.defined.extend(here.iter().cloned());
        self.modules.push((module, here));
    }

    /// Members of the block an `impl`, `trait`, `enum` or `struct` at `toks[k]` opens.
    fn add_block(&mut self, toks: &[Tok], k: usize, kw: &str, next: Option<&str>) {
        let names = match kw {
            "impl" => {
                let Some(open) = (k..toks.len()).find(|&j| toks[j] == Tok::Punct('{') || toks[j] == Tok::Punct(';')) else { return };
                impl_names(&toks[k + 1..open])
            }
            "trait" | "enum" | "struct" => next.map(|n| vec![n.to_string()]).unwrap_or_default(),
            _ => return,
        };
        let Some((from, to)) = block_after(toks, k + 1) else { return };
        let members = block_members(&toks[from..to], kw);
        if matches!(kw, "enum" | "struct") {
            self.defined.extend(members.iter().cloned());
        }
        for name in names {
            self.members.entry(name).or_default().extend(members.iter().cloned());
        }
    }

    /// Indexes the repository. (String literals count only in the crates' source, so the
    /// made-up names of this file's own check stay made up.)
    fn build(root: &Path) -> Self {
        let mut index = Index::default();
        let mut files = Vec::new();
        walk(root, root, &mut files, &mut index.paths);
        for rel in &files {
            let path = root.join(rel);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if rel.ends_with(".rs") {
                let (module, crate_src) = module_path(rel);
                index.add_rust(&text, module, crate_src);
            } else if rel.ends_with("Cargo.toml") {
                index.add_manifest(&text);
            } else if rel.ends_with(".ets") || rel.ends_with(".d.ts") || rel == "include/arkagent.h" {
                index.surfaces.extend(tokenize(&text).into_iter().filter_map(|t| if let Tok::Ident(s) = t { Some(s) } else { None }));
            }
        }
        index
    }

    /// The package name and the dependency names of a manifest.
    fn add_manifest(&mut self, text: &str) {
        let mut section = "";
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
            } else if let Some((key, value)) = line.split_once(" = ") {
                if (section == "[package]" || section == "[lib]") && key == "name" {
                    let name = value.trim_matches('"');
                    self.crates.insert(name.to_string());
                    self.crates.insert(name.replace('-', "_"));
                } else if section.contains("dependencies") {
                    self.crates.insert(key.to_string());
                }
            }
        }
    }
}

/// The module path of a repository `.rs` file in its crate, and whether it is a crate's
/// non-test source.
fn module_path(rel: &str) -> (Vec<String>, bool) {
    let srcs = ["src/", "bindings/c/src/", "bindings/napi/src/", "examples/demo/src/"];
    let Some(src) = srcs.iter().find(|s| rel.starts_with(*s)) else {
        return (vec![rel.trim_end_matches(".rs").replace('/', "::")], rel.starts_with("scripts/closed-sets/"));
    };
    let mut segs: Vec<String> = rel[src.len()..].trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if matches!(segs.last().map(String::as_str), Some("mod" | "lib")) {
        segs.pop();
    }
    let test = segs.last().is_some_and(|s| s == "tests" || s.ends_with("_tests"));
    (segs, !test)
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<String>, paths: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        if path.is_dir() {
            if !(name.starts_with('.') || matches!(name.as_str(), "target" | "node_modules" | "work" | "artifacts")) {
                paths.push(format!("{rel}/"));
                walk(root, &path, files, paths);
            }
        } else {
            paths.push(rel.clone());
            files.push(rel);
        }
    }
}

// ---------------------------------------------------------------- the document

/// A name the document cites, and the line it is on.
#[derive(Debug, Clone, PartialEq)]
struct Cited {
    name: String,
    line: usize,
}

/// The code names of a Markdown text: inline code spans outside fences, and the
/// code-like words of fenced blocks.
fn cited_names(md: &str) -> Vec<Cited> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in md.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || "_:./-*".contains(c)));
            for word in words {
                let word = word.trim_matches(|c: char| ".,:-".contains(c));
                if diagram_code(word) {
                    out.push(Cited { name: word.to_string(), line: n + 1 });
                }
            }
            continue;
        }
        for (k, span) in line.split('`').enumerate() {
            if k % 2 == 1 && !span.is_empty() {
                out.push(Cited { name: span.to_string(), line: n + 1 });
            }
        }
    }
    out
}

/// Whether a diagram word is a code name: snake_case, `a::b`, a path, CamelCase with a
/// hump.
fn diagram_code(word: &str) -> bool {
    let hump = word.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let path = word.contains('/') || word.rsplit_once('.').is_some_and(|(_, ext)| EXTENSIONS.contains(&ext) || OUTPUTS.contains(&ext));
    let code = word.contains('_') || word.contains("::") || path || hump;
    code && !PROSE.contains(&word) && word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// `*` wildcards.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !(text.starts_with(first) && text.len() >= first.len() + last.len() && text.ends_with(last)) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

impl Index {
    /// Why `name` does not exist, or `None` when it does (or is not a name).
    fn problem(&self, name: &str) -> Option<String> {
        let name = name.trim_end_matches("()");
        if name.contains([' ', '"', '=', '\'']) || !name.contains(|c: char| c.is_ascii_alphanumeric()) {
            return None; // a fragment, or punctuation
        }
        let is_path = name.contains('/') || name.rsplit_once('.').is_some_and(|(_, ext)| EXTENSIONS.contains(&ext));
        if is_path || name.contains('<') && name.contains('/') {
            return self.path_problem(name);
        }
        if name.rsplit_once('.').is_some_and(|(_, ext)| OUTPUTS.contains(&ext)) {
            return None; // a build output
        }
        if name.contains('<') {
            // a generic type: each of its names
            return name.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).filter(|s| !s.is_empty()).find_map(|s| self.problem(s));
        }
        let segs: Vec<&str> = name.split("::").flat_map(|s| s.split('.')).collect();
        if segs.len() > 1 {
            return self.qualified_problem(&segs, name.contains('.'));
        }
        (!self.bare_exists(name)).then(|| format!("`{name}` is defined nowhere"))
    }

    fn path_problem(&self, name: &str) -> Option<String> {
        let name = name.split('<').next().unwrap_or(name);
        let found = self.paths.iter().any(|p| {
            if name.contains('*') {
                glob(name, p.rsplit('/').next().unwrap_or(p)) || glob(name, p) || glob(&format!("*/{name}"), p)
            } else {
                let dir = format!("{name}/");
                [name, dir.as_str()].iter().any(|n| p == n || p.ends_with(&format!("/{n}"))) || name.is_empty()
            }
        });
        (!found).then(|| format!("no file or directory `{name}`"))
    }

    /// `Type::member`, `module::item(::member)`, `Type.field`, `event.field`.
    fn qualified_problem(&self, segs: &[&str], dotted: bool) -> Option<String> {
        let upper = |s: &&str| s.starts_with(|c: char| c.is_ascii_uppercase());
        let Some(t) = segs.iter().position(upper) else {
            if dotted {
                return segs.iter().find(|s| !self.bare_exists(s)).map(|s| format!("`{s}` is defined nowhere"));
            }
            let (module, item) = segs.split_at(segs.len() - 1);
            return self.module_problem(module, item[0]);
        };
        if t > 0 {
            if let Some(problem) = self.module_problem(&segs[..t], segs[t]) {
                return Some(problem);
            }
        }
        let (owner, member) = (segs[t], segs.get(t + 1)?);
        if STD.contains(&owner) {
            return None;
        }
        if !self.defined.contains(owner) {
            return Some(format!("`{owner}` is defined nowhere"));
        }
        let members = self.members.get(owner).cloned().unwrap_or_default();
        let found = match member.strip_suffix('*') {
            Some(prefix) => members.iter().any(|m| m.starts_with(prefix)),
            None => members.contains(*member),
        };
        (!found).then(|| format!("`{owner}` has no member `{member}`"))
    }

    /// `item` is defined in (a file of) the module the `module` segments name.
    fn module_problem(&self, module: &[&str], item: &str) -> Option<String> {
        let module: Vec<String> = module.iter().map(|s| s.replace('-', "_")).filter(|s| s != "crate" && s != "arkagent" && s != "arkagent_c").collect();
        let within = |path: &[String]| module.is_empty() || path.windows(module.len()).any(|w| w == module.as_slice());
        let holders: Vec<_> = self.modules.iter().filter(|(path, _)| within(path)).collect();
        if holders.is_empty() {
            return Some(format!("no module `{}`", module.join("::")));
        }
        let found = holders.iter().any(|(_, names)| names.contains(item));
        (!found).then(|| format!("module `{}` defines no `{item}`", module.join("::")))
    }

    fn bare_exists(&self, name: &str) -> bool {
        if let Some(pattern) = name.contains('*').then_some(name) {
            return self.defined.iter().any(|d| glob(pattern, d));
        }
        if name.contains('-') {
            let word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
            return self.crates.contains(name) || self.strings.iter().any(|s| s.split(|c: char| !word(c)).any(|w| w == name));
        }
        KEYWORDS.contains(&name)
            || STD.contains(&name)
            || self.defined.contains(name)
            || self.string_words.contains(name)
            || self.crates.contains(name)
            || self.surfaces.contains(name)
    }
}

/// Every name of `md` that does not exist, with its line.
fn missing(index: &Index, md: &str) -> Vec<String> {
    cited_names(md).iter().filter_map(|c| index.problem(&c.name).map(|p| format!("line {}: {p}", c.line))).collect()
}

/// The event types `EventKind` serializes (its serde tags), read from serde's own error for
/// a tag no variant has.
fn event_types() -> Vec<String> {
    let err = serde_json::from_str::<arkagent::EventKind>(r#"{"type":"<none>"}"#).unwrap_err().to_string();
    let expected = err.split("expected one of").nth(1).unwrap_or_default();
    expected.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

fn index() -> &'static Index {
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| Index::build(&root()))
}

#[test]
fn arch_1_every_name_architecture_md_cites_exists_in_the_source() {
    let md = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let cited = cited_names(&md);
    assert!(cited.len() > 200, "the reader found only {} names", cited.len());
    let problems = missing(index(), &md);
    assert!(problems.is_empty(), "ARCHITECTURE.md names what the code does not have (redraw it from the code):\n{}", problems.join("\n"));
}

#[test]
fn arch_1_architecture_md_lists_every_event_type() {
    let md = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = md.split("\n## Events").nth(1).expect("ARCHITECTURE.md has a '## Events' section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let listed: BTreeSet<String> = cited_names(section).into_iter().map(|c| c.name).collect();
    let types = event_types();
    assert!(types.len() >= 12 && types.contains(&"session_committed".to_string()), "serde listed {types:?}");
    let unlisted: Vec<_> = types.iter().filter(|t| !listed.contains(*t)).collect();
    assert!(unlisted.is_empty(), "ARCHITECTURE.md's Events section leaves out {unlisted:?}");
}

/// The checker itself: real names pass, made-up ones of every shape are reported.
#[test]
fn arch_1_the_name_checker_catches_made_up_names() {
    let md = "\
Real: `session/redact.rs`, `Session::push_answer`, `BodyWriter::close_with`, `session_committed`,
`arkagent-c`, `llm::format::WireProtocol`, `format::protocol`, `AgentState.token_calibration`,
`ChatClient::send*`, `*_tests.rs`, `src/llm/format/<name>/`, `Arc<AgentState>`, `wire_format_names()`,
`x-api-key`, `cargo test --test it`, `]}`, `NetworkKitTransport`, `arkagent_runtime_run`.
```
 L7 session/   Session: push_input, take_back; StateView (ArkTS, DevEco) libarkagent.so
 L9 made_up_door/  NoSuchThing
```
Made up: `session/sealed.rs`, `Session::replace`, `BodyWriter::close_twice`, `sesion_committed`,
`format::no_such_fn`, `no_module::Session`, `AgentState.no_field`, `ChatClient::recv*`, `*_spec.rs`,
`src/llm/formats/<name>/`, `Arc<AgentStat>`, `arkagent-q`, `NoType::new`.
";
    let cited = cited_names(md);
    let diagram: Vec<&str> = cited.iter().filter(|c| c.line == 6 || c.line == 7).map(|c| c.name.as_str()).collect();
    assert_eq!(diagram, ["session/", "push_input", "take_back", "StateView", "libarkagent.so", "made_up_door/", "NoSuchThing"]);
    // Nothing on lines 1–4 (the real names) is reported.
    let problems = missing(index(), md);
    let expected = [
        "line 7: no file or directory `made_up_door/`",
        "line 7: `NoSuchThing` is defined nowhere",
        "line 9: no file or directory `session/sealed.rs`",
        "line 9: `Session` has no member `replace`",
        "line 9: `BodyWriter` has no member `close_twice`",
        "line 9: `sesion_committed` is defined nowhere",
        "line 10: module `format` defines no `no_such_fn`",
        "line 10: no module `no_module`",
        "line 10: `AgentState` has no member `no_field`",
        "line 10: `ChatClient` has no member `recv*`",
        "line 10: no file or directory `*_spec.rs`",
        "line 11: no file or directory `src/llm/formats/`",
        "line 11: `AgentStat` is defined nowhere",
        "line 11: `arkagent-q` is defined nowhere",
        "line 11: `NoType` is defined nowhere",
    ];
    assert_eq!(problems, expected);
    assert!(event_types().iter().any(|t| t == "run_started"));
}

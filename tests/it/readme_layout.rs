//! DX-1: the README's "## Layout", read by a stranger: each directory and file it names is
//! there and holds what the row says it holds. One test per row (the first test holds the
//! rows to the ones tested here); a row that says more than is true is kept as a test
//! `#[ignore]`d with the finding.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn exists(path: &str) -> bool {
    root().join(path).exists()
}

/// The files of `dir` (not recursive) whose names end with `ext`, sorted.
fn files(dir: &str, ext: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    names.sort();
    names
}

/// The Layout block: its rows, each the path in the first column and the row's text.
fn layout_rows() -> Vec<(String, String)> {
    let readme = read("README.md");
    let section = readme.split("\n## Layout\n").nth(1).expect("README has '## Layout'");
    let block = section.split("```text\n").nth(1).and_then(|b| b.split("\n```").next()).expect("a ```text block under '## Layout'");
    let mut rows: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        if line.starts_with(' ') {
            let (_, text) = rows.last_mut().expect("a continuation line before any row");
            text.push(' ');
            text.push_str(line.trim());
        } else {
            let (path, text) = line.split_once(' ').expect("a row: path, then text");
            rows.push((path.to_owned(), text.trim().to_owned()));
        }
    }
    rows
}

fn row(path: &str) -> String {
    layout_rows().into_iter().find(|(p, _)| p == path).map(|(_, t)| t).unwrap_or_else(|| panic!("Layout has no row {path}"))
}

#[test]
fn dx_1_layout_rows_exist_and_are_the_ones_tested_here() {
    let rows: Vec<String> = layout_rows().into_iter().map(|(p, _)| p).collect();
    let tested = ["src/", "include/", "bindings/c/", "bindings/napi/", "scripts/regen.sh", "ohos/", "examples/demo/", "tests/", "benches/", "fuzz/", "scripts/"];
    assert_eq!(rows, tested, "the Layout rows changed: test the new row's promises here");
    for path in &rows {
        let meta = std::fs::metadata(root().join(path)).unwrap_or_else(|e| panic!("Layout names {path}: {e}"));
        assert_eq!(meta.is_dir(), path.ends_with('/'), "{path}: a directory exactly when written with a slash");
    }
}

// ------------------------------------------------------------------ src/

/// The modules the src/ row lists, bottom to top.
const SRC_LAYERS: [&str; 13] = ["error", "ids", "hilog", "history", "tools", "llm", "store", "mcp", "memory", "compress", "session", "subagent", "runtime"];

/// ARCHITECTURE.md's import table: (layer, module) rows.
fn import_table() -> Vec<(u32, String)> {
    let text = read("ARCHITECTURE.md");
    let table = text.split("## Import table").nth(1).expect("ARCHITECTURE.md has '## Import table'");
    table
        .lines()
        .filter(|l| l.starts_with("| "))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let layer = cells.get(1)?.parse().ok()?;
            let module = cells.get(2)?.split('`').nth(1)?.to_owned();
            Some((layer, module))
        })
        .collect()
}

/// "src/ the core crate `arkagent`, layered bottom to top: error/ ids hilog (ground),
/// history, tools, llm, store mcp, memory, compress, session, subagent, runtime
/// (ARCHITECTURE.md has the import table; tests/it/arch_imports.rs holds the code to it)".
#[test]
fn dx_1_layout_src_is_the_core_crate_layered_bottom_to_top() {
    let text = row("src/");
    assert!(text.contains("error/ ids hilog (ground), history, tools, llm, store mcp, memory, compress, session, subagent, runtime"), "the row changed: {text}");
    let manifest = read("Cargo.toml");
    let package = manifest.split("[package]").nth(1).unwrap().split("\n[").next().unwrap();
    assert!(package.lines().any(|l| l.trim() == "name = \"arkagent\""), "the root package is not `arkagent`");
    assert!(exists("src/lib.rs") && exists("src/error/") && exists("src/ids.rs"), "src/: lib.rs, error/, ids");
    let lib = read("src/lib.rs");
    for module in SRC_LAYERS {
        assert!(exists(&format!("src/{module}/")) || exists(&format!("src/{module}.rs")), "src/ has no {module}");
        assert!(lib.lines().any(|l| l == format!("pub mod {module};")), "lib.rs does not declare {module}");
    }
    // Bottom to top: the table's layers never go down along the row's order; error and
    // ids are the ground.
    let table = import_table();
    let layer = |m: &str| table.iter().find(|(_, n)| n == m).map(|(l, _)| *l).unwrap_or_else(|| panic!("{m} is not in ARCHITECTURE.md's import table"));
    let layers: Vec<u32> = SRC_LAYERS.iter().map(|m| layer(m)).collect();
    assert!(layers.windows(2).all(|w| w[0] <= w[1]), "not bottom to top: {SRC_LAYERS:?} are on layers {layers:?}");
    assert_eq!((layer("error"), layer("ids"), layer("hilog")), (0, 0, 0), "error, ids and hilog are the ground");
    assert!(layers[3..].iter().all(|l| *l > 0), "{layers:?}");
    // Two names in one place of the list ("store mcp") share a layer.
    assert_eq!(layer("store"), layer("mcp"), "store and mcp are listed side by side");
    // tests/it/arch_imports.rs reads that table and the source.
    let arch = read("tests/it/arch_imports.rs");
    assert!(arch.contains("ARCHITECTURE.md") && arch.contains("## Import table") && arch.contains("fn arch_1_"), "arch_imports.rs does not hold the code to the table");
}

/// The src/ row's list is the crate's layers: every module of ARCHITECTURE.md's import
/// table that a default build has.
#[test]
fn dx_1_layout_src_lists_every_layer_of_the_import_table() {
    let listed: BTreeSet<&str> = SRC_LAYERS.into_iter().collect();
    let missing: Vec<String> = import_table().into_iter().map(|(_, m)| m).filter(|m| m != "fuzzing" && !listed.contains(m.as_str())).collect();
    assert!(missing.is_empty(), "README's Layout src/ row omits {missing:?}");
}

// ------------------------------------------------------------------ include/

/// "include/ arkagent.h (cbindgen) and JSON-SHAPES.md (the records' JSON, generated)".
#[test]
fn dx_1_layout_include_holds_the_cbindgen_header_and_the_generated_json_shapes() {
    let text = row("include/");
    assert_eq!(text, "arkagent.h (cbindgen) and JSON-SHAPES.md (the records' JSON, generated)", "the row changed");
    let mut names = files("include", "");
    names.retain(|n| !n.starts_with('.'));
    assert_eq!(names, ["JSON-SHAPES.md", "arkagent.h"], "include/ holds other files");
    let header = read("include/arkagent.h");
    assert!(header.lines().take(3).any(|l| l.contains("generated by cbindgen")), "arkagent.h does not say it is cbindgen's");
    assert!(read("scripts/gen-header.sh").contains("cbindgen") && exists("cbindgen.toml"), "no cbindgen run writes it");
    let shapes = read("include/JSON-SHAPES.md");
    assert!(shapes.starts_with("# JSON shapes of arkagent's records"), "JSON-SHAPES.md is not the records' JSON");
    assert!(shapes.lines().take(5).any(|l| l.contains("GENERATED by")), "JSON-SHAPES.md does not say it is generated");
    for record in ["### RunOutcome", "### UsageTotals", "### SessionSummary"] {
        assert!(shapes.contains(record), "JSON-SHAPES.md lacks {record}");
    }
}

// ------------------------------------------------------------------ bindings/c/

/// The C programs of tests/c/ a set of test sources builds: by name through programs.rs
/// (`compile_and_run("name")`, `compile("name")`) or by path (`join("tests/c/name.c")`).
fn programs_built_by(dir: &str) -> BTreeSet<String> {
    let mut sources = String::new();
    for name in files(dir, ".rs") {
        sources.push_str(&read(&format!("{dir}/{name}")));
    }
    files("tests/c", ".c")
        .into_iter()
        .map(|n| n.trim_end_matches(".c").to_owned())
        .filter(|n| ["compile_and_run(\"{n}\")", "compile(\"{n}\")", "join(\"tests/c/{n}.c\")"].iter().any(|p| sources.contains(&p.replace("{n}", n))))
        .collect()
}

/// "bindings/c/ the C ABI crate (libarkagent_c): handles, result codes, callbacks; its
/// tests/ drive the exports and build and run some of the C programs of tests/c/ (the
/// core's tests/it the others)".
#[test]
fn dx_1_layout_bindings_c_is_the_c_abi_crate_whose_tests_drive_the_exports_and_run_c_programs() {
    let text = row("bindings/c/");
    assert!(text.starts_with("the C ABI crate (libarkagent_c): handles, result codes, callbacks; its tests/ drive the exports"), "the row changed: {text}");
    let manifest = read("bindings/c/Cargo.toml");
    assert!(manifest.contains("name = \"arkagent_c\"") && manifest.contains("\"cdylib\""), "bindings/c does not build libarkagent_c");
    let header = read("include/arkagent.h");
    for (what, needle) in [("a handle", "typedef struct ArkAgentRuntime ArkAgentRuntime;"), ("result codes", "typedef enum ArkAgentResult {"), ("callbacks", "typedef void (*ArkAgentHttpSendCallback)(void *userdata")] {
        assert!(header.contains(needle), "the C ABI has no {what}");
    }
    // Its tests drive the exports (call them from Rust) and build and run C programs.
    let dir = "bindings/c/tests/c_abi";
    let sources: String = files(dir, ".rs").iter().map(|n| read(&format!("{dir}/{n}"))).collect();
    let driven: BTreeSet<&str> = sources.match_indices("ffi::arkagent_").map(|(at, _)| sources[at + 5..].split('(').next().unwrap()).collect();
    assert!(driven.len() >= 20, "bindings/c/tests drive only {driven:?}");
    let main = read(&format!("{dir}/main.rs"));
    assert!(main.contains("#[path = \"../../../../tests/c/programs.rs\"]"), "bindings/c/tests does not use tests/c/programs.rs");
    assert!(!programs_built_by(dir).is_empty(), "bindings/c/tests builds no C program");
}

/// The same row: "some of the C programs of tests/c/ (the core's tests/it the others)" —
/// between them, every program is built and run.
#[test]
fn dx_1_layout_bindings_c_tests_and_the_cores_tests_build_every_c_program_between_them() {
    let here = programs_built_by("bindings/c/tests/c_abi");
    let core = programs_built_by("tests/it");
    let all: Vec<String> = files("tests/c", ".c").into_iter().map(|n| n.trim_end_matches(".c").to_owned()).collect();
    assert!(!here.is_empty() && here.len() < all.len(), "bindings/c/tests builds {here:?} of {all:?}: not \"some\"");
    let nowhere: Vec<&String> = all.iter().filter(|n| !here.contains(*n) && !core.contains(*n)).collect();
    assert!(nowhere.is_empty(), "built by neither bindings/c/tests nor tests/it: {nowhere:?}");
    let main = read("tests/it/main.rs");
    assert!(main.contains("programs.rs"), "tests/it does not use tests/c/programs.rs");
}

// ------------------------------------------------------------------ bindings/napi/

/// "bindings/napi/ the N-API module (napi-ohos), conversions only; index.d.ts is
/// generated: the records from the core's Rust types, the classes and functions from the
/// #[napi] items and their Rust docs, the unions of the closed sets from the Rust enums, a
/// few hand lines from the `ts` blocks beside the Rust code (ARCHITECTURE.md, "What is
/// generated")".
#[test]
fn dx_1_layout_bindings_napi_is_the_napi_ohos_module_and_its_d_ts_is_generated_as_listed() {
    let text = row("bindings/napi/");
    assert!(text.contains("(ARCHITECTURE.md, \"What is generated\")"), "the row changed: {text}");
    let manifest = read("bindings/napi/Cargo.toml");
    assert!(manifest.lines().any(|l| l.starts_with("napi-ohos =")) && manifest.lines().any(|l| l.starts_with("napi-derive-ohos =")), "not built with napi-ohos");
    let napi_src: String = files("bindings/napi/src", ".rs").iter().map(|n| read(&format!("bindings/napi/src/{n}"))).collect();
    assert!(napi_src.lines().any(|l| l.trim() == "/* ts"), "no `ts` blocks beside the Rust code");
    assert!(napi_src.contains("#[napi"), "no #[napi] items");
    let arch = read("ARCHITECTURE.md");
    let generated = arch.split("## What is generated").nth(1).expect("ARCHITECTURE.md has 'What is generated'").split("\n## ").next().unwrap();
    for (what, from) in [
        ("the closed-set unions", "the Rust enums"),
        ("the records", "the core's serde types"),
        ("the module's classes, functions", "#[napi] items and their Rust `///` docs"),
        ("the rest", "the `ts` blocks of `bindings/napi/src`"),
    ] {
        let found = generated.lines().any(|l| l.starts_with("| `index.d.ts`") && l.contains(what) && l.contains(from));
        assert!(found, "ARCHITECTURE.md's 'What is generated' has no index.d.ts row: {what} from {from}");
    }
    let dts = read("ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts");
    assert!(dts.contains("Generated: this file is assembled by scripts/gen-dts.sh"), "index.d.ts does not say it is generated");
}

// ------------------------------------------------------------------ scripts/regen.sh

/// "scripts/regen.sh regenerates every generated file (index.d.ts, Index.ets's exports,
/// the keep rules, include/arkagent.h and JSON-SHAPES.md, REQUIREMENTS.md); CI fails when
/// one is stale". Each file is named by the script and written by a generator it runs;
/// `--check` exits non-zero on a stale one; scripts/test.sh (what .ci/run runs) runs the
/// check; and no other file in the places generated files live says it is generated.
#[test]
fn dx_1_layout_regen_regenerates_every_generated_file_and_ci_checks_them() {
    let text = row("scripts/regen.sh");
    assert!(text.contains("(index.d.ts, Index.ets's exports, the keep rules, include/arkagent.h and JSON-SHAPES.md, REQUIREMENTS.md)"), "the row changed: {text}");
    let regen = read("scripts/regen.sh");
    let generated = [
        "ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts",
        "ohos/arkagent/Index.ets",
        "ohos/arkagent/consumer-rules.txt",
        "include/arkagent.h",
        "include/JSON-SHAPES.md",
        "REQUIREMENTS.md",
    ];
    for file in generated {
        assert!(exists(file), "{file} is missing");
        assert!(regen.contains(file), "scripts/regen.sh does not name {file}");
    }
    for generator in ["node scripts/gen-dts.js\n", "bash scripts/gen-header.sh\n", "python3 scripts/gen-requirements.py\n"] {
        assert!(regen.contains(generator), "scripts/regen.sh does not run {generator:?}");
    }
    let check = regen.split("if ((check)); then").nth(1).expect("a --check branch").split("else").next().unwrap();
    assert!(check.contains("--check") && check.contains("exit 1"), "--check does not fail on a stale file");
    assert!(read("scripts/test.sh").lines().any(|l| l.starts_with("step ") && l.ends_with("bash scripts/regen.sh --check")), "scripts/test.sh does not run regen.sh --check");
    assert!(read(".ci/run").lines().any(|l| l.trim() == "exec bash scripts/test.sh"), "CI (.ci/run) does not run scripts/test.sh");
    // Every file that says it is generated is one of them.
    let mut claimed = Vec::new();
    let mut stack = vec![root().join("include"), root().join("ohos")];
    let mut top: Vec<PathBuf> = std::fs::read_dir(root()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !["node_modules", "oh_modules", "libs", "build", ".hvigor", ".preview"].contains(&name.as_str()) {
                    stack.push(path);
                }
            } else {
                top.push(path);
            }
        }
    }
    // Data files only: sources and configs (cbindgen.toml holds the header's banner) are
    // what generates, not what is generated.
    let data = ["md", "h", "txt", "ts", "ets", "json", "json5"];
    for path in top.into_iter().filter(|p| p.extension().is_some_and(|e| data.contains(&e.to_string_lossy().as_ref()))) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let head: String = text.lines().take(40).collect::<Vec<_>>().join("\n");
        let says = head.contains("GENERATED by") || head.contains("Do not edit") || head.contains("do not edit") || head.contains("Generated by `") || head.contains("Generated: this file");
        if says {
            claimed.push(path.strip_prefix(root()).unwrap().to_string_lossy().into_owned());
        }
    }
    let unlisted: Vec<&String> = claimed.iter().filter(|f| !generated.contains(&f.as_str())).collect();
    assert!(unlisted.is_empty(), "files that say they are generated but scripts/regen.sh's list lacks: {unlisted:?}");
    assert!(claimed.len() >= 4, "the generated-file markers were not found: {claimed:?}");
}

// ------------------------------------------------------------------ ohos/

/// "ohos/ the DevEco project: arkagent/ (the HAR: Index.ets, NetworkKitTransport,
/// index.d.ts, ohosTest) and example/ (an app with one chat page)".
#[test]
fn dx_1_layout_ohos_is_the_deveco_project_with_the_har_and_an_example_app() {
    let text = row("ohos/");
    assert_eq!(text, "the DevEco project: arkagent/ (the HAR: Index.ets, NetworkKitTransport, index.d.ts, ohosTest) and example/ (an app with one chat page)", "the row changed");
    let profile = read("ohos/build-profile.json5");
    assert!(profile.contains("\"srcPath\": \"./arkagent\"") && profile.contains("\"srcPath\": \"./example\""), "the project's modules are not arkagent/ and example/");
    assert!(exists("ohos/hvigorfile.ts") && exists("ohos/AppScope/app.json5"), "not a DevEco project");
    assert!(read("ohos/arkagent/src/main/module.json5").contains("\"type\": \"har\""), "arkagent/ is not a HAR");
    let index = read("ohos/arkagent/Index.ets");
    assert!(index.contains("export { NetworkKitTransport") && exists("ohos/arkagent/src/main/ets/NetworkKitTransport.ets"), "the HAR has no NetworkKitTransport");
    assert!(read("ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts").contains("export class AgentRuntime"), "the HAR's index.d.ts declares no AgentRuntime");
    let tests = files("ohos/arkagent/src/ohosTest/ets/test", ".test.ets");
    assert!(tests.len() >= 3, "the HAR's ohosTest holds {tests:?}");
    assert!(read("ohos/example/src/main/module.json5").contains("\"type\": \"entry\""), "example/ is not an app (entry module)");
    let pages: serde_json::Value = serde_json::from_str(&read("ohos/example/src/main/resources/base/profile/main_pages.json")).unwrap();
    assert_eq!(pages["src"], serde_json::json!(["pages/Index"]), "example/ does not have exactly one page");
    let page = read("ohos/example/src/main/ets/pages/Index.ets");
    assert!(page.contains("@Entry") && page.contains("AgentRuntime") && page.contains("TextInput") && page.contains(".run("), "example/'s page is not a chat");
}

// ------------------------------------------------------------------ examples/demo/

/// "examples/demo/ the desktop demo host".
#[test]
fn dx_1_layout_examples_demo_is_the_desktop_demo_host() {
    assert_eq!(row("examples/demo/"), "the desktop demo host");
    let manifest = read("examples/demo/Cargo.toml");
    assert!(manifest.contains("name = \"arkagent-demo\"") && manifest.contains("[[bin]]"), "examples/demo builds no demo binary");
    assert!(read("examples/demo/src/main.rs").contains("fn main("), "no main");
    assert!(read("scripts/demo.sh").contains("arkagent-demo"), "scripts/demo.sh does not run it");
}

// ------------------------------------------------------------------ tests/

/// "tests/ it/ (Rust integration), c/ (the C programs and programs.rs, which builds them),
/// js/ (Node), arkts/ (lint fixtures, netkit-sim/: the @kit.NetworkKit simulator and the
/// transport's tests)".
#[test]
fn dx_1_layout_tests_holds_it_c_js_and_arkts_as_described() {
    let text = row("tests/");
    assert!(text.starts_with("it/ (Rust integration), c/ (the C programs and programs.rs, which builds them), js/ (Node), arkts/"), "the row changed: {text}");
    // it/: this very binary.
    assert!(read("tests/it/main.rs").contains("mod readme_layout;"), "tests/it/main.rs is not the integration tests' root");
    // c/: C programs and programs.rs, which compiles them; every one of them is built by a test.
    let programs = read("tests/c/programs.rs");
    assert!(programs.contains("pub(crate) fn compile(") && programs.contains("tests/c/{name}.c"), "programs.rs does not build tests/c/*.c");
    let c_files = files("tests/c", ".c");
    assert!(c_files.len() >= 10, "{c_files:?}");
    let mut built = programs_built_by("bindings/c/tests/c_abi");
    built.extend(programs_built_by("tests/it"));
    let unbuilt: Vec<&String> = c_files.iter().filter(|n| !built.contains(n.trim_end_matches(".c"))).collect();
    assert!(unbuilt.is_empty(), "C programs no test builds: {unbuilt:?}");
    // js/: Node tests, run by scripts/test-js.sh.
    assert!(files("tests/js", ".test.js").len() >= 5, "tests/js has no Node tests");
    assert!(read("scripts/test-js.sh").contains("node --test tests/js/"), "scripts/test-js.sh does not run tests/js");
    // arkts/: lint fixtures (the known-bad files scripts/lint-arkts.sh expects to fail) and netkit-sim/.
    let bad = files("tests/arkts/bad", ".ets");
    assert!(!bad.is_empty() && read("scripts/lint-arkts.sh").contains("tests/arkts/bad/bad.ets"), "no lint fixtures: {bad:?}");
    let kits = read("tests/arkts/netkit-sim/kits.js");
    assert!(kits.contains("'@kit.NetworkKit'") && exists("tests/arkts/netkit-sim/http.js"), "netkit-sim is not a @kit.NetworkKit simulator");
    let transport_tests = read("tests/arkts/netkit-sim/transport.test.js");
    assert!(transport_tests.contains("NetworkKitTransport"), "netkit-sim has no tests of the transport");
}

// ------------------------------------------------------------------ benches/

/// The [[bench]] targets of the root manifest.
fn bench_targets() -> Vec<String> {
    let manifest = read("Cargo.toml");
    manifest.split("[[bench]]").skip(1).filter_map(|b| b.lines().find_map(|l| l.trim().strip_prefix("name = \"")).map(|n| n.trim_end_matches('"').to_owned())).collect()
}

/// "benches/ benchmarks: criterion's, and plain-timing programs where a figure needs a long
/// run or a fresh process (results in BENCHMARKS.md)": every benches/*.rs is a registered
/// bench target with its own harness; some run under criterion, the others are programs of
/// their own (no criterion); each says its results are in BENCHMARKS.md.
#[test]
fn dx_1_layout_benches_are_criterion_benchmarks_and_plain_timing_programs_with_results_in_benchmarks_md() {
    assert_eq!(row("benches/"), "benchmarks: criterion's, and plain-timing programs where a figure needs a long run or a fresh process (results in BENCHMARKS.md)");
    let manifest = read("Cargo.toml");
    assert!(manifest.lines().any(|l| l.starts_with("criterion =")), "criterion is not a dev-dependency");
    let targets: BTreeSet<String> = bench_targets().into_iter().collect();
    let sources: BTreeSet<String> = files("benches", ".rs").into_iter().map(|n| n.trim_end_matches(".rs").to_owned()).collect();
    assert_eq!(targets, sources, "benches/*.rs and the [[bench]] targets differ");
    assert_eq!(manifest.matches("[[bench]]").count(), manifest.matches("harness = false").count(), "a bench target without its own harness");
    let (criterion, plain): (Vec<&String>, Vec<&String>) = sources.iter().partition(|n| read(&format!("benches/{n}.rs")).contains("criterion_main!"));
    assert!(!criterion.is_empty() && !plain.is_empty(), "criterion: {criterion:?}, plain: {plain:?}");
    for name in &plain {
        let text = read(&format!("benches/{name}.rs"));
        assert!(text.contains("fn main()") && !text.contains("use criterion"), "benches/{name}.rs is not a plain-timing program");
    }
    let benchmarks = read("BENCHMARKS.md");
    for name in &sources {
        let text = read(&format!("benches/{name}.rs"));
        let header: String = text.lines().take_while(|l| l.starts_with("//!")).collect::<Vec<_>>().join(" ");
        assert!(header.contains("BENCHMARKS.md"), "benches/{name}.rs does not say where its results are");
        assert!(benchmarks.contains(&format!("--bench {name}")) || benchmarks.contains(&format!("benches/{name}.rs")), "BENCHMARKS.md never names benches/{name}.rs");
    }
}

// ------------------------------------------------------------------ fuzz/

/// "fuzz/ cargo-fuzz targets, seed corpus, regression inputs (RELIABILITY.md)": a
/// cargo-fuzz crate whose every target is a [[bin]] of fuzz_targets/ with seeds in
/// corpus/<target>/; regression inputs under regressions/<target>/ for existing targets;
/// RELIABILITY.md describes each target. (Read only: fuzzers may be running.)
#[test]
fn dx_1_layout_fuzz_has_targets_seed_corpus_and_regression_inputs() {
    assert_eq!(row("fuzz/"), "cargo-fuzz targets, seed corpus, regression inputs (RELIABILITY.md)");
    let manifest = read("fuzz/Cargo.toml");
    assert!(manifest.contains("cargo-fuzz = true"), "fuzz/ is not a cargo-fuzz crate");
    let targets: Vec<String> = files("fuzz/fuzz_targets", ".rs").into_iter().map(|n| n.trim_end_matches(".rs").to_owned()).collect();
    assert!(targets.len() >= 5, "{targets:?}");
    let reliability = read("RELIABILITY.md");
    for target in &targets {
        assert!(manifest.contains(&format!("name = \"{target}\"\npath = \"fuzz_targets/{target}.rs\"")), "{target} is not a [[bin]] of fuzz/Cargo.toml");
        assert!(read(&format!("fuzz/fuzz_targets/{target}.rs")).contains("fuzz_target!"), "{target} is not a fuzz target");
        let seeds = std::fs::read_dir(root().join(format!("fuzz/corpus/{target}"))).map(|d| d.count()).unwrap_or(0);
        assert!(seeds > 0, "{target} has no seed corpus");
        assert!(reliability.contains(&format!("`{target}`")), "RELIABILITY.md does not describe {target}");
    }
    let regressions: Vec<String> = std::fs::read_dir(root().join("fuzz/regressions")).unwrap().map(|e| e.unwrap()).filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(!regressions.is_empty(), "no regression inputs");
    for dir in &regressions {
        assert!(targets.contains(dir), "fuzz/regressions/{dir} is for no target");
        let inputs = std::fs::read_dir(root().join(format!("fuzz/regressions/{dir}"))).unwrap().count();
        assert!(inputs > 0, "fuzz/regressions/{dir} is empty");
    }
}

// ------------------------------------------------------------------ scripts/

/// "scripts/ test.sh, demo.sh, build-ohos.sh, ohos-check.sh, lint-arkts.sh, gen-header.sh,
/// gen-dts.sh, fuzz.sh [seconds-per-target], miri.sh; closed-sets/ (a small bin)".
#[test]
fn dx_1_layout_scripts_listed_exist_and_fuzz_sh_takes_seconds_per_target() {
    let text = row("scripts/");
    let (list, rest) = text.split_once(';').expect("scripts, then closed-sets");
    let scripts: Vec<&str> = list.split(", ").map(|s| s.split(' ').next().unwrap()).collect();
    assert_eq!(scripts.len(), 9, "the list changed: {scripts:?}");
    for script in &scripts {
        let path = root().join("scripts").join(script);
        let meta = std::fs::metadata(&path).unwrap_or_else(|e| panic!("scripts/{script}: {e}"));
        assert!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0, "scripts/{script} is not executable");
        assert!(read(&format!("scripts/{script}")).starts_with("#!/usr/bin/env bash\n"), "scripts/{script} is not a bash script");
    }
    // fuzz.sh [seconds-per-target]: its first argument is the time each target runs.
    let fuzz = read("scripts/fuzz.sh");
    assert!(fuzz.contains("scripts/fuzz.sh [seconds-per-target]") && fuzz.contains("secs=${1:-"), "fuzz.sh does not take seconds-per-target first");
    assert!(fuzz.contains("-max_total_time=") && fuzz.contains("$secs"), "fuzz.sh does not run each target for $secs");
    // closed-sets/: a small bin.
    assert_eq!(rest.trim(), "closed-sets/ (a small bin)");
    let manifest = read("scripts/closed-sets/Cargo.toml");
    assert!(manifest.contains("[[bin]]") && manifest.contains("path = \"main.rs\""), "closed-sets is not a bin");
    let lines = read("scripts/closed-sets/main.rs").lines().count();
    assert!(lines < 600, "closed-sets/main.rs is {lines} lines");
    assert!(Path::new(&root().join("Cargo.toml")).exists() && read("Cargo.toml").contains("scripts/closed-sets"), "closed-sets is not a workspace member");
}

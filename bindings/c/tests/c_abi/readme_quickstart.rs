//! DX-1 / FFI-3 / STORE-4: the README's "## Quickstart: C", read by a stranger and held to
//! what it says. tests/c/quickstart.c is the snippet transcribed into a program that runs
//! (its own checks: a bad config's message, the store resuming "chat-1", `send` on the
//! calling thread, the request fields, a later completion from another thread, streaming,
//! the cancel callback and a NULL one, the C compressor, `arkagent_shutdown` stopping the
//! library's threads); the tests here build and run it, check that the README's statements
//! are in it as printed, and hold the sentences below the snippet (the example programs
//! they name, the header's ownership and lifetime notes).

use std::collections::BTreeSet;

use crate::programs::compile_and_run;

use super::root;

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The README's `## Quickstart: C` section (heading to the next `## `).
fn section() -> String {
    let readme = read("README.md");
    let start = readme.find("\n## Quickstart: C\n").expect("README has '## Quickstart: C'");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |at| at + 3);
    rest[..end].to_owned()
}

/// The section's C block.
fn snippet() -> String {
    let section = section();
    let body = section.split("```c\n").nth(1).expect("a ```c block in '## Quickstart: C'");
    body.split("\n```").next().unwrap().to_owned()
}

/// The code of one line: without its trailing `/* … */` comment, trimmed.
fn code_of(line: &str) -> &str {
    let line = line.trim();
    match line.rfind("/*") {
        Some(at) if line.ends_with("*/") => line[..at].trim(),
        _ => line,
    }
}

/// README: the whole snippet, run. The C program checks the snippet's comments and the
/// header sentences they rest on; a run that skipped a section would count far fewer.
#[test]
fn dx_1_c_quickstart_runs_as_printed_and_does_what_its_comments_say() {
    let stdout = compile_and_run("quickstart");
    let passed: usize = stdout.split("quickstart: ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(passed > 250, "{stdout}");
}

/// What tests/c/quickstart.c runs is the README's snippet: every statement after the
/// callbacks is in it as printed (comments aside; the store's path is a real directory
/// there), and so are the callbacks' signatures and comments. A README edit that is not
/// carried into the program fails here.
#[test]
fn dx_1_c_quickstart_program_holds_the_readme_statements_as_printed() {
    let program = read("tests/c/quickstart.c");
    let program_lines: BTreeSet<&str> = program.lines().map(str::trim).collect();
    // The statements run in the program's `quickstart` function, not just somewhere.
    let body_at = program.find("\nstatic void quickstart(").expect("tests/c/quickstart.c has its quickstart function");
    let quickstart = &program[body_at..body_at + program[body_at..].find("\n}\n").unwrap()];
    let snippet = snippet();
    let mut missing = Vec::new();
    let statements_at = snippet.find("ArkAgentHttp http =").expect("the snippet builds an ArkAgentHttp");
    for line in snippet[statements_at..].lines() {
        let code = code_of(line);
        if code.is_empty() || code == "}" {
            continue;
        }
        // The program checks every call's result: `EXPECT(call, OK)` holds `call` without
        // its `;`. The README's store path stands for the app's files directory.
        let code = code.replace("\"/data/…/files/sessions.db\"", "path");
        let call = code.trim_end_matches(';');
        if !quickstart.contains(call) {
            missing.push(code.clone());
        }
    }
    // The callbacks: signatures and the comments above them, line for line.
    for line in snippet[..statements_at].lines() {
        let line = line.trim();
        let keep = line.starts_with("static void") || line.starts_with("/*") || line.starts_with("* ") || line.starts_with("arkagent_http_complete(");
        if keep && !line.starts_with("#include") {
            let line = line.split(" { /*").next().unwrap();
            let line = line.strip_prefix("arkagent_http_complete(").map_or(line.to_owned(), |rest| format!("arkagent_http_complete({}", rest.trim_end_matches(';')));
            let found = program_lines.contains(line.as_str()) || program.contains(line.trim_end_matches('{').trim_end());
            if !found {
                missing.push(line);
            }
        }
    }
    assert!(missing.is_empty(), "README's C quickstart lines not in tests/c/quickstart.c (update the program with the README):\n{}", missing.join("\n"));
    // The calls the snippet makes, in the snippet's order, are the ones the README names.
    let order = [
        "arkagent_runtime_new(",
        "arkagent_last_error_message(",
        "arkagent_store_open(",
        "arkagent_runtime_attach_store(",
        "arkagent_runtime_run(",
        "arkagent_string_free(",
        "arkagent_runtime_free(",
        "arkagent_store_free(",
        "arkagent_shutdown(",
    ];
    let statements = &snippet[statements_at..];
    let positions: Vec<usize> = order.iter().map(|f| statements.find(f).unwrap_or_else(|| panic!("the snippet no longer calls {f}"))).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "the README's calls changed order: {order:?} at {positions:?}");
}

/// README: "`tests/c/scenario.c` is a complete example: tools, streaming, compression,
/// delegation; `tests/c/transport.c` shows the request fields and the cancel callback."
/// and "`tests/c/correctness.c` shows it [a C compressor through
/// `arkagent_runtime_new_with_compressor`, answered with `arkagent_compress_complete` /
/// `_fail`], `arkagent_tool_fail` and the other correctness guarantees." Each program
/// holds what the README says it shows, and a test of this crate runs it.
#[test]
fn dx_1_c_quickstart_names_example_programs_that_show_what_it_says() {
    let section = section();
    for name in ["tests/c/scenario.c", "tests/c/transport.c", "tests/c/correctness.c"] {
        assert!(section.contains(&format!("`{name}`")), "the section no longer names {name}: update this test");
    }
    let shows = |file: &str, what: &str, needles: &[&str]| {
        let text = read(file);
        let absent: Vec<&&str> = needles.iter().filter(|n| !text.contains(**n)).collect();
        assert!(absent.is_empty(), "{file} is said to show {what} but has no {absent:?}");
    };
    shows("tests/c/scenario.c", "tools", &["arkagent_tools_new(", "arkagent_tools_register(", "arkagent_tool_complete("]);
    shows("tests/c/scenario.c", "streaming", &["arkagent_http_stream_begin(", "arkagent_http_stream_chunk(", "arkagent_http_stream_end("]);
    shows("tests/c/scenario.c", "compression", &[r#"\"compression\""#, "arkagent_runtime_compress_now("]);
    shows("tests/c/scenario.c", "delegation", &["arkagent_workers_new(", "arkagent_workers_add(", "delegate_task"]);
    shows("tests/c/transport.c", "the request fields", &["->method", "->url", "->headers", "->header_count", "->body", "->body_len", "->stream"]);
    shows("tests/c/transport.c", "the cancel callback", &["ArkAgentHttp http = {on_send, with_cancel ? on_cancel : NULL", "static void on_cancel("]);
    shows(
        "tests/c/correctness.c",
        "a C compressor, arkagent_tool_fail",
        &["arkagent_runtime_new_with_compressor(", "arkagent_compress_complete(", "arkagent_compress_fail(", "arkagent_tool_fail("],
    );
    // Each is built and run by this crate's tests (main.rs).
    let main = read("bindings/c/tests/c_abi/main.rs");
    for call in ["compile_and_run(\"scenario\")", "compile(\"transport\")", "compile_and_run(\"correctness\")"] {
        assert!(main.contains(call), "bindings/c/tests/c_abi/main.rs no longer runs {call}");
    }
}

/// README: "The header documents every pointer's owner and lifetime and every callback's
/// thread." The callbacks are held by ffi_3_the_header_states_each_callbacks_thread_and_
/// each_pointers_lifetime_and_owner; here the rest: the conventions for the functions'
/// string arguments and results, every opaque handle's owner (or the call it is valid
/// in) and every struct with pointer fields its lifetime.
#[test]
fn ffi_3_readme_the_header_documents_every_pointers_owner_and_lifetime() {
    let header = read("include/arkagent.h");
    let conventions = header.split("*/").next().unwrap();
    for phrase in ["borrowed for the call", "owned by the caller and freed", "arkagent_string_free"] {
        assert!(conventions.contains(phrase), "the header's conventions no longer say {phrase:?}");
    }
    let lines: Vec<&str> = header.lines().collect();
    let comment_above = |n: usize| -> String {
        let comment: Vec<&str> = lines[..n].iter().rev().take_while(|l| l.starts_with("//")).copied().collect();
        comment.into_iter().rev().collect::<Vec<_>>().join(" ")
    };
    let mut problems = Vec::new();
    const OWNER: &[&str] = &["Owned by", "owned by", "valid only during", "Only during", "must finish", "finish", "Finish"];
    for (n, line) in lines.iter().enumerate() {
        // Opaque handles: `typedef struct X X;`.
        if let Some(rest) = line.strip_prefix("typedef struct ").filter(|l| l.ends_with(';') && !l.contains('{')) {
            let name = rest.split(' ').next().unwrap();
            if !OWNER.iter().any(|w| comment_above(n).contains(w)) {
                problems.push(format!("{name}: no owner or lifetime"));
            }
        }
        // Structs with pointer fields.
        if let Some(rest) = line.strip_prefix("typedef struct ").filter(|l| l.ends_with('{')) {
            let name = rest.trim_end_matches(" {");
            let fields: Vec<&str> = lines[n + 1..].iter().take_while(|l| !l.starts_with('}')).filter(|l| !l.trim_start().starts_with("//")).copied().collect();
            let has_pointer = fields.iter().any(|f| f.contains('*') && !f.contains("(*"));
            let comment = comment_above(n);
            let stated = ["valid only during", "borrowed", "copied", "owned by", "Owned by"].iter().any(|w| comment.contains(w));
            if has_pointer && !stated {
                problems.push(format!("{name}: pointer fields without a stated lifetime"));
            }
        }
    }
    assert!(problems.is_empty(), "include/arkagent.h:\n{}", problems.join("\n"));
}

//! COST-1, COST-2, COST-3 and COST-4 through the C ABI: the programs tests/c/cost.c and
//! tests/c/prefix.c, built against include/arkagent.h and run here.

/// COST-1 / COST-2: prices, costs and cached tokens on every C getter and event.
#[test]
fn cost_2_c_program_prices_usages_and_sums_them_exactly() {
    let stdout = crate::c_programs::compile_and_run("cost");
    assert!(stdout.contains("cost: ") && stdout.contains(" passed, 0 failed"), "{stdout}");
}

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::prefix::{assert_same_request, assert_summarizer_reuses, check_sequence, ChatCompletions};
use crate::support::compression_instruction_mark;

/// One record file of tests/c/prefix.c.
#[derive(Default)]
struct Records {
    /// Main request bodies (summarizer calls left out), in order.
    bodies: Vec<String>,
    /// Per main body: a compression was committed since the one before.
    compressed_before: Vec<bool>,
    /// Per main body: its run number and the label in force ("" before any).
    run_of: Vec<(usize, String)>,
    /// Summarizer request bodies, each with the number of main bodies before it.
    summaries: Vec<(usize, String)>,
}

fn read_records(path: &Path) -> Records {
    let mut r = Records::default();
    let (mut run, mut label, mut compressed) = (0usize, String::new(), false);
    for line in std::fs::read_to_string(path).unwrap().lines() {
        match line.split_once(' ').unwrap_or((line, "")) {
            ("S", body) => r.summaries.push((r.bodies.len(), body.to_owned())),
            ("B", body) => {
                r.bodies.push(body.to_owned());
                r.compressed_before.push(std::mem::take(&mut compressed));
                r.run_of.push((run, label.clone()));
            }
            ("C", _) => compressed = true,
            ("R", n) => run = n.parse().unwrap(),
            ("L", l) => label = l.to_owned(),
            other => panic!("unexpected record {other:?}"),
        }
    }
    r
}

fn bodies_of(r: &Records, run: usize, label: &str) -> Vec<String> {
    r.bodies.iter().zip(&r.run_of).filter(|(_, (n, l))| *n == run && l == label).map(|(b, _)| b.clone()).collect()
}

/// tests/c/prefix.c, compiled once per test run (tests running it in parallel must not
/// rewrite the executable under each other).
fn prefix_exe() -> &'static Path {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    EXE.get_or_init(|| crate::c_programs::compile("prefix"))
}

fn prefix_program(dir: &Path, args: &[&str]) -> PathBuf {
    let exe = prefix_exe();
    let file = dir.join(format!("{}.records", args.join("-").replace('/', "_")));
    let mut all = vec![args[0], file.to_str().unwrap()];
    all.extend(&args[1..]);
    crate::c_programs::run_program(exe, &all);
    file
}

/// COST-4 through C: between compressions every request extends the previous one; after
/// a compression the system prompt and the tools stay first.
#[test]
fn cost_4_c_between_compressions_requests_extend_and_system_and_tools_stay_first() {
    let dir = crate::store::temp_dir("cost4-c-session");
    let r = read_records(&prefix_program(&dir, &["session"]));
    let (extended, crossed) = check_sequence(&ChatCompletions, &r.bodies, &r.compressed_before);
    assert!(crossed >= 2 && extended >= 30, "{extended} extensions and {crossed} compressions checked");
}

/// COST-3 through C: each compression's summarizer request is the last main request's
/// bytes up to the end of its last message (what the provider has cached), then the
/// final answer appended since and the compression instruction; tools, tool choice and
/// every field after the messages unchanged; and one request per compression.
#[test]
fn cost_3_c_the_summarizer_request_starts_with_the_last_requests_bytes_and_ends_with_the_instruction() {
    let dir = crate::store::temp_dir("cost3-c-session");
    let r = read_records(&prefix_program(&dir, &["session"]));
    let compressions = r.compressed_before.iter().filter(|c| **c).count();
    assert!(compressions >= 2, "{compressions} compressions");
    assert_eq!(r.summaries.len(), compressions, "one summarizer request per compression");
    for (before, body) in &r.summaries {
        assert!(!body.contains("<conversation>"), "the transcript fallback was used: {body}");
        assert_summarizer_reuses(&ChatCompletions, &r.bodies[before - 1], body, compression_instruction_mark());
    }
}

/// COST-4 through C: after `arkagent_runtime_import_state` the next requests are the
/// uninterrupted session's, byte for byte.
#[test]
fn cost_4_c_after_import_state_the_next_request_is_the_uninterrupted_sessions() {
    let dir = crate::store::temp_dir("cost4-c-import");
    let r = read_records(&prefix_program(&dir, &["import", "6"]));
    let (reference, imported) = (bodies_of(&r, 6, "reference"), bodies_of(&r, 6, "imported"));
    assert_eq!((reference.len(), imported.len()), (2, 2));
    for (want, got) in reference.iter().zip(&imported) {
        assert_same_request(want, got);
    }
}

/// COST-4 through C: a process SIGKILLed on its store and restarted sends, for the next
/// input, what an uninterrupted session sends.
#[test]
fn cost_4_c_after_a_sigkill_and_a_sqlite_resume_the_next_request_is_the_uninterrupted_sessions() {
    let dir = crate::store::temp_dir("cost4-c-kill");
    let db = dir.join("kill.db");
    let exe = prefix_exe();
    let killed = dir.join("killed.records");
    let mut child = Command::new(exe)
        .args(["store", killed.to_str().unwrap(), db.to_str().unwrap(), "0", "6", "hang"])
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut ready).unwrap();
    assert_eq!(ready.trim(), "READY");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let resumed = read_records(&prefix_program(&dir, &["store", db.to_str().unwrap(), "6", "7"]));
    let reference = read_records(&prefix_program(&dir, &["plain", "7"]));
    let (want, got) = (bodies_of(&reference, 6, ""), bodies_of(&resumed, 6, ""));
    assert_eq!((want.len(), got.len()), (2, 2));
    for (want, got) in want.iter().zip(&got) {
        assert_same_request(want, got);
    }
}

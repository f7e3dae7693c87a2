//! COST-4: prefix stability through the Rust API, checked on the exact bytes the
//! transport receives (tests/it/prefix.rs holds the checks): between compressions every
//! request extends the previous one; after a compression the system prompt and the tools
//! stay first; after `import_state`, a SQLite resume and a SIGKILLed process restarted on
//! its store, the next request is byte for byte the uninterrupted session's. Every test
//! runs in both wire formats (`each_wire`; Anthropic's moving breakpoint normalised by
//! its `WireView`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use arkagent::compress::{CompressOutcome, ContextCompressorConfig};
use arkagent::runtime::Compression;
use arkagent::store::SessionStore;
use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, EventKind, ModelConfig, SequentialIdGenerator, SqliteStore, ToolDefinition, ToolRegistry,
};
use serde_json::{json, Value};

use crate::prefix::{assert_same_request, check_sequence, view, Recording};
use crate::support::*;
use crate::wire_fake::{in_wire, Wire};

const RUNS: usize = 24;

fn config(store: Option<Arc<dyn SessionStore>>) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(speak(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "prefix-model")));
    c.system_prompt = "You are a weather assistant. Answer briefly.".into();
    let mut tools = ToolRegistry::new();
    tools
        .register(
            ToolDefinition::new("get_weather", "Weather for a city", json!({"type": "object", "properties": {"city": {"type": "string"}}})),
            Arc::new(WeatherTool::default()),
        )
        .unwrap();
    c.tools = tools;
    c.session_id = Some("prefix".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("c4"));
    c.model.retry = arkagent::llm::RetryPolicy::none();
    let compression = ContextCompressorConfig { keep_recent_message_count: 4, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(900) };
    c.compression = Some(Compression::Default { config: compression, summarizer: None });
    c.store = store;
    c
}

/// Answers from the request alone (never from the call index), so two sessions in the
/// same state get the same answers: `task N` gets one tool call `w-N`, then a text.
fn model() -> Arc<ScriptedModel> {
    ScriptedModel::with(|body: &Value, _| {
        let size = body.to_string().len() as u64 / 4;
        if is_summary_request(body) {
            return text_reply(&snapshot_text("weather for many cities", "looked up the weather"), size);
        }
        let messages = body["messages"].as_array().unwrap();
        let task = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned();
        let n = task.trim_start_matches("task ");
        if messages.last().unwrap()["role"] == "user" {
            tool_calls_reply(&[(&format!("w-{n}"), "get_weather", json!({"city": format!("city {n}")}))], size)
        } else {
            text_reply(&format!("In city {n} it is sunny, 21 degrees, light wind from the west."), size)
        }
    })
}

/// One session's record: every main request body (summarizer calls left out), whether a
/// compression was committed before each, and which run each belongs to.
struct Session {
    bodies: Vec<String>,
    compressed_before: Vec<bool>,
    run_of: Vec<usize>,
    compressed_in_run: Vec<bool>,
}

async fn run_session(runs: std::ops::Range<usize>, rt: &AgentRuntime, transport: &Recording<ScriptedModel>) -> Session {
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let mut run_of = Vec::new();
    let mut compressed_in_run = Vec::new();
    for i in runs.clone() {
        let before = recorder.0.lock().unwrap().len();
        rt.run(&format!("task {i}")).await.unwrap();
        let events = recorder.0.lock().unwrap()[before..].to_vec();
        run_of.extend(events.iter().filter(|e| e.kind.type_name() == "model_request").map(|_| i));
        compressed_in_run.push(events.iter().any(is_compressed));
    }
    let events = recorder.0.lock().unwrap().clone();
    let mut compressed_before = Vec::new();
    let mut pending = false;
    for e in &events {
        pending |= is_compressed(e);
        if e.kind.type_name() == "model_request" {
            compressed_before.push(std::mem::take(&mut pending));
        }
    }
    let bodies: Vec<String> = transport.bodies().into_iter().filter(|b| !is_summary_request(&view().openai(b))).collect();
    assert_eq!(bodies.len(), compressed_before.len(), "one model_request event per main request");
    Session { bodies, compressed_before, run_of, compressed_in_run }
}

fn is_compressed(e: &AgentEvent) -> bool {
    matches!(&e.kind, EventKind::Compression { outcome: CompressOutcome::Compressed, .. })
}

/// The uninterrupted reference session: runs 0..RUNS.
async fn reference() -> Session {
    let transport = Arc::new(Recording::new(model()));
    let rt = AgentRuntime::new(config(None), transport.clone()).unwrap();
    run_session(0..RUNS, &rt, &transport).await
}

/// A run to resume at: after at least one compression, and not compressing itself (so
/// the resumed session's own id generator names no new episode).
fn resume_point(reference: &Session) -> usize {
    (8..RUNS).find(|&k| reference.compressed_in_run[..k].iter().any(|c| *c) && !reference.compressed_in_run[k]).expect("a run to resume at")
}

/// The reference's request bodies of run `k`.
fn bodies_of_run(reference: &Session, k: usize) -> Vec<String> {
    reference.bodies.iter().zip(&reference.run_of).filter(|(_, r)| **r == k).map(|(b, _)| b.clone()).collect()
}

#[tokio::test]
async fn cost_4_between_compressions_each_request_extends_the_last_and_after_one_system_and_tools_stay_first() {
    each_wire(|| async {
        let session = reference().await;
        let (extended, crossed) = check_sequence(view(), &session.bodies, &session.compressed_before);
        assert!(crossed >= 2 && extended >= 30, "{extended} extensions and {crossed} compressions checked");
    })
    .await;
}

#[tokio::test]
async fn cost_4_after_import_state_the_next_request_is_the_uninterrupted_sessions() {
    each_wire(after_import_state).await;
}

async fn after_import_state() {
    let reference = reference().await;
    let k = resume_point(&reference);
    let transport = Arc::new(Recording::new(model()));
    let before = AgentRuntime::new(config(None), transport.clone()).unwrap();
    run_session(0..k, &before, &transport).await;
    let exported = before.export_state().unwrap();
    let transport = Arc::new(Recording::new(model()));
    let after = AgentRuntime::new(config(None), transport.clone()).unwrap();
    after.import_state(&exported).unwrap();
    after.run(&format!("task {k}")).await.unwrap();
    let expected = bodies_of_run(&reference, k);
    assert_eq!(transport.bodies().len(), expected.len());
    for (want, got) in expected.iter().zip(transport.bodies()) {
        assert_same_request(want, &got);
    }
}

#[tokio::test]
async fn cost_4_after_a_sqlite_resume_the_next_request_is_the_uninterrupted_sessions() {
    each_wire(after_a_sqlite_resume).await;
}

async fn after_a_sqlite_resume() {
    let reference = reference().await;
    let k = resume_point(&reference);
    let dir = crate::store::temp_dir(&format!("cost4-resume-{:?}", crate::wire_fake::wire()));
    let db = dir.join("s.db");
    {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&db).unwrap());
        let transport = Arc::new(Recording::new(model()));
        let rt = AgentRuntime::new(config(Some(store)), transport.clone()).unwrap();
        run_session(0..k, &rt, &transport).await;
    }
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let transport = Arc::new(Recording::new(model()));
    let rt = AgentRuntime::new(config(Some(store)), transport.clone()).unwrap();
    rt.run(&format!("task {k}")).await.unwrap();
    for (want, got) in bodies_of_run(&reference, k).iter().zip(transport.bodies()) {
        assert_same_request(want, &got);
    }
}

/// The child process of the kill test: resumes the store at `ARKAGENT_COST4_CHILD`, runs
/// `ARKAGENT_COST4_RUNS` (`from..to`) speaking `ARKAGENT_COST4_WIRE`, prints each request
/// body as a JSON string line, then `DONE`, and waits to be killed.
#[test]
fn cost_4_kill_child() {
    let Ok(path) = std::env::var("ARKAGENT_COST4_CHILD") else { return };
    let runs = std::env::var("ARKAGENT_COST4_RUNS").unwrap();
    let (from, to) = runs.split_once("..").unwrap();
    let speaking = if std::env::var("ARKAGENT_COST4_WIRE").as_deref() == Ok("anthropic") { Wire::Anthropic } else { Wire::OpenAi };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(in_wire(speaking, async {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let transport = Arc::new(Recording::new(model()));
        let agent = AgentRuntime::new(config(Some(store)), transport.clone()).unwrap();
        for i in from.parse::<usize>().unwrap()..to.parse().unwrap() {
            agent.run(&format!("task {i}")).await.unwrap();
        }
        for body in transport.bodies() {
            println!("BODY {}", serde_json::to_string(&body).unwrap());
        }
        println!("DONE");
        std::thread::sleep(std::time::Duration::from_secs(600));
    }));
}

/// Runs the child on `db` for `runs`, waits for `DONE`, SIGKILLs it; returns its bodies.
fn child_until_killed(exe: &std::path::Path, db: &std::path::Path, runs: &str) -> Vec<String> {
    let mut child = Command::new(exe)
        .args(["--exact", "cost_4::cost_4_kill_child", "--nocapture", "--test-threads=1"])
        .env("ARKAGENT_COST4_CHILD", db)
        .env("ARKAGENT_COST4_RUNS", runs)
        .env("ARKAGENT_COST4_WIRE", if crate::wire_fake::wire() == Wire::Anthropic { "anthropic" } else { "openai" })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut bodies = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        // The test harness's "test … ... " may precede the first line.
        if let Some((_, body)) = line.split_once("BODY ") {
            bodies.push(serde_json::from_str::<String>(body).unwrap());
        } else if line.contains("DONE") {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    bodies
}

#[tokio::test]
async fn cost_4_after_a_sigkill_and_restart_the_next_request_is_the_uninterrupted_sessions() {
    if std::env::var("ARKAGENT_COST4_CHILD").is_ok() {
        return;
    }
    each_wire(after_a_sigkill_and_restart).await;
}

async fn after_a_sigkill_and_restart() {
    let reference = reference().await;
    let k = resume_point(&reference);
    let dir = crate::store::temp_dir(&format!("cost4-kill-{:?}", crate::wire_fake::wire()));
    let db = dir.join("kill.db");
    let exe = dir.join("harness");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    let first = child_until_killed(&exe, &db, &format!("0..{k}"));
    assert!(first.len() > k, "the first process ran its turns");
    let resumed = child_until_killed(&exe, &db, &format!("{k}..{}", k + 1));
    let expected = bodies_of_run(&reference, k);
    assert_eq!(resumed.len(), expected.len());
    for (want, got) in expected.iter().zip(&resumed) {
        assert_same_request(want, got);
    }
    let _ = std::fs::remove_file(&exe);
}

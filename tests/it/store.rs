//! Durable sessions (STORE-1..5) through the public Rust API: a real run with tools and
//! compression committed to SQLite and to memory, resumed, listed, deleted, locked
//! (also across processes), and bad files. The kill harness is in `store_kill.rs`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arkagent::compress::{ContextCompressorConfig, COMPRESSION_USAGE_SOURCE};
use arkagent::runtime::Compression;
use arkagent::store::{Commit, OpenedSession, SessionLease, SessionStore, SessionSummary, SqliteSync, StoreError, SCHEMA_VERSION};
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, AgentState, EventKind, HistoryInvariants, InMemorySessionStore, Message, ModelConfig,
    SequentialIdGenerator, SqliteStore, ToolDefinition, ToolRegistry,
};
use serde_json::{json, Value};

use crate::support::*;

/// A fresh directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("arkagent-{name}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A config with a weather tool and compression after every few messages.
pub fn store_config(store: Arc<dyn SessionStore>, session: &str, compress: bool) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    let mut tools = ToolRegistry::new();
    tools
        .register(ToolDefinition::new("get_weather", "Weather for a city", json!({"type": "object"})), Arc::new(WeatherTool::default()))
        .unwrap();
    c.tools = tools;
    c.session_id = Some(session.into());
    c.id_generator = Arc::new(SequentialIdGenerator::new(format!("{session}-{}", std::process::id())));
    c.model.retry = arkagent::llm::RetryPolicy::none();
    if compress {
        let config = ContextCompressorConfig {
            keep_recent_message_count: 2,
            min_messages_to_summarize: 2,
            ..ContextCompressorConfig::with_threshold(400)
        };
        c.compression = Some(Compression::Default { config, summarizer: None });
    }
    c.store = Some(store);
    c
}

/// A model that answers each user task with two tool-call turns then a final text, and
/// every summary request with a snapshot. Tool call ids are unique per process and call.
pub fn busy_model() -> Arc<ScriptedModel> {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    ScriptedModel::with(|body: &Value, _| {
        if is_summary_request(body) {
            let mut r = text_reply(&snapshot_text("weather", "asked"), 300);
            if let Reply::Json(v) = &mut r {
                v["usage"]["total_tokens"] = json!(310);
            }
            return r;
        }
        let messages = body["messages"].as_array().unwrap();
        let since_user = messages.iter().rev().take_while(|m| m["role"] != "user").filter(|m| m["role"] == "assistant").count();
        if since_user < 2 {
            let n = CALLS.fetch_add(1, Ordering::Relaxed);
            let pid = std::process::id();
            tool_calls_reply(
                &[
                    (&format!("c{pid}-{n}-a"), "get_weather", json!({"city": "Paris"})),
                    (&format!("c{pid}-{n}-b"), "get_weather", json!({"city": "Oslo"})),
                ],
                500,
            )
        } else {
            text_reply("done", 500)
        }
    })
}

/// `busy_model`'s script, reporting 0.8 prompt tokens per estimated token of the
/// messages (CMP-12: a count the calibration learns from).
fn tokenizer_model() -> Arc<ScriptedModel> {
    let busy = busy_model();
    ScriptedModel::with(move |body: &Value, i| {
        let estimate = arkagent::compress::estimate_tokens(&body["messages"].to_string());
        match busy.respond(body, i) {
            Reply::Json(mut v) => {
                v["usage"]["prompt_tokens"] = json!(estimate * 4 / 5);
                Reply::Json(v)
            }
            other => other,
        }
    })
}

fn sqlite(path: &Path) -> Arc<dyn SessionStore> {
    Arc::new(SqliteStore::open(path).unwrap())
}

fn comparable(state: &AgentState) -> Value {
    serde_json::to_value(state).unwrap()
}

async fn round_trip(store: Arc<dyn SessionStore>) {
    let model = busy_model();
    let rt = AgentRuntime::new(store_config(store.clone(), "s1", true), model.clone()).unwrap();
    rt.run("weather in Paris and Oslo?").await.unwrap();
    rt.run("and tomorrow?").await.unwrap();
    assert!(!rt.episodic_memories().is_empty(), "the run compressed");
    let before = rt.state();
    drop(rt);
    let resumed = AgentRuntime::new(store_config(store.clone(), "s1", true), model).unwrap();
    assert_eq!(comparable(&resumed.state()), comparable(&before), "the resumed state is the committed one");
    resumed.run("and the day after?").await.unwrap();
    assert!(HistoryInvariants::tool_calls_paired(&resumed.messages()));
}

#[tokio::test]
async fn store_1_sqlite_and_memory_round_trip_a_session_with_tools_and_compression() {
    let dir = temp_dir("store1");
    round_trip(sqlite(&dir.join("sessions.db"))).await;
    round_trip(Arc::new(InMemorySessionStore::new())).await;
}

#[tokio::test]
async fn store_1_migration_from_every_earlier_version() {
    for version in 1..SCHEMA_VERSION {
        let dir = temp_dir("migrate");
        let path = dir.join("old.db");
        SqliteStore::create_at_version(&path, version).unwrap();
        // A session as version 1 stored it (version 2 also stored its title).
        let session = if version >= 2 {
            "INSERT INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens, title)
                VALUES ('old', 1, 2, 1, 2, 30, 'hello from v1');"
        } else {
            "INSERT INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens) VALUES ('old', 1, 2, 1, 2, 30);"
        };
        SqliteStore::execute_raw(
            &path,
            &(session.to_owned()
                + r#"INSERT INTO messages VALUES ('old', 0, '{"role":"user","content":"hello from v1"}');
               INSERT INTO messages VALUES ('old', 1, '{"role":"assistant","content":"hi"}');
               INSERT INTO usages VALUES ('old', 0, '{"prompt_tokens":20,"completion_tokens":10,"total_tokens":30}');"#),
        )
        .unwrap();
        let store = SqliteStore::open(&path).unwrap();
        let list = store.list_sessions().unwrap();
        assert_eq!(list, vec![SessionSummary {
            id: "old".into(),
            title: "hello from v1".into(),
            updated_ms: 2,
            message_count: 2,
            total_tokens: 30,
            commit_seq: 1
        }]);
        let opened = store.open_session("old").unwrap();
        let state = opened.state.clone().unwrap();
        assert_eq!(state.history.messages, vec![Message::user("hello from v1"), Message::assistant("hi")]);
        assert!(state.token_calibration.is_empty(), "CMP-12: a migrated session starts uncalibrated");
        drop(opened);
        // The migrated file resumes and takes new commits, the calibration (CMP-12) included.
        let store: Arc<dyn SessionStore> = Arc::new(store);
        let rt = AgentRuntime::new(store_config(store.clone(), "old", false), tokenizer_model()).unwrap();
        rt.run("again").await.unwrap();
        let calibration = rt.state().token_calibration;
        assert!(calibration["test-model"].is_calibrated(), "{calibration:?}");
        drop(rt);
        assert_eq!(store.open_session("old").unwrap().state.unwrap().token_calibration, calibration);
        let list = store.list_sessions().unwrap();
        assert_eq!(list[0].commit_seq, 5, "v1's commit, then the run start, two tool turns and the answer");
    }
}

/// STORE-1, PERF-9: migration 2's title backfill reads the rows in Rust (the bundled SQLite
/// is built without its JSON functions): the title is the first *user* message's, whatever
/// comes before it, and a session without one keeps an empty title.
#[test]
fn store_1_migration_2_titles_come_from_the_first_user_message() {
    let dir = temp_dir("migrate-titles");
    let path = dir.join("v1.db");
    SqliteStore::create_at_version(&path, 1).unwrap();
    SqliteStore::execute_raw(
        &path,
        r#"INSERT INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens) VALUES ('a', 1, 2, 1, 3, 0);
           INSERT INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens) VALUES ('b', 1, 3, 1, 1, 0);
           INSERT INTO messages VALUES ('a', 0, '{"role":"assistant","content":"Welcome."}');
           INSERT INTO messages VALUES ('a', 1, '{"role":"user","content":"  first question\nsecond line"}');
           INSERT INTO messages VALUES ('a', 2, '{"role":"user","content":"later"}');
           INSERT INTO messages VALUES ('b', 0, '{"role":"assistant","content":"no user here"}');"#,
    )
    .unwrap();
    let err = SqliteStore::execute_raw(&path, "SELECT json_extract('{}', '$.a')").unwrap_err();
    assert!(err.to_string().contains("json_extract"), "the bundled SQLite has no JSON functions: {err}");
    let list = SqliteStore::open(&path).unwrap().list_sessions().unwrap();
    let titles: Vec<(&str, &str)> = list.iter().map(|s| (s.id.as_str(), s.title.as_str())).collect();
    assert_eq!(titles, [("b", ""), ("a", "first question")]);
}

/// Replays commits onto a model of the stored session and checks each one.
#[derive(Default)]
struct Recording {
    commits: Mutex<Vec<Commit>>,
}

struct RecordingStore {
    inner: InMemorySessionStore,
    log: Arc<Recording>,
}

struct RecordingLease {
    inner: Box<dyn SessionLease>,
    log: Arc<Recording>,
}

impl SessionLease for RecordingLease {
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        self.log.commits.lock().unwrap().push(commit.clone());
        self.inner.commit(commit)
    }
}

impl SessionStore for RecordingStore {
    fn open_session(&self, id: &str) -> Result<OpenedSession, StoreError> {
        let opened = self.inner.open_session(id)?;
        Ok(OpenedSession { lease: Box::new(RecordingLease { inner: opened.lease, log: self.log.clone() }), state: opened.state })
    }
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        self.inner.list_sessions()
    }
    fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_session(id)
    }
}

#[tokio::test]
async fn store_2_commits_are_paired_appends_and_each_is_announced() {
    let log = Arc::new(Recording::default());
    let store = Arc::new(RecordingStore { inner: InMemorySessionStore::new(), log: log.clone() });
    let rt = AgentRuntime::new(store_config(store, "s2", true), busy_model()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());
    for i in 0..4 {
        rt.run(&format!("task {i}")).await.unwrap();
    }
    let commits = log.commits.lock().unwrap().clone();
    // Replay: every commit appends exactly at the previous end (no rewrite) and leaves a
    // paired history; a compression commit carries its episode with its originals.
    let mut live: Vec<Message> = Vec::new();
    let mut end = 0u64;
    let mut episodes = 0;
    let mut usages = 0;
    for c in &commits {
        assert!(!c.replace_all);
        assert_eq!(c.episodes_from, episodes);
        assert_eq!(c.usages_from, usages);
        for e in &c.episodes {
            assert_eq!(e.archived_messages.len(), e.message_count);
            assert_eq!(&live[..e.message_count], &e.archived_messages[..], "the originals are the archived live prefix");
            live.drain(..e.message_count);
        }
        assert_eq!(c.messages_from, end, "a commit appends at the end");
        assert!(c.messages.len() <= 4, "O(new messages): at most one turn (assistant + 2 results) or a user message");
        live.extend(c.messages.iter().cloned());
        end = c.end();
        episodes += c.episodes.len();
        usages += c.usages.len();
        assert!(HistoryInvariants::tool_calls_paired(&live), "a committed history is paired");
        if !c.episodes.is_empty() {
            assert!(c.usages.iter().any(|u| u.source_name() == Some(COMPRESSION_USAGE_SOURCE)), "the summary's usage in the same commit");
        }
    }
    assert!(episodes > 0, "compressions were committed");
    assert_eq!(live, rt.messages());
    assert_eq!(usages, rt.usages().len());
    // One session_committed per commit, numbered 1, 2, 3…
    let seqs: Vec<u64> = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::SessionCommitted { commit_seq, .. } => Some(commit_seq),
            _ => None,
        })
        .collect();
    assert_eq!(seqs, (1..=commits.len() as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn store_4_list_delete_and_retrieve_memory_after_a_restart() {
    let dir = temp_dir("store4");
    let path = dir.join("sessions.db");
    let store = sqlite(&path);
    let rt = AgentRuntime::new(store_config(store.clone(), "a", true), busy_model()).unwrap();
    rt.run("Paris weather, please\nsecond line").await.unwrap();
    rt.run("more").await.unwrap();
    let episode = rt.episodic_memories()[0].clone();
    let tokens: u64 = rt.total_usage().total.total_tokens;
    let count = rt.messages().len() as u64 + rt.episodic_memories().iter().map(|e| e.message_count as u64).sum::<u64>();
    drop(rt);
    std::thread::sleep(std::time::Duration::from_millis(5)); // "b" is updated at a later ms
    let other = AgentRuntime::new(store_config(store.clone(), "b", false), busy_model()).unwrap();
    other.run("second session").await.unwrap();
    drop(other);
    drop(store);

    // A restart: a new store handle on the same file.
    let store = sqlite(&path);
    let list = store.list_sessions().unwrap();
    assert_eq!(list.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["b", "a"], "most recent first");
    assert_eq!(list[1].title, "Paris weather, please");
    assert_eq!(list[1].message_count, count);
    assert_eq!(list[1].total_tokens, tokens);

    // retrieve_memory reads the archived originals of the resumed session.
    let episode_id = episode.id.clone();
    let model = ScriptedModel::with(move |body, _| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text("weather", "asked"), 100);
        }
        if body["messages"].as_array().unwrap().last().unwrap()["role"] == "user" {
            tool_calls_reply(&[("r1", "retrieve_memory", json!({"snapshot_id": episode_id}))], 100)
        } else {
            let tool = body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool").unwrap();
            assert!(tool["content"].as_str().unwrap().contains("Paris weather, please"), "originals reachable: {tool}");
            text_reply("read it", 100)
        }
    });
    let rt = AgentRuntime::new(store_config(store.clone(), "a", true), model.clone()).unwrap();
    assert_eq!(rt.episodic_memories()[0].archived_messages, episode.archived_messages);
    rt.run("what did I ask first?").await.unwrap();
    assert!(model.request_count() >= 2);

    // Delete: refused while open, then gone with its episodes.
    assert_eq!(store.delete_session("a").unwrap_err().code(), "session_locked");
    drop(rt);
    assert!(store.delete_session("a").unwrap());
    assert!(!store.delete_session("a").unwrap());
    assert_eq!(store.list_sessions().unwrap().len(), 1);
    let fresh = store.open_session("a").unwrap();
    assert!(fresh.state.is_none(), "nothing of the deleted session is left");
}

#[tokio::test]
async fn store_4_a_session_open_twice_in_one_process_is_locked() {
    let dir = temp_dir("lock");
    let path = dir.join("s.db");
    let first = sqlite(&path);
    let rt = AgentRuntime::new(store_config(first.clone(), "x", false), busy_model()).unwrap();
    // The same handle, and a second handle on the same file.
    for store in [first.clone(), sqlite(&path)] {
        let err = AgentRuntime::new(store_config(store, "x", false), busy_model()).unwrap_err();
        assert_eq!(err.code(), "session_locked");
    }
    let mem = Arc::new(InMemorySessionStore::new());
    let _m = AgentRuntime::new(store_config(mem.clone(), "x", false), busy_model()).unwrap();
    assert_eq!(AgentRuntime::new(store_config(mem, "x", false), busy_model()).unwrap_err().code(), "session_locked");
    drop(rt);
    AgentRuntime::new(store_config(first, "x", false), busy_model()).unwrap();
}

/// The child of the cross-process lock test: holds session "held" until stdin closes.
#[test]
fn store_4_lock_holder_child() {
    let Ok(path) = std::env::var("ARKAGENT_LOCK_HOLDER") else { return };
    let store = SqliteStore::open(&path).unwrap();
    let _held = store.open_session("held").unwrap();
    println!("holding");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

#[test]
fn store_4_a_session_open_in_another_process_is_locked_until_that_process_dies() {
    let dir = temp_dir("xlock");
    let path = dir.join("s.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "store::store_4_lock_holder_child", "--nocapture", "--test-threads=1"])
        .env("ARKAGENT_LOCK_HOLDER", &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("holding") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the child exited before holding the lock");
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.open_session("held").unwrap_err().code(), "session_locked");
    assert_eq!(store.delete_session("held").unwrap_err().code(), "session_locked");
    store.open_session("another").unwrap();
    // SIGKILL: the OS drops the lock with the process, no stale lock remains.
    child.kill().unwrap();
    child.wait().unwrap();
    store.open_session("held").unwrap();
}

fn file_bytes(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            all.extend(std::fs::read(&p).unwrap());
        }
    }
    all
}

#[tokio::test]
async fn store_5_the_api_key_never_reaches_the_database_file_or_its_wal() {
    let dir = temp_dir("secret");
    let path = dir.join("s.db");
    let store = sqlite(&path);
    // The key comes back from the model, a tool and the user; the store gets none of it.
    let model = ScriptedModel::with(|body, i| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text(&format!("key {API_KEY}"), "x"), 300);
        }
        if i % 3 == 2 {
            text_reply(&format!("the key is {API_KEY}"), 500)
        } else {
            tool_calls_reply(&[(&format!("k{i}"), "get_weather", json!({"city": API_KEY}))], 500)
        }
    });
    let rt = AgentRuntime::new(store_config(store.clone(), "k", true), model).unwrap();
    for _ in 0..3 {
        rt.run(&format!("my key is {API_KEY}")).await.unwrap();
    }
    assert!(!rt.episodic_memories().is_empty());
    let bytes = file_bytes(&dir);
    assert!(std::fs::metadata(dir.join("s.db-wal")).is_ok(), "the WAL is scanned too");
    assert!(bytes.windows(API_KEY.len()).all(|w| w != API_KEY.as_bytes()), "the API key is in the store's files");
    assert!(bytes.windows(10).any(|w| w == b"<redacted>"), "the redacted text is stored");
}

fn open_code(path: &Path) -> &'static str {
    SqliteStore::open(path).map(|_| ()).unwrap_err().code().as_str()
}

/// A store with one committed session; returns its state.
async fn committed_session(path: &Path) -> AgentState {
    let store = sqlite(path);
    let rt = AgentRuntime::new(store_config(store, "keep", false), busy_model()).unwrap();
    rt.run("keep me").await.unwrap();
    rt.state()
}

fn stored_state(path: &Path, id: &str) -> AgentState {
    SqliteStore::open(path).unwrap().open_session(id).unwrap().state.unwrap()
}

#[tokio::test]
async fn store_5_corrupt_truncated_foreign_and_newer_files_give_clear_codes_untouched() {
    let dir = temp_dir("badfiles");
    // Not SQLite at all.
    let junk = dir.join("junk.db");
    std::fs::write(&junk, b"this is a text file, not a database, and it is long enough to have a header....".repeat(64)).unwrap();
    assert_eq!(open_code(&junk), "store_corrupt");
    assert!(std::fs::read(&junk).unwrap().starts_with(b"this is a text file"), "left untouched");

    // Truncated: a real store cut in half (after a checkpoint, so the data is in the file).
    let cut = dir.join("cut.db");
    committed_session(&cut).await;
    SqliteStore::execute_raw(&cut, "PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let len = std::fs::metadata(&cut).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&cut).unwrap().set_len(len / 2).unwrap();
    assert_eq!(open_code(&cut), "store_corrupt");

    // Corrupt pages in the middle.
    let bad = dir.join("bad.db");
    committed_session(&bad).await;
    SqliteStore::execute_raw(&bad, "PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let mut bytes = std::fs::read(&bad).unwrap();
    for b in bytes.iter_mut().skip(4096).take(4096) {
        *b = 0xA5;
    }
    std::fs::write(&bad, &bytes).unwrap();
    assert_eq!(open_code(&bad), "store_corrupt");

    // Another application's database.
    let foreign = dir.join("foreign.db");
    SqliteStore::execute_raw(&foreign, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT)").unwrap();
    assert_eq!(open_code(&foreign), "store_foreign");

    // A newer schema: refused, and the file is not changed.
    let newer = dir.join("newer.db");
    let state = committed_session(&newer).await;
    SqliteStore::execute_raw(&newer, &format!("INSERT INTO arkagent_schema VALUES ({})", SCHEMA_VERSION + 1)).unwrap();
    let before = std::fs::read(&newer).unwrap();
    let err = SqliteStore::open(&newer).unwrap_err();
    assert_eq!(err, StoreError::NewerSchema { found: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION });
    assert_eq!(std::fs::read(&newer).unwrap(), before);
    SqliteStore::execute_raw(&newer, &format!("DELETE FROM arkagent_schema WHERE version = {}", SCHEMA_VERSION + 1)).unwrap();
    assert_eq!(comparable(&stored_state(&newer, "keep")), comparable(&state), "nothing committed was damaged");
}

#[tokio::test]
async fn store_5_a_full_store_fails_the_commit_and_keeps_what_was_committed() {
    let dir = temp_dir("full");
    let path = dir.join("s.db");
    let state = committed_session(&path).await;
    let pages: u64 = {
        let len = std::fs::metadata(&path).unwrap().len() + std::fs::metadata(dir.join("s.db-wal")).map(|m| m.len()).unwrap_or(0);
        len / 4096 + 2
    };
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open_with(&path, SqliteSync::Normal, Some(pages)).unwrap());
    let rt = AgentRuntime::new(store_config(store.clone(), "keep", false), busy_model()).unwrap();
    let big = "x".repeat(64 * 1024);
    let mut code = None;
    for _ in 0..40 {
        if let Err(e) = rt.run(&big).await {
            code = Some(e.code().as_str());
            break;
        }
    }
    assert_eq!(code, Some("store_full"));
    let last_seq = store.list_sessions().unwrap()[0].commit_seq;
    drop(rt);
    drop(store);
    let reopened = stored_state(&path, "keep");
    assert!(reopened.history.messages.len() >= state.history.messages.len());
    assert_eq!(&reopened.history.messages[..state.history.messages.len()], &state.history.messages[..], "committed data intact");
    assert!(HistoryInvariants::tool_calls_paired(&reopened.history.messages));
    assert_eq!(SqliteStore::open(&path).unwrap().list_sessions().unwrap()[0].commit_seq, last_seq);
}

/// Mounts a read-only filesystem at `dir` when this process may (root), else makes `dir`
/// read-only by mode. Returns false when neither makes it unwritable.
fn make_read_only(dir: &Path) -> bool {
    let remount = Command::new("mount").args(["-o", "remount,ro,bind"]).arg(dir).status().is_ok_and(|s| s.success());
    if !remount {
        let _ = Command::new("chmod").arg("555").arg(dir).status();
    }
    std::fs::File::create(dir.join("probe")).is_err()
}

#[tokio::test]
async fn store_5_a_read_only_directory_gives_store_read_only_and_damages_nothing() {
    let dir = temp_dir("ro");
    // Bind-mount the directory on itself so it can be remounted read-only (root), or
    // fall back to a mode change (non-root).
    let mounted = Command::new("mount").args(["--bind"]).arg(&dir).arg(&dir).status().is_ok_and(|s| s.success());
    let state = committed_session(&dir.join("s.db")).await;
    if !make_read_only(&dir) {
        eprintln!("store_5 read-only: cannot make a directory read-only here; skipped");
        return;
    }
    assert_eq!(open_code(&dir.join("new.db")), "store_read_only", "a new store in a read-only directory");
    assert_eq!(open_code(&dir.join("s.db")), "store_read_only", "an existing store in a read-only directory");
    if mounted {
        let _ = Command::new("umount").arg(&dir).status();
    } else {
        let _ = Command::new("chmod").arg("755").arg(&dir).status();
    }
    assert_eq!(comparable(&stored_state(&dir.join("s.db"), "keep")), comparable(&state), "nothing committed was damaged");
}

/// STORE-6 through the C ABI: tests/c/store.c (also run under ASan and valgrind by
/// scripts/test-c-asan.sh).
#[test]
fn store_6_c_program_opens_attaches_resumes_lists_and_deletes() {
    let stdout = crate::c_programs::compile_and_run("store");
    assert!(stdout.contains("store: ") && stdout.contains(" passed, 0 failed"), "{stdout}");
}

#[tokio::test]
async fn store_4_import_and_late_attach_rewrite_the_stored_session() {
    let store: Arc<dyn SessionStore> = Arc::new(InMemorySessionStore::new());
    // A runtime without a store runs, then attaches one: the new session gets all of it.
    let mut config = store_config(store.clone(), "late", false);
    config.store = None;
    let rt = AgentRuntime::new(config, busy_model()).unwrap();
    rt.run("before the store").await.unwrap();
    let exported = rt.export_state().unwrap();
    rt.attach_store(store.clone(), Some("late")).unwrap();
    assert_eq!(rt.attach_store(store.clone(), None).unwrap_err().code(), "invalid_config");
    rt.run("after").await.unwrap();
    let expected = rt.state();
    drop(rt);
    let resumed = AgentRuntime::new(store_config(store.clone(), "late", false), busy_model()).unwrap();
    assert_eq!(comparable(&resumed.state()), comparable(&expected));
    // An import replaces the stored session at once.
    resumed.import_state(&exported).unwrap();
    drop(resumed);
    let opened = store.open_session("late").unwrap();
    let mut imported: AgentState = serde_json::from_str(&exported).unwrap();
    imported.session_id = "late".into();
    assert_eq!(opened.state.unwrap().history, imported.history);
}

/// Issue 42 (found by the C call-sequence fuzzer): a runtime with history attached to a new
/// session writes it at once — freed (or killed) before another run, nothing is lost.
#[tokio::test]
async fn store_4_a_late_attach_writes_the_history_before_the_next_run() {
    let store: Arc<dyn SessionStore> = Arc::new(InMemorySessionStore::new());
    let mut config = store_config(store.clone(), "late-only", false);
    config.store = None;
    let rt = AgentRuntime::new(config, busy_model()).unwrap();
    rt.run("before the store").await.unwrap();
    rt.attach_store(store.clone(), Some("late-only")).unwrap();
    let expected = rt.state();
    drop(rt);
    let stored = store.open_session("late-only").unwrap().state.expect("the session was written when attached");
    assert_eq!(stored.history, expected.history);
    assert_eq!(stored.usages.len(), expected.usages.len());
}

#[tokio::test]
async fn store_6_detach_store_releases_the_session_and_stops_committing() {
    let dir = temp_dir("detach");
    let path = dir.join("s.db");
    let store = sqlite(&path);
    let rt = AgentRuntime::new(store_config(store.clone(), "d", false), busy_model()).unwrap();
    assert!(rt.has_store());
    rt.run("Weather in Paris?").await.unwrap();
    let seq = store.list_sessions().unwrap()[0].commit_seq;
    assert!(seq > 0);
    // While attached, a second runtime on the session is refused.
    assert_eq!(AgentRuntime::new(store_config(store.clone(), "d", false), busy_model()).unwrap_err().code(), "session_locked");
    assert!(rt.detach_store().unwrap(), "a store was attached");
    assert!(!rt.has_store());
    assert!(!rt.detach_store().unwrap(), "a second detach finds nothing attached");
    // The detached runtime keeps working but no longer writes to the store.
    rt.run("And in Oslo?").await.unwrap();
    assert_eq!(store.list_sessions().unwrap()[0].commit_seq, seq, "a detached runtime committed");
    // The session is free: a new runtime resumes what was committed before the detach.
    let resumed = AgentRuntime::new(store_config(store.clone(), "d", false), busy_model()).unwrap();
    let users = serde_json::to_value(resumed.state()).unwrap().to_string().matches("\"role\":\"user\"").count();
    assert_eq!(users, 1, "only the run committed before the detach is resumed");
}

/// STORE-4: a session's title (list_sessions, `arkagent_store_list`, ArkTS `list()`) is
/// "" before the first run, then the first user text's first line cut to 80 characters
/// (characters, not bytes), and it stays the first text; in SQLite and in memory.
#[tokio::test]
async fn store_4_title_is_the_first_lines_first_80_characters_and_empty_before_the_first_run() {
    let dir = temp_dir("store4-title");
    for store in [sqlite(&dir.join("sessions.db")), Arc::new(InMemorySessionStore::new()) as Arc<dyn SessionStore>] {
        let rt = AgentRuntime::new(store_config(store.clone(), "t", false), busy_model()).unwrap();
        // A session is listed from its first commit; one without a user text yet (here an
        // imported state with only a usage) has the title "".
        rt.import_state(r#"{"version":1,"session_id":"t","usages":[{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}],"history":{"messages":[]}}"#)
            .unwrap();
        let before = store.list_sessions().unwrap();
        assert_eq!(before.iter().map(|s| (s.id.as_str(), s.title.as_str())).collect::<Vec<_>>(), [("t", "")]);
        let long = "é".repeat(79) + "界xyz";
        rt.run(&format!("  {long}\nsecond line")).await.unwrap();
        rt.run("a later text").await.unwrap();
        let list = store.list_sessions().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].title, "é".repeat(79) + "界", "80 characters of the first line");
        assert_eq!(list[0].title.chars().count(), 80);
    }
}

/// STORE-4, CHAT-1: the title follows the first user text through the gestures — an edit
/// of the first run retitles the session, a rewind to before it empties the title, and a
/// photo sent without text is passed over; in SQLite and in memory.
#[tokio::test]
async fn store_4_chat_1_the_title_follows_an_edit_or_rewind_of_the_first_run() {
    let dir = temp_dir("store4-retitle");
    for store in [sqlite(&dir.join("sessions.db")), Arc::new(InMemorySessionStore::new()) as Arc<dyn SessionStore>] {
        let title = |id: &str| store.list_sessions().unwrap().into_iter().find(|s| s.id == id).unwrap().title;
        let rt = AgentRuntime::new(store_config(store.clone(), "t", false), busy_model()).unwrap();
        let first = rt.run("Paris?").await.unwrap().run_id;
        rt.run("And Oslo?").await.unwrap();
        assert_eq!(title("t"), "Paris?");
        let edited = rt.edit_and_resend(&first, "Tokyo?").await.unwrap().run_id;
        assert_eq!(title("t"), "Tokyo?", "an edit of the first run's text");
        rt.run("And Rome?").await.unwrap();
        assert_eq!(title("t"), "Tokyo?", "later texts leave it");
        rt.rewind(&edited).unwrap();
        assert_eq!(title("t"), "", "rewound to before the first run");
        rt.run("Berlin?").await.unwrap();
        assert_eq!(title("t"), "Berlin?");
        let photo = AgentRuntime::new(store_config(store.clone(), "p", false), busy_model()).unwrap();
        let image = arkagent::ContentPart::image(arkagent::ImageData::new(crate::photos::small_png(1)).unwrap());
        photo.run(arkagent::Content::Parts(vec![image])).await.unwrap();
        assert_eq!(title("p"), "", "a photo alone has no text");
        photo.run("what is it?").await.unwrap();
        assert_eq!(title("p"), "what is it?", "the first user text");
    }
}

/// STORE-4: attaching a runtime with history to a new session writes it at once, and that
/// first write is announced like every commit (`session_committed`, commit_seq 1).
#[tokio::test]
async fn store_4_attaching_a_runtime_with_history_announces_its_first_commit() {
    let dir = temp_dir("store4-attach-event");
    let mut c = store_config(sqlite(&dir.join("s.db")), "later", false);
    let store = c.store.take().unwrap();
    let rt = AgentRuntime::new(c, busy_model()).unwrap();
    rt.run("hello").await.unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    rt.attach_store(store.clone(), None).unwrap();
    let commits: Vec<(u64, u64)> = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match &e.kind {
            arkagent::EventKind::SessionCommitted { commit_seq, message_count } => Some((*commit_seq, *message_count)),
            _ => None,
        })
        .collect();
    assert_eq!(commits, [(1, rt.messages().len() as u64)], "the first write, announced");
    assert_eq!(store.list_sessions().unwrap()[0].commit_seq, 1);
}

/// STORE-4: "most recently updated first (by `updated_ms`; sessions of the same
/// millisecond by id)" — in SQLite and in memory.
#[tokio::test]
async fn store_4_sessions_of_the_same_millisecond_are_listed_by_id() {
    let dir = temp_dir("store4-ties");
    for store in [sqlite(&dir.join("sessions.db")), Arc::new(InMemorySessionStore::new()) as Arc<dyn SessionStore>] {
        let clock = Arc::new(arkagent::runtime::ManualClock::new(5_000));
        for id in ["b", "a", "c"] {
            let mut c = store_config(store.clone(), id, false);
            c.clock = clock.clone();
            AgentRuntime::new(c, busy_model()).unwrap().run("hi").await.unwrap();
        }
        clock.advance(1);
        let mut c = store_config(store.clone(), "b", false);
        c.clock = clock.clone();
        AgentRuntime::new(c, busy_model()).unwrap().run("again").await.unwrap();
        let ids: Vec<String> = store.list_sessions().unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["b", "a", "c"], "b updated last; a and c in the same millisecond, by id");
    }
}

/// STORE-1 (README "Durable sessions": "SQLite … WAL journal, `synchronous=NORMAL`"): the
/// file a store writes is in WAL mode (read back by another connection) and the default
/// sync level is NORMAL.
#[tokio::test]
async fn store_1_the_sqlite_file_is_in_wal_mode_and_syncs_normal_by_default() {
    let dir = temp_dir("store1-wal");
    let path = dir.join("sessions.db");
    let store = sqlite(&path);
    let rt = AgentRuntime::new(store_config(store.clone(), "w", false), busy_model()).unwrap();
    rt.run("hello").await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(SqliteSync::default(), SqliteSync::Normal);
}

#[tokio::test]
async fn store_2_run_decomposed_commits_its_sub_agent_records() {
    // Sub-agent records are a commit point (STORE-2): a restart right after
    // run_decomposed must find them, not only after the next run.
    let store: Arc<dyn SessionStore> = Arc::new(InMemorySessionStore::new());
    let mut config = store_config(store.clone(), "dec", false);
    config.delegation = Some(arkagent::runtime::DelegationConfig { allow_clone: true, ..Default::default() });
    let rt = AgentRuntime::new(config, ScriptedModel::with(|_, _| text_reply("child answer", 7))).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());
    let tasks: Vec<arkagent::subagent::DecomposedTask> = (0..2)
        .map(|i| arkagent::subagent::DecomposedTask { assignee: "clone".into(), task_description: format!("task {i}"), role: None, context: None })
        .collect();
    let results = rt.run_decomposed(&tasks, 2).await.unwrap();
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");
    let records = rt.state().child_usages;
    assert_eq!(records.len(), 2);
    let tokens = rt.total_usage().total.total_tokens;
    assert!(tokens > 0);
    let committed = recorder.0.lock().unwrap().iter().any(|e| matches!(e.kind, EventKind::SessionCommitted { .. }));
    assert!(committed, "run_decomposed announced a commit");
    drop(rt); // a restart
    let list = store.list_sessions().unwrap();
    assert_eq!(list.len(), 1, "the session was written");
    assert_eq!(list[0].total_tokens, tokens, "the sub-agents' tokens are committed");
    let resumed = store.open_session("dec").unwrap().state.unwrap();
    assert_eq!(resumed.child_usages, records, "the sub-agent records survive a restart");
}


/// A memory store whose `n`-th commit (1-based, over all leases) fails with `store_full`.
struct FailingStore {
    inner: InMemorySessionStore,
    fail_at: usize,
    commits: Arc<AtomicUsize>,
}

struct FailingLease {
    inner: Box<dyn SessionLease>,
    fail_at: usize,
    commits: Arc<AtomicUsize>,
}

impl SessionLease for FailingLease {
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        if self.commits.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_at {
            return Err(StoreError::Full("simulated".into()));
        }
        self.inner.commit(commit)
    }
}

impl SessionStore for FailingStore {
    fn open_session(&self, id: &str) -> Result<OpenedSession, StoreError> {
        let opened = self.inner.open_session(id)?;
        let lease = FailingLease { inner: opened.lease, fail_at: self.fail_at, commits: self.commits.clone() };
        Ok(OpenedSession { lease: Box::new(lease), state: opened.state })
    }
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        self.inner.list_sessions()
    }
    fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_session(id)
    }
}

#[tokio::test]
async fn store_3_a_failed_rollback_commit_never_leaves_the_old_input_stored() {
    // The first model call fails: the input is taken out again, and that rollback's commit
    // (the 2nd commit) fails too. The next run's input must replace it in the store.
    let mem = InMemorySessionStore::new();
    let store: Arc<dyn SessionStore> = Arc::new(FailingStore { inner: mem.clone(), fail_at: 2, commits: Arc::default() });
    let model = ScriptedModel::with(|_, i| if i == 0 { Reply::Raw(500, "{}".into()) } else { text_reply("hello", 10) });
    let rt = AgentRuntime::new(store_config(store, "rb", false), model).unwrap();
    assert!(rt.run("first try").await.is_err());
    assert!(rt.messages().is_empty(), "the failed run's input was taken out");
    rt.run("second try").await.unwrap();
    let expected = rt.state();
    drop(rt);
    let stored = mem.open_session("rb").unwrap().state.unwrap();
    assert_eq!(stored.history.messages, expected.history.messages, "the store follows the history");
    assert_eq!(comparable(&stored), comparable(&expected));
}

#[tokio::test]
async fn store_4_an_import_keeps_the_attached_session_id() {
    // A state exported from another session, imported into a runtime attached to "mine":
    // the store writes it under "mine", so the runtime must keep calling itself "mine" (a
    // host that remembers `session_id()` to resume later would otherwise resume nothing).
    let store: Arc<dyn SessionStore> = Arc::new(InMemorySessionStore::new());
    let mut other = store_config(store.clone(), "theirs", false);
    other.store = None;
    let donor = AgentRuntime::new(other, busy_model()).unwrap();
    donor.run("from elsewhere").await.unwrap();
    let exported = donor.export_state().unwrap();
    let rt = AgentRuntime::new(store_config(store.clone(), "mine", false), busy_model()).unwrap();
    rt.import_state(&exported).unwrap();
    assert_eq!(rt.session_id(), "mine");
    let ids: Vec<String> = store.list_sessions().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["mine"]);
    let remembered = rt.session_id();
    let history = rt.state().history;
    drop(rt);
    let resumed = AgentRuntime::new(store_config(store, &remembered, false), busy_model()).unwrap();
    assert_eq!(resumed.state().history, history, "resuming the remembered id finds the import");
}

/// The child of the relative-path test: changes its working directory (process-wide, so
/// in a child of its own) after opening a store at a relative path.
#[test]
fn store_4_relative_path_child() {
    let Ok(dir) = std::env::var("ARKAGENT_RELATIVE_DIR") else { return };
    std::env::set_current_dir(&dir).unwrap();
    let store = SqliteStore::open("sessions.db").unwrap();
    let _held = store.open_session("x").unwrap();
    let elsewhere = Path::new(&dir).join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::env::set_current_dir(&elsewhere).unwrap();
    let second = store.open_session("x").map(|_| ()).map_err(|e| e.code());
    println!("second open: {second:?}");
}

#[test]
fn store_4_a_store_opened_at_a_relative_path_keeps_locking_after_a_chdir() {
    let dir = temp_dir("relative");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "store::store_4_relative_path_child", "--nocapture", "--test-threads=1"])
        .env("ARKAGENT_RELATIVE_DIR", &dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("second open: Err(\"session_locked\")"), "the session was opened twice: {stdout}");
}

#[test]
fn store_5_another_applications_empty_database_is_foreign_and_untouched() {
    // A database another application created (its application_id set) before it made any
    // table: not an arkagent store, and not to be taken over.
    let dir = temp_dir("foreign-empty");
    let path = dir.join("theirs.db");
    SqliteStore::execute_raw(&path, "PRAGMA application_id = 1234; PRAGMA user_version = 7").unwrap();
    let before = std::fs::read(&path).unwrap();
    assert!(!before.is_empty());
    assert_eq!(open_code(&path), "store_foreign");
    assert_eq!(std::fs::read(&path).unwrap(), before, "left as it was");
}

/// STORE-4, CHAT-2: the title is "the first user text" also when that text was compressed
/// out before the session's first commit — an import, a fork of a compressed chat (found by
/// a JS test: a fork was titled with its first *live* user text, its source with the first).
#[tokio::test]
async fn store_4_a_session_whose_first_user_text_is_archived_is_titled_with_it() {
    let state = json!({"version": 1, "session_id": "t", "usages": [], "history": {
        "messages": [{"role": "user", "content": "the second question"}, {"role": "assistant", "content": "a2"}],
        "episodic_memories": [{"id": "e1", "summary": "s", "created_at_ms": 1, "message_count": 2,
            "archived_messages": [{"role": "user", "content": "the first question\nmore"}, {"role": "assistant", "content": "a1"}]}],
    }});
    let dir = temp_dir("store4-archived-title");
    for store in [sqlite(&dir.join("sessions.db")), Arc::new(InMemorySessionStore::new()) as Arc<dyn SessionStore>] {
        let rt = AgentRuntime::new(store_config(store.clone(), "t", false), busy_model()).unwrap();
        rt.import_state(&state.to_string()).unwrap();
        let list = store.list_sessions().unwrap();
        assert_eq!(list.iter().map(|s| (s.id.as_str(), s.title.as_str())).collect::<Vec<_>>(), [("t", "the first question")]);
    }
}

/// STORE-4, STORE-5: provider counts are untrusted: a `total_tokens` near 2⁶⁴ saturates the
/// session's stored total (i64::MAX, as the in-memory store saturates at u64::MAX) instead
/// of turning SQLite's sum into a REAL that no `list_sessions` could read again; a file
/// that already holds one lists too.
#[tokio::test]
async fn store_4_store_5_a_huge_token_count_saturates_the_listed_total() {
    let dir = temp_dir("store-huge-tokens");
    let path = dir.join("s.db");
    let huge = ScriptedModel::with(|_: &Value, _| {
        let mut r = text_reply("done", 10);
        if let Reply::Json(v) = &mut r {
            v["usage"]["total_tokens"] = json!(u64::MAX);
        }
        r
    });
    let rt = AgentRuntime::new(store_config(sqlite(&path), "huge", false), huge).unwrap();
    for _ in 0..3 {
        rt.run("hello").await.unwrap();
    }
    drop(rt);
    let store = sqlite(&path);
    let listed = store.list_sessions().unwrap();
    assert_eq!(listed[0].total_tokens, i64::MAX as u64);
    drop(store);
    // A total already stored as a REAL (an older version's sum) is read, not refused.
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute("UPDATE sessions SET total_tokens = 9.3e18", []).unwrap();
    drop(db);
    let listed = sqlite(&path).list_sessions().unwrap();
    assert_eq!(listed[0].total_tokens, 9_300_000_000_000_000_000);
    let _ = std::fs::remove_dir_all(&dir);
}

/// CHAT-1, STORE-4: an id generator that restarts with the process (SequentialIdGenerator)
/// gives run ids and episode ids the resumed session already has: they are skipped, so
/// every run and episode of the session has its own id, compressions go on after the
/// resume, and the stored session keeps opening.
#[tokio::test]
async fn store_4_cmp_6_ids_a_resumed_session_has_are_skipped_and_it_still_opens() {
    let dir = temp_dir("store-repeated-run");
    let path = dir.join("s.db");
    let open = || {
        let mut c = store_config(sqlite(&path), "repeat", true);
        c.id_generator = Arc::new(SequentialIdGenerator::new("r"));
        AgentRuntime::new(c, busy_model()).unwrap()
    };
    let rt = open();
    let first = rt.run("first").await.unwrap().run_id;
    let episodes = rt.episodic_memories().len();
    assert!(episodes > 0, "the first run compressed");
    drop(rt);
    let rt = open();
    let second = rt.run("second").await.unwrap().run_id;
    assert_ne!(second, first);
    assert!(rt.episodic_memories().len() > episodes, "a compression after the resume");
    drop(rt);
    let rt = open();
    let ids: Vec<String> = rt.state().runs.iter().map(|m| m.run_id.clone()).collect();
    assert_eq!(ids, [first.clone(), second.clone()], "the stored session opens with both runs");
    rt.rewind(&second).unwrap();
    drop(rt);
    let _ = std::fs::remove_dir_all(&dir);
}

/// CMP-6: the default compressor skips episode ids the session already has (a generator
/// that restarts with the process repeats them, and a repeated one was refused with
/// `invalid_episode_id`: no compression could commit again).
#[tokio::test]
async fn cmp_6_the_default_compressor_skips_episode_ids_the_session_has() {
    let donor = AgentRuntime::new(
        { let mut c = store_config(Arc::new(InMemorySessionStore::new()), "donor-ep", true); c.store = None; c },
        busy_model(),
    )
    .unwrap();
    donor.run("first").await.unwrap();
    donor.run("second").await.unwrap();
    let mut state: Value = serde_json::from_str(&donor.export_state().unwrap()).unwrap();
    let episodes = state["history"]["episodic_memories"].as_array_mut().unwrap();
    assert!(!episodes.is_empty());
    // The ids a fresh SequentialIdGenerator("r") gives next, r-1 being the run's.
    for (i, e) in episodes.iter_mut().enumerate() {
        e["id"] = json!(format!("r-{}", i + 2));
    }
    let count = episodes.len();
    let mut c = store_config(Arc::new(InMemorySessionStore::new()), "ep-ids", true);
    c.store = None;
    c.id_generator = Arc::new(SequentialIdGenerator::new("r"));
    let rt = AgentRuntime::new(c, busy_model()).unwrap();
    rt.import_state(&state.to_string()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());
    rt.run("third").await.unwrap();
    let refused = recorder.0.lock().unwrap().iter().filter(|e| serde_json::to_string(e).unwrap().contains("invalid_episode_id")).count();
    assert_eq!(refused, 0, "no compression refused for a repeated episode id");
    assert!(rt.episodic_memories().len() > count, "a compression committed");
}

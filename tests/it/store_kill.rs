//! STORE-3: the kill harness. A real session (tools, compression after almost every turn,
//! an instant scripted model) runs in a child process — this test binary re-run with
//! `ARKAGENT_KILL_CHILD` — and is SIGKILLed at random instants; after every kill the
//! store is reopened and the committed session checked: it opens (never corrupt), it is
//! paired, no compression is half-applied (archived originals + live history are exactly
//! the tasks in order, nothing duplicated or missing), usages match the messages, every
//! episode has its originals, and nothing committed before is lost or rewritten. The next
//! child resumes the session where the store says it is.
//!
//! `ARKAGENT_KILL_COUNT` sets the number of kills (default 60; `scripts/kill-test.sh N`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arkagent::compress::COMPRESSION_USAGE_SOURCE;
use arkagent::store::SessionStore;
use arkagent::{AgentRuntime, HistoryInvariants, Message, SqliteStore};

use crate::store::{busy_model, store_config, temp_dir};

const SESSION: &str = "kill";

/// The child: resumes the session and runs task after task until killed.
#[test]
fn store_3_kill_child() {
    let Ok(path) = std::env::var("ARKAGENT_KILL_CHILD") else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let agent = AgentRuntime::new(store_config(store, SESSION, true), busy_model()).unwrap();
        println!("CHILD-READY");
        loop {
            let next = full_history(&agent.state()).iter().filter(|m| matches!(m, Message::User { .. })).count();
            agent.run(&format!("task {next}")).await.unwrap();
        }
    });
}

/// Archived originals (oldest episode first) followed by the live history.
fn full_history(state: &arkagent::AgentState) -> Vec<Message> {
    let mut all: Vec<Message> = Vec::new();
    for e in &state.history.episodic_memories {
        all.extend(e.archived_messages.iter().cloned());
    }
    all.extend(state.history.messages.iter().cloned());
    all
}

/// Checks the committed session; returns its full history.
fn check_invariants(path: &Path, previous: &[Message]) -> Result<Vec<Message>, String> {
    let store = SqliteStore::open(path).map_err(|e| format!("reopen: {e}"))?;
    let opened = store.open_session(SESSION).map_err(|e| format!("open_session: {e}"))?;
    let Some(state) = opened.state.clone() else { return Ok(Vec::new()) };
    let full = full_history(&state);
    if !HistoryInvariants::tool_calls_paired(&state.history.messages) || !HistoryInvariants::tool_calls_paired(&full) {
        return Err("unpaired tool calls".into());
    }
    // Tasks in order, each once: a half-applied compression would duplicate or drop some.
    let tasks: Vec<String> = full.iter().filter_map(|m| if let Message::User { content } = m { Some(content.to_string()) } else { None }).collect();
    for (i, t) in tasks.iter().enumerate() {
        if *t != format!("task {i}") {
            return Err(format!("user message {i} is {t:?}"));
        }
    }
    let mut ids = std::collections::HashSet::new();
    for m in &full {
        for c in m.tool_calls() {
            if !ids.insert(c.id.clone()) {
                return Err(format!("duplicated tool call {}", c.id));
            }
        }
    }
    for e in &state.history.episodic_memories {
        if e.archived_messages.is_empty() || e.archived_messages.len() != e.message_count {
            return Err(format!("episode {} without its originals", e.id));
        }
    }
    let assistant = full.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
    let summaries = state.usages.iter().filter(|u| u.source_name() == Some(COMPRESSION_USAGE_SOURCE)).count();
    if state.usages.len() - summaries != assistant {
        return Err(format!("{} model usages for {assistant} assistant messages", state.usages.len() - summaries));
    }
    if summaries != state.history.episodic_memories.len() {
        return Err(format!("{summaries} summary usages for {} episodes", state.history.episodic_memories.len()));
    }
    if full.len() < previous.len() || full[..previous.len()] != *previous {
        return Err("a committed message was lost or rewritten".into());
    }
    drop(opened);
    let summary = store.list_sessions().map_err(|e| e.to_string())?.into_iter().find(|s| s.id == SESSION).ok_or("not listed")?;
    let tokens: u64 = state.usages.iter().map(|u| u.total_tokens).sum();
    if summary.message_count != full.len() as u64 || summary.total_tokens != tokens {
        return Err(format!("list says {} messages / {} tokens, the session has {} / {tokens}", summary.message_count, summary.total_tokens, full.len()));
    }
    Ok(full)
}

#[test]
fn store_3_sigkill_at_random_instants_leaves_the_last_committed_state() {
    if std::env::var("ARKAGENT_KILL_CHILD").is_ok() {
        return;
    }
    let kills: usize = std::env::var("ARKAGENT_KILL_COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let dir = temp_dir("kill");
    let path = dir.join("kill.db");
    // A copy of this binary: a rebuild while the harness runs must not pull it away.
    let exe = dir.join("harness");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    struct RemoveOnDrop(std::path::PathBuf);
    impl Drop for RemoveOnDrop {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _binary = RemoveOnDrop(exe.clone());
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let started = Instant::now();
    let mut previous: Vec<Message> = Vec::new();
    let (mut grew, mut episodes) = (0usize, 0usize);
    for kill in 0..kills {
        let mut child = Command::new(&exe)
            .args(["--exact", "store_kill::store_3_kill_child", "--nocapture", "--test-threads=1"])
            .env("ARKAGENT_KILL_CHILD", &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("CHILD-READY") {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                let status = child.wait().unwrap();
                panic!("kill {kill}: the child exited ({status}) before running: the store did not reopen");
            }
        }
        // Kill at a random instant within the next 40 ms of constant commits.
        std::thread::sleep(Duration::from_micros(random() % 40_000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let full = check_invariants(&path, &previous).unwrap_or_else(|e| panic!("kill {kill}: {e}"));
        if full.len() > previous.len() {
            grew += 1;
        }
        episodes = SqliteStore::open(&path).unwrap().open_session(SESSION).unwrap().state.map_or(0, |s| s.history.episodic_memories.len());
        previous = full;
    }
    println!(
        "STORE-3: {kills} SIGKILLs, 0 inconsistencies, {} messages and {episodes} episodes committed, \
         the history grew between {grew} kills, {:.1} s",
        previous.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(grew > kills / 10, "the children made progress");
    assert!(episodes > 0, "compressions were committed");
    // The copy of the test binary is ~100 MB: never leave it behind.
    let _ = std::fs::remove_dir_all(&dir);
}

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

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arkagent::compress::COMPRESSION_USAGE_SOURCE;
use arkagent::store::SessionStore;
use arkagent::{AgentRuntime, HistoryInvariants, Message, SqliteStore};

use crate::kill_loop::Harness;
use crate::store::{busy_model, store_config};

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
    let mut harness = Harness::new("kill");
    let path = harness.dir.join("kill.db");
    let started = Instant::now();
    let mut previous: Vec<Message> = Vec::new();
    let (mut grew, mut episodes) = (0usize, 0usize);
    for kill in 0..kills {
        // Killed at a random instant within the next 40 ms of constant commits.
        harness.kill_once(kill, "store_kill::store_3_kill_child", &[("ARKAGENT_KILL_CHILD", &path)], 40_000);
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
}

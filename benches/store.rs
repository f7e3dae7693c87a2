//! STORE-1/2/4 measurements for BENCHMARKS.md (plain timing, not criterion):
//! commit cost per turn at 100 and 10⁴ messages (synchronous NORMAL and FULL), resume
//! time at 10⁴ messages, and database size per 1,000 messages.
//!
//!     cargo bench --bench store
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use arkagent::store::{Commit, SessionStore, SqliteSync};
use arkagent::{Message, ModelUsage, SqliteStore, ToolCall};

/// One turn: an assistant message with a tool call, its result, the usage (~600 bytes of
/// JSON, a typical tool turn).
fn turn(i: u64) -> (Vec<Message>, ModelUsage) {
    let call = ToolCall { id: format!("call_{i}"), name: "get_weather".into(), arguments: format!(r#"{{"city":"Paris {i}","days":3}}"#) };
    let assistant = Message::Assistant { content: Some(format!("Let me look that up for turn {i}.")), tool_calls: vec![call], reasoning: None, thinking: Default::default() };
    let result = Message::tool_result(
        format!("call_{i}"),
        format!("weather in Paris {i}: sunny, 21°C, light wind from the west; tomorrow cloudy with rain in the evening, 17°C; the day after clear and warm. {}", "x".repeat(200)),
        false,
    );
    let usage = ModelUsage { prompt_tokens: 1000 + i, completion_tokens: 20, total_tokens: 1020 + i, ..ModelUsage::default() };
    (vec![assistant, result], usage)
}

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("arkagent-store-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Fills a session to `messages` messages (in commits of 1,000), then times `turns`
/// single-turn commits; returns µs per turn.
fn commit_cost(sync: SqliteSync, messages: u64, turns: u64) -> f64 {
    let d = dir();
    let store = SqliteStore::open_with(d.join("s.db"), sync, None).unwrap();
    let opened = store.open_session("bench").unwrap();
    let mut end = 0u64;
    let mut usages = 0usize;
    let commit = |batch: u64, end: &mut u64, usages: &mut usize| {
        let mut c = Commit { messages_from: *end, usages_from: *usages, now_ms: 1, ..Commit::default() };
        for k in 0..batch {
            let (m, u) = turn(*end / 2 + k);
            c.messages.extend(m);
            c.usages.push(u);
        }
        opened.lease.commit(&c).unwrap();
        *end = c.end();
        *usages += c.usages.len();
    };
    while end < messages {
        commit(500.min((messages - end) / 2).max(1), &mut end, &mut usages);
    }
    let start = Instant::now();
    for _ in 0..turns {
        commit(1, &mut end, &mut usages);
    }
    start.elapsed().as_secs_f64() * 1e6 / turns as f64
}

fn main() {
    for sync in [SqliteSync::Normal, SqliteSync::Full] {
        for (messages, turns) in [(100u64, 500u64), (10_000, 500)] {
            let us = commit_cost(sync, messages, turns);
            println!("commit per turn, {sync:?}, at {messages} messages: {us:.0} µs");
        }
    }
    // Resume at 10⁴ messages: open the file (integrity check, migration check) and load.
    let d = dir();
    let path = d.join("s.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        let opened = store.open_session("big").unwrap();
        let mut c = Commit { now_ms: 1, ..Commit::default() };
        for k in 0..5_000 {
            let (m, u) = turn(k);
            c.messages.extend(m);
            c.usages.push(u);
        }
        opened.lease.commit(&c).unwrap();
    }
    let mut best = f64::MAX;
    let mut loaded = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let state = store.open_session("big").unwrap().state.unwrap();
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
        loaded = state.history.messages.len();
    }
    println!("resume at {loaded} messages (open + load, best of 5): {best:.1} ms");
    SqliteStore::execute_raw(&path, "PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let json: usize = (0..5_000).map(|k| turn(k).0.iter().map(|m| serde_json::to_string(m).unwrap().len()).sum::<usize>()).sum();
    println!(
        "database size: {:.0} KiB per 1,000 messages ({} bytes of message JSON per 1,000)",
        size as f64 / 1024.0 / 10.0,
        json / 10
    );
}

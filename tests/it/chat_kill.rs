//! CHAT-1, CHAT-2: the kill harness with gestures. A real session on SQLite runs in a child
//! process (this test binary re-run with `ARKAGENT_CHAT_KILL_CHILD`): each run is one tool
//! call and a final answer (four messages, two model calls); between runs the child
//! regenerates, edits and resends, rewinds or forks at random live runs — forever. The
//! parent SIGKILLs it at random instants and checks the store after every kill: the session
//! and every fork open (never corrupt, marks valid); no rewind is half-applied (the live
//! history is exactly four messages per run before the last, whose committed part is its
//! input, its tool turn or all four; each run mark names a user message; the live answers
//! are exactly the calls not marked discarded); no billed call is lost (the usages only
//! grow, the listed total tokens are their sum, discarded ones included); every fork is a
//! whole session (complete runs, no usages).
//!
//! `ARKAGENT_CHAT_KILL_COUNT` sets the number of kills (default 60; `scripts/kill-test.sh N`).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arkagent::store::SessionStore;
use arkagent::{AgentRuntime, AgentState, HistoryInvariants, Message, SqliteStore};

use crate::kill_loop::Harness;

const SESSION: &str = "chat-kill";

fn config(store: Arc<dyn SessionStore>) -> arkagent::AgentRuntimeConfig {
    let mut c = crate::chat::config(Some(store), SESSION);
    // Run ids unique across children (each child's generator starts again).
    c.id_generator = Arc::new(arkagent::runtime::DefaultIdGenerator::default());
    c
}

/// The child: runs, and between runs makes a gesture at a random live run.
#[test]
fn chat_1_kill_child() {
    let Ok(path) = std::env::var("ARKAGENT_CHAT_KILL_CHILD") else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let agent = AgentRuntime::new(config(store.clone()), crate::chat::model()).unwrap();
        let mut seed = (u64::from(std::process::id()) * 2_654_435_761) | 1;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        println!("CHILD-READY");
        for step in 0u64.. {
            let runs: Vec<String> = agent.state().runs.iter().map(|m| m.run_id.clone()).collect();
            let pick = runs.get((random() as usize) % runs.len().max(1)).cloned();
            match (random() % 6, pick) {
                (0, Some(run)) => drop(agent.regenerate(&run).await.unwrap()),
                (1, Some(run)) => drop(agent.edit_and_resend(&run, format!("task e{step}")).await.unwrap()),
                (2, Some(run)) => drop(agent.rewind(&run).unwrap()),
                (3, Some(run)) => drop(agent.fork(&format!("fork-{}-{step}", std::process::id()), Some(&run)).unwrap()),
                _ => drop(agent.run(format!("task {step}")).await.unwrap()),
            }
        }
    });
}

/// What the harness saw of the session last time.
#[derive(Default)]
struct Seen {
    usages: usize,
}

fn check_session(state: &AgentState, fork: bool) -> Result<(), String> {
    let messages = &state.history.messages;
    if !HistoryInvariants::tool_calls_paired(messages) {
        return Err("unpaired history".into());
    }
    // The run marks cut the history into the runs, each its input and the committed part
    // of its turn (a kill may have cut a run after its input or its tool turn).
    let starts: Vec<usize> = state.runs.iter().map(|m| usize::try_from(m.message).unwrap()).collect();
    if starts.first().copied().unwrap_or(messages.len()) != 0 {
        return Err("the history does not begin with a run's input".into());
    }
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(messages.len());
        let segment = messages.get(start..end).ok_or("a run mark past the history's end")?;
        let inputs = segment.iter().filter(|m| matches!(m, Message::User { .. })).count();
        if !matches!(segment.first(), Some(Message::User { .. })) || inputs != 1 || ![1, 3, 4].contains(&segment.len()) {
            return Err(format!("run {} holds {} messages, {inputs} inputs: a half-applied gesture", state.runs[i].run_id, segment.len()));
        }
    }
    let answers = messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
    let kept = state.usages.iter().filter(|u| !u.discarded).count();
    if !fork && answers != kept {
        return Err(format!("{answers} live answers but {kept} usages not discarded"));
    }
    Ok(())
}

fn check(path: &Path, seen: &mut Seen) -> Result<(usize, usize), String> {
    let store = SqliteStore::open(path).map_err(|e| format!("reopen: {e}"))?;
    let mut forks = 0;
    let mut discarded = 0;
    for summary in store.list_sessions().map_err(|e| format!("list: {e}"))? {
        let opened = store.open_session(&summary.id).map_err(|e| format!("open {}: {e}", summary.id))?;
        let Some(state) = opened.state else { continue };
        let fork = summary.id != SESSION;
        check_session(&state, fork).map_err(|e| format!("{}: {e}", summary.id))?;
        let tokens: u64 = state.usages.iter().map(|u| u.total_tokens).sum();
        if tokens != summary.total_tokens {
            return Err(format!("{}: listed {} tokens, usages hold {tokens}", summary.id, summary.total_tokens));
        }
        if fork {
            forks += 1;
            if !state.usages.is_empty() {
                return Err(format!("{}: a fork with usages", summary.id));
            }
            continue;
        }
        if state.usages.len() < seen.usages {
            return Err(format!("billed calls lost: {} usages after {}", state.usages.len(), seen.usages));
        }
        seen.usages = state.usages.len();
        discarded = state.usages.iter().filter(|u| u.discarded).count();
    }
    Ok((forks, discarded))
}

#[test]
fn chat_1_sigkill_during_rewinds_and_forks_never_half_applies_one() {
    if std::env::var("ARKAGENT_CHAT_KILL_CHILD").is_ok() {
        return;
    }
    let kills: usize = std::env::var("ARKAGENT_CHAT_KILL_COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let mut harness = Harness::new("chat-kill");
    let path = harness.dir.join("chat.db");
    let started = Instant::now();
    let mut seen = Seen::default();
    let (mut forks, mut discarded) = (0, 0);
    for kill in 0..kills {
        harness.kill_once(kill, "chat_kill::chat_1_kill_child", &[("ARKAGENT_CHAT_KILL_CHILD", &path)], 30_000);
        (forks, discarded) = check(&path, &mut seen).unwrap_or_else(|e| panic!("kill {kill}: {e}"));
    }
    println!(
        "CHAT-1: {kills} SIGKILLs during runs, regenerates, edits, rewinds and forks: 0 half-applied; {} calls billed, \
         {discarded} of them discarded, {forks} forks, {:.1} s",
        seen.usages,
        started.elapsed().as_secs_f64()
    );
    assert!(seen.usages > kills / 2, "the children made progress");
    assert!(discarded > 0 && forks > 0, "gestures were committed");
}

//! TOOL-2: the kill harness with approvals. A real session on SQLite runs in a child process
//! (this test binary re-run with `ARKAGENT_APPROVAL_KILL_CHILD`): each task's first answer
//! calls `pay` and `refund` (both require approval) and `log` (runs at once); the child
//! answers every waiting call (approves `pay`, rejects `refund`), one committed answer at a
//! time, resumes, and starts the next task — forever, its tools taking a few ms each. The
//! parent SIGKILLs it at random instants: before the `approval_requested` event, between
//! two answers, during an approved tool's execution. After every kill: the store opens,
//! the history is paired, no decision went backwards (a rejected call stays rejected, an
//! approved one never waits again), every tool ran at most once (the children's execution
//! log has no call twice), and a closed turn answered every call as decided — a run, a
//! `tool_rejected`, or `tool_interrupted` for a call a kill cut off.
//!
//! `ARKAGENT_APPROVAL_KILL_COUNT` sets the number of kills (default 100; `scripts/kill-test.sh N` runs N of each harness).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arkagent::store::SessionStore;
use arkagent::history::PendingCallState;
use arkagent::tools::ApprovalDecision;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, HistoryInvariants, Message, ModelConfig, SqliteStore, ToolContext, ToolDefinition,
    ToolExecutor, ToolInvocation, ToolRegistry, ToolResult,
};
use async_trait::async_trait;
use serde_json::json;

use crate::kill_loop::Harness;
use crate::support::{text_reply, tool_calls_reply, ScriptedModel, API_KEY};

const SESSION: &str = "approval-kill";

/// Appends the call id to the execution log before it works for a few ms.
struct Logged(std::path::PathBuf);

#[async_trait]
impl ToolExecutor for Logged {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let mut log = std::fs::OpenOptions::new().create(true).append(true).open(&self.0).unwrap();
        log.write_all(format!("{}\n", call.call_id).as_bytes()).unwrap();
        drop(log);
        tokio::time::sleep(Duration::from_millis(3)).await;
        ToolResult::ok(format!("{} done", call.name))
    }
}

fn config(store: Arc<dyn SessionStore>, log: &Path) -> AgentRuntimeConfig {
    let tool = Arc::new(Logged(log.to_path_buf()));
    let mut tools = ToolRegistry::new();
    tools.register(ToolDefinition::new("pay", "Pays", json!({"type": "object"})).with_approval(), tool.clone()).unwrap();
    tools.register(ToolDefinition::new("refund", "Refunds", json!({"type": "object"})).with_approval(), tool.clone()).unwrap();
    tools.register(ToolDefinition::new("log", "Logs", json!({"type": "object"})), tool).unwrap();
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.tools = tools;
    c.session_id = Some(SESSION.into());
    c.store = Some(store);
    c
}

/// Answers the task's user message with the three calls, anything else with a final text.
fn model() -> Arc<ScriptedModel> {
    ScriptedModel::with(|body, _| {
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        if last["role"] != "user" {
            return text_reply("done", 10);
        }
        let task = last["content"].as_str().unwrap_or_default().trim_start_matches("task ").to_owned();
        tool_calls_reply(
            &[(&format!("t{task}_pay"), "pay", json!({})), (&format!("t{task}_refund"), "refund", json!({})), (&format!("t{task}_log"), "log", json!({}))],
            10,
        )
    })
}

/// The child: resumes the session; answers what waits, resumes, runs the next task.
#[test]
fn tool_2_approval_kill_child() {
    let (Ok(path), Ok(log)) = (std::env::var("ARKAGENT_APPROVAL_KILL_CHILD"), std::env::var("ARKAGENT_APPROVAL_KILL_LOG")) else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let agent = AgentRuntime::new(config(store, Path::new(&log)), model()).unwrap();
        println!("CHILD-READY");
        loop {
            if agent.state().pending_turn.is_some() {
                for call in agent.pending_approvals() {
                    let decision = if call.name == "pay" {
                        ApprovalDecision::Approve
                    } else {
                        ApprovalDecision::Reject { reason: "not today".into() }
                    };
                    agent.answer_approval(&call.call_id, decision).unwrap();
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                agent.resume_run().await.unwrap();
                continue;
            }
            let tasks = agent.state().history.messages.iter().filter(|m| matches!(m, Message::User { .. })).count();
            agent.run(&format!("task {tasks}")).await.unwrap();
        }
    });
}

/// The order of a call's states: a decision never goes back.
fn rank(state: &PendingCallState) -> u8 {
    match state {
        PendingCallState::AwaitingApproval => 0,
        PendingCallState::Approved { .. } | PendingCallState::Rejected { .. } => 1,
        PendingCallState::Running => 2,
        PendingCallState::Done { .. } => 3,
    }
}

/// What the harness knows of each call across kills.
#[derive(Default)]
struct Seen {
    /// The last state of each call seen pending: (rank, rejected).
    pending: HashMap<String, (u8, bool)>,
    /// Calls seen closed into the history, with their result text.
    closed: HashMap<String, String>,
}

fn check(path: &Path, log: &Path, seen: &mut Seen) -> Result<(), String> {
    let store = SqliteStore::open(path).map_err(|e| format!("reopen: {e}"))?;
    let opened = store.open_session(SESSION).map_err(|e| format!("open_session: {e}"))?;
    let Some(state) = opened.state.clone() else { return Ok(()) };
    if !HistoryInvariants::tool_calls_paired(&state.history.messages) {
        return Err("unpaired history".into());
    }
    // At most once: no call in the execution log twice.
    let executed = std::fs::read_to_string(log).unwrap_or_default();
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for id in executed.lines().filter(|l| !l.is_empty()) {
        *runs.entry(id).or_default() += 1;
    }
    if let Some((id, n)) = runs.iter().find(|(_, n)| **n > 1) {
        return Err(format!("{id} ran {n} times"));
    }
    if let Some(turn) = &state.pending_turn {
        for call in &turn.calls {
            let now = (rank(&call.state), matches!(call.state, PendingCallState::Rejected { .. }));
            if let Some(before) = seen.pending.get(&call.call_id) {
                if now.0 < before.0 || (before.1 && now.0 == 1 && !now.1) {
                    return Err(format!("{}: a decision went back ({before:?} -> {now:?})", call.call_id));
                }
            }
            if seen.closed.contains_key(&call.call_id) {
                return Err(format!("{} is pending again after its turn closed", call.call_id));
            }
            seen.pending.insert(call.call_id.clone(), now);
        }
    }
    for m in &state.history.messages {
        let Message::Tool { tool_call_id, content, .. } = m else { continue };
        let text = content.to_string();
        let ran = runs.contains_key(tool_call_id.as_str());
        let ok = if tool_call_id.ends_with("_refund") {
            text.contains("tool_rejected") && !ran
        } else {
            text.contains("done") && ran || text.contains("tool_interrupted")
        };
        if !ok {
            return Err(format!("{tool_call_id} closed with {text:?} (ran: {ran})"));
        }
        if let Some(before) = seen.closed.insert(tool_call_id.clone(), text.clone()) {
            if before != text {
                return Err(format!("{tool_call_id}'s result was rewritten"));
            }
        }
    }
    Ok(())
}

#[test]
fn tool_2_sigkill_with_pending_approvals_loses_no_decision_and_runs_no_tool_twice() {
    if std::env::var("ARKAGENT_APPROVAL_KILL_CHILD").is_ok() {
        return;
    }
    let kills: usize = std::env::var("ARKAGENT_APPROVAL_KILL_COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let mut harness = Harness::new("approval-kill");
    let (path, log) = (harness.dir.join("kill.db"), harness.dir.join("executed.log"));
    let started = Instant::now();
    let mut seen = Seen::default();
    let (mut paused_at_kill, mut interrupted) = (0usize, 0usize);
    for kill in 0..kills {
        let env = [("ARKAGENT_APPROVAL_KILL_CHILD", path.as_path()), ("ARKAGENT_APPROVAL_KILL_LOG", log.as_path())];
        harness.kill_once(kill, "approval_kill::tool_2_approval_kill_child", &env, 30_000);
        if let Err(e) = check(&path, &log, &mut seen) {
            panic!("kill {kill}: {e}");
        }
        let state = SqliteStore::open(&path).unwrap().open_session(SESSION).unwrap().state;
        paused_at_kill += usize::from(state.as_ref().is_some_and(|s| s.pending_turn.is_some()));
    }
    interrupted += seen.closed.values().filter(|t| t.contains("tool_interrupted")).count();
    let closed_turns = seen.closed.keys().filter(|k| k.ends_with("_pay")).count();
    println!(
        "TOOL-2: {kills} SIGKILLs, 0 decisions lost, 0 tools run twice; {closed_turns} turns closed, {paused_at_kill} kills left a \
         paused turn, {interrupted} calls answered tool_interrupted, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(closed_turns > kills / 10, "the children made progress");
    assert!(paused_at_kill > 0, "some kills hit a paused turn");
}

//! The runtime and what it is made of ([`Inner`]): its fixed parts, its [`Session`], its
//! run slot, and the few things every operation does (emit an event, reach a commit
//! point, end a run). The run loop is in `run_loop.rs`, the ways to start it in
//! `start.rs`, the compression attempt in `compression_step.rs`.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::config::AgentRuntimeConfig;
use super::delegation::{DelegateTaskTool, SubAgentService};
use super::events::{Emitter, EventKind, SubAgentChildEvent};
use super::outcome::{RunOutcome, RunStatus};
use super::tool_exec::ExecPolicy;
use crate::error::ArkAgentError;
use crate::llm::{ChatClient, ModelConfig};
use crate::compress::ContextCompressor;
use crate::memory::ScopedMemory;
use crate::session::{Committed, Session};
use crate::tools::ToolRegistry;

pub use crate::session::COMPRESSION_BACKOFF_MODEL_CALLS;

/// One conversation with a model and tools (CORE-4). Cheap to clone (shared inner);
/// `Send + Sync`: `cancel` may be called from any thread while `run` is awaited elsewhere.
#[derive(Clone)]
pub struct AgentRuntime {
    pub(super) inner: Arc<Inner>,
}

/// What a runtime is made of: its fixed parts, its [`Session`] and its run slot.
pub(super) struct Inner {
    pub(super) config: AgentRuntimeConfig,
    pub(super) exec_policy: ExecPolicy,
    pub(super) memory: ScopedMemory,
    pub(super) delegate: Option<Arc<DelegateTaskTool>>,
    /// The tools run: [`base_tools`](Self::base_tools), then the MCP servers' once
    /// connected (replaced at a run's start only: MCP-2).
    pub(super) tools: std::sync::RwLock<Arc<ToolRegistry>>,
    /// The host's tools and the built-ins.
    pub(super) base_tools: ToolRegistry,
    /// MCP-3: this runtime's MCP servers, when it has any.
    pub(super) mcp: Option<crate::mcp::McpHub>,
    pub(super) client: ChatClient,
    pub(super) compressor: Option<Arc<dyn ContextCompressor>>,
    pub(super) sub_agents: Option<Arc<SubAgentService>>,
    /// 0 for a root runtime; children are one deeper than their parent.
    pub(super) depth: u32,
    /// The conversation: state, caches, provider count, store cursor.
    pub(super) session: Arc<Session>,
    pub(super) emitter: Emitter,
    /// The run slot: the token of the run (or other operation) holding it.
    pub(super) active_run: Mutex<Option<CancellationToken>>,
    /// Set under `active_run`'s lock by [`AgentRuntime::close`]: no run starts any more.
    pub(super) closed: std::sync::atomic::AtomicBool,
    /// TOOL-1: answers to a paused turn wait for each other here (each one's commit), and
    /// claims of the run slot, attaches and detaches wait for them ([`Inner::hold_answers`]).
    pub(super) answering: Mutex<()>,
    /// Issue 37 item 5: the waiting calls of this runtime's delegation tree (the root's,
    /// shared by every sub-agent below it) and its delegation path.
    pub(super) place: super::approval_hub::TreePlace,
    /// COST-2: where the current run's usage starts.
    pub(super) run_usage: super::run_usage::RunUsageMark,
    /// IMG-9: the photos the codec replaced, by id, when the app keeps them.
    pub(super) originals: Mutex<std::collections::HashMap<String, crate::history::ImageData>>,
}

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime").field("session_id", &self.session_id()).finish_non_exhaustive()
    }
}

impl Inner {
    /// STORE-2: commits what is new since the last commit point (see [`Session::commit`]),
    /// then emits `session_committed`.
    pub(super) fn commit_point(&self, run_id: &str) -> Result<(), ArkAgentError> {
        if let Some(Committed { commit_seq, message_count }) = self.session.commit()? {
            self.emit(run_id, EventKind::SessionCommitted { commit_seq, message_count });
        }
        Ok(())
    }

    pub(super) fn emit(&self, run_id: &str, mut kind: EventKind) {
        if !self.emitter.is_observed() {
            return self.emitter.skip(); // nobody listens: no redaction, no stamping
        }
        // LLM-4: whatever a model, tool or host echoed, the key never reaches an observer.
        redact_event(&self.config.model, &mut kind);
        self.emitter.emit(run_id, kind);
    }

    pub(super) fn finish(&self, run_id: &str, status: RunStatus, iterations: u32, final_text: Option<String>) -> RunOutcome {
        let usage = self.run_usage.usage(&self.session.snapshot());
        self.emit(run_id, EventKind::RunFinished { status, iterations, error_code: None, usage: usage.clone() });
        RunOutcome { run_id: run_id.to_owned(), status, final_text, iterations, usage, pending_approvals: Vec::new() }
    }

    /// A run ends because the store refused a commit: `run_finished` with the store's code.
    pub(super) fn store_failed(&self, run_id: &str, iteration: u32, e: ArkAgentError) -> ArkAgentError {
        tracing::warn!(code = e.code().as_str(), "session store commit failed");
        self.emit(run_id, EventKind::RunFinished {
            status: RunStatus::Failed,
            iterations: iteration,
            error_code: Some(e.code()),
            usage: self.run_usage.usage(&self.session.snapshot()),
        });
        e
    }
}

/// LLM-4 (BND-3 item 5): every text an event carries, redacted of `model`'s secrets. The
/// match names every variant and every text field — no catch-all — so a new event (or a
/// new text field bound by name) does not compile until someone decides what in it is
/// redacted.
fn redact_event(model: &ModelConfig, kind: &mut EventKind) {
    let text = |t: &mut String| model.redact_in_place(t);
    let maybe = |t: &mut Option<String>| {
        if let Some(t) = t {
            model.redact_in_place(t);
        }
    };
    match kind {
        EventKind::RunStarted { input } => text(input),
        EventKind::ModelRequest {
            iteration: _,
            message_count: _,
            tool_count: _,
            estimated_prompt_tokens: _,
            compression_threshold: _,
            prompt_size_source: _,
        } => {}
        EventKind::ModelResponse { iteration: _, usage: _, tool_call_count: _, finish_reason } => maybe(finish_reason),
        EventKind::TextDelta { iteration: _, delta } => text(delta),
        EventKind::ReasoningDelta { iteration: _, delta, redacted: _ } => text(delta),
        EventKind::ToolCallDelta { iteration: _, index: _, name, arguments_delta } => {
            maybe(name);
            text(arguments_delta);
        }
        EventKind::ToolCallStarted { call_id, name, arguments } => {
            text(call_id);
            text(name);
            text(arguments);
        }
        EventKind::ToolCallFinished { call_id, name, is_error: _, error_code, content, metadata } => {
            text(call_id);
            text(name);
            maybe(error_code);
            text(content);
            if let Some(metadata) = metadata {
                redact_json(model, metadata);
            }
        }
        EventKind::ApprovalRequested { call_id, name, arguments, reason: _, path } => {
            text(call_id);
            text(name);
            text(arguments);
            path.iter_mut().for_each(text);
        }
        EventKind::Compression {
            trigger: _,
            outcome: _,
            reason: _,
            episode_id,
            error_code,
            messages_before: _,
            messages_after: _,
            estimated_prompt_tokens: _,
            threshold: _,
            usage: _,
        } => {
            maybe(episode_id);
            maybe(error_code);
        }
        // A child's event was redacted of the child's secrets when the child emitted it;
        // here it is redacted of the parent's too (a delegated task may quote them).
        EventKind::SubAgent(SubAgentChildEvent {
            parent_session_id: _,
            parent_run_id: _,
            child_session_id: _,
            child_run_id: _,
            assignee: _,
            task_description,
            depth: _,
            event,
        }) => {
            text(task_description);
            redact_event(model, &mut event.kind);
        }
        EventKind::SessionCommitted { commit_seq: _, message_count: _ } | EventKind::SummarizerRequest { estimated_prompt_tokens: _ } => {}
        EventKind::McpServer(crate::mcp::McpServerEvent { server: _, state: _, tool_count: _, protocol_version: _, error_code: _, message }) => maybe(message),
        EventKind::SessionRewound { rewound_run_id: _, dropped_run_ids: _, messages_removed: _, message_count: _, discarded: _ } => {}
        EventKind::RunFinished { status: _, iterations: _, error_code: _, usage: _ } => {}
    }
}

/// Every string inside a host's JSON (keys too), redacted of `model`'s secrets.
fn redact_json(model: &ModelConfig, value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => model.redact_in_place(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| redact_json(model, v)),
        serde_json::Value::Object(map) => {
            if map.keys().any(|k| matches!(model.redact_cow(k), std::borrow::Cow::Owned(_))) {
                let entries = std::mem::take(map);
                *map = entries.into_iter().map(|(k, v)| (model.redact(&k), v)).collect();
            }
            map.values_mut().for_each(|v| redact_json(model, v));
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;

//! The runtime and what it is made of ([`Inner`]): its fixed parts, its [`Session`], its
//! run slot, and the few things every operation does (emit an event, reach a commit
//! point, end a run). The run loop is in `run_loop.rs`, the ways to start it in
//! `start.rs`, the compression attempt in `compression_step.rs`.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::config::AgentRuntimeConfig;
use super::delegation::{DelegateTaskTool, SubAgentService};
use super::events::{Emitter, EventKind};
use super::outcome::{RunOutcome, RunStatus};
use super::tool_exec::ExecPolicy;
use crate::error::ArkAgentError;
use crate::llm::ChatClient;
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
    pub(super) tools: ToolRegistry,
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
    /// COST-2: where the current run's usage starts.
    pub(super) run_usage: super::run_usage::RunUsageMark,
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
        let model = &self.config.model;
        match &mut kind {
            EventKind::RunStarted { input } => model.redact_in_place(input),
            EventKind::TextDelta { delta, .. } | EventKind::ReasoningDelta { delta, .. } => model.redact_in_place(delta),
            EventKind::ToolCallDelta { arguments_delta, .. } => model.redact_in_place(arguments_delta),
            EventKind::ToolCallStarted { arguments, .. } => model.redact_in_place(arguments),
            EventKind::ToolCallFinished { content, .. } => model.redact_in_place(content),
            _ => {}
        }
        self.emitter.emit(run_id, kind);
    }

    pub(super) fn finish(&self, run_id: &str, status: RunStatus, iterations: u32, final_text: Option<String>) -> RunOutcome {
        let usage = self.run_usage.usage(&self.session.snapshot());
        self.emit(run_id, EventKind::RunFinished { status, iterations, error_code: None, usage: usage.clone() });
        RunOutcome { run_id: run_id.to_owned(), status, final_text, iterations, usage }
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

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde::{Deserialize, Serialize};

use super::outcome::{CompressionTrigger, RunStatus};
use crate::ids::Clock;
use crate::session::StateView;
use crate::history::{ChildUsageSummary, ModelUsage};
use crate::compress::{CompressOutcome, PromptSizeSource};

/// One runtime event (CORE-5), with correlation fields, serialized flat: the correlation
/// fields beside the event's `type` and that type's fields.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentEvent {
    /// Session of the runtime that emitted it.
    pub session_id: String,
    /// Run it belongs to.
    pub run_id: String,
    /// Per-runtime sequence number, strictly increasing.
    pub seq: u64,
    /// Time from the injected clock.
    pub at_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A run began with this user input (`run_decomposed` is a run too: its first event).
    RunStarted {
        /// The user input; for `run_decomposed`, the task descriptions, one per line.
        input: String,
    },
    /// A model request is about to be sent.
    ModelRequest {
        /// 1-based model call number within the run.
        iteration: u32,
        /// Messages in the history sent.
        message_count: usize,
        /// Tools offered.
        tool_count: usize,
        /// The prompt's size in tokens as the compression trigger sees it (CMP-3, CMP-11,
        /// CMP-12): the larger of the CJK-aware estimate (calibrated per model once the
        /// provider reported prompt tokens) and, after a call that reported usage, the
        /// provider's prompt tokens plus an estimate of the messages appended since.
        estimated_prompt_tokens: u64,
        /// The compression threshold, when compression is on: how close the UI is to it.
        compression_threshold: Option<u64>,
        /// Which figure decided `estimated_prompt_tokens` (CMP-12): the static estimate,
        /// the estimate calibrated from this model's earlier counts, or the provider's
        /// count of the previous request plus what was appended since.
        prompt_size_source: PromptSizeSource,
    },
    /// A model response was parsed and appended.
    ModelResponse {
        /// 1-based model call number within the run.
        iteration: u32,
        /// Usage, when reported; with its `cost` when the model config has a price
        /// (COST-2).
        usage: Option<ModelUsage>,
        /// Tool calls requested.
        tool_call_count: usize,
        /// `finish_reason`, when reported.
        finish_reason: Option<String>,
    },
    /// Answer text arrived: each piece as it streams in (before `model_response`), or the
    /// whole text once after `model_response` for non-streaming calls.
    TextDelta {
        /// 1-based model call number within the run.
        iteration: u32,
        /// The new text.
        delta: String,
    },
    /// Reasoning arrived (THINK-5: Chat Completions `reasoning_content`, Anthropic
    /// `thinking`; a non-streamed answer's whole reasoning at once). Never part of the
    /// answer.
    ReasoningDelta {
        /// 1-based model call number within the run.
        iteration: u32,
        /// The new text ("" for a redacted block).
        delta: String,
        /// True when the provider encrypted this reasoning (Anthropic
        /// `redacted_thinking`): a block began that has no text to show. Left out of the
        /// event's JSON when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// Part of a tool call the model is still writing arrived (streaming only): the name
    /// when the call begins, then argument fragments to concatenate.
    ToolCallDelta {
        /// 1-based model call number within the run.
        iteration: u32,
        /// Position of the call in the answer.
        index: u32,
        /// Tool name, on the first delta of a call.
        name: Option<String>,
        /// Argument text fragment (empty on the first delta).
        arguments_delta: String,
    },
    /// A tool call started.
    ToolCallStarted {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments as the model sent them.
        arguments: String,
    },
    /// A tool call finished (or was cancelled, or failed).
    ToolCallFinished {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// True on failure.
        is_error: bool,
        /// Runtime error code (`unknown_tool`, `invalid_tool_arguments`, `cancelled`, …).
        error_code: Option<String>,
        /// The result's text as the tool gave it. The model reads it with a failure's
        /// code around it (`{"error":{"code","message"}}`), after a note when a person
        /// edited the call's arguments at approval, or an error in its place when its
        /// images exceed the model's bounds.
        content: String,
        /// Structured host data from the tool result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<serde_json::Value>,
    },
    /// TOOL-1: a tool call waits for a person's answer (one event per call, just before the
    /// run ends `awaiting_approval`). Once the run has returned, answer it (ArkTS
    /// `approve`/`reject`, C `arkagent_runtime_approve`/`_reject`, Rust `answer_approval`;
    /// an answer while the run still holds its slot is refused with `run_in_progress`),
    /// then resume the run (`resumeRun`, `arkagent_runtime_resume_run`, `resume_run`).
    /// Nothing expires by itself.
    ApprovalRequested {
        /// Call id: what the answer names.
        call_id: String,
        /// Tool name.
        name: String,
        /// The arguments as the model made them (JSON object text).
        arguments: String,
        /// Why it waits: `tool` (the tool requires approval, always or for these
        /// arguments) or `policy` (the app's policy asked).
        reason: String,
        /// For a sub-agent's call, the session ids from the root's child down to the
        /// sub-agent that made it (its `call_id` is then `<that session id>/<call id>`);
        /// empty for the runtime's own calls.
        #[serde(default)]
        path: Vec<String>,
    },
    /// ISO-5: a compression is about to call its summarizer (one event per call: a chunked
    /// transcript makes several), with the call's estimated prompt; a sub-agent's token
    /// budget counts it before the call is made, and may stop the attempt there.
    SummarizerRequest {
        /// The summarizer call's estimated prompt tokens.
        estimated_prompt_tokens: u64,
    },
    /// A compression attempt that did something or could not: every `compressed` and
    /// `failed` outcome, and `skipped` for `no_safe_split`, `last_usage_is_compression` and
    /// `backing_off_after_failure` (routine below-threshold checks are not reported). After
    /// a failed automatic attempt (before a model call or after a turn) the automatic
    /// attempts are skipped with `backing_off_after_failure` until three more model calls
    /// were made (`COMPRESSION_BACKOFF_MODEL_CALLS`): a failing summarizer is not paid for
    /// at every step; a manual attempt and a context overflow are never held back.
    Compression {
        /// What started it.
        trigger: CompressionTrigger,
        /// What happened.
        outcome: CompressOutcome,
        /// The reason (CMP-2), its code.
        reason: crate::compress::CompressReason,
        /// The new episode, when compressed.
        episode_id: Option<String>,
        /// The model error's code when the reason is `llm_error`.
        error_code: Option<String>,
        /// Messages in the history before.
        messages_before: usize,
        /// Messages in the history after.
        messages_after: usize,
        /// The prompt size checked against the threshold (automatic attempts): the larger
        /// of the local estimate and the provider's last count plus the messages since.
        estimated_prompt_tokens: Option<u64>,
        /// The compressor's threshold.
        threshold: Option<u64>,
        /// The summary calls' usage (recorded in the state only when compressed).
        usage: Option<ModelUsage>,
    },
    /// An event of a sub-agent this runtime delegated to, with correlation fields (SUB-7).
    SubAgent(SubAgentChildEvent),
    /// A commit reached the session store (STORE-6): everything up to here survives a
    /// kill. Only for a runtime with a store.
    SessionCommitted {
        /// The session's commit sequence number (1 for its first commit), as
        /// `SessionSummary::commit_seq` reports it.
        commit_seq: u64,
        /// Messages the session has committed (live plus archived originals).
        message_count: u64,
    },
    /// CHAT-1: the session went back to just before a run (a rewind, or the first step of
    /// a regenerate or an edit-and-resend): that run and every later one are gone from
    /// the history (and the store, before this event). The event's `run_id` is empty.
    SessionRewound {
        /// The run the session went back to (gone with every later run).
        rewound_run_id: String,
        /// The ids of the runs dropped, oldest first.
        dropped_run_ids: Vec<String>,
        /// Live history messages removed.
        messages_removed: u64,
        /// Live history messages left.
        message_count: u64,
        /// What the dropped turns had spent: still in every total (`UsageTotals.discarded`).
        discarded: ChildUsageSummary,
    },
    /// MCP-3: at a run's start, an MCP server connected (`connected`), was listed again
    /// after it said its tools changed (`tools_changed`), or could not be reached
    /// (`failed`, with a stable `error_code`: the run goes on without it). Before the
    /// run's first `model_request`; never a header value in it.
    McpServer(crate::mcp::McpServerEvent),
    /// The run ended (a `run_decomposed` job too: its last event).
    RunFinished {
        /// How it ended (`completed` or `cancelled` for `run_decomposed`: a task's
        /// failure is in its result).
        status: RunStatus,
        /// Model calls made (0 for `run_decomposed`: its children make the calls).
        iterations: u32,
        /// Error code when `status` is `failed`.
        error_code: Option<crate::error::ErrorCode>,
        /// What the run used up to its end, failed runs included (COST-1, COST-2): as
        /// [`RunOutcome::usage`](super::RunOutcome::usage).
        #[serde(default)]
        usage: ChildUsageSummary,
    },
}

impl EventKind {
    /// The `type` tag, e.g. `"run_started"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::RunStarted { .. } => "run_started",
            Self::ModelRequest { .. } => "model_request",
            Self::ModelResponse { .. } => "model_response",
            Self::TextDelta { .. } => "text_delta",
            Self::ReasoningDelta { .. } => "reasoning_delta",
            Self::ToolCallDelta { .. } => "tool_call_delta",
            Self::ToolCallStarted { .. } => "tool_call_started",
            Self::ToolCallFinished { .. } => "tool_call_finished",
            Self::ApprovalRequested { .. } => "approval_requested",
            Self::SummarizerRequest { .. } => "summarizer_request",
            Self::Compression { .. } => "compression",
            Self::SubAgent(_) => "sub_agent",
            Self::SessionCommitted { .. } => "session_committed",
            Self::SessionRewound { .. } => "session_rewound",
            Self::McpServer(_) => "mcp_server",
            Self::RunFinished { .. } => "run_finished",
        }
    }
}

/// A child event as the parent's observers see it (SUB-7).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubAgentChildEvent {
    /// The parent's session.
    pub parent_session_id: String,
    /// The parent's run.
    pub parent_run_id: String,
    /// The child's session.
    pub child_session_id: String,
    /// The child's run.
    pub child_run_id: String,
    /// Worker name or `clone`.
    pub assignee: String,
    /// The delegated task.
    pub task_description: String,
    /// The child's depth (1 for a child of the root).
    pub depth: u32,
    /// The child's event, unchanged.
    pub event: Box<AgentEvent>,
}

/// Receives events. Called synchronously on the thread running the loop, in order; a
/// panic is caught and logged, and the run goes on.
pub trait AgentObserver: Send + Sync {
    /// One event.
    fn on_event(&self, event: &AgentEvent);
}

impl<F: Fn(&AgentEvent) + Send + Sync> AgentObserver for F {
    fn on_event(&self, event: &AgentEvent) {
        self(event)
    }
}

/// Observers of one runtime.
#[derive(Default)]
pub(crate) struct EventBus {
    observers: Mutex<Vec<(u64, Arc<dyn AgentObserver>)>>,
    /// How many observers are subscribed (read without the lock on every event).
    count: AtomicUsize,
    next_id: AtomicU64,
}

impl EventBus {
    pub(crate) fn subscribe(self: &Arc<Self>, observer: Arc<dyn AgentObserver>) -> Subscription {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(mut list) = self.observers.lock() {
            list.push((id, observer));
            self.count.store(list.len(), Ordering::Release);
        }
        Subscription { id, bus: Arc::downgrade(self) }
    }

    /// Whether anyone listens; events nobody receives are not built (PERF-1).
    pub(crate) fn has_observers(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    pub(crate) fn unsubscribe(&self, id: u64) -> bool {
        match self.observers.lock() {
            Ok(mut list) => {
                let before = list.len();
                list.retain(|(i, _)| *i != id);
                self.count.store(list.len(), Ordering::Release);
                before != list.len()
            }
            Err(_) => false,
        }
    }

    pub(crate) fn emit(&self, event: &AgentEvent) {
        // Snapshot first: an observer may (un)subscribe from inside on_event.
        let observers: Vec<Arc<dyn AgentObserver>> = match self.observers.lock() {
            Ok(list) => list.iter().map(|(_, o)| Arc::clone(o)).collect(),
            Err(_) => return,
        };
        for observer in observers {
            if catch_unwind(AssertUnwindSafe(|| observer.on_event(event))).is_err() {
                tracing::warn!(event = event.kind.type_name(), "an observer panicked; ignored");
            }
        }
    }
}

/// Stamps and publishes events of one runtime (shared with its delegation service).
#[derive(Clone)]
pub(crate) struct Emitter {
    pub(crate) bus: Arc<EventBus>,
    seq: Arc<AtomicU64>,
    clock: Arc<dyn Clock>,
    state: StateView,
}

impl Emitter {
    pub(crate) fn new(clock: Arc<dyn Clock>, state: StateView) -> Self {
        Self { bus: Arc::new(EventBus::default()), seq: Arc::new(AtomicU64::new(0)), clock, state }
    }

    /// Whether an event would reach anyone. Callers may skip building an event's payload
    /// when not, but must still call [`skip`](Self::skip) so that sequence numbers stay
    /// those of every event emitted.
    pub(crate) fn is_observed(&self) -> bool {
        self.bus.has_observers()
    }

    /// Counts an event that is not built because nobody observes it.
    pub(crate) fn skip(&self) {
        self.seq.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn emit(&self, run_id: &str, kind: EventKind) {
        if !self.bus.has_observers() {
            return self.skip();
        }
        let session_id = self.state.session_id();
        let event = AgentEvent {
            session_id,
            run_id: run_id.to_owned(),
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            at_ms: self.clock.now_ms(),
            kind,
        };
        self.bus.emit(&event);
    }
}

/// Keeps an observer subscribed; dropping it (or [`Subscription::unsubscribe`]) stops it.
#[must_use = "dropping a Subscription unsubscribes the observer"]
pub struct Subscription {
    id: u64,
    bus: Weak<EventBus>,
}

impl Subscription {
    /// The subscription id.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Stops the observer now.
    pub fn unsubscribe(self) {}
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("id", &self.id).finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(bus) = self.bus.upgrade() {
            bus.unsubscribe(self.id);
        }
    }
}

use std::collections::HashSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::config::{AgentRuntimeConfig, Compression};
use super::events::{AgentObserver, Emitter, EventKind, Subscription};
use super::tool_exec::{run_tool_calls, ExecPolicy};
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{AgentState, HistoryInvariants, Message, ModelUsage, ToolCall};
use crate::llm::wire::{self, BodyTemplate};
use crate::llm::{ChatClient, ChatRequest, HttpTransport, LlmError, StreamDelta};
use crate::compress::{
    apply_compression, count_message_tokens, count_request_tokens, CompressContext, CompressOutcome, CompressReason,
    CompressResult, ContextCompressor, DefaultContextCompressor, PromptSizeSource, TokenCalibration, TokenCounts,
};
use crate::memory::{retrieve_memory_definition, EpisodicMemory, MemoryService, RetrieveMemoryTool, RuntimeMemoryService};
use crate::memory::{ScopedMemory, RETRIEVE_MEMORY_TOOL_NAME};
use crate::subagent::{
    delegate_task_definition, run_decomposed_tasks, DecomposedTask, DelegateTaskTool, DelegationBudget, SubAgentRegistry, SubAgentService,
    UsageTotals,
    DELEGATION_PROMPT,
};
use crate::store::{Commit, SessionLease, SharedStore};
use crate::tools::ToolResult;
use crate::tools::{ToolContext, ToolDefinition, ToolRegistry};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The model gave a final answer.
    Completed,
    /// [`AgentRuntime::cancel`] was called; the history is paired.
    Cancelled,
    /// `max_iterations` model calls were made without a final answer.
    MaxIterations,
    /// The run failed (only in events; `run` returns the error).
    Failed,
}

/// What started a compression attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressionTrigger {
    /// Before a model call, from the prompt estimate (CMP-11).
    Preflight,
    /// After a loop turn, from the last usage (CORE-4, CMP-3).
    PostTurn,
    /// The provider reported a context overflow; forced once, then the call is retried.
    Overflow,
    /// [`AgentRuntime::compress_now`].
    Manual,
}

/// The result of [`AgentRuntime::run`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Run id.
    pub run_id: String,
    /// How it ended.
    pub status: RunStatus,
    /// The final answer text, when completed.
    pub final_text: Option<String>,
    /// Model calls made.
    pub iterations: u32,
}

/// One conversation with a model and tools (CORE-4). Cheap to clone (shared inner);
/// `Send + Sync`: `cancel` may be called from any thread while `run` is awaited elsewhere.
#[derive(Clone)]
pub struct AgentRuntime {
    inner: Arc<Inner>,
}

/// The state cell. The state sits behind an `Arc` so a compression can read a snapshot
/// without holding the lock or copying the history; appends go through `Arc::make_mut`,
/// which copies nothing while no snapshot is alive (CMP-6).
pub(crate) type StateCell = Arc<Mutex<Arc<AgentState>>>;

struct Inner {
    config: AgentRuntimeConfig,
    /// The system prompt sent: the configured one plus built-in sections (ISO-8).
    system_prompt: String,
    exec_policy: ExecPolicy,
    memory: ScopedMemory,
    delegate: Option<Arc<DelegateTaskTool>>,
    tools: ToolRegistry,
    tool_definitions: Vec<ToolDefinition>,
    client: ChatClient,
    compressor: Option<Arc<dyn ContextCompressor>>,
    sub_agents: Option<Arc<SubAgentService>>,
    /// 0 for a root runtime; children are one deeper than their parent.
    depth: u32,
    state: StateCell,
    emitter: Emitter,
    active_run: Mutex<Option<CancellationToken>>,
    /// Usages recorded when the last automatic compression attempt failed.
    compression_failed_at: Mutex<Option<usize>>,
    /// The provider's own count of the last request (CMP-3, CMP-11); cleared whenever the
    /// history is replaced (compression commit, import, seeding).
    provider_count: Mutex<Option<ProviderCount>>,
    /// Bumped by every mutable access to the state except [`Inner::append`] (see
    /// [`StateGuard`]): a history that changed other than by appending has a new one.
    generation: AtomicU64,
    /// PERF-7: the system prompt and tools array, encoded once (both fixed for the
    /// runtime's life), and the per-message encoding cache.
    fixed: FixedEncodings,
    encodings: Mutex<EncodingCache>,
    /// STORE-2: the session store this runtime commits to, and what it has committed.
    persist: Mutex<Option<Persist>>,
}

/// An open session in a store and the cursor of what is committed (absolute positions).
struct Persist {
    lease: Box<dyn SessionLease>,
    /// Absolute position after the last committed live message.
    end: u64,
    episodes: usize,
    usages: usize,
    child_usages: usize,
    /// The next commit rewrites the session (after an import or attaching a new session
    /// to a runtime that already has a history).
    replace_all: bool,
}

/// What never changes after construction, encoded once.
struct FixedEncodings {
    /// The model, tools array, tool choice and sampling fields.
    template: BodyTemplate,
    /// The system prompt message ("" when there is none).
    system: String,
    /// Estimated tokens of the system prompt and tools (CMP-11's estimate, fixed part),
    /// per script class (CMP-12).
    tokens: TokenCounts,
}

/// PERF-7: the encodings of the history's first `history_len` messages and of the
/// memory context, valid for one state generation. A committed message is encoded once;
/// an append only encodes what was appended; anything else (compression commit, import,
/// seeding, a failed run's rollback) bumps the generation and the cache starts over.
///
/// PERF-2: the cache *is* the request body up to the messages array's `]` (the template's
/// head, `[`, the system prompt, the memory context, the history). A request closes it with
/// the template's tail and lends it to the transport as the body itself; the next
/// [`Inner::sync_encodings`] takes it back (cutting the tail off) once the transport let
/// go, or copies the prefix if the host still holds it. So no turn copies the history's
/// JSON: the runtime holds the messages once and their encoding once.
#[derive(Default)]
struct EncodingCache {
    generation: u64,
    /// The body so far: head, `[`, and the comma-separated system prompt, memory context
    /// and history encodings. Empty while lent (see `lent`) or before `built`.
    body: String,
    /// `body` holds the head, the system prompt and the memory context of this generation.
    built: bool,
    /// Something follows the `[` in `body` (the next encoding needs a comma first).
    any: bool,
    /// The body lent to the last request, and the length of its part before the tail.
    lent: Option<(Arc<String>, usize)>,
    context_tokens: TokenCounts,
    history_len: usize,
    history_tokens: TokenCounts,
    /// Their tool call ids (fresh ids are checked against them).
    call_ids: HashSet<String>,
}

impl EncodingCache {
    /// Takes the lent body back (PERF-2): the same allocation when the transport has let
    /// go of it, a copy of its prefix when the host still holds it.
    fn reclaim(&mut self) {
        if let Some((lent, len)) = self.lent.take() {
            self.body = match Arc::try_unwrap(lent) {
                Ok(mut body) => {
                    body.truncate(len);
                    body
                }
                Err(shared) => shared.get(..len).unwrap_or_default().to_owned(),
            };
        }
    }

    /// Heap bytes held: the body (or the lent one), the ids.
    fn heap_bytes(&self) -> usize {
        let body = self.lent.as_ref().map_or(self.body.capacity(), |(b, _)| b.capacity());
        body + self.call_ids.capacity() * std::mem::size_of::<String>() + self.call_ids.iter().map(String::capacity).sum::<usize>()
    }
}

/// The state lock; mutable access bumps the generation, so no writer can forget to
/// invalidate the encoding cache (only [`Inner::append`] bypasses it).
struct StateGuard<'a> {
    guard: MutexGuard<'a, Arc<AgentState>>,
    generation: &'a AtomicU64,
}

impl Deref for StateGuard<'_> {
    type Target = Arc<AgentState>;
    fn deref(&self) -> &Self::Target {
        &self.guard
    }
}

impl DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.generation.fetch_add(1, Ordering::Relaxed);
        &mut self.guard
    }
}

/// What the provider reported for the last request: its prompt tokens and how many
/// history messages that request carried. The next prompt is at least that count plus an
/// estimate of the messages appended since.
#[derive(Clone, Copy)]
struct ProviderCount {
    prompt_tokens: u64,
    messages_sent: usize,
}

/// After a failed automatic compression, automatic attempts (pre-flight, post-turn) pause
/// for this many model calls: every attempt costs a summary call, and a failure tends to
/// repeat. Manual and overflow-forced attempts are never held back.
pub const COMPRESSION_BACKOFF_MODEL_CALLS: usize = 3;

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime").field("session_id", &self.session_id()).finish_non_exhaustive()
    }
}

/// A runtime's run slot, held past the end of a run or compression attempt (see
/// [`AgentRuntime::start_compress_now_holding_slot`]); dropping it frees the slot.
#[must_use = "dropping a RunSlot frees the run slot"]
pub struct RunSlot {
    _active: ActiveRun,
}

impl std::fmt::Debug for RunSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunSlot")
    }
}

/// Holds the run slot; clears it however the run ends (including a dropped future).
struct ActiveRun {
    inner: Arc<Inner>,
    cancel: CancellationToken,
}

impl Drop for ActiveRun {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.inner.active_run.lock() {
            *slot = None;
        }
    }
}

impl AgentRuntime {
    /// A runtime with an empty history. Errors: `invalid_config`, `tool_name_duplicate`
    /// (a host tool named `retrieve_memory` while compression is on).
    pub fn new(config: AgentRuntimeConfig, transport: Arc<dyn HttpTransport>) -> Result<Self, ArkAgentError> {
        Self::new_at_depth(config, transport, 0, None)
    }

    /// A sub-agent runtime one level below its parent, in its parent's delegation tree
    /// (`budget`: it delegates, if its depth allows, under the root's shared budgets).
    pub(crate) fn new_child(
        config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        depth: u32,
        budget: Arc<DelegationBudget>,
    ) -> Result<Self, ArkAgentError> {
        Self::new_at_depth(config, transport, depth.max(1), Some(budget))
    }

    /// The checks [`new`](Self::new) makes before it builds anything (SUB-3: a delegation
    /// runs them before it reserves a slot, so a worker that cannot be built consumes none).
    pub(crate) fn check_buildable(config: &AgentRuntimeConfig) -> Result<(), ArkAgentError> {
        config.validate()?;
        if config.compression.is_some() && config.tools.has(RETRIEVE_MEMORY_TOOL_NAME) {
            return Err(ArkAgentError::config(ErrorCode::ToolNameDuplicate, format!("tool {RETRIEVE_MEMORY_TOOL_NAME:?} is already registered")));
        }
        Ok(())
    }

    fn new_at_depth(
        config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        depth: u32,
        budget: Option<Arc<DelegationBudget>>,
    ) -> Result<Self, ArkAgentError> {
        Self::check_buildable(&config)?;
        let session_id = config.session_id.clone().unwrap_or_else(|| config.id_generator.next_id());
        let client = ChatClient::new(Arc::clone(&transport), config.model.clone());
        let state: StateCell = Arc::new(Mutex::new(Arc::new(AgentState::new(session_id))));
        let emitter = Emitter::new(Arc::clone(&config.clock), Arc::clone(&state));
        let mut tools = config.tools.clone();
        let compressor: Option<Arc<dyn ContextCompressor>> = match &config.compression {
            None => None,
            Some(Compression::Custom(c)) => Some(Arc::clone(c)),
            Some(Compression::Default { config: c, summarizer }) => {
                let model = summarizer.clone().unwrap_or_else(|| config.model.clone());
                Some(Arc::new(DefaultContextCompressor::new(ChatClient::new(Arc::clone(&transport), model), c.clone())))
            }
        };
        if compressor.is_some() {
            // MEM-2: retrieve_memory is registered whenever a compressor is configured.
            let memory: Arc<dyn MemoryService> = Arc::new(RuntimeMemoryService::new(Arc::clone(&state)));
            tools.register(retrieve_memory_definition(), Arc::new(RetrieveMemoryTool::new(memory)))?;
        }
        // A root, or a child below max_depth (SUB-3), offers delegate_task; a worker at
        // max_depth gets no service: its config has no delegation (SUB-4).
        let sub_agents = SubAgentService::new(config.clone(), transport, Arc::clone(&state), emitter.clone(), depth, budget);
        let mut system_prompt = config.system_prompt.clone();
        let mut delegate = None;
        if let (Some(service), Some(delegation)) = (&sub_agents, &config.delegation) {
            let tool = Arc::new(DelegateTaskTool { service: Arc::clone(service) });
            tools.register(delegate_task_definition(delegation), tool.clone())?;
            delegate = Some(tool);
            if !system_prompt.is_empty() {
                system_prompt.push_str("\n\n");
            }
            system_prompt.push_str(DELEGATION_PROMPT);
        }
        // ISO-2: the model is shown only allowed tools (built-in memory retrieval stays).
        let exec_policy = ExecPolicy {
            is_sub_agent: depth > 0 && sub_agents.is_none(),
            allowed: config.allowed_tools.as_ref().map(|a| a.iter().cloned().chain([RETRIEVE_MEMORY_TOOL_NAME.to_owned()]).collect()),
        };
        let tool_definitions: Vec<ToolDefinition> = tools.definitions().into_iter().filter(|d| exec_policy.allows(&d.name)).collect();
        let memory = config.memory_store.scope(&config.memory_namespace);
        let fixed = FixedEncodings {
            template: BodyTemplate::new(&config.model, &tool_definitions, config.tool_choice.as_ref()),
            system: if system_prompt.is_empty() { String::new() } else { wire::encode_system(&system_prompt) },
            tokens: count_request_tokens(&system_prompt, &[], &[], &tool_definitions),
        };
        let runtime = Self {
            inner: Arc::new(Inner {
                tool_definitions,
                system_prompt,
                exec_policy,
                memory,
                delegate,
                tools,
                config,
                client,
                compressor,
                sub_agents,
                depth,
                state,
                emitter,
                active_run: Mutex::new(None),
                compression_failed_at: Mutex::new(None),
                provider_count: Mutex::new(None),
                generation: AtomicU64::new(0),
                fixed,
                encodings: Mutex::new(EncodingCache::default()),
                persist: Mutex::new(None),
            }),
        };
        if depth == 0 {
            if let Some(store) = runtime.inner.config.store.clone() {
                runtime.attach_store(store, None)?;
            }
        }
        Ok(runtime)
    }

    /// Attaches a session store (STORE-4) — what a config's `store` does at construction,
    /// for hosts that attach one later (the C ABI): opens `session_id` (default: this
    /// runtime's) in `store`. A session with commits replaces this runtime's state (the
    /// runtime resumes it); a new session starts from the current state, written in full
    /// at the next commit. Errors: `session_locked`, the store's codes, `run_in_progress`,
    /// `invalid_config` when a store is already attached or a sub-agent asks.
    pub fn attach_store(&self, store: SharedStore, session_id: Option<&str>) -> Result<(), ArkAgentError> {
        if self.inner.depth > 0 {
            return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "a sub-agent does not write to a store"));
        }
        let slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
        if slot.is_some() {
            return Err(ArkAgentError::RunInProgress);
        }
        let mut persist = self.inner.lock_persist();
        if persist.is_some() {
            return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "a store is already attached"));
        }
        let session_id = match session_id {
            Some(id) if id.trim().is_empty() => return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "session_id is empty")),
            Some(id) => id.to_owned(),
            None => self.inner.snapshot().session_id.clone(),
        };
        let opened = store.open_session(&session_id)?;
        let stored = opened.state.is_some();
        let state = match opened.state {
            Some(state) => state,
            None => {
                let mut state = (*self.inner.snapshot()).clone();
                state.session_id = session_id;
                state
            }
        };
        let has_history = !state.history.messages.is_empty() || !state.usages.is_empty() || !state.history.episodic_memories.is_empty();
        *persist = Some(Persist {
            lease: opened.lease,
            end: if stored { live_end(&state, state.history.messages.len()) } else { 0 },
            episodes: if stored { state.history.episodic_memories.len() } else { 0 },
            usages: if stored { state.usages.len() } else { 0 },
            child_usages: if stored { state.child_usages.len() } else { 0 },
            replace_all: !stored && has_history,
        });
        drop(persist);
        *self.inner.lock_state() = Arc::new(state);
        self.inner.forget_provider_count();
        if let Ok(mut backoff) = self.inner.compression_failed_at.lock() {
            *backoff = None;
        }
        Ok(())
    }

    /// Detaches the session store (STORE-6): releases the session's lock so another
    /// runtime (in this process or another) can open it, without waiting for this runtime
    /// to be dropped (hosts with a garbage collector). Everything committed stays stored;
    /// the runtime keeps its state but commits nothing more. False when no store was
    /// attached. Errors: `run_in_progress` during a run.
    pub fn detach_store(&self) -> Result<bool, ArkAgentError> {
        let slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
        if slot.is_some() {
            return Err(ArkAgentError::RunInProgress);
        }
        let detached = self.inner.lock_persist().take();
        drop(slot);
        Ok(detached.is_some())
    }

    /// True when a session store is attached.
    pub fn has_store(&self) -> bool {
        self.inner.lock_persist().is_some()
    }

    /// A runtime resumed from exported state (CORE-6). Errors: `invalid_json`,
    /// `invalid_state`, `invalid_config`.
    pub fn resume(config: AgentRuntimeConfig, transport: Arc<dyn HttpTransport>, state_json: &str) -> Result<Self, ArkAgentError> {
        let runtime = Self::new(config, transport)?;
        runtime.import_state(state_json)?;
        Ok(runtime)
    }

    /// The config.
    pub fn config(&self) -> &AgentRuntimeConfig {
        &self.inner.config
    }

    /// The tools the model is offered (host tools plus built-ins such as `retrieve_memory`).
    pub fn tool_definitions(&self) -> &[ToolDefinition] {
        &self.inner.tool_definitions
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        self.inner.snapshot().session_id.clone()
    }

    /// A copy of the whole state.
    pub fn state(&self) -> AgentState {
        (*self.inner.snapshot()).clone()
    }

    /// A copy of the messages.
    pub fn messages(&self) -> Vec<Message> {
        self.inner.snapshot().history.messages.clone()
    }

    /// A copy of the recorded usages.
    pub fn usages(&self) -> Vec<ModelUsage> {
        self.inner.snapshot().usages.clone()
    }

    /// The episodes compressed so far (cheap: archived messages are shared).
    pub fn episodic_memories(&self) -> Vec<EpisodicMemory> {
        self.inner.snapshot().history.episodic_memories.clone()
    }

    /// PERF-2: the heap bytes this runtime holds, per component (history, episodes,
    /// usages, encoding cache, fixed encodings). Approximate (capacities); for finding
    /// where a long chat's memory goes.
    pub fn memory_report(&self) -> super::memory_report::MemoryReport {
        let state = self.inner.snapshot();
        let mut report = super::memory_report::state_report(&state);
        let cache = self.inner.lock_encodings();
        report.encoding_cache = cache.heap_bytes();
        report.fixed_encodings = self.inner.fixed.template.heap_bytes() + self.inner.fixed.system.capacity();
        report
    }

    /// Read-only access to episodic memory over the live state (MEM-1).
    pub fn memory(&self) -> Arc<dyn MemoryService> {
        Arc::new(RuntimeMemoryService::new(Arc::clone(&self.inner.state)))
    }

    /// The whole state as JSON: history, episodic memories, usages, session id. Holds no
    /// secrets (the config is not part of it).
    ///
    /// Callable at any moment — from a tool, from an observer at any event, while a run is
    /// in flight — and always importable (CORE-6): while a turn's tool calls are still
    /// running, the export holds the last consistent history, without that open turn's
    /// assistant message and the results that came in so far (a turn is committed only
    /// when paired). Usages keep every call already made: it was paid for.
    pub fn export_state(&self) -> Result<String, ArkAgentError> {
        let snapshot = self.inner.snapshot();
        if HistoryInvariants::tool_calls_paired(&snapshot.history.messages) {
            return snapshot.to_json();
        }
        let mut consistent = (*snapshot).clone();
        consistent.history.messages.truncate(last_consistent_len(&snapshot.history.messages));
        consistent.to_json()
    }

    /// Replaces the state with an exported one after validating it. With a session store
    /// the imported state also replaces the stored session, in one commit, and keeps the
    /// attached session's id (the exported one is not taken over). Errors:
    /// `invalid_json`, `invalid_state`, `run_in_progress`, the store's codes: then the
    /// store write failed and the runtime keeps its old state (in memory and stored).
    pub fn import_state(&self, state_json: &str) -> Result<(), ArkAgentError> {
        let state = self.parse_import(state_json)?;
        let active = self.claim()?;
        active.inner.import_claimed(state)
    }

    /// [`import_state`](Self::import_state) for bindings that must not write the store on
    /// their caller's thread: validates and claims the run slot *now* (errors:
    /// `invalid_json`, `invalid_state`, `run_in_progress`). Without a store the state is
    /// replaced and the slot freed before this returns. With one, the returned future
    /// writes the store and swaps the state only when the write succeeded; the slot stays
    /// taken until the [`RunSlot`] it hands over is dropped.
    #[allow(clippy::type_complexity)]
    pub fn start_import_state_holding_slot(
        &self,
        state_json: &str,
    ) -> Result<impl Future<Output = (Result<(), ArkAgentError>, Option<RunSlot>)> + Send + 'static, ArkAgentError> {
        let state = self.parse_import(state_json)?;
        let active = self.claim()?;
        // With a store: the import waits for the future (Ok). Without: done now (Err).
        let pending = if self.inner.lock_persist().is_some() { Ok((state, active)) } else { Err(active.inner.import_claimed(state)) };
        Ok(async move {
            match pending {
                Ok((state, active)) => (active.inner.import_claimed(state), Some(RunSlot { _active: active })),
                Err(done) => (done, None),
            }
        })
    }

    fn parse_import(&self, state_json: &str) -> Result<AgentState, ArkAgentError> {
        // LLM-4: a state that carries the key (saved by an older version, or edited) does
        // not bring it in. The replacement has no JSON metacharacters, so the text stays
        // the same JSON.
        AgentState::from_json(&self.inner.config.model.redact_cow(state_json))
    }

    /// The body of the next model request for the current state, encoded from scratch
    /// with the typed wire structs (no cache). The runtime assembles its bodies from
    /// cached encodings (PERF-7); tests and benchmarks compare the two byte for byte.
    #[doc(hidden)]
    pub fn request_body_from_scratch(&self) -> String {
        self.inner.body_from_scratch(&self.inner.snapshot())
    }

    /// Subscribes an observer; keep the returned [`Subscription`] alive.
    pub fn subscribe(&self, observer: Arc<dyn AgentObserver>) -> Subscription {
        self.inner.emitter.bus.subscribe(observer)
    }

    /// Unsubscribes by id; true when it was subscribed.
    pub fn unsubscribe(&self, subscription_id: u64) -> bool {
        self.inner.emitter.bus.unsubscribe(subscription_id)
    }

    /// The one documented total of what this session cost (SUB-6): its own calls
    /// (compression included) plus every delegated child's, each counted once.
    pub fn total_usage(&self) -> UsageTotals {
        self.inner.snapshot().total_usage()
    }

    /// 0 for a root runtime, 1 for its children, 2 for theirs (`max_depth` > 1).
    pub fn depth(&self) -> u32 {
        self.inner.depth
    }

    /// Session ids of this runtime's sub-agents running now: a view of the
    /// [`sub_agent_registry`](Self::sub_agent_registry), so it always agrees with the
    /// registry's active list, and `force_complete_all(session_id)` ends every child it
    /// lists — including one whose runtime is still being built.
    pub fn active_children(&self) -> Vec<String> {
        self.inner.sub_agents.as_ref().map(|s| s.active_children()).unwrap_or_default()
    }

    /// This runtime's working and short-term memory namespace (MEM-4).
    pub fn working_memory(&self) -> ScopedMemory {
        self.inner.memory.clone()
    }

    /// The registry tracking this runtime's sub-agents (ISO-4), when delegation is on.
    pub fn sub_agent_registry(&self) -> Option<Arc<SubAgentRegistry>> {
        self.inner.sub_agents.as_ref().map(|s| Arc::clone(s.registry()))
    }

    /// ISO-7: runs decomposed tasks through the delegation mechanism in parallel batches
    /// of `max_concurrency` (default 3, capped by the policy's concurrency), one batch at a
    /// time; a failing task never cancels its siblings; results keep the input order. It
    /// counts as a run: per-run budgets apply and [`cancel`](Self::cancel) stops it.
    /// Errors: `run_in_progress`, `delegation_not_configured`.
    pub async fn run_decomposed(&self, tasks: &[DecomposedTask], max_concurrency: usize) -> Result<Vec<ToolResult>, ArkAgentError> {
        self.start_run_decomposed(tasks.to_vec(), max_concurrency)?.await
    }

    /// [`run_decomposed`](Self::run_decomposed) claiming the run slot *now*, for bindings
    /// that spawn the future.
    pub fn start_run_decomposed(
        &self,
        tasks: Vec<DecomposedTask>,
        max_concurrency: usize,
    ) -> Result<impl Future<Output = Result<Vec<ToolResult>, ArkAgentError>> + Send + 'static, ArkAgentError> {
        let run = self.start_run_decomposed_holding_slot(tasks, max_concurrency)?;
        Ok(async move { run.await.0 })
    }

    /// [`start_run_decomposed`](Self::start_run_decomposed) whose future also hands over
    /// the run slot, like [`start_compress_now_holding_slot`](Self::start_compress_now_holding_slot).
    pub fn start_run_decomposed_holding_slot(
        &self,
        tasks: Vec<DecomposedTask>,
        max_concurrency: usize,
    ) -> Result<impl Future<Output = (Result<Vec<ToolResult>, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let (Some(tool), Some(service)) = (self.inner.delegate.clone(), self.inner.sub_agents.clone()) else {
            return Err(ArkAgentError::config(ErrorCode::DelegationNotConfigured, "no workers and no clone: nothing to delegate to"));
        };
        let active = self.claim()?;
        service.start_run();
        let ctx = ToolContext {
            session_id: self.session_id(),
            run_id: self.inner.config.id_generator.next_id(),
            cancel: active.cancel.clone(),
            memory: self.inner.memory.clone(),
            episodes: Some(self.memory()),
        };
        let batch = service.batch_size(max_concurrency);
        Ok(async move {
            let results = run_decomposed_tasks(&tool, &tasks, batch, &ctx).await;
            // STORE-2: the sub-agent records are a commit point. A failed commit is
            // retried at the next one (the records stay in the state).
            if let Err(e) = active.inner.commit_point(&ctx.run_id) {
                tracing::warn!(code = e.code().as_str(), "could not commit sub-agent records; retried at the next commit point");
            }
            (Ok(results), RunSlot { _active: active })
        })
    }

    /// Seeds a fresh child's history with its parent's context slice.
    pub(crate) fn seed_history(&self, messages: Vec<Message>) {
        self.inner.update(|s| s.history.messages = messages);
        self.inner.forget_provider_count();
    }

    /// Cancels the active run, if any: in-flight HTTP and tools stop being awaited, each
    /// unanswered tool call gets a `cancelled` tool result, and `run` returns
    /// [`RunStatus::Cancelled`]. Returns true when a run was active (or starting).
    pub fn cancel(&self) -> bool {
        match self.inner.active_run.lock() {
            Ok(slot) => slot.as_ref().map(|t| t.cancel()).is_some(),
            Err(_) => false,
        }
    }

    /// True while a run is active.
    pub fn is_running(&self) -> bool {
        self.inner.active_run.lock().map(|a| a.is_some()).unwrap_or(false)
    }

    /// Claims the run slot *now* and returns the run as a `'static` future. A
    /// [`cancel`](Self::cancel) right after this call is never lost, and a second start
    /// fails with `run_in_progress` at once — what bindings that spawn the future need.
    /// Dropping the future unclaimed releases the slot.
    pub fn start_run(&self, input: impl Into<String>) -> Result<impl Future<Output = Result<RunOutcome, ArkAgentError>> + Send + 'static, ArkAgentError> {
        self.start_run_linked(input, None)
    }

    /// [`start_run`](Self::start_run) whose cancellation also follows `parent`: cancelling
    /// `parent` cancels the run at once, even mid-poll (a sub-agent's budget or forced
    /// completion).
    pub(crate) fn start_run_linked(
        &self,
        input: impl Into<String>,
        parent: Option<&CancellationToken>,
    ) -> Result<impl Future<Output = Result<RunOutcome, ArkAgentError>> + Send + 'static, ArkAgentError> {
        let run = self.start_run_linked_holding_slot(input, parent)?;
        Ok(async move { run.await.0 })
    }

    fn start_run_linked_holding_slot(
        &self,
        input: impl Into<String>,
        parent: Option<&CancellationToken>,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim_linked(parent)?;
        let input = input.into();
        let run_id = self.inner.config.id_generator.next_id();
        let span = tracing::info_span!("arkagent.run", run_id = %run_id);
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            let outcome = inner.run_loop(&input, &run_id, &active.cancel).await;
            (outcome, RunSlot { _active: active })
        }
        .instrument(span))
    }

    /// Runs the loop for one user input until a final answer, `max_iterations` or
    /// cancellation. Errors: `run_in_progress`, or the model call's [`LlmError`]. The
    /// history then stays paired: when the very first model call of the run failed (the
    /// model produced nothing), the input is taken out again so the history is as before
    /// the run (a compression committed meanwhile stays) — a retry does not send the input
    /// twice, and an input too large for the model cannot wedge the session; after a later
    /// call failed, it ends with the last tool results. (A sub-agent keeps its task in its
    /// record.)
    pub async fn run(&self, input: &str) -> Result<RunOutcome, ArkAgentError> {
        self.start_run(input)?.await
    }

    /// Runs one compression attempt now with the compressor's usual checks (no-op
    /// `skipped` result when none is configured). Errors: `run_in_progress`.
    pub async fn compress_now(&self) -> Result<CompressResult, ArkAgentError> {
        Ok(self.start_compress_now()?.await)
    }

    /// [`compress_now`](Self::compress_now) claiming the run slot *now* (like
    /// [`start_run`](Self::start_run)), for bindings that spawn the future.
    pub fn start_compress_now(&self) -> Result<impl Future<Output = CompressResult> + Send + 'static, ArkAgentError> {
        let attempt = self.start_compress_now_holding_slot()?;
        Ok(async move { attempt.await.0 })
    }

    /// [`start_compress_now`](Self::start_compress_now) whose future also hands over the
    /// run slot: it stays taken until the returned [`RunSlot`] is dropped. A binding drops
    /// it only when it settles its Promise, so a `run()` issued before the Promise settles
    /// is refused with `run_in_progress` on every path (skipped attempts included).
    pub fn start_compress_now_holding_slot(
        &self,
    ) -> Result<impl Future<Output = (CompressResult, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim()?;
        let run_id = self.inner.config.id_generator.next_id();
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            let result = inner.maybe_compress_context(&run_id, &active.cancel, CompressionTrigger::Manual, None).await;
            (result, RunSlot { _active: active })
        })
    }

    /// [`start_run`](Self::start_run) whose future also hands over the run slot, like
    /// [`start_compress_now_holding_slot`](Self::start_compress_now_holding_slot).
    pub fn start_run_holding_slot(
        &self,
        input: impl Into<String>,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        self.start_run_linked_holding_slot(input, None)
    }

    fn claim(&self) -> Result<ActiveRun, ArkAgentError> {
        self.claim_linked(None)
    }

    fn claim_linked(&self, parent: Option<&CancellationToken>) -> Result<ActiveRun, ArkAgentError> {
        let mut slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
        if slot.is_some() {
            return Err(ArkAgentError::RunInProgress);
        }
        let cancel = parent.map_or_else(CancellationToken::new, CancellationToken::child_token);
        *slot = Some(cancel.clone());
        Ok(ActiveRun { inner: Arc::clone(&self.inner), cancel })
    }
}

impl Inner {
    fn lock_persist(&self) -> MutexGuard<'_, Option<Persist>> {
        self.persist.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Swaps in an imported state (the caller holds the run slot). With a store it is
    /// written at once, replacing the stored session; when that write fails, the old state,
    /// the store cursor and the compression backoff are put back: nothing changed.
    fn import_claimed(&self, mut state: AgentState) -> Result<(), ArkAgentError> {
        // STORE-4: with a store the import is written under the attached session, so the
        // runtime keeps that session's id (resuming `session_id()` finds the import).
        let cursor = self.lock_persist().as_ref().map(|p| (p.end, p.episodes, p.usages, p.child_usages, p.replace_all));
        if cursor.is_some() {
            state.session_id = self.snapshot().session_id.clone();
        }
        let old_state = std::mem::replace(&mut *self.lock_state(), Arc::new(state));
        let old_backoff = self.compression_failed_at.lock().ok().and_then(|mut b| b.take());
        self.forget_provider_count();
        // STORE-2: with a store, the imported state replaces the stored session at once.
        if let Some(p) = self.lock_persist().as_mut() {
            p.replace_all = true;
        }
        let committed = self.commit_point("");
        if committed.is_err() {
            *self.lock_state() = old_state;
            if let Ok(mut backoff) = self.compression_failed_at.lock() {
                *backoff = old_backoff;
            }
            if let (Some(p), Some((end, episodes, usages, child_usages, replace_all))) = (self.lock_persist().as_mut(), cursor) {
                (p.end, p.episodes, p.usages, p.child_usages, p.replace_all) = (end, episodes, usages, child_usages, replace_all);
            }
        }
        committed
    }

    /// STORE-2: commits what is new since the last commit point — paired messages only
    /// (an open turn is cut, as in `export_state`), new episodes with their originals, new
    /// usages and sub-agent records — in one store transaction, then emits
    /// `session_committed`. No store, or nothing new: nothing happens. On error nothing of
    /// this commit is stored and the cursor stays (lowered to the new end when the history
    /// shrank), so the next commit point retries it.
    fn commit_point(&self, run_id: &str) -> Result<(), ArkAgentError> {
        let mut guard = self.lock_persist();
        let Some(p) = guard.as_mut() else { return Ok(()) };
        let state = self.snapshot();
        let messages = &state.history.messages;
        let consistent = last_consistent_len(messages);
        let base = live_end(&state, 0);
        let end = base + consistent as u64;
        let (end_before, episodes_from, usages_from, child_from) =
            if p.replace_all { (0, 0, 0, 0) } else { (p.end, p.episodes, p.usages, p.child_usages) };
        let from = end_before.max(base).min(end);
        let episodes = state.history.episodic_memories.get(episodes_from..).unwrap_or_default().to_vec();
        let usages = state.usages.get(usages_from..).unwrap_or_default().to_vec();
        let child_usages = state.child_usages.get(child_from..).unwrap_or_default().to_vec();
        let new_messages = messages[usize::try_from(from - base).unwrap_or(consistent).min(consistent)..consistent].to_vec();
        if !p.replace_all && episodes.is_empty() && usages.is_empty() && child_usages.is_empty() && new_messages.is_empty() && end == end_before {
            return Ok(());
        }
        let usages_is_empty = usages.is_empty();
        let commit = Commit {
            replace_all: p.replace_all,
            episodes_from,
            episodes,
            archived_through: base,
            messages_from: from,
            messages: new_messages,
            usages_from,
            usages,
            child_usages_from: child_from,
            child_usages,
            // CMP-12: the calibration changes only with a new usage.
            token_calibration: (p.replace_all || !usages_is_empty).then(|| state.token_calibration.clone()),
            now_ms: self.config.clock.now_ms(),
        };
        let commit_seq = match p.lease.commit(&commit) {
            Ok(seq) => seq,
            Err(e) => {
                // A history that shrank (a failed run's input taken out): what is stored
                // past `end` is stale, so the next commit rewrites from `end` (a retry
                // from the old cursor would find "nothing new" and keep the old input).
                p.end = p.end.min(end);
                return Err(e.into());
            }
        };
        p.end = end;
        p.episodes = state.history.episodic_memories.len();
        p.usages = state.usages.len();
        p.child_usages = state.child_usages.len();
        p.replace_all = false;
        drop(guard);
        self.emit(run_id, EventKind::SessionCommitted { commit_seq, message_count: end });
        Ok(())
    }

    fn lock_state(&self) -> StateGuard<'_> {
        StateGuard { guard: self.lock_state_raw(), generation: &self.generation }
    }

    fn lock_state_raw(&self) -> MutexGuard<'_, Arc<AgentState>> {
        // A poisoned lock only means a panic elsewhere between statements on plain data;
        // every update here is a single push or swap, so the state is still valid.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current state, shared, and its generation (read under the lock, so they match).
    fn snapshot_with_generation(&self) -> (Arc<AgentState>, u64) {
        let guard = self.lock_state_raw();
        (Arc::clone(&guard), self.generation.load(Ordering::Relaxed))
    }

    /// Appends to the state (history messages, usages) without invalidating the encoding
    /// cache: `f` must only push. The one writer that may bypass the generation; in debug
    /// builds every assembled body is checked against a from-scratch encoding.
    fn append<R>(&self, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut guard = self.lock_state_raw();
        let state = Arc::make_mut(&mut guard);
        let before = state.history.messages.len();
        let r = f(state);
        debug_assert!(state.history.messages.len() >= before, "append only appends");
        r
    }

    /// Brings the encoding cache up to date with `state` at `generation`.
    fn sync_encodings<'c>(&self, cache: &'c mut EncodingCache, state: &AgentState, generation: u64) -> &'c mut EncodingCache {
        let messages = &state.history.messages;
        if cache.generation != generation || cache.history_len > messages.len() {
            *cache = EncodingCache { generation, ..EncodingCache::default() };
        }
        cache.reclaim();
        if !cache.built {
            cache.body.clear();
            cache.body.push_str(self.fixed.template.head());
            cache.body.push('[');
            cache.any = !self.fixed.system.is_empty();
            cache.body.push_str(&self.fixed.system);
            cache.context_tokens = TokenCounts::default();
            if let Some(m) = Self::memory_context(state) {
                if cache.any {
                    cache.body.push(',');
                }
                cache.body.push_str(&wire::encode_message(&m));
                cache.any = true;
                cache.context_tokens += count_message_tokens(&m);
            }
            cache.built = true;
        }
        let tail = self.fixed.template.tail().len() + 2;
        for m in &messages[cache.history_len..] {
            let encoded = wire::encode_message(m);
            reserve_gently(&mut cache.body, encoded.len() + tail);
            if cache.any {
                cache.body.push(',');
            }
            cache.body.push_str(&encoded);
            cache.any = true;
            cache.history_tokens += count_message_tokens(m);
            cache.call_ids.extend(m.tool_calls().iter().map(|c| c.id.clone()));
        }
        cache.history_len = messages.len();
        cache
    }

    fn lock_encodings(&self) -> MutexGuard<'_, EncodingCache> {
        self.encodings.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The local prompt estimate of the next request (CMP-11), per script class, from the
    /// cache.
    fn estimate(&self, state: &AgentState, generation: u64) -> TokenCounts {
        let mut cache = self.lock_encodings();
        let cache = self.sync_encodings(&mut cache, state, generation);
        let local = self.fixed.tokens + cache.context_tokens + cache.history_tokens;
        debug_assert_eq!(local, self.estimate_from_scratch(state));
        local
    }

    fn estimate_from_scratch(&self, state: &AgentState) -> TokenCounts {
        let context: Vec<Message> = Self::memory_context(state).into_iter().collect();
        count_request_tokens(&self.system_prompt, &context, &state.history.messages, &self.tool_definitions)
    }

    /// PERF-7: the request body for `state`, assembled from cached encodings, and the
    /// local prompt estimate per script class. PERF-2: the body is the cache itself, lent
    /// (no copy).
    fn request_body(&self, state: &AgentState, generation: u64) -> (Arc<String>, TokenCounts) {
        let mut cache = self.lock_encodings();
        let cache = self.sync_encodings(&mut cache, state, generation);
        let len = cache.body.len();
        reserve_gently(&mut cache.body, self.fixed.template.tail().len() + 1);
        cache.body.push(']');
        cache.body.push_str(self.fixed.template.tail());
        let body = Arc::new(std::mem::take(&mut cache.body));
        cache.lent = Some((Arc::clone(&body), len));
        let local = self.fixed.tokens + cache.context_tokens + cache.history_tokens;
        #[cfg(debug_assertions)]
        {
            assert_eq!(*body, self.body_from_scratch(state), "PERF-7: the cached body differs from a from-scratch encoding");
            assert_eq!(local, self.estimate_from_scratch(state));
        }
        (body, local)
    }

    /// The body of the request for `state`, encoded from scratch (the reference).
    fn body_from_scratch(&self, state: &AgentState) -> String {
        let context: Vec<Message> = Self::memory_context(state).into_iter().collect();
        let request = ChatRequest {
            system_prompt: Some(self.system_prompt.as_str()),
            context_messages: &context,
            messages: &state.history.messages,
            tools: &self.tool_definitions,
            tool_choice: self.config.tool_choice.as_ref(),
        };
        wire::encode_body(&self.config.model, &request)
    }

    /// The current state, shared (O(1)).
    fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&self.lock_state_raw())
    }

    /// Mutates the state in place (copy-on-write only if a snapshot is alive).
    fn update<R>(&self, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut guard = self.lock_state();
        f(Arc::make_mut(&mut guard))
    }

    fn emit(&self, run_id: &str, mut kind: EventKind) {
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

    /// LLM-4: text entering the state is redacted where it enters.
    fn redact_message(&self, message: &mut Message) {
        let model = &self.config.model;
        match message {
            Message::System { content } | Message::User { content } => model.redact_in_place(content),
            Message::Assistant { content, tool_calls, reasoning } => {
                if let Some(c) = content {
                    model.redact_in_place(c);
                }
                if let Some(r) = reasoning {
                    model.redact_in_place(r);
                }
                for call in tool_calls {
                    model.redact_in_place(&mut call.arguments);
                }
            }
            Message::Tool { content, .. } => model.redact_in_place(content),
        }
    }

    fn forget_provider_count(&self) {
        if let Ok(mut count) = self.provider_count.lock() {
            *count = None;
        }
    }

    /// The next prompt's size (CMP-3, CMP-11, CMP-12) and which figure decided it: the
    /// larger of the local estimate (calibrated for this model once the provider reported
    /// a count) and the provider's count of the last request plus an estimate of the
    /// messages appended since — a provider that counts tool schemas, system text or CJK
    /// differently than the estimator still triggers compression on its own numbers, and
    /// a calibration never takes the size below what the provider counted.
    fn prompt_size(&self, state: &AgentState, counts: TokenCounts) -> (u64, PromptSizeSource) {
        let calibration = self.calibration(state);
        let local = calibration.estimate(&counts);
        let source = if calibration.is_calibrated() { PromptSizeSource::Calibrated } else { PromptSizeSource::Estimate };
        let Some(count) = self.provider_count.lock().ok().and_then(|c| *c) else {
            return (local, source);
        };
        let messages = &state.history.messages;
        if count.messages_sent > messages.len() {
            return (local, source);
        }
        let since: TokenCounts = messages[count.messages_sent..].iter().map(count_message_tokens).sum();
        let floor = count.prompt_tokens.saturating_add(calibration.estimate(&since));
        if floor > local {
            (floor, PromptSizeSource::Provider)
        } else {
            (local, source)
        }
    }

    /// CMP-12: this model's calibration in `state` (the identity until one is learned).
    fn calibration(&self, state: &AgentState) -> TokenCalibration {
        state.token_calibration.get(&self.config.model.model).copied().unwrap_or_default()
    }

    fn next_prompt_size(&self) -> (u64, PromptSizeSource) {
        let (state, generation) = self.snapshot_with_generation();
        let local = self.estimate(&state, generation);
        self.prompt_size(&state, local)
    }

    fn finish(&self, run_id: &str, status: RunStatus, iterations: u32, final_text: Option<String>) -> RunOutcome {
        self.emit(run_id, EventKind::RunFinished { status, iterations, error_code: None });
        RunOutcome { run_id: run_id.to_owned(), status, final_text, iterations }
    }

    /// The latest episode's snapshot as a context message (CMP-9): the model keeps seeing
    /// what was compressed, and learns how to read the originals.
    fn memory_context(state: &AgentState) -> Option<Message> {
        let episode = state.history.episodic_memories.last()?;
        Some(Message::system(format!(
            "Earlier conversation was compressed into episodic memory. Latest state snapshot \
             (snapshot_id {}, {} episode(s) in all; read the original messages with the \
             retrieve_memory tool):\n{}",
            episode.id,
            state.history.episodic_memories.len(),
            episode.summary
        )))
    }

    async fn run_loop(&self, input: &str, run_id: &str, cancel: &CancellationToken) -> Result<RunOutcome, ArkAgentError> {
        if let Some(service) = &self.sub_agents {
            service.start_run();
        }
        let mut user = Message::user(input);
        self.redact_message(&mut user);
        self.emit(run_id, EventKind::RunStarted { input: user.text().unwrap_or_default().to_owned() });
        self.append(|s| s.history.messages.push(user.clone()));
        // STORE-2: the user message is committed with the run start; a run whose input
        // cannot be committed does not start (the input is taken out again).
        if let Err(e) = self.commit_point(run_id) {
            self.update(|state| {
                if state.history.messages.last() == Some(&user) {
                    state.history.messages.pop();
                }
            });
            return Err(self.store_failed(run_id, 0, e));
        }
        let session_id = self.lock_state_raw().session_id.clone();
        let tool_ctx = ToolContext {
            session_id,
            run_id: run_id.to_owned(),
            cancel: cancel.clone(),
            memory: self.memory.clone(),
            episodes: Some(Arc::new(RuntimeMemoryService::new(Arc::clone(&self.state)))),
        };
        let threshold = self.compressor.as_ref().and_then(|c| c.threshold());

        for iteration in 1..=self.config.max_iterations {
            if cancel.is_cancelled() {
                return Ok(self.finish(run_id, RunStatus::Cancelled, iteration - 1, None));
            }
            // CMP-11: compress before the call when the estimate reaches the threshold. When
            // nothing was compressed the state is unchanged (this loop is its only writer),
            // so the estimate is reused for the request below instead of walking it twice.
            let mut preflight_estimate = None;
            if self.compressor.is_some() {
                let estimate = self.next_prompt_size();
                let result = self.maybe_compress_context(run_id, cancel, CompressionTrigger::Preflight, Some(estimate.0)).await;
                if result.outcome != CompressOutcome::Compressed {
                    preflight_estimate = Some(estimate);
                }
            }
            let mut overflow_retried = false;
            // CMP-12: the static counts of the request sent, to learn from its usage.
            let mut sent_counts: TokenCounts;
            let response = loop {
                let (http, message_count, (estimate, source)) = {
                    let (state, generation) = self.snapshot_with_generation();
                    let (body, counts) = self.request_body(&state, generation);
                    sent_counts = counts;
                    let estimate = preflight_estimate.take().unwrap_or_else(|| self.prompt_size(&state, counts));
                    (self.client.http_request_with_shared_body(body), state.history.messages.len(), estimate)
                };
                self.emit(run_id, EventKind::ModelRequest {
                    iteration,
                    message_count,
                    tool_count: self.tool_definitions.len(),
                    estimated_prompt_tokens: estimate,
                    compression_threshold: threshold,
                    prompt_size_source: source,
                });
                let answered = std::sync::atomic::AtomicBool::new(false);
                let streamed = if self.config.model.stream {
                    // LLM-2: deltas reach observers as they arrive, not after the turn.
                    let on_delta = |delta: StreamDelta| {
                        answered.store(true, Ordering::Relaxed);
                        let kind = match delta {
                            StreamDelta::Text(delta) => EventKind::TextDelta { iteration, delta },
                            StreamDelta::Reasoning(delta) => EventKind::ReasoningDelta { iteration, delta },
                            StreamDelta::ToolCallStarted { index, name, .. } => {
                                EventKind::ToolCallDelta { iteration, index, name: Some(name), arguments_delta: String::new() }
                            }
                            StreamDelta::ToolCallArguments { index, fragment } => {
                                EventKind::ToolCallDelta { iteration, index, name: None, arguments_delta: fragment }
                            }
                        };
                        self.emit(run_id, kind);
                    };
                    self.client.send_streaming(http, cancel, &on_delta).await
                } else {
                    self.client.send(http, cancel).await
                };
                match streamed {
                    Ok(r) => break r,
                    Err(LlmError::Cancelled) => {
                        // SUB-6: a call cut off mid-answer was made; its usage never came.
                        if answered.load(Ordering::Relaxed) {
                            self.append(|state| state.usages.push(ModelUsage::unreported()));
                        }
                        return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None));
                    }
                    Err(LlmError::ContextOverflow) if self.compressor.is_some() && !overflow_retried => {
                        overflow_retried = true;
                        let result = self.maybe_compress_context(run_id, cancel, CompressionTrigger::Overflow, None).await;
                        if result.outcome != CompressOutcome::Compressed {
                            return Err(self.fail(run_id, iteration, input, LlmError::ContextOverflow));
                        }
                    }
                    Err(e) => return Err(self.fail(run_id, iteration, input, e)),
                }
            };
            let (mut message, calls) = self.normalise_assistant(response.message);
            self.redact_message(&mut message);
            let calls = if calls.is_empty() { calls } else { message.tool_calls().to_vec() };
            let text = message.text().map(str::to_owned);
            self.append(|state| {
                // SUB-6: every call made has its usage entry, reported or not.
                if let Some(usage) = &response.usage {
                    state.usages.push(usage.clone());
                    if usage.source() != Some(crate::compress::COMPRESSION_USAGE_SOURCE) {
                        if let Ok(mut count) = self.provider_count.lock() {
                            let messages_sent = state.history.messages.len();
                            *count = Some(ProviderCount { prompt_tokens: usage.prompt_tokens, messages_sent });
                        }
                        // CMP-12: learn from the provider's count of the request just sent
                        // (a missing or implausible count teaches nothing).
                        let model = &self.config.model.model;
                        match state.token_calibration.get_mut(model) {
                            Some(calibration) => {
                                calibration.observe(&sent_counts, usage.prompt_tokens);
                            }
                            None => {
                                let mut calibration = TokenCalibration::default();
                                if calibration.observe(&sent_counts, usage.prompt_tokens) {
                                    state.token_calibration.insert(model.clone(), calibration);
                                }
                            }
                        }
                    }
                } else {
                    state.usages.push(ModelUsage::unreported());
                }
                state.history.messages.push(message);
            });
            self.emit(run_id, EventKind::ModelResponse {
                iteration,
                usage: response.usage,
                tool_call_count: calls.len(),
                finish_reason: response.finish_reason,
            });
            if !self.config.model.stream {
                if let Some(delta) = text.clone().filter(|t| !t.is_empty()) {
                    self.emit(run_id, EventKind::TextDelta { iteration, delta });
                }
            }
            if calls.is_empty() {
                // STORE-2: a final answer is a paired turn: committed with its usage.
                self.commit_point(run_id).map_err(|e| self.store_failed(run_id, iteration, e))?;
                // CMP-3: a chat without tools compresses too — the check runs after the
                // final answer as after every other turn.
                if self.compressor.is_some() && !cancel.is_cancelled() {
                    let size = self.next_prompt_size();
                    self.maybe_compress_context(run_id, cancel, CompressionTrigger::PostTurn, Some(size.0)).await;
                }
                return Ok(self.finish(run_id, RunStatus::Completed, iteration, text));
            }

            let results = run_tool_calls(
                &self.tools,
                &calls,
                self.config.max_parallel_tools,
                &self.exec_policy,
                &tool_ctx,
                &|call| {
                    if !self.emitter.is_observed() {
                        return self.emitter.skip(); // no copies of what nobody reads
                    }
                    self.emit(run_id, EventKind::ToolCallStarted {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                    })
                },
                &|call, result| {
                    if !self.emitter.is_observed() {
                        return self.emitter.skip();
                    }
                    self.emit(run_id, EventKind::ToolCallFinished {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        is_error: result.is_error,
                        error_code: result.error_code.clone(),
                        content: result.content.clone(),
                        metadata: result.metadata.clone(),
                    })
                },
            )
            .await;
            let results: Vec<Message> = calls
                .iter()
                .zip(results)
                .map(|(call, result)| {
                    let is_error = result.is_error;
                    let mut m = Message::tool_result(&call.id, result.into_model_content(), is_error);
                    self.redact_message(&mut m);
                    m
                })
                .collect();
            self.append(|state| state.history.messages.extend(results));
            // STORE-2: the turn is paired now: the assistant message, its tool results, the
            // usage and any sub-agent records are committed together.
            self.commit_point(run_id).map_err(|e| self.store_failed(run_id, iteration, e))?;
            if cancel.is_cancelled() {
                return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None));
            }
            if self.compressor.is_some() {
                let size = self.next_prompt_size();
                self.maybe_compress_context(run_id, cancel, CompressionTrigger::PostTurn, Some(size.0)).await;
            }
        }
        Ok(self.finish(run_id, RunStatus::MaxIterations, self.config.max_iterations, None))
    }

    /// Ends a run with a model error. When the first call of a root's run failed, the
    /// model produced nothing: the input is taken out again (see [`AgentRuntime::run`]).
    fn fail(&self, run_id: &str, iteration: u32, input: &str, e: LlmError) -> ArkAgentError {
        tracing::warn!(code = e.code().as_str(), "model call failed");
        // A sub-agent keeps its task: its history is a record (ISO-1), never run again.
        if iteration == 1 && self.depth == 0 {
            let mut expected = Message::user(input);
            self.redact_message(&mut expected);
            self.update(|state| {
                if state.history.messages.last() == Some(&expected) {
                    state.history.messages.pop();
                }
            });
            // STORE-2: the committed input goes too (the store follows the history).
            if let Err(store) = self.commit_point(run_id) {
                tracing::warn!(code = store.code().as_str(), "could not commit the rollback of a failed run's input");
            }
        }
        self.emit(run_id, EventKind::RunFinished {
            status: RunStatus::Failed,
            iterations: iteration,
            error_code: Some(e.code().as_str().to_owned()),
        });
        e.into()
    }

    /// A run ends because the store refused a commit: `run_finished` with the store's code.
    fn store_failed(&self, run_id: &str, iteration: u32, e: ArkAgentError) -> ArkAgentError {
        tracing::warn!(code = e.code().as_str(), "session store commit failed");
        self.emit(run_id, EventKind::RunFinished {
            status: RunStatus::Failed,
            iterations: iteration,
            error_code: Some(e.code().as_str().to_owned()),
        });
        e
    }

    /// CMP-6: stage, then commit only a `compressed` result. The compressor reads a
    /// shared snapshot (no copy); on `skipped` or `failed` nothing was touched, so history
    /// and usages serialize byte-identical to before. The compression's usage is recorded
    /// only after the commit (CMP-5, CMP-7).
    async fn maybe_compress_context(
        &self,
        run_id: &str,
        cancel: &CancellationToken,
        trigger: CompressionTrigger,
        estimate: Option<u64>,
    ) -> CompressResult {
        let Some(compressor) = &self.compressor else {
            return CompressResult::skipped(CompressReason::NoUsage);
        };
        let snapshot = self.snapshot();
        let automatic = matches!(trigger, CompressionTrigger::Preflight | CompressionTrigger::PostTurn);
        let calls = snapshot.usages.len();
        if automatic {
            let failed_at = self.compression_failed_at.lock().ok().and_then(|b| *b);
            if failed_at.is_some_and(|at| calls < at + COMPRESSION_BACKOFF_MODEL_CALLS) {
                let result = CompressResult::skipped(CompressReason::BackingOffAfterFailure);
                let messages = snapshot.history.messages.len();
                self.emit_compression(run_id, trigger, &result, messages, messages, estimate, compressor.threshold());
                return result;
            }
        }
        let ctx = CompressContext {
            id_generator: Arc::clone(&self.config.id_generator),
            clock: Arc::clone(&self.config.clock),
            cancel: cancel.clone(),
            estimated_prompt_tokens: estimate,
            force: trigger == CompressionTrigger::Overflow,
        };
        let span = tracing::info_span!("arkagent.compress", ?trigger, messages = snapshot.history.messages.len());
        let attempt = AssertUnwindSafe(compressor.compress(&snapshot, &ctx)).catch_unwind().instrument(span).await;
        let mut result = attempt.unwrap_or_else(|_| {
            tracing::error!("context compressor panicked; state unchanged");
            CompressResult::failed(CompressReason::CompressorPanicked, None)
        });
        let messages_before = snapshot.history.messages.len();
        if let Some(mut staged) = result.staged.take().filter(|_| result.outcome == CompressOutcome::Compressed) {
            // LLM-4: a summarizer that echoed the key does not bring it into the episode.
            self.config.model.redact_in_place(&mut staged.summary);
            let mut guard = self.lock_state();
            if Arc::ptr_eq(&guard, &snapshot) {
                drop(snapshot); // the lock holds the only other reference: no copy below
                let state = Arc::make_mut(&mut guard);
                // apply_compression checks everything before it changes anything.
                match apply_compression(state, staged) {
                    Ok(()) => {
                        if let Some(usage) = &result.usage {
                            state.usages.push(usage.clone());
                        }
                        self.forget_provider_count();
                    }
                    Err(reason) => result = CompressResult::failed_archiving(reason, result.usage.take(), result.messages_archived),
                }
            } else {
                result = CompressResult::failed_archiving(CompressReason::StateChanged, result.usage.take(), result.messages_archived);
            }
        } else if result.outcome == CompressOutcome::Compressed {
            result = CompressResult::failed_archiving(CompressReason::InvalidSplitIndex, result.usage.take(), result.messages_archived);
        }
        if result.outcome == CompressOutcome::Compressed {
            // STORE-2: the episode, its originals, the shortened history and the summary's
            // usage in one store transaction. A failed commit is retried at the next
            // commit point (the in-memory compression stands).
            if let Err(e) = self.commit_point(run_id) {
                tracing::warn!(code = e.code().as_str(), "could not commit a compression; retried at the next commit point");
            }
        }
        if let Ok(mut backoff) = self.compression_failed_at.lock() {
            match result.outcome {
                CompressOutcome::Failed if automatic => *backoff = Some(calls),
                CompressOutcome::Compressed => *backoff = None,
                _ => {}
            }
        }
        let messages_after = self.lock_state_raw().history.messages.len();
        tracing::debug!(outcome = ?result.outcome, reason = result.reason.code(), messages_before, messages_after, "compression attempt");
        let quiet = result.outcome == CompressOutcome::Skipped
            && matches!(result.reason, CompressReason::BelowThreshold | CompressReason::NoUsage | CompressReason::HistoryTooShort);
        if !quiet {
            self.emit_compression(run_id, trigger, &result, messages_before, messages_after, estimate, compressor.threshold());
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_compression(
        &self,
        run_id: &str,
        trigger: CompressionTrigger,
        result: &CompressResult,
        messages_before: usize,
        messages_after: usize,
        estimate: Option<u64>,
        threshold: Option<u64>,
    ) {
        self.emit(run_id, EventKind::Compression {
            trigger,
            outcome: result.outcome,
            reason: result.reason.code().to_owned(),
            episode_id: result.episode_id.clone(),
            error_code: result.error_code.clone(),
            messages_before,
            messages_after,
            estimated_prompt_tokens: estimate,
            threshold,
            usage: result.usage.clone(),
        });
    }

    /// Gives every tool call a unique, non-empty id: providers that omit ids (or repeat
    /// them) would otherwise break pairing.
    fn normalise_assistant(&self, message: Message) -> (Message, Vec<ToolCall>) {
        let Message::Assistant { content, mut tool_calls, reasoning } = message else {
            return (message, Vec::new());
        };
        if !tool_calls.is_empty() {
            // The ids already in the history, from the encoding cache (PERF-7: no walk).
            let (state, generation) = self.snapshot_with_generation();
            let mut cache = self.lock_encodings();
            let seen = &self.sync_encodings(&mut cache, &state, generation).call_ids;
            #[cfg(debug_assertions)]
            {
                let scratch: HashSet<&str> = state.history.messages.iter().flat_map(|m| m.tool_calls().iter().map(|c| c.id.as_str())).collect();
                assert_eq!(scratch, seen.iter().map(String::as_str).collect::<HashSet<&str>>());
            }
            let mut fresh: HashSet<String> = HashSet::new();
            for call in &mut tool_calls {
                while call.id.is_empty() || seen.contains(call.id.as_str()) || fresh.contains(&call.id) {
                    call.id = format!("call_{}", self.config.id_generator.next_id());
                }
                fresh.insert(call.id.clone());
            }
        }
        let calls = tool_calls.clone();
        (Message::Assistant { content, tool_calls, reasoning }, calls)
    }
}

/// The absolute position (archived originals counted) after the first `live` messages.
/// PERF-2: grows `s` to hold `extra` more bytes by an eighth of its length at a time
/// rather than doubling, so the encoding cache (a long chat's largest buffer) carries at
/// most ~12.5 % of slack instead of up to 100 %. Large buffers grow by `mremap` (no copy).
fn reserve_gently(s: &mut String, extra: usize) {
    if s.capacity() - s.len() < extra {
        s.reserve_exact(extra.max(s.len() / 8).max(4096));
    }
}

fn live_end(state: &AgentState, live: usize) -> u64 {
    state.history.episodic_memories.iter().fold(live as u64, |a, e| a + e.archived_messages.len() as u64)
}

/// The length of the longest paired prefix of `messages`: everything before the open
/// turn (an assistant message whose tool calls are not all answered yet).
fn last_consistent_len(messages: &[Message]) -> usize {
    let mut end = messages.len();
    while end > 0 {
        if HistoryInvariants::tool_calls_paired(&messages[..end]) {
            return end;
        }
        // Cut before the last assistant message with tool calls in what is left.
        end = messages[..end].iter().rposition(|m| !m.tool_calls().is_empty()).unwrap_or(0);
    }
    0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::llm::{HttpRequest, HttpResponse, ModelConfig, TransportError};
    use crate::compress::StagedCompression;

    struct NoNetwork;
    #[async_trait::async_trait]
    impl HttpTransport for NoNetwork {
        async fn send(&self, _r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
            panic!("no model call expected")
        }
    }

    /// Replaces the history while it "summarizes", as a concurrent writer would.
    struct Meddling(Mutex<Option<AgentRuntime>>);
    #[async_trait::async_trait]
    impl ContextCompressor for Meddling {
        async fn compress(&self, _state: &AgentState, _ctx: &CompressContext) -> CompressResult {
            let rt = self.0.lock().unwrap().take().unwrap();
            rt.seed_history(vec![Message::user("replaced")]);
            let staged = StagedCompression { split_index: 1, summary: "s".into(), episode_id: "e".into(), created_at_ms: 0 };
            CompressResult::compressed(staged, None)
        }
    }

    #[tokio::test]
    async fn cmp_5_a_state_changed_under_the_compressor_fails_with_state_changed() {
        let meddling = Arc::new(Meddling(Mutex::new(None)));
        let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://h/v1", "k", "m"));
        config.compression = Some(Compression::Custom(meddling.clone()));
        let rt = AgentRuntime::new(config, Arc::new(NoNetwork)).unwrap();
        rt.seed_history(vec![Message::user("a"), Message::user("b")]);
        *meddling.0.lock().unwrap() = Some(rt.clone());
        let result = rt.compress_now().await.unwrap();
        assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::StateChanged));
        assert_eq!(result.reason.code(), "state_changed");
        assert_eq!(rt.messages(), vec![Message::user("replaced")], "the newer state is kept untouched");
        assert!(rt.episodic_memories().is_empty());
    }
}

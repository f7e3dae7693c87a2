use std::collections::HashSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::config::{AgentRuntimeConfig, Compression};
use super::events::{AgentObserver, Emitter, EventKind, Subscription};
use super::tool_exec::{run_tool_calls, ExecPolicy};
use crate::error::ArkAgentError;
use crate::history::{AgentState, Message, ModelUsage, ToolCall};
use crate::llm::{ChatClient, ChatRequest, HttpTransport, LlmError, StreamDelta};
use crate::memory::{
    apply_compression, estimate_request_tokens, retrieve_memory_definition, CompressContext, CompressOutcome,
    CompressReason, CompressResult, ContextCompressor, DefaultContextCompressor, EpisodicMemory, MemoryService,
    RetrieveMemoryTool, RuntimeMemoryService,
};
use crate::memory::{ScopedMemory, RETRIEVE_MEMORY_TOOL_NAME};
use crate::subagent::{
    delegate_task_definition, run_decomposed_tasks, DecomposedTask, DelegateTaskTool, DelegationBudget, SubAgentRegistry, SubAgentService,
    UsageTotals,
    DELEGATION_PROMPT,
};
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

    fn new_at_depth(
        config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        depth: u32,
        budget: Option<Arc<DelegationBudget>>,
    ) -> Result<Self, ArkAgentError> {
        config.validate()?;
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
        let tool_definitions = tools.definitions().into_iter().filter(|d| exec_policy.allows(&d.name)).collect();
        let memory = config.memory_store.scope(&config.memory_namespace);
        Ok(Self {
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
            }),
        })
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

    /// Read-only access to episodic memory over the live state (MEM-1).
    pub fn memory(&self) -> Arc<dyn MemoryService> {
        Arc::new(RuntimeMemoryService::new(Arc::clone(&self.inner.state)))
    }

    /// The whole state as JSON: history, episodic memories, usages, session id. Holds no
    /// secrets (the config is not part of it).
    pub fn export_state(&self) -> Result<String, ArkAgentError> {
        self.inner.snapshot().to_json()
    }

    /// Replaces the state with an exported one after validating it. Errors:
    /// `invalid_json`, `invalid_state`, `run_in_progress`.
    pub fn import_state(&self, state_json: &str) -> Result<(), ArkAgentError> {
        let state = AgentState::from_json(state_json)?;
        let slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
        if slot.is_some() {
            return Err(ArkAgentError::RunInProgress);
        }
        *self.inner.lock_state() = Arc::new(state);
        if let Ok(mut backoff) = self.inner.compression_failed_at.lock() {
            *backoff = None;
        }
        Ok(())
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
        let (Some(tool), Some(service)) = (self.inner.delegate.clone(), self.inner.sub_agents.clone()) else {
            return Err(ArkAgentError::config("delegation_not_configured", "no workers and no clone: nothing to delegate to"));
        };
        let active = self.claim()?;
        service.start_run();
        let ctx = ToolContext {
            session_id: self.session_id(),
            run_id: self.inner.config.id_generator.next_id(),
            cancel: active.cancel.clone(),
            memory: self.inner.memory.clone(),
        };
        let batch = service.batch_size(max_concurrency);
        Ok(async move {
            let _active = active;
            Ok(run_decomposed_tasks(&tool, &tasks, batch, &ctx).await)
        })
    }

    /// Seeds a fresh child's history with its parent's context slice.
    pub(crate) fn seed_history(&self, messages: Vec<Message>) {
        self.inner.update(|s| s.history.messages = messages);
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
        let active = self.claim_linked(parent)?;
        let input = input.into();
        let run_id = self.inner.config.id_generator.next_id();
        let span = tracing::info_span!("arkagent.run", run_id = %run_id);
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            inner.run_loop(&input, &run_id, &active.cancel).await
        }
        .instrument(span))
    }

    /// Runs the loop for one user input until a final answer, `max_iterations` or
    /// cancellation. Errors: `run_in_progress`, or the model call's [`LlmError`] (the
    /// history then stays paired and ends with the user input or the last tool results).
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
        let active = self.claim()?;
        let run_id = self.inner.config.id_generator.next_id();
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            inner.maybe_compress_context(&run_id, &active.cancel, CompressionTrigger::Manual, None).await
        })
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
    fn lock_state(&self) -> MutexGuard<'_, Arc<AgentState>> {
        // A poisoned lock only means a panic elsewhere between statements on plain data;
        // every update here is a single push or swap, so the state is still valid.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current state, shared (O(1)).
    fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&self.lock_state())
    }

    /// Mutates the state in place (copy-on-write only if a snapshot is alive).
    fn update<R>(&self, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut guard = self.lock_state();
        f(Arc::make_mut(&mut guard))
    }

    fn emit(&self, run_id: &str, kind: EventKind) {
        self.emitter.emit(run_id, kind);
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

    fn estimate(&self, state: &AgentState, context: &[Message]) -> u64 {
        estimate_request_tokens(&self.system_prompt, context, &state.history.messages, &self.tool_definitions)
    }

    async fn run_loop(&self, input: &str, run_id: &str, cancel: &CancellationToken) -> Result<RunOutcome, ArkAgentError> {
        if let Some(service) = &self.sub_agents {
            service.start_run();
        }
        self.emit(run_id, EventKind::RunStarted { input: input.to_owned() });
        self.update(|s| s.history.messages.push(Message::user(input)));
        let session_id = self.lock_state().session_id.clone();
        let tool_ctx = ToolContext { session_id, run_id: run_id.to_owned(), cancel: cancel.clone(), memory: self.memory.clone() };
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
                let state = self.snapshot();
                let context: Vec<Message> = Self::memory_context(&state).into_iter().collect();
                let estimate = self.estimate(&state, &context);
                drop(state);
                let result = self.maybe_compress_context(run_id, cancel, CompressionTrigger::Preflight, Some(estimate)).await;
                if result.outcome != CompressOutcome::Compressed {
                    preflight_estimate = Some(estimate);
                }
            }
            let mut overflow_retried = false;
            let response = loop {
                let (http, message_count, estimate) = {
                    let state = self.snapshot();
                    let context: Vec<Message> = Self::memory_context(&state).into_iter().collect();
                    let request = ChatRequest {
                        system_prompt: Some(self.system_prompt.as_str()),
                        context_messages: &context,
                        messages: &state.history.messages,
                        tools: &self.tool_definitions,
                        tool_choice: self.config.tool_choice.as_ref(),
                    };
                    let estimate = preflight_estimate.take().unwrap_or_else(|| self.estimate(&state, &context));
                    (self.client.build_http_request(&request), state.history.messages.len(), estimate)
                };
                self.emit(run_id, EventKind::ModelRequest {
                    iteration,
                    message_count,
                    tool_count: self.tool_definitions.len(),
                    estimated_prompt_tokens: estimate,
                    compression_threshold: threshold,
                });
                let streamed = if self.config.model.stream {
                    // LLM-2: deltas reach observers as they arrive, not after the turn.
                    let on_delta = |delta: StreamDelta| {
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
                    Err(LlmError::Cancelled) => return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None)),
                    Err(LlmError::ContextOverflow) if self.compressor.is_some() && !overflow_retried => {
                        overflow_retried = true;
                        let result = self.maybe_compress_context(run_id, cancel, CompressionTrigger::Overflow, None).await;
                        if result.outcome != CompressOutcome::Compressed {
                            return Err(self.fail(run_id, iteration, LlmError::ContextOverflow));
                        }
                    }
                    Err(e) => return Err(self.fail(run_id, iteration, e)),
                }
            };
            let (message, calls) = self.normalise_assistant(response.message);
            let text = message.text().map(str::to_owned);
            self.update(|state| {
                state.history.messages.push(message);
                if let Some(usage) = &response.usage {
                    state.usages.push(usage.clone());
                }
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
                return Ok(self.finish(run_id, RunStatus::Completed, iteration, text));
            }

            let results = run_tool_calls(
                &self.tools,
                &calls,
                self.config.max_parallel_tools,
                &self.exec_policy,
                &tool_ctx,
                &|call| {
                    self.emit(run_id, EventKind::ToolCallStarted {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                    })
                },
                &|call, result| {
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
            self.update(|state| {
                for (call, result) in calls.iter().zip(results) {
                    state.history.messages.push(Message::tool_result(&call.id, result.content, result.is_error));
                }
            });
            if cancel.is_cancelled() {
                return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None));
            }
            if self.compressor.is_some() {
                self.maybe_compress_context(run_id, cancel, CompressionTrigger::PostTurn, None).await;
            }
        }
        Ok(self.finish(run_id, RunStatus::MaxIterations, self.config.max_iterations, None))
    }

    fn fail(&self, run_id: &str, iteration: u32, e: LlmError) -> ArkAgentError {
        tracing::warn!(code = e.code(), "model call failed");
        self.emit(run_id, EventKind::RunFinished {
            status: RunStatus::Failed,
            iterations: iteration,
            error_code: Some(e.code().to_owned()),
        });
        e.into()
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
                return CompressResult::skipped(CompressReason::BackingOffAfterFailure);
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
        if let Some(staged) = result.staged.take().filter(|_| result.outcome == CompressOutcome::Compressed) {
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
                    }
                    Err(reason) => result = CompressResult::failed(reason, result.usage.take()),
                }
            } else {
                result = CompressResult::failed(CompressReason::PostCommitPairingViolation, result.usage.take());
            }
        } else if result.outcome == CompressOutcome::Compressed {
            result = CompressResult::failed(CompressReason::PostCommitPairingViolation, result.usage.take());
        }
        if let Ok(mut backoff) = self.compression_failed_at.lock() {
            match result.outcome {
                CompressOutcome::Failed if automatic => *backoff = Some(calls),
                CompressOutcome::Compressed => *backoff = None,
                _ => {}
            }
        }
        let messages_after = self.lock_state().history.messages.len();
        tracing::debug!(outcome = ?result.outcome, reason = result.reason.code(), messages_before, messages_after, "compression attempt");
        let quiet = result.outcome == CompressOutcome::Skipped
            && matches!(result.reason, CompressReason::BelowThreshold | CompressReason::NoUsage | CompressReason::HistoryTooShort);
        if !quiet {
            self.emit(run_id, EventKind::Compression {
                trigger,
                outcome: result.outcome,
                reason: result.reason.code().to_owned(),
                episode_id: result.episode_id.clone(),
                error_code: result.error_code.clone(),
                messages_before,
                messages_after,
                estimated_prompt_tokens: estimate,
                threshold: compressor.threshold(),
                usage: result.usage.clone(),
            });
        }
        result
    }

    /// Gives every tool call a unique, non-empty id: providers that omit ids (or repeat
    /// them) would otherwise break pairing.
    fn normalise_assistant(&self, message: Message) -> (Message, Vec<ToolCall>) {
        let Message::Assistant { content, mut tool_calls, reasoning } = message else {
            return (message, Vec::new());
        };
        if !tool_calls.is_empty() {
            let state = self.snapshot();
            let mut seen: HashSet<&str> = state.history.messages.iter().flat_map(|m| m.tool_calls().iter().map(|c| c.id.as_str())).collect();
            let mut fresh: HashSet<String> = HashSet::new();
            for call in &mut tool_calls {
                while call.id.is_empty() || seen.contains(call.id.as_str()) || fresh.contains(&call.id) {
                    call.id = format!("call_{}", self.config.id_generator.next_id());
                }
                fresh.insert(call.id.clone());
            }
            seen.clear();
        }
        let calls = tool_calls.clone();
        (Message::Assistant { content, tool_calls, reasoning }, calls)
    }
}

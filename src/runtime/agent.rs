use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::config::AgentRuntimeConfig;
use super::events::{AgentEvent, AgentObserver, EventBus, EventKind, Subscription};
use super::tool_exec::run_tool_calls;
use crate::error::ArkAgentError;
use crate::history::{AgentState, Message, ModelUsage, ToolCall};
use crate::llm::{ChatClient, ChatRequest, HttpTransport, LlmError};
use crate::tools::{ToolContext, ToolDefinition};

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

struct Inner {
    config: AgentRuntimeConfig,
    tool_definitions: Vec<ToolDefinition>,
    client: ChatClient,
    state: Mutex<AgentState>,
    bus: Arc<EventBus>,
    active_run: Mutex<Option<CancellationToken>>,
    seq: AtomicU64,
}

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime").field("session_id", &self.session_id()).finish_non_exhaustive()
    }
}

/// Clears the active-run slot however the run ends (including a dropped future).
struct ActiveRun<'a>(&'a Inner);

impl Drop for ActiveRun<'_> {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.0.active_run.lock() {
            *slot = None;
        }
    }
}

impl AgentRuntime {
    /// A runtime with an empty history. Errors: `invalid_config`.
    pub fn new(config: AgentRuntimeConfig, transport: Arc<dyn HttpTransport>) -> Result<Self, ArkAgentError> {
        config.validate()?;
        let session_id = config.session_id.clone().unwrap_or_else(|| config.id_generator.next_id());
        let client = ChatClient::new(transport, config.model.clone());
        Ok(Self {
            inner: Arc::new(Inner {
                tool_definitions: config.tools.definitions(),
                config,
                client,
                state: Mutex::new(AgentState::new(session_id)),
                bus: Arc::new(EventBus::default()),
                active_run: Mutex::new(None),
                seq: AtomicU64::new(0),
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

    /// The session id.
    pub fn session_id(&self) -> String {
        self.inner.lock_state().session_id.clone()
    }

    /// A copy of the whole state.
    pub fn state(&self) -> AgentState {
        self.inner.lock_state().clone()
    }

    /// A copy of the messages.
    pub fn messages(&self) -> Vec<Message> {
        self.inner.lock_state().history.messages.clone()
    }

    /// A copy of the recorded usages.
    pub fn usages(&self) -> Vec<ModelUsage> {
        self.inner.lock_state().usages.clone()
    }

    /// The whole state as JSON: history, episodic memories, usages, session id. Holds no
    /// secrets (the config is not part of it).
    pub fn export_state(&self) -> Result<String, ArkAgentError> {
        self.inner.lock_state().to_json()
    }

    /// Replaces the state with an exported one after validating it. Errors:
    /// `invalid_json`, `invalid_state`, `run_in_progress`.
    pub fn import_state(&self, state_json: &str) -> Result<(), ArkAgentError> {
        let state = AgentState::from_json(state_json)?;
        let active = self.inner.active_run.lock().map(|a| a.is_some()).unwrap_or(true);
        if active {
            return Err(ArkAgentError::RunInProgress);
        }
        *self.inner.lock_state() = state;
        Ok(())
    }

    /// Subscribes an observer; keep the returned [`Subscription`] alive.
    pub fn subscribe(&self, observer: Arc<dyn AgentObserver>) -> Subscription {
        self.inner.bus.subscribe(observer)
    }

    /// Unsubscribes by id; true when it was subscribed.
    pub fn unsubscribe(&self, subscription_id: u64) -> bool {
        self.inner.bus.unsubscribe(subscription_id)
    }

    /// Cancels the active run, if any: in-flight HTTP and tools stop being awaited, each
    /// unanswered tool call gets a `cancelled` tool result, and `run` returns
    /// [`RunStatus::Cancelled`]. Returns true when a run was active.
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

    /// Runs the loop for one user input until a final answer, `max_iterations` or
    /// cancellation. Errors: `run_in_progress`, or the model call's [`LlmError`] (the
    /// history then stays paired and ends with the user input or the last tool results).
    pub async fn run(&self, input: &str) -> Result<RunOutcome, ArkAgentError> {
        let cancel = {
            let mut slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
            if slot.is_some() {
                return Err(ArkAgentError::RunInProgress);
            }
            let token = CancellationToken::new();
            *slot = Some(token.clone());
            token
        };
        let _active = ActiveRun(&self.inner);
        let run_id = self.inner.config.id_generator.next_id();
        let span = tracing::info_span!("arkagent.run", run_id = %run_id);
        self.inner.run_loop(input, &run_id, &cancel).instrument(span).await
    }
}

impl Inner {
    fn lock_state(&self) -> MutexGuard<'_, AgentState> {
        // A poisoned lock only means a panic elsewhere mid-update of plain data; the
        // state is still structurally valid, so keep going rather than abort the host.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn emit(&self, run_id: &str, kind: EventKind) {
        let event = AgentEvent {
            session_id: self.lock_state().session_id.clone(),
            run_id: run_id.to_owned(),
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            at_ms: self.config.clock.now_ms(),
            kind,
        };
        self.bus.emit(&event);
    }

    fn finish(&self, run_id: &str, status: RunStatus, iterations: u32, final_text: Option<String>) -> RunOutcome {
        self.emit(run_id, EventKind::RunFinished { status, iterations, error_code: None });
        RunOutcome { run_id: run_id.to_owned(), status, final_text, iterations }
    }

    async fn run_loop(&self, input: &str, run_id: &str, cancel: &CancellationToken) -> Result<RunOutcome, ArkAgentError> {
        self.emit(run_id, EventKind::RunStarted { input: input.to_owned() });
        self.lock_state().history.messages.push(Message::user(input));
        let session_id = self.lock_state().session_id.clone();
        let tool_ctx = ToolContext { session_id, run_id: run_id.to_owned(), cancel: cancel.clone() };

        for iteration in 1..=self.config.max_iterations {
            if cancel.is_cancelled() {
                return Ok(self.finish(run_id, RunStatus::Cancelled, iteration - 1, None));
            }
            let (http, message_count) = {
                let state = self.lock_state();
                let request = ChatRequest {
                    system_prompt: Some(self.config.system_prompt.as_str()),
                    context_messages: &[],
                    messages: &state.history.messages,
                    tools: &self.tool_definitions,
                    tool_choice: self.config.tool_choice.as_ref(),
                };
                (self.client.build_http_request(&request), state.history.messages.len())
            };
            self.emit(run_id, EventKind::ModelRequest { iteration, message_count, tool_count: self.tool_definitions.len() });
            let response = match self.client.send(http, cancel).await {
                Ok(r) => r,
                Err(LlmError::Cancelled) => return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None)),
                Err(e) => {
                    tracing::warn!(code = e.code(), "model call failed");
                    self.emit(run_id, EventKind::RunFinished {
                        status: RunStatus::Failed,
                        iterations: iteration,
                        error_code: Some(e.code().to_owned()),
                    });
                    return Err(e.into());
                }
            };
            let (message, calls) = self.normalise_assistant(response.message);
            let text = message.text().map(str::to_owned);
            {
                let mut state = self.lock_state();
                state.history.messages.push(message);
                if let Some(usage) = &response.usage {
                    state.usages.push(usage.clone());
                }
            }
            self.emit(run_id, EventKind::ModelResponse {
                iteration,
                usage: response.usage,
                tool_call_count: calls.len(),
                finish_reason: response.finish_reason,
            });
            if let Some(delta) = text.clone().filter(|t| !t.is_empty()) {
                self.emit(run_id, EventKind::TextDelta { iteration, delta });
            }
            if calls.is_empty() {
                return Ok(self.finish(run_id, RunStatus::Completed, iteration, text));
            }

            let results = run_tool_calls(
                &self.config.tools,
                &calls,
                self.config.max_parallel_tools,
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
            {
                let mut state = self.lock_state();
                for (call, result) in calls.iter().zip(results) {
                    state.history.messages.push(Message::tool_result(&call.id, result.content, result.is_error));
                }
            }
            if cancel.is_cancelled() {
                return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None));
            }
        }
        Ok(self.finish(run_id, RunStatus::MaxIterations, self.config.max_iterations, None))
    }

    /// Gives every tool call a unique, non-empty id: providers that omit ids (or repeat
    /// them) would otherwise break pairing.
    fn normalise_assistant(&self, message: Message) -> (Message, Vec<ToolCall>) {
        let Message::Assistant { content, mut tool_calls, reasoning } = message else {
            return (message, Vec::new());
        };
        if !tool_calls.is_empty() {
            let state = self.lock_state();
            let mut seen: HashSet<String> = state
                .history
                .messages
                .iter()
                .flat_map(|m| m.tool_calls().iter().map(|c| c.id.clone()))
                .collect();
            drop(state);
            for call in &mut tool_calls {
                while call.id.is_empty() || seen.contains(&call.id) {
                    call.id = format!("call_{}", self.config.id_generator.next_id());
                }
                seen.insert(call.id.clone());
            }
        }
        let calls = tool_calls.clone();
        (Message::Assistant { content, tool_calls, reasoning }, calls)
    }
}

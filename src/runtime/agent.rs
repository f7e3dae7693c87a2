//! The run loop: one user input to a final answer, `max_iterations` or cancellation
//! (CORE-4). The conversation it works on is a [`Session`]; the ways to start it are in
//! `start.rs`, the compression attempt in `compression_step.rs`.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::config::AgentRuntimeConfig;
use super::delegation::{DelegateTaskTool, SubAgentService};
use super::events::{Emitter, EventKind};
use super::outcome::{CompressionTrigger, RunOutcome, RunStatus};
use super::tool_exec::{run_tool_calls, ExecPolicy};
use crate::error::ArkAgentError;
use crate::history::{Message, ModelUsage, ToolCall};
use crate::llm::{ChatClient, LlmError, StreamDelta};
use crate::compress::{CompressOutcome, ContextCompressor, TokenCounts};
use crate::memory::{RuntimeMemoryService, ScopedMemory};
use crate::session::{Committed, Session};
use crate::tools::{ToolContext, ToolRegistry};

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
    pub(super) session: Session,
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

    fn finish(&self, run_id: &str, status: RunStatus, iterations: u32, final_text: Option<String>) -> RunOutcome {
        let usage = self.run_usage.usage(&self.session.snapshot());
        self.emit(run_id, EventKind::RunFinished { status, iterations, error_code: None, usage: usage.clone() });
        RunOutcome { run_id: run_id.to_owned(), status, final_text, iterations, usage }
    }

    pub(super) async fn run_loop(&self, input: &str, run_id: &str, cancel: &CancellationToken) -> Result<RunOutcome, ArkAgentError> {
        if let Some(service) = &self.sub_agents {
            service.start_run();
        }
        self.run_usage.start(&self.session.snapshot());
        let mut user = Message::user(input);
        self.redact_message(&mut user);
        self.emit(run_id, EventKind::RunStarted { input: user.text().unwrap_or_default().to_owned() });
        self.session.append(|s| s.history.messages.push(user.clone()));
        // STORE-2: the user message is committed with the run start; a run whose input
        // cannot be committed does not start (the input is taken out again).
        if let Err(e) = self.commit_point(run_id) {
            self.session.update(|state| {
                if state.history.messages.last() == Some(&user) {
                    state.history.messages.pop();
                }
            });
            return Err(self.store_failed(run_id, 0, e));
        }
        let session_id = self.session.view().session_id();
        let tool_ctx = ToolContext {
            session_id,
            run_id: run_id.to_owned(),
            cancel: cancel.clone(),
            memory: self.memory.clone(),
            episodes: Some(Arc::new(RuntimeMemoryService::new(self.session.view().shared_cell()))),
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
                let estimate = self.session.next_prompt_size();
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
                    let (state, generation) = self.session.snapshot_with_generation();
                    let (body, counts) = self.session.request_body(&state, generation);
                    sent_counts = counts;
                    let estimate = preflight_estimate.take().unwrap_or_else(|| self.session.prompt_size(&state, counts));
                    (self.client.http_request_with_shared_body(body), state.history.messages.len(), estimate)
                };
                self.emit(run_id, EventKind::ModelRequest {
                    iteration,
                    message_count,
                    tool_count: self.session.tool_definitions().len(),
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
                            self.session.append(|state| state.usages.push(ModelUsage::unreported()));
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
            // SUB-6, CMP-3, CMP-12: the answer with its usage; the provider's count and the
            // calibration learn from the request just sent.
            self.session.append_answer(message, response.usage.as_ref(), &sent_counts);
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
                    let size = self.session.next_prompt_size();
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
            self.session.append(|state| state.history.messages.extend(results));
            // STORE-2: the turn is paired now: the assistant message, its tool results, the
            // usage and any sub-agent records are committed together.
            self.commit_point(run_id).map_err(|e| self.store_failed(run_id, iteration, e))?;
            if cancel.is_cancelled() {
                return Ok(self.finish(run_id, RunStatus::Cancelled, iteration, None));
            }
            if self.compressor.is_some() {
                let size = self.session.next_prompt_size();
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
            self.session.update(|state| {
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
            usage: self.run_usage.usage(&self.session.snapshot()),
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
            usage: self.run_usage.usage(&self.session.snapshot()),
        });
        e
    }

    /// Gives every tool call a unique, non-empty id: providers that omit ids (or repeat
    /// them) would otherwise break pairing.
    fn normalise_assistant(&self, message: Message) -> (Message, Vec<ToolCall>) {
        let Message::Assistant { content, mut tool_calls, reasoning } = message else {
            return (message, Vec::new());
        };
        if !tool_calls.is_empty() {
            // The ids already in the history, from the encoding cache (PERF-7: no walk).
            let (state, generation) = self.session.snapshot_with_generation();
            self.session.with_call_ids(&state, generation, |seen| {
                let mut fresh: HashSet<String> = HashSet::new();
                for call in &mut tool_calls {
                    while call.id.is_empty() || seen.contains(call.id.as_str()) || fresh.contains(&call.id) {
                        call.id = format!("call_{}", self.config.id_generator.next_id());
                    }
                    fresh.insert(call.id.clone());
                }
            });
        }
        let calls = tool_calls.clone();
        (Message::Assistant { content, tool_calls, reasoning }, calls)
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;

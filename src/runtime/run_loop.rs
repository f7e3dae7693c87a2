//! The run loop (CORE-4): one user input to a final answer, `max_iterations` or
//! cancellation. Each iteration is three steps around a [`Run`]: calling the model
//! (pre-flight compression, the overflow retry, stream deltas as events), answering the
//! turn's tools, and the after-turn work (the commit point, post-turn compression). The
//! conversation changes only through the [`Session`](crate::session::Session)'s doors.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::agent::Inner;
use super::events::EventKind;
use super::outcome::{CompressionTrigger, RunOutcome, RunStatus};
use super::tool_exec::run_tool_calls;
use crate::compress::{CompressOutcome, TokenCounts};
use crate::error::ArkAgentError;
use crate::history::{Content, ToolCall};
use crate::history::ModelUsage;
use crate::llm::{ChatResponse, CutOffUsage, LlmError, StreamDelta};
use crate::session::{Answer, NextRequest, PushedInput};
use crate::tools::{ToolContext, ToolResult};

/// How a run ends.
type Ended = Result<RunOutcome, ArkAgentError>;

/// One run: what each of its steps needs.
pub(super) struct Run<'a> {
    pub(super) inner: &'a Inner,
    pub(super) run_id: &'a str,
    pub(super) cancel: &'a CancellationToken,
    /// The input as pushed: taken back when the run's first model call fails (CORE-4).
    /// `None` for a resumed run (TOOL-1), whose input is committed with earlier turns.
    input: Option<PushedInput>,
    /// What the turn's tools get.
    pub(super) tools: ToolContext,
    /// The compressor's threshold, reported with each request.
    threshold: Option<u64>,
}

impl Inner {
    /// Runs the loop for `input` (the caller holds the run slot).
    pub(super) async fn run_loop(&self, input: Content, run_id: &str, cancel: &CancellationToken) -> Ended {
        let input = match &self.config.image_codec {
            Some(codec) if input.has_images() => self.prepared(codec, input, cancel).await?,
            _ => input,
        };
        let run = self.begin(input, run_id, cancel)?;
        if self.mcp.is_some() {
            self.mcp_point(run_id, cancel).await;
        }
        // Boxed: the loop's state machine is built once, shared with a resumed run
        // (TOOL-1), not inlined into each caller (PERF-9: the arm64 library's size).
        Box::pin(run.iterate(1)).await
    }

    /// IMG-9: `input` with its photos prepared by the host's codec (before anything is
    /// written or sent). Errors: `image_codec_failed`, `cancelled`.
    async fn prepared(&self, codec: &Arc<dyn super::ImageCodec>, input: Content, cancel: &CancellationToken) -> Result<Content, ArkAgentError> {
        let rule = crate::llm::image_rule_of(&self.config.model);
        let mut kept = Vec::new();
        let keep = self.config.keep_original_images.then_some(&mut kept);
        let prepared = tokio::select! {
            prepared = super::image_codec::prepare(codec, rule, input, keep) => prepared?,
            () = cancel.cancelled() => return Err(crate::LlmError::Cancelled.into()),
        };
        if let Ok(mut originals) = self.originals.lock() {
            originals.extend(kept.into_iter().map(|image| (image.id().to_owned(), image)));
        }
        Ok(prepared)
    }

    /// Starts a run: the input checked (IMG-5: an image out of the model's bounds refuses
    /// the run before it starts, nothing written), the tree's per-run budget,
    /// `run_started`, and the input pushed and committed (STORE-2: a run whose input
    /// cannot be committed does not start; the input is taken back).
    fn begin<'a>(&'a self, input: Content, run_id: &'a str, cancel: &'a CancellationToken) -> Result<Run<'a>, ArkAgentError> {
        let text = input.text().into_owned();
        self.session.check_input(&input)?;
        if let Some(service) = &self.sub_agents {
            service.start_run(run_id);
        }
        self.run_usage.start(&self.session.snapshot());
        self.emit(run_id, EventKind::RunStarted { input: text });
        let input = self.session.push_input(run_id, input)?;
        if let Err(e) = self.commit_point(run_id) {
            self.session.take_back(&input);
            return Err(self.store_failed(run_id, 0, e));
        }
        Ok(Run::new(self, run_id, cancel, Some(input)))
    }
}

impl<'a> Run<'a> {
    /// The run's parts; `input` as pushed (`None` when resumed).
    pub(super) fn new(inner: &'a Inner, run_id: &'a str, cancel: &'a CancellationToken, input: Option<PushedInput>) -> Self {
        let view = inner.session.view();
        let tools = ToolContext {
            session_id: view.session_id(),
            run_id: run_id.to_owned(),
            cancel: cancel.clone(),
            abort: Default::default(),
            memory: inner.memory.clone(),
            episodes: Some(view.memory_service()),
        };
        let threshold = inner.compressor.as_ref().and_then(|c| c.threshold());
        Run { inner, run_id, cancel, input, tools, threshold }
    }

    /// The loop from model call `first` on: until a final answer, `max_iterations`, a
    /// cancel, or a turn paused for approval (TOOL-1).
    pub(super) async fn iterate(&self, first: u32) -> Ended {
        let inner = self.inner;
        for iteration in first..=inner.config.max_iterations {
            if self.cancel.is_cancelled() {
                return Ok(inner.finish(self.run_id, RunStatus::Cancelled, iteration - 1, None));
            }
            self.preflight().await;
            let answer = match self.call_model(iteration).await {
                ControlFlow::Continue(answer) => answer,
                ControlFlow::Break(ended) => return ended,
            };
            if answer.tool_calls.is_empty() {
                return self.final_answer(iteration, answer.text).await;
            }
            if let ControlFlow::Break(ended) = self.answer_tools(iteration, &answer.tool_calls).await {
                return ended;
            }
            if let ControlFlow::Break(ended) = self.after_turn(iteration).await {
                return ended;
            }
        }
        Ok(inner.finish(self.run_id, RunStatus::MaxIterations, inner.config.max_iterations, None))
    }
}

/// Calling the model.
impl Run<'_> {
    /// CMP-11: compresses before the call when the prompt size reaches the threshold. The
    /// size checked is the one the request reports when nothing was compressed (the
    /// session remembers it for the same state).
    async fn preflight(&self) {
        if self.inner.compressor.is_none() {
            return;
        }
        let (size, _) = self.inner.session.next_prompt_size();
        self.inner.maybe_compress_context(self.run_id, self.cancel, CompressionTrigger::Preflight, Some(size)).await;
    }

    /// One model call, answered (its answer pushed) or ending the run: cancelled, failed,
    /// or — on a context overflow with a compressor — retried once after a forced
    /// compression.
    async fn call_model(&self, iteration: u32) -> ControlFlow<Ended, Answer> {
        let mut overflow_retried = false;
        loop {
            let request = self.inner.session.next_request();
            self.emit_request(iteration, &request);
            let (result, answered, cut_off) = self.send(iteration, request.body).await;
            let error = match result {
                Ok(response) => return ControlFlow::Continue(self.take_answer(iteration, response, &request.counts)),
                Err(error) => error,
            };
            if answered || cut_off.is_some() {
                // SUB-6: a call cut off mid-answer (cancelled, or its stream broke) was
                // made; its usage is what the stream reported before it broke (COST-2:
                // Anthropic's input tokens, billed), else unreported.
                self.inner.session.record_unreported_usage(cut_off);
            }
            let retry = matches!(error, LlmError::ContextOverflow) && self.inner.compressor.is_some() && !overflow_retried;
            if !retry {
                return ControlFlow::Break(self.model_failed(iteration, error));
            }
            overflow_retried = true;
            let result = self.inner.maybe_compress_context(self.run_id, self.cancel, CompressionTrigger::Overflow, None).await;
            if result.outcome != CompressOutcome::Compressed {
                return ControlFlow::Break(Err(self.fail(iteration, LlmError::ContextOverflow)));
            }
        }
    }

    fn emit_request(&self, iteration: u32, request: &NextRequest) {
        self.inner.emit(self.run_id, EventKind::ModelRequest {
            iteration,
            message_count: request.message_count,
            tool_count: self.inner.session.tool_count(),
            estimated_prompt_tokens: request.prompt_size,
            compression_threshold: self.threshold,
            prompt_size_source: request.prompt_size_source,
        });
    }

    /// Sends the request; true with the result when any part of an answer streamed in.
    async fn send(&self, iteration: u32, body: Arc<String>) -> (Result<ChatResponse, LlmError>, bool, Option<ModelUsage>) {
        let client = &self.inner.client;
        let http = client.http_request_with_shared_body(body);
        if !self.inner.config.model.stream {
            return (client.send(http, self.cancel).await, false, None);
        }
        // LLM-2: deltas reach observers as they arrive, not after the turn; LLM-4: less
        // what could begin a secret, until the next delta tells.
        let answered = AtomicBool::new(false);
        let held = std::sync::Mutex::new(HeldDeltas::default());
        let model = &self.inner.config.model;
        let emit = |delta: StreamDelta| self.inner.emit(self.run_id, delta_event(iteration, delta));
        let on_delta = |delta: StreamDelta| {
            answered.store(true, Ordering::Relaxed);
            held.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pass(model, delta, &emit);
        };
        let cut_off = CutOffUsage::default();
        let result = client.send_streaming_metered(http, self.cancel, &on_delta, &cut_off).await;
        // What is still held went out with a whole answer; a failed one keeps it (it may
        // be most of a secret, and no history holds that answer).
        if result.is_ok() {
            held.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).flush(&emit);
        }
        (result, answered.load(Ordering::Relaxed), cut_off.take())
    }

    /// Pushes the answer with its usage (SUB-6, CMP-3, CMP-12: the provider's count and
    /// the calibration learn from the request just sent) and reports it.
    fn take_answer(&self, iteration: u32, response: ChatResponse, sent: &TokenCounts) -> Answer {
        let ChatResponse { message, usage, finish_reason, .. } = response;
        let whole = !self.inner.config.model.stream;
        // THINK-5: a whole answer's reasoning reaches observers once, as a stream's would.
        let reasoning = if whole { crate::llm::reasoning_deltas(&message) } else { Vec::new() };
        let answer = self.inner.session.push_answer(message, usage.as_ref(), sent);
        self.inner.emit(self.run_id, EventKind::ModelResponse { iteration, usage, tool_call_count: answer.tool_calls.len(), finish_reason });
        for delta in reasoning {
            self.inner.emit(self.run_id, delta_event(iteration, delta));
        }
        if whole {
            if let Some(delta) = answer.text.clone().filter(|t| !t.is_empty()) {
                self.inner.emit(self.run_id, EventKind::TextDelta { iteration, delta });
            }
        }
        answer
    }

    /// A model call that ended the run: cancelled, or failed.
    fn model_failed(&self, iteration: u32, error: LlmError) -> Ended {
        match error {
            LlmError::Cancelled => Ok(self.inner.finish(self.run_id, RunStatus::Cancelled, iteration, None)),
            error => Err(self.fail(iteration, error)),
        }
    }

    /// Ends a run with a model error. When the first call of a root's run failed, the
    /// model produced nothing: the input is taken back (see `AgentRuntime::run`).
    fn fail(&self, iteration: u32, e: LlmError) -> ArkAgentError {
        tracing::warn!(code = e.code().as_str(), "model call failed");
        // A sub-agent keeps its task: its history is a record (ISO-1), never run again.
        if let (1, 0, Some(input)) = (iteration, self.inner.depth, &self.input) {
            self.inner.session.take_back(input);
            // STORE-2: the committed input goes too (the store follows the history).
            if let Err(store) = self.inner.commit_point(self.run_id) {
                tracing::warn!(code = store.code().as_str(), "could not commit the rollback of a failed run's input");
            }
        }
        self.inner.emit(self.run_id, EventKind::RunFinished {
            status: RunStatus::Failed,
            iterations: iteration,
            error_code: Some(e.code()),
            usage: self.inner.run_usage.usage(&self.inner.session.snapshot()),
        });
        e.into()
    }
}

/// Answering tools, and the work after a turn.
impl Run<'_> {
    /// Answers the turn's tool calls and pushes their results together; or, when one waits
    /// for a person (TOOL-1), pauses the run.
    async fn answer_tools(&self, iteration: u32, calls: &[ToolCall]) -> ControlFlow<Ended> {
        if self.inner.exec_policy.gated.load(std::sync::atomic::Ordering::Relaxed) {
            // Boxed: built once, not inlined into the loop (PERF-9).
            return Box::pin(self.answer_gated(iteration, calls)).await;
        }
        let results = self.run_tools(calls).await;
        self.inner.session.push_tool_results(calls, results);
        ControlFlow::Continue(())
    }

    /// Runs `calls` (bounded, in parallel), reporting each; one result per call, in order.
    /// One boxed future however many places await it: its state machine is built once
    /// (PERF-9: the arm64 library's size; one allocation per turn with tools).
    pub(super) fn run_tools<'s>(&'s self, calls: &'s [ToolCall]) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<ToolResult>> + Send + 's>> {
        Box::pin(async move {
            let inner = self.inner;
            let on_start = |call: &ToolCall| self.tool_started(call);
            let on_finish = |call: &ToolCall, result: &ToolResult| self.tool_finished(call, result);
            run_tool_calls(&inner.tools(), calls, inner.config.max_parallel_tools, &inner.exec_policy, &self.tools, &on_start, &on_finish).await
        })
    }

    pub(super) fn tool_finished_event(&self, call: &ToolCall, result: &ToolResult) {
        self.tool_finished(call, result);
    }

    fn tool_started(&self, call: &ToolCall) {
        let inner = self.inner;
        if !inner.emitter.is_observed() {
            return inner.emitter.skip(); // no copies of what nobody reads
        }
        inner.emit(self.run_id, EventKind::ToolCallStarted { call_id: call.id.clone(), name: call.name.clone(), arguments: call.arguments.clone() })
    }

    fn tool_finished(&self, call: &ToolCall, result: &ToolResult) {
        let inner = self.inner;
        if !inner.emitter.is_observed() {
            return inner.emitter.skip();
        }
        inner.emit(self.run_id, EventKind::ToolCallFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            is_error: result.is_error,
            error_code: result.error_code.clone(),
            content: result.content.clone(),
            metadata: result.metadata.clone(),
        })
    }

    /// After a turn with tool calls: STORE-2's commit point (the turn is paired now: the
    /// assistant message, its results, the usage and any sub-agent records together), a
    /// cancel honoured, the post-turn compression check.
    pub(super) async fn after_turn(&self, iteration: u32) -> ControlFlow<Ended> {
        if let Err(e) = self.inner.commit_point(self.run_id) {
            return ControlFlow::Break(Err(self.inner.store_failed(self.run_id, iteration, e)));
        }
        if self.cancel.is_cancelled() {
            return ControlFlow::Break(Ok(self.inner.finish(self.run_id, RunStatus::Cancelled, iteration, None)));
        }
        self.post_turn_compression().await;
        ControlFlow::Continue(())
    }

    /// A final answer: committed with its usage (STORE-2: a paired turn), then the
    /// post-turn check (CMP-3: a chat without tools compresses too).
    async fn final_answer(&self, iteration: u32, text: Option<String>) -> Ended {
        self.inner.commit_point(self.run_id).map_err(|e| self.inner.store_failed(self.run_id, iteration, e))?;
        if !self.cancel.is_cancelled() {
            self.post_turn_compression().await;
        }
        Ok(self.inner.finish(self.run_id, RunStatus::Completed, iteration, text))
    }

    async fn post_turn_compression(&self) {
        if self.inner.compressor.is_none() {
            return;
        }
        let (size, _) = self.inner.session.next_prompt_size();
        self.inner.maybe_compress_context(self.run_id, self.cancel, CompressionTrigger::PostTurn, Some(size)).await;
    }
}

/// LLM-4: the end of the current stream of text (the answer, the reasoning, a call's
/// arguments: `None`, `Some(None)`, `Some(Some(index))`) held back because it could begin
/// a secret; a delta of another stream sends it first (streams follow each other).
#[derive(Default)]
struct HeldDeltas {
    stream: Option<Option<u32>>,
    text: String,
}

impl HeldDeltas {
    /// Sends what of `delta` may go now through `emit`.
    fn pass(&mut self, model: &crate::llm::ModelConfig, delta: StreamDelta, emit: &dyn Fn(StreamDelta)) {
        let (stream, text) = match delta {
            StreamDelta::Text(text) => (None, text),
            StreamDelta::Reasoning(text) => (Some(None), text),
            StreamDelta::ToolCallArguments { index, fragment } => (Some(Some(index)), fragment),
            other => {
                self.flush(emit);
                return emit(other);
            }
        };
        if stream != self.stream {
            self.flush(emit);
            self.stream = stream;
        }
        self.text.push_str(&text);
        // Whole secrets first: a key that ends as it begins must not be cut in two.
        model.redact_in_place(&mut self.text);
        let held = self.text.split_off(self.text.len() - model.secret_start_len(&self.text));
        let ready = std::mem::replace(&mut self.text, held);
        if !ready.is_empty() {
            emit(delta_of(stream, ready));
        }
    }

    /// Sends what is held.
    fn flush(&mut self, emit: &dyn Fn(StreamDelta)) {
        if !self.text.is_empty() {
            emit(delta_of(self.stream, std::mem::take(&mut self.text)));
        }
    }
}

fn delta_of(stream: Option<Option<u32>>, text: String) -> StreamDelta {
    match stream {
        None => StreamDelta::Text(text),
        Some(None) => StreamDelta::Reasoning(text),
        Some(Some(index)) => StreamDelta::ToolCallArguments { index, fragment: text },
    }
}

/// A streamed piece of the answer as its event.
fn delta_event(iteration: u32, delta: StreamDelta) -> EventKind {
    match delta {
        StreamDelta::Text(delta) => EventKind::TextDelta { iteration, delta },
        StreamDelta::Reasoning(delta) => EventKind::ReasoningDelta { iteration, delta, redacted: false },
        StreamDelta::RedactedReasoning => EventKind::ReasoningDelta { iteration, delta: String::new(), redacted: true },
        StreamDelta::ToolCallStarted { index, name, .. } => EventKind::ToolCallDelta { iteration, index, name: Some(name), arguments_delta: String::new() },
        StreamDelta::ToolCallArguments { index, fragment } => EventKind::ToolCallDelta { iteration, index, name: None, arguments_delta: fragment },
    }
}

//! TOOL-4 (issue 37 item 4) on the Rust surface: a per-tool `timeout_ms` and the runtime's
//! `tool_timeout_ms`; past the deadline the call is answered with a `tool_timeout` error
//! result and the run goes on, whether or not the tool stops; every call's abort signal
//! (`ToolContext::cancel`, its reason in `ToolContext::abort`) fires on its deadline, on
//! the run's cancel and when the runtime stops waiting for it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arkagent::tools::AbortReason;
use arkagent::{AgentRuntime, AgentRuntimeConfig, EventKind, ModelConfig, RunStatus, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::{text_reply, tool_calls_reply, Recorder, ScriptedModel, API_KEY};

/// A tool that keeps its context and then waits `wait` (forever when `None`), ignoring its
/// abort signal — the worst case: the run must not wait for it past the deadline.
#[derive(Default)]
struct Stubborn {
    seen: Mutex<Vec<ToolContext>>,
    wait: Option<Duration>,
}

#[async_trait]
impl ToolExecutor for Stubborn {
    async fn execute(&self, _call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        self.seen.lock().unwrap().push(ctx);
        match self.wait {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending::<()>().await,
        }
        ToolResult::ok("done")
    }
}

fn tools(definition: ToolDefinition, tool: Arc<Stubborn>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(definition, tool).unwrap();
    r
}

fn slow_def() -> ToolDefinition {
    ToolDefinition::new("slow", "Takes its time", json!({"type": "object"}))
}

fn config(tools: ToolRegistry) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.tools = tools;
    c
}

fn call_then_answer() -> Arc<ScriptedModel> {
    ScriptedModel::new(vec![tool_calls_reply(&[("c1", "slow", json!({}))], 10), text_reply("ok", 20)])
}

/// The tool message the model got back for `c1`, as JSON.
fn tool_content(model: &ScriptedModel) -> Value {
    let requests = model.requests.lock().unwrap();
    let tool = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn tool_4_a_call_past_its_tools_deadline_is_answered_tool_timeout_and_the_run_goes_on() {
    let tool = Arc::new(Stubborn::default());
    let model = call_then_answer();
    let rt = AgentRuntime::new(config(tools(slow_def().with_timeout_ms(60), tool.clone())), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let start = Instant::now();
    let outcome = rt.run("go").await.unwrap();
    assert_eq!((outcome.status, outcome.final_text.as_deref()), (RunStatus::Completed, Some("ok")));
    assert!(start.elapsed() < Duration::from_secs(5), "the run waited for a tool that never finishes");
    assert_eq!(tool_content(&model)["error"]["code"], "tool_timeout");
    let finished = recorder.0.lock().unwrap().iter().find_map(|e| match &e.kind {
        EventKind::ToolCallFinished { error_code, is_error, .. } => Some((error_code.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(finished, Some((Some("tool_timeout".into()), true)));
    // The tool's signal fired, with its reason.
    let ctx = tool.seen.lock().unwrap()[0].clone();
    assert!(ctx.cancel.is_cancelled());
    assert_eq!(ctx.abort.reason(), Some(AbortReason::ToolTimeout));
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
}

#[tokio::test]
async fn tool_4_the_runtime_default_applies_to_tools_without_their_own_and_0_means_none() {
    // The runtime's default cuts a tool without a deadline of its own …
    let tool = Arc::new(Stubborn::default());
    let model = call_then_answer();
    let mut c = config(tools(slow_def(), tool.clone()));
    c.tool_timeout_ms = 60;
    let rt = AgentRuntime::new(c, model.clone()).unwrap();
    rt.run("go").await.unwrap();
    assert_eq!(tool_content(&model)["error"]["code"], "tool_timeout");
    // … but not one whose definition says 0 (no deadline): it finishes after the default.
    let tool = Arc::new(Stubborn { wait: Some(Duration::from_millis(150)), ..Default::default() });
    let model = call_then_answer();
    let mut c = config(tools(slow_def().with_timeout_ms(0), tool.clone()));
    c.tool_timeout_ms = 30;
    let rt = AgentRuntime::new(c, model.clone()).unwrap();
    rt.run("go").await.unwrap();
    let requests = model.requests.lock().unwrap();
    let answer = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap()["content"].clone();
    assert_eq!(answer, "done");
    let ctx = tool.seen.lock().unwrap()[0].clone();
    assert!(!ctx.cancel.is_cancelled() && ctx.abort.reason().is_none(), "a call that finished is never aborted");
}

#[tokio::test]
async fn tool_4_a_cancel_fires_the_calls_signal_with_cancelled() {
    let tool = Arc::new(Stubborn::default());
    let model = call_then_answer();
    let rt = AgentRuntime::new(config(tools(slow_def(), tool.clone())), model).unwrap();
    let run = tokio::spawn({
        let rt = rt.clone();
        async move { rt.run("go").await }
    });
    while tool.seen.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    rt.cancel();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    let ctx = tool.seen.lock().unwrap()[0].clone();
    assert!(ctx.cancel.is_cancelled());
    assert_eq!(ctx.abort.reason(), Some(AbortReason::Cancelled));
}

#[tokio::test]
async fn tool_4_a_runtime_that_stops_waiting_mid_call_fires_the_signal_with_closed() {
    let tool = Arc::new(Stubborn::default());
    let model = call_then_answer();
    let rt = AgentRuntime::new(config(tools(slow_def(), tool.clone())), model).unwrap();
    let run = tokio::spawn({
        let rt = rt.clone();
        async move { rt.run("go").await }
    });
    while tool.seen.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The host drops the run (an app closing its page without cancel()).
    run.abort();
    let _ = run.await;
    let ctx = tool.seen.lock().unwrap()[0].clone();
    assert!(ctx.cancel.is_cancelled(), "the abandoned call learns it");
    assert_eq!(ctx.abort.reason(), Some(AbortReason::Closed));
}

#[test]
fn tool_4_timeouts_in_the_json_forms_of_a_config_and_a_tool_definition() {
    let c = AgentRuntimeConfig::from_json(
        r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m"},"tool_timeout_ms":2500}"#,
        ToolRegistry::new(),
    )
    .unwrap();
    assert_eq!(c.tool_timeout_ms, 2500);
    let mut worker = c.clone();
    worker.apply_overrides_json(r#"{"tool_timeout_ms":0}"#).unwrap();
    assert_eq!(worker.tool_timeout_ms, 0);
    assert_eq!(AgentRuntimeConfig::new(ModelConfig::new("http://h/v1", "k", "m")).tool_timeout_ms, 0, "no deadline by default");
    let d: ToolDefinition = serde_json::from_str(r#"{"name":"t","description":"d","parameters":{"type":"object"},"timeout_ms":900}"#).unwrap();
    assert_eq!(d.timeout_ms, Some(900));
    // The deadline never reaches the model: not in the definition's JSON without one, and
    // not in any request body.
    assert!(!serde_json::to_string(&slow_def()).unwrap().contains("timeout"));
}

#[tokio::test]
async fn tool_4_the_deadline_is_never_sent_to_the_model() {
    let tool = Arc::new(Stubborn { wait: Some(Duration::from_millis(1)), ..Default::default() });
    let model = call_then_answer();
    let rt = AgentRuntime::new(config(tools(slow_def().with_timeout_ms(5000), tool)), model.clone()).unwrap();
    rt.run("go").await.unwrap();
    for r in model.requests.lock().unwrap().iter() {
        assert!(!r.to_string().contains("timeout_ms") && !r.to_string().contains("5000"), "{r}");
    }
}

/// A tool whose result is there once `ready` is set, without waking its run (as a host's
/// answer that arrived between two polls): only a poll after the cancel can see it.
struct AnsweredLate {
    ready: Arc<std::sync::atomic::AtomicBool>,
    seen: Mutex<Vec<ToolContext>>,
    may_poll_after_stop: bool,
}

#[async_trait]
impl ToolExecutor for AnsweredLate {
    async fn execute(&self, _call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        self.seen.lock().unwrap().push(ctx);
        let ready = Arc::clone(&self.ready);
        std::future::poll_fn(move |_| match ready.load(std::sync::atomic::Ordering::SeqCst) {
            true => std::task::Poll::Ready(()),
            false => std::task::Poll::Pending,
        })
        .await;
        ToolResult::ok("done")
    }

    fn may_poll_after_stop(&self) -> bool {
        self.may_poll_after_stop
    }
}

/// Runs `slow` on `tool`, sets its result ready, then cancels; returns the tool message's
/// content and the reason the call's signal fired with.
async fn answer_then_cancel(may_poll_after_stop: bool) -> (String, Option<AbortReason>) {
    let ready = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tool = Arc::new(AnsweredLate { ready: Arc::clone(&ready), seen: Mutex::default(), may_poll_after_stop });
    let mut registry = ToolRegistry::new();
    registry.register(slow_def(), tool.clone()).unwrap();
    let rt = AgentRuntime::new(config(registry), call_then_answer()).unwrap();
    let run = tokio::spawn({
        let rt = rt.clone();
        async move { rt.run("go").await }
    });
    while tool.seen.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    ready.store(true, std::sync::atomic::Ordering::SeqCst);
    rt.cancel();
    run.await.unwrap().unwrap();
    let messages = serde_json::to_value(rt.messages()).unwrap();
    let tool_message = messages.as_array().unwrap().iter().find(|m| m["role"] == "tool").cloned().unwrap_or_default();
    let content = tool_message["content"].as_str().map(str::to_owned).unwrap_or_else(|| tool_message["content"].to_string());
    let reason = tool.seen.lock().unwrap()[0].abort.reason();
    (content, reason)
}

/// An executor that keeps the trait's default.
struct Plain;

#[async_trait]
impl ToolExecutor for Plain {
    async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        ToolResult::ok("plain")
    }
}

#[tokio::test]
async fn tool_4_a_result_there_before_the_cancel_wins_when_the_executor_says_a_poll_only_reads_it() {
    // ToolExecutor::may_poll_after_stop true (a poll only reads a result finished outside
    // the future, as the C and JS host tools say): one more poll without waiting takes
    // the result the tool already had, and its signal never fires.
    let (content, reason) = answer_then_cancel(true).await;
    assert_eq!((content.as_str(), reason), ("done", None));
    // False, the default (a poll could start work: delegate_task, an MCP call): the cancel
    // wins, and the execution is not polled again.
    assert!(!Plain.may_poll_after_stop(), "the default is false");
    let (content, reason) = answer_then_cancel(false).await;
    assert!(content.contains("cancelled"), "{content}");
    assert_eq!(reason, Some(AbortReason::Cancelled));
}

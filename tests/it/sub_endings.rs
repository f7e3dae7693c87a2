//! Issue 28 item 2 through the public Rust API: however a sub-agent ends — a final
//! answer, a failure, force-completed by id, its session closed, stale cleanup, its
//! parent's run cancelled — the registry archives what it really spent up to then
//! (tokens, the usage summary with cached tokens, costs and calls, the tools it used,
//! its messages so far), and the registry's totals agree with the children part of
//! `total_usage()` (ISO-1, ISO-4, SUB-6), nested trees included (each call once).

use std::sync::Arc;
use std::time::Duration;

use arkagent::subagent::{SubAgentContext, SubAgentPolicy, SubAgentRegistry, SubAgentStatus};
use arkagent::{AgentRuntime, AgentRuntimeConfig, Message, ModelPrice, RunStatus, ToolDefinition};
use serde_json::json;

use crate::delegation::{delegate_calls, last_role, last_user, offers_delegation, parent_config};
use crate::support::*;

/// A reply with a usage of `prompt` (of them `cached` from the provider's cache) plus 7
/// completion tokens.
fn with_usage(mut reply: Reply, prompt: u64, cached: u64) -> Reply {
    if let Reply::Json(v) = &mut reply {
        v["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7,
                            "prompt_tokens_details": {"cached_tokens": cached}});
    }
    reply
}

/// The child's first call: 47 tokens (10 of them cached), asking for `get_weather`.
fn weather_call() -> Reply {
    with_usage(tool_calls_reply(&[("w1", "get_weather", json!({"city": "Oslo"}))], 0), 40, 10)
}

/// `delegation`'s parent (session "parent", clone allowed) with a price and the
/// `get_weather` tool the clone inherits.
fn priced_parent(policy: SubAgentPolicy, weather: Arc<WeatherTool>) -> AgentRuntimeConfig {
    let mut c = parent_config(policy, vec![]);
    c.model.price = Some(ModelPrice::new("USD", 0.27, 0.07, 1.10));
    c.tools.register(ToolDefinition::new("get_weather", "weather", json!({"type": "object"})), weather).unwrap();
    c
}

/// Parent: delegates "fetch it", then answers. Child: `weather_call`, then `after_tool`.
fn family(after_tool: fn() -> Reply) -> Arc<ScriptedModel> {
    ScriptedModel::with(move |body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" { delegate_calls(&[("d1", "clone", "fetch it")]) } else { text_reply("parent done", 30) };
        }
        if last_role(body) == "user" { weather_call() } else { after_tool() }
    })
}

/// What the archived record and the totals must say of a child that made one call (47
/// tokens, 10 cached, priced) and ran `get_weather`.
fn assert_real_spending(rt: &AgentRuntime, record: &SubAgentContext, when: &str) {
    let result = record.result.as_ref().unwrap();
    assert_eq!(result.token_count, 47, "{when}: the archived token count is what the child spent");
    assert_eq!(result.tools_used, vec!["get_weather".to_owned()], "{when}: the tools it used");
    let (u, children) = (&result.usage, rt.total_usage().children);
    assert_eq!((u.total_tokens, u.cached_tokens, u.call_count, u.priced_call_count), (47, 10, 1, 1), "{when}: {u:?}");
    assert!(u.cost_in("USD").is_some_and(|c| c.nanos > 0), "{when}: the call's cost: {u:?}");
    assert_eq!(*u, children, "{when}: the record's usage is what the parent recorded");
    let called = record.messages.iter().any(|m| matches!(m, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|c| c.id == "w1")));
    assert!(called, "{when}: its messages so far: {:?}", record.messages);
    let stats = rt.sub_agent_registry().unwrap().stats();
    assert_eq!(stats.total_tokens, children.total_tokens, "{when}: stats.total_tokens = total_usage().children");
    assert_eq!(stats.usage, children, "{when}: stats.usage = total_usage().children");
}

/// The error code of the parent's `delegate_task` result, as its model sees it.
fn delegate_answer_code(rt: &AgentRuntime) -> Option<String> {
    let messages = rt.messages();
    let call = messages.iter().flat_map(Message::tool_calls).find(|c| c.name == "delegate_task")?;
    let answer = messages.iter().find_map(|m| match m {
        Message::Tool { tool_call_id, content, .. } if *tool_call_id == call.id => Some(content.text().into_owned()),
        _ => None,
    })?;
    let json: serde_json::Value = serde_json::from_str(&answer).ok()?;
    json["error"]["code"].as_str().map(str::to_owned)
}

/// The one ended record.
fn ended(rt: &AgentRuntime) -> SubAgentContext {
    let history = rt.sub_agent_registry().unwrap().history();
    assert_eq!(history.len(), 1, "{history:?}");
    history[0].clone()
}

#[tokio::test]
async fn iso_4_sub_6_a_completed_child_archives_its_spending_and_the_totals_agree() {
    let weather = Arc::new(WeatherTool::default());
    let rt = AgentRuntime::new(priced_parent(SubAgentPolicy::default(), weather), family(|| text_reply("child done", 0))).unwrap();
    rt.run("go").await.unwrap();
    let record = ended(&rt);
    assert_eq!((record.status, record.result.as_ref().unwrap().forced_reason.as_deref()), (SubAgentStatus::Completed, None));
    // The final answer's call is the child's second: 47 + 5.
    assert_eq!(record.result.as_ref().unwrap().token_count, 52);
    let stats = rt.sub_agent_registry().unwrap().stats();
    assert_eq!((stats.total_tokens, stats.usage.clone()), (52, rt.total_usage().children));
}

#[tokio::test]
async fn iso_4_sub_6_a_failed_child_archives_its_spending_and_the_totals_agree() {
    let weather = Arc::new(WeatherTool::default());
    let rt = AgentRuntime::new(priced_parent(SubAgentPolicy::default(), weather), family(|| Reply::Raw(400, "{\"error\":{\"message\":\"no\"}}".into())))
        .unwrap();
    rt.run("go").await.unwrap();
    let record = ended(&rt);
    assert_eq!(record.status, SubAgentStatus::Failed);
    assert_real_spending(&rt, &record, "failed");
}

/// How a test ends the running child (stuck in its `get_weather` call).
#[derive(Clone, Copy, Debug)]
enum Forced {
    ById,
    SessionClosed,
    Stale,
    ParentCancelled,
}

type Running = tokio::task::JoinHandle<Result<arkagent::RunOutcome, arkagent::ArkAgentError>>;

/// Starts `rt.run("go")` and returns once `reached()` holds (polled for at most ~2 s).
async fn run_until(rt: &AgentRuntime, reached: impl Fn() -> bool) -> Running {
    let running = tokio::spawn({
        let rt = rt.clone();
        async move { rt.run("go").await }
    });
    for _ in 0..1000 {
        if reached() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    running
}

/// Starts `rt.run("go")` and returns once a child is inside `get_weather` (at most ~2 s).
async fn run_until_the_weather_call(rt: &AgentRuntime, weather: &WeatherTool) -> Running {
    run_until(rt, || !weather.calls.lock().unwrap().is_empty()).await
}

/// Runs a parent whose child made its call and is inside `get_weather` (which waits for
/// the child's cancellation), ends the child as `how`, checks the record right then (the
/// registry's own endings) and once the parent's run is over.
async fn end_a_running_child(how: Forced, reason: &str) {
    let weather = Arc::new(WeatherTool { hang: true, ..Default::default() });
    let model = family(|| text_reply("never asked", 0));
    let rt = AgentRuntime::new(priced_parent(SubAgentPolicy::default(), weather.clone()), model).unwrap();
    let registry = rt.sub_agent_registry().unwrap();
    let running = run_until_the_weather_call(&rt, &weather).await;
    let [child] = registry.active().try_into().expect("one running child");
    let now = child.started_at_ms + 5_000;
    match how {
        Forced::ById => assert!(registry.force_complete(&child.id, reason, now)),
        Forced::SessionClosed => assert_eq!(registry.force_complete_all("parent", now), 1),
        Forced::Stale => assert_eq!(registry.cleanup(1_000, now), 1),
        Forced::ParentCancelled => assert!(rt.cancel()),
    }
    if !matches!(how, Forced::ParentCancelled) {
        // The moment it ended: the registry's record already holds what it spent.
        let record = registry.history().pop().unwrap();
        let result = record.result.as_ref().unwrap();
        assert_eq!((result.token_count, result.tools_used.clone()), (47, vec!["get_weather".to_owned()]), "{how:?} at once");
        assert_eq!((result.usage.total_tokens, result.usage.call_count), (47, 1), "{how:?} at once");
        assert_eq!(registry.stats().total_tokens, 47, "{how:?} at once");
    }
    let outcome = running.await.unwrap().unwrap();
    let expected = if matches!(how, Forced::ParentCancelled) { RunStatus::Cancelled } else { RunStatus::Completed };
    assert_eq!(outcome.status, expected);
    let record = ended(&rt);
    assert_eq!(record.id, child.id);
    assert_eq!(record.status, SubAgentStatus::Completed);
    assert_eq!(record.result.as_ref().unwrap().forced_reason.as_deref(), Some(reason), "{how:?}");
    // SUB-8: the parent's model is answered with the same ending the record names (a
    // host's own reason is outside the closed set: `force-completed`).
    let answered = delegate_answer_code(&rt);
    let expected = if matches!(how, Forced::ById) { "force-completed" } else { reason };
    assert_eq!(answered.as_deref(), Some(expected), "{how:?}");
    assert_real_spending(&rt, &record, &format!("{how:?}"));
    assert_eq!(registry.stats().completed_count, 1, "ended once");
    // CORE-4: however it ended, its record is paired (a call the cancel cut off has a
    // result saying so).
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&record.messages), "{how:?}: {:?}", record.messages);
}

#[tokio::test]
async fn iso_4_sub_6_a_child_force_completed_by_id_archives_its_spending() {
    end_a_running_child(Forced::ById, "user-stopped").await;
}

#[tokio::test]
async fn iso_4_sub_6_a_child_of_a_closed_session_archives_its_spending() {
    end_a_running_child(Forced::SessionClosed, "session-closed").await;
}

#[tokio::test]
async fn iso_4_sub_6_a_stale_child_archives_its_spending() {
    end_a_running_child(Forced::Stale, "stale").await;
}

#[tokio::test]
async fn iso_4_sub_6_a_child_of_a_cancelled_run_archives_its_spending() {
    end_a_running_child(Forced::ParentCancelled, "cancelled").await;
}

/// A tool that waits for its call's abort signal, keeping the signal to read afterwards.
#[derive(Default)]
struct HearsAbort(std::sync::Mutex<Vec<arkagent::tools::ToolAbort>>);

#[async_trait::async_trait]
impl arkagent::tools::ToolExecutor for HearsAbort {
    async fn execute(&self, _call: arkagent::tools::ToolInvocation, ctx: arkagent::tools::ToolContext) -> arkagent::tools::ToolResult {
        self.0.lock().unwrap().push(ctx.abort.clone());
        ctx.cancel.cancelled().await;
        arkagent::tools::ToolResult::ok("stopped")
    }
}

/// SUB-7, CORE-4, SUB-6: cancelling the parent while its child waits in a tool winds the
/// child down rather than dropping it: the child's tool hears `cancelled` (not `closed`,
/// which means the runtime stopped waiting), the child's own `run_finished` (cancelled)
/// reaches the parent's observers, and the parent's `delegate_task` answer carries the
/// child's session, ending and usage like every other ending's.
#[tokio::test]
async fn sub_7_core_4_cancelling_the_parent_winds_its_child_down() {
    let tool = Arc::new(HearsAbort::default());
    let mut config = parent_config(SubAgentPolicy::default(), vec![]);
    config.tools.register(ToolDefinition::new("get_weather", "weather", json!({"type": "object"})), tool.clone()).unwrap();
    let rt = AgentRuntime::new(config, family(|| text_reply("never asked", 0))).unwrap();
    let events = Arc::new(Recorder::default());
    let _sub = rt.subscribe(events.clone());
    let running = run_until(&rt, || !tool.0.lock().unwrap().is_empty()).await;
    assert!(rt.cancel());
    assert_eq!(running.await.unwrap().unwrap().status, RunStatus::Cancelled);
    let heard: Vec<_> = tool.0.lock().unwrap().iter().map(|a| a.reason()).collect();
    assert_eq!(heard, [Some(arkagent::tools::AbortReason::Cancelled)], "the child's tool heard the cancel");
    let events = events.0.lock().unwrap();
    let child_ends: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            arkagent::EventKind::SubAgent(c) => match &c.event.kind {
                arkagent::EventKind::RunFinished { status, .. } => Some(*status),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(child_ends, [RunStatus::Cancelled], "the child finished its run");
    let metadata = events
        .iter()
        .find_map(|e| match &e.kind {
            arkagent::EventKind::ToolCallFinished { name, metadata, error_code, .. } if name == "delegate_task" => {
                assert_eq!(error_code.as_deref(), Some("cancelled"));
                metadata.clone()
            }
            _ => None,
        })
        .expect("the delegate_task answer has the child's metadata");
    let record = ended(&rt);
    assert_eq!(metadata["child_session_id"], json!(record.id));
    assert_eq!(metadata["reason"], json!("cancelled"));
    assert_eq!(metadata["child_usage"]["total_tokens"], json!(47), "{metadata}");
    assert_eq!(metadata["child_usage"], serde_json::to_value(rt.total_usage().children).unwrap());
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&record.messages), "{:?}", record.messages);
}

/// A worker factory that never answers (a host's factory stuck on its own thread).
struct NeverAnswers(Arc<std::sync::atomic::AtomicBool>);

#[async_trait::async_trait]
impl arkagent::runtime::SubAgentFactory for NeverAnswers {
    async fn create(&self, _parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, arkagent::ArkAgentError> {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        std::future::pending().await
    }
}

/// SUB-7, CORE-4: a cancel does not wait for a worker factory that has not answered: the
/// run ends cancelled, the call answered `cancelled`, nothing registered.
#[tokio::test]
async fn sub_7_core_4_a_cancel_does_not_wait_for_a_factory() {
    let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = arkagent::runtime::SubAgentDefinition::create("stuck", "never built", Arc::new(NeverAnswers(asked.clone()))).unwrap();
    let model = ScriptedModel::with(|body, _| if last_role(body) == "user" { delegate_calls(&[("d1", "stuck", "do it")]) } else { text_reply("never asked", 0) });
    let rt = AgentRuntime::new(parent_config(SubAgentPolicy::default(), vec![worker]), model).unwrap();
    let running = run_until(&rt, || asked.load(std::sync::atomic::Ordering::SeqCst)).await;
    assert!(rt.cancel());
    let outcome = tokio::time::timeout(Duration::from_secs(10), running).await.expect("the cancel ended the run").unwrap().unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(delegate_answer_code(&rt).as_deref(), Some("cancelled"));
    assert!(rt.sub_agent_registry().unwrap().history().is_empty(), "nothing was registered");
}

/// A custom compressor that skips for the parent and, in a child (a clone inherits it),
/// never returns and never looks at its cancel.
struct DeafInChild(Arc<std::sync::atomic::AtomicBool>);

#[async_trait::async_trait]
impl arkagent::compress::ContextCompressor for DeafInChild {
    async fn compress(&self, state: &arkagent::AgentState, _ctx: &arkagent::compress::CompressContext) -> arkagent::compress::CompressResult {
        if state.session_id == "parent" {
            return arkagent::compress::CompressResult::skipped(arkagent::compress::CompressReason::BelowThreshold);
        }
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        std::future::pending().await
    }
}

/// SUB-7, CMP-1: a compressor that does not heed the cancel cannot hold the run — nor a
/// parent winding its child down: past a grace of 2 s it is given up (`failed`
/// `cancelled`), the parent's run ends cancelled.
#[tokio::test]
async fn sub_7_cmp_1_a_compressor_deaf_to_the_cancel_does_not_hold_the_parent() {
    let deaf = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut config = parent_config(SubAgentPolicy::default(), vec![]);
    config.compression = Some(arkagent::Compression::Custom(Arc::new(DeafInChild(deaf.clone()))));
    let rt = AgentRuntime::new(config, family(|| text_reply("never asked", 0))).unwrap();
    let running = run_until(&rt, || deaf.load(std::sync::atomic::Ordering::SeqCst)).await;
    assert!(deaf.load(std::sync::atomic::Ordering::SeqCst), "the child's compressor was called");
    assert!(rt.cancel());
    let outcome = tokio::time::timeout(Duration::from_secs(20), running).await.expect("the cancel ended the run").unwrap().unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(delegate_answer_code(&rt).as_deref(), Some("cancelled"));
    let record = ended(&rt);
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&record.messages), "{:?}", record.messages);
}

/// SUB-8: a child force-completed from a callback of its final answer (the answer is in,
/// its run not yet over) is answered to the parent as forced, as its record says — not
/// with the answer.
#[tokio::test]
async fn sub_8_a_child_forced_as_it_answers_is_answered_as_forced() {
    let weather = Arc::new(WeatherTool::default());
    let rt = AgentRuntime::new(priced_parent(SubAgentPolicy::default(), weather), family(|| text_reply("child done", 0))).unwrap();
    let registry = rt.sub_agent_registry().unwrap();
    let found = Arc::new(std::sync::Mutex::new(Vec::new()));
    let _sub = rt.subscribe(Arc::new({
        let (registry, found) = (registry.clone(), found.clone());
        move |e: &arkagent::AgentEvent| {
            if let arkagent::EventKind::SubAgent(c) = &e.kind {
                if matches!(c.event.kind, arkagent::EventKind::ModelResponse { tool_call_count: 0, .. }) {
                    found.lock().unwrap().push(registry.force_complete(&c.child_session_id, "user-stopped", 1));
                }
            }
        }
    }));
    assert_eq!(rt.run("go").await.unwrap().status, RunStatus::Completed);
    assert_eq!(*found.lock().unwrap(), [true], "forced while it ran");
    let record = ended(&rt);
    assert_eq!(record.result.as_ref().unwrap().forced_reason.as_deref(), Some("user-stopped"));
    assert_eq!(delegate_answer_code(&rt).as_deref(), Some("force-completed"), "the parent is told what the record says");
    assert_eq!(registry.stats().completed_count, 1, "ended once");
}

/// Root → child (its call: 200 tokens, a delegation) → grandchild (its call: 100 tokens,
/// then `get_weather`, waiting), running until both are inside their tools.
async fn nested_tree_running() -> (AgentRuntime, Arc<SubAgentRegistry>, Running) {
    let weather = Arc::new(WeatherTool { hang: true, ..Default::default() });
    let model = ScriptedModel::with(|body, _| {
        let first = last_role(body) == "user";
        match last_user(body).split('\n').next().unwrap_or_default() {
            "grandchild task" => with_usage(tool_calls_reply(&[("w1", "get_weather", json!({}))], 0), 93, 0),
            "child task" if first => with_usage(delegate_calls(&[("g", "clone", "grandchild task")]), 193, 0),
            "child task" => text_reply("never asked", 0),
            _ if first => delegate_calls(&[("c", "clone", "child task")]),
            _ => text_reply("root done", 5),
        }
    });
    let policy = SubAgentPolicy { max_depth: 2, ..Default::default() };
    let rt = AgentRuntime::new(priced_parent(policy, weather.clone()), model).unwrap();
    let registry: Arc<SubAgentRegistry> = rt.sub_agent_registry().unwrap();
    let running = run_until_the_weather_call(&rt, &weather).await;
    assert_eq!(registry.active().len(), 2, "child and grandchild running");
    (rt, registry, running)
}

fn result_of(registry: &SubAgentRegistry, task: &str) -> arkagent::subagent::SubAgentResult {
    let history = registry.history();
    history.iter().find(|c| c.task.starts_with(task)).unwrap().clone().result.unwrap()
}

/// The records and totals of the nested tree once its runs wound down: the child's record
/// covers its subtree (300), the grandchild's its own (100), the totals count each call
/// once and equal the root's children total.
fn assert_nested_totals(rt: &AgentRuntime, registry: &SubAgentRegistry) {
    let (child, grandchild) = (result_of(registry, "child task"), result_of(registry, "grandchild task"));
    assert_eq!((child.token_count, grandchild.token_count), (300, 100));
    assert_eq!((child.usage.total_tokens, grandchild.usage.total_tokens), (300, 100));
    assert_eq!((child.tools_used, grandchild.tools_used), (vec!["delegate_task".to_owned()], vec!["get_weather".to_owned()]));
    let children = rt.total_usage().children;
    assert_eq!(children.total_tokens, 300);
    let stats = registry.stats();
    assert_eq!((stats.total_tokens, stats.usage, stats.completed_count), (300, children, 2));
}

/// Closing the root's session ends child and grandchild at once: the totals count each
/// call once at the moment of closing and once the runs wound down.
#[tokio::test]
async fn iso_4_sub_6_closing_a_nested_tree_counts_each_call_once() {
    let (rt, registry, running) = nested_tree_running().await;
    assert_eq!(registry.force_complete_all("parent", 10_000), 1);
    assert_eq!(registry.stats().total_tokens, 300, "at once: each call once");
    let at_once = (result_of(&registry, "child task").token_count, result_of(&registry, "grandchild task").token_count);
    assert_eq!(at_once, (300, 100), "at once");
    assert_eq!(running.await.unwrap().unwrap().final_text.as_deref(), Some("root done"));
    assert_nested_totals(&rt, &registry);
}

/// Cancelling the root's run ends child and grandchild (each wound down to its end): the
/// same records and totals.
#[tokio::test]
async fn iso_4_sub_6_cancelling_the_root_of_a_nested_tree_counts_each_call_once() {
    let (rt, registry, running) = nested_tree_running().await;
    assert!(rt.cancel());
    assert_eq!(running.await.unwrap().unwrap().status, RunStatus::Cancelled);
    assert_nested_totals(&rt, &registry);
    for record in registry.history() {
        assert!(arkagent::HistoryInvariants::tool_calls_paired(&record.messages), "CORE-4, {}: {:?}", record.task, record.messages);
    }
}

/// Item 2 (every ending of a C host's sub-agent: failed, force-completed by id, session
/// closed, stale, the parent's run cancelled) and item 7 (`arkagent_runtime_run_decomposed`
/// framed by `run_started` / `run_finished`) through the C ABI: tests/c/sub_endings.c.
#[test]
fn iso_4_sub_6_core_5_c_every_ending_keeps_the_spending_and_run_decomposed_is_a_run() {
    let stdout = crate::c_programs::compile_and_run("sub_endings");
    assert!(stdout.contains("sub_endings: ") && stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// Issue 40 item 5, stated exactly: a child force-completed while a model call is in
/// flight — `stats.usage` (no estimates) equals `total_usage().children`, `stats.total_tokens`
/// also counts the cut-off call's prompt estimate (what the budget charged; no usage reports
/// it); and after a resume the registry is the new runtime's (empty) while the totals are
/// the session's.
#[tokio::test]
async fn iso_4_sub_6_stats_and_totals_when_a_call_was_in_flight_and_after_a_resume() {
    let weather = Arc::new(WeatherTool::default());
    let model = family(|| Reply::Hang);
    let rt = AgentRuntime::new(priced_parent(SubAgentPolicy::default(), weather.clone()), model.clone()).unwrap();
    let registry = rt.sub_agent_registry().unwrap();
    let running = run_until(&rt, || model.request_count() >= 3).await;
    assert_eq!(model.request_count(), 3, "the child's second call is in flight");
    let [child] = registry.active().try_into().expect("one running child");
    assert!(registry.force_complete(&child.id, "stop", child.started_at_ms + 1));
    assert_eq!(running.await.unwrap().unwrap().status, RunStatus::Completed);
    let (stats, children) = (registry.stats(), rt.total_usage().children);
    assert_eq!(stats.usage, children, "stats.usage holds no estimates: it equals the totals");
    assert!(stats.total_tokens > children.total_tokens, "total_tokens also counts the cut-off call's estimate: {} vs {}", stats.total_tokens, children.total_tokens);
    // A resume: the session's totals come along; the registry is the new runtime's own.
    let resumed = AgentRuntime::resume(priced_parent(SubAgentPolicy::default(), weather), model, &rt.export_state().unwrap()).unwrap();
    assert_eq!(resumed.total_usage().children, children);
    let fresh = resumed.sub_agent_registry().unwrap().stats();
    assert_eq!((fresh.completed_count, fresh.total_tokens, fresh.usage.call_count), (0, 0, 0));
}

//! Running one turn's tool calls: bounded concurrency, results in call order, every call
//! answered (cancelled, timed-out, unknown, invalid or panicking calls become tool errors).
//! TOOL-4: each call runs with its own abort signal, which fires when the run is cancelled,
//! at the call's deadline and when the run stops waiting for it (its reason recorded
//! first), and the run never waits for a call past its deadline, whether or not the tool
//! heeds the signal. A started `delegate_task` call is the exception to "the run stops
//! waiting": on cancel its child hears it through its own run and is polled to its end
//! (SUB-7), which it reaches promptly (its model requests and tools stop at the cancel).

use std::panic::AssertUnwindSafe;

use futures::{FutureExt, StreamExt};
use tracing::Instrument;
use serde_json::Value;

use crate::history::ToolCall;
use crate::subagent::DELEGATE_TASK_TOOL_NAME;
use crate::tools::{AbortReason, ToolAbort, ToolContext, ToolInvocation, ToolRegistry, ToolResult};
use crate::CancellationToken;

/// Runs `calls` with at most `max_parallel` at once; `on_start`/`on_finish` see each call.
/// The output has one result per call, in the calls' order.
pub(crate) async fn run_tool_calls(
    tools: &ToolRegistry,
    calls: &[ToolCall],
    max_parallel: usize,
    policy: &ExecPolicy,
    ctx: &ToolContext,
    on_start: &(dyn Fn(&ToolCall) + Sync),
    on_finish: &(dyn Fn(&ToolCall, &ToolResult) + Sync),
) -> Vec<ToolResult> {
    // Futures are built eagerly (not in a `stream.map` closure) so the returned future
    // stays `Send` for any lifetime — a known limitation of async closures in `map`.
    let pending: Vec<_> = calls.iter().map(|call| run_call(tools, call, policy, ctx, on_start, on_finish)).collect();
    futures::stream::iter(pending).buffered(max_parallel.max(1)).collect().await
}

async fn run_call(
    tools: &ToolRegistry,
    call: &ToolCall,
    policy: &ExecPolicy,
    ctx: &ToolContext,
    on_start: &(dyn Fn(&ToolCall) + Sync),
    on_finish: &(dyn Fn(&ToolCall, &ToolResult) + Sync),
) -> ToolResult {
    let result = if ctx.cancel.is_cancelled() {
        cancelled()
    } else {
        on_start(call);
        if policy.is_sub_agent && call.name == DELEGATE_TASK_TOOL_NAME {
            // SUB-4 layer 3: whatever a worker's registry holds, it never delegates.
            ToolResult::error("subagent_worker_cannot_delegate", "sub-agents cannot delegate")
        } else if !policy.allows(&call.name) {
            // ISO-2 at execution: the model called a tool its role does not have.
            ToolResult::error("tool_not_allowed", &format!("tool {:?} is not allowed for this agent", call.name))
        } else {
            run_one(tools, call, policy, ctx).instrument(tracing::debug_span!("arkagent.tool", name = %call.name, call_id = %call.id)).await
        }
    };
    on_finish(call, &result);
    result
}

/// What a runtime may execute.
pub(crate) struct ExecPolicy {
    /// A sub-agent (never delegates).
    pub is_sub_agent: bool,
    /// Whitelisted tool names; `None` = all.
    pub allowed: Option<std::collections::HashSet<String>>,
    /// TOOL-4: the deadline of a call whose tool sets none, in ms (0: none).
    pub default_timeout_ms: u64,
    /// SUB-1: this runtime's `delegate_task` is its own (the delegation service's tool), so
    /// a cancel winds its child down instead of dropping it (see [`run_one`]).
    pub delegates: bool,
    /// TOOL-1, TOOL-3: a policy is set or a tool asks for approval, so each call passes the
    /// gate; decided when the runtime is built, and set when an MCP server's tool asking
    /// for approval arrives (MCP-2).
    pub gated: std::sync::atomic::AtomicBool,
}

impl ExecPolicy {
    /// ISO-2: `name` is on the whitelist, or its MCP server is (`<server>__*`, MCP-2).
    pub(crate) fn allows(&self, name: &str) -> bool {
        let server_wide = |a: &std::collections::HashSet<String>| {
            name.split_once(crate::mcp::MCP_NAME_SEPARATOR).is_some_and(|(server, _)| a.contains(&format!("{server}{}*", crate::mcp::MCP_NAME_SEPARATOR)))
        };
        self.allowed.as_ref().is_none_or(|a| a.contains(name) || server_wide(a))
    }
}

/// The result of a call the run's cancel cut off (CORE-4).
pub(super) fn cancelled() -> ToolResult {
    ToolResult::error("cancelled", "the run was cancelled before this tool call finished")
}

/// The call's abort signal while the run waits for it: fires with [`AbortReason::Closed`]
/// when the wait is dropped (the runtime stopped waiting), unless disarmed first.
struct CallAbort {
    token: CancellationToken,
    abort: ToolAbort,
    armed: bool,
}

impl CallAbort {
    fn fire(&self, reason: AbortReason) {
        self.abort.set(reason);
        self.token.cancel();
    }
}

impl Drop for CallAbort {
    fn drop(&mut self) {
        if self.armed {
            self.fire(AbortReason::Closed);
        }
    }
}

async fn run_one(tools: &ToolRegistry, call: &ToolCall, policy: &ExecPolicy, ctx: &ToolContext) -> ToolResult {
    let Some(tool) = tools.get(&call.name) else {
        return ToolResult::error("unknown_tool", &format!("no tool named {:?} is available", call.name));
    };
    let arguments = match parse_arguments(&call.arguments) {
        Ok(v) => v,
        Err(message) => return ToolResult::error("invalid_tool_arguments", &message),
    };
    if ctx.cancel.is_cancelled() {
        return cancelled(); // never started
    }
    let invocation = ToolInvocation { call_id: call.id.clone(), name: call.name.clone(), arguments };
    // Its own token (not a child of the run's), so that the reason is recorded before it
    // fires, whichever way it fires.
    let mut signal = CallAbort { token: CancellationToken::new(), abort: ToolAbort::default(), armed: true };
    let call_ctx = ToolContext { cancel: signal.token.clone(), abort: signal.abort.clone(), ..ctx.clone() };
    let execution = AssertUnwindSafe(tool.executor.execute(invocation, call_ctx)).catch_unwind();
    let deadline_ms = tool.definition.timeout_ms.unwrap_or(policy.default_timeout_ms);
    let deadline = async {
        match deadline_ms {
            0 => std::future::pending().await,
            ms => tokio::time::sleep(std::time::Duration::from_millis(ms)).await,
        }
    };
    // A result already there (the host's Promise settled, its completion made) wins over a
    // cancel or a deadline that came after it: one more look, without waiting, so the
    // signal never fires for a call that finished first (TOOL-4) — for an executor whose
    // next poll only reads a result (`may_poll_after_stop`), and only once the call has
    // started (its first poll): the look never starts a call the cancel beat.
    let polled = std::sync::atomic::AtomicBool::new(false);
    let mut execution = std::pin::pin!(execution);
    let mut execution = std::pin::pin!(std::future::poll_fn(|cx| {
        polled.store(true, std::sync::atomic::Ordering::Relaxed);
        std::future::Future::poll(execution.as_mut(), cx)
    }));
    let look_again = tool.executor.may_poll_after_stop();
    let winds_down = policy.delegates && call.name == DELEGATE_TASK_TOOL_NAME;
    let settled = |execution: std::pin::Pin<&mut _>| match look_again && polled.load(std::sync::atomic::Ordering::Relaxed) {
        true => FutureExt::now_or_never(execution),
        false => None,
    };
    let result = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => match settled(execution.as_mut()) {
            Some(outcome) => finished(&call.name, outcome),
            // SUB-7, CORE-4: a child already started hears the cancel through its own run
            // (the signal cancels it) and is polled to its end: its tools are answered
            // `cancelled`, a call cut off mid-answer is counted, it finishes its run
            // (`run_finished`) and the answer carries its usage (SUB-6). Dropping it would
            // leave all of that to `Registered`'s drop, which can only pair its history.
            None if winds_down && polled.load(std::sync::atomic::Ordering::Relaxed) => {
                signal.fire(AbortReason::Cancelled);
                finished(&call.name, execution.as_mut().await)
            }
            None => {
                signal.fire(AbortReason::Cancelled);
                cancelled()
            }
        },
        outcome = execution.as_mut() => finished(&call.name, outcome),
        () = deadline => match settled(execution.as_mut()) {
            Some(outcome) => finished(&call.name, outcome),
            None => {
                tracing::warn!(tool = %call.name, deadline_ms, "tool call timed out");
                signal.fire(AbortReason::ToolTimeout);
                ToolResult::error("tool_timeout", &format!("the tool did not finish within {deadline_ms} ms"))
            }
        },
    };
    signal.armed = false;
    result
}

/// A tool's result, or `tool_panicked` when its executor panicked.
fn finished(tool: &str, outcome: std::thread::Result<ToolResult>) -> ToolResult {
    outcome.unwrap_or_else(|_| {
        tracing::warn!(tool, "tool executor panicked");
        ToolResult::error("tool_panicked", "the tool failed unexpectedly")
    })
}

/// Tool arguments must be a JSON object; an empty text means no arguments.
pub(super) fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("tool arguments must be a JSON object".to_owned()),
        Err(e) => Err(format!("tool arguments are not valid JSON: {e}")),
    }
}


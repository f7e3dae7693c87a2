//! Host tools: the tool callback as the core's tool executor, and the completion the
//! host finishes a call with.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::oneshot;

use crate::boundary::boundary;
use crate::codes::{ArkAgentResult, ArkAgentToolAbort, FfiError, FfiResult, poisoned};
use crate::handles::{self, Kind};
use crate::strings::{opt_str_arg, str_arg};
use super::types::{ArkAgentToolAbortCallback, ArkAgentToolCallback, ArkAgentToolCompletion, UserData};
use arkagent::llm::host_call::{watch_token, WatchSite};
use arkagent::CancellationToken;
use arkagent::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};

// ---------------------------------------------------------------- tools

pub(crate) struct ToolCompletionState {
    pub(crate) reply: Mutex<Option<oneshot::Sender<ToolResult>>>,
    /// The calling runtime's services (MEM-1, MEM-4) for `arkagent_tool_*` while open,
    /// and the call's abort signal (TOOL-4).
    pub(crate) context: Option<ToolContext>,
    /// Fires when the host finished the call: its abort watchers stop (TOOL-4).
    pub(crate) done: CancellationToken,
    /// Where abort watchers run and who waits for them: the blocking call's (TOOL-4).
    pub(crate) site: Option<WatchSite>,
    /// Whether an abort callback is registered (at most one).
    pub(crate) watched: Mutex<bool>,
}

pub(crate) struct HostTool {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut ArkAgentToolCompletion),
    pub userdata: UserData,
}

#[async_trait]
impl ToolExecutor for HostTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        let (tx, rx) = oneshot::channel();
        let payload = json!({
            "call_id": call.call_id, "name": call.name, "arguments": call.arguments,
            "session_id": ctx.session_id, "run_id": ctx.run_id,
        });
        let context = Some(ctx);
        let Ok(json) = CString::new(payload.to_string()) else {
            return ToolResult::error("tool_failed", "the call could not be encoded");
        };
        let completion = handles::insert::<ArkAgentToolCompletion, _>(
            Kind::ToolCompletion,
            Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context, done: CancellationToken::new(), site: WatchSite::current(), watched: Mutex::new(false) }),
        );
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr(), completion) };
        drop(json);
        rx.await.unwrap_or_else(|_| ToolResult::error("tool_failed", "the host dropped the tool completion"))
    }

    /// Once the callback was called, a poll only reads the completion (TOOL-4).
    fn may_poll_after_stop(&self) -> bool {
        true
    }
}

/// Finishes a tool call with `content` (what the model sees). `is_error` is a plain
/// integer flag: 0 success, 1 failure (anything else gives
/// `ARK_AGENT_RESULT_INVALID_ARGUMENT` and leaves the call open). Consumes `completion`.
/// Any thread. A call already finished (by this function or [`arkagent_tool_fail`])
/// gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`; of two racing calls exactly one returns
/// `ARK_AGENT_RESULT_OK`.
///
/// # Safety
/// `content` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_complete(
    completion: *mut ArkAgentToolCompletion,
    content: *const c_char,
    is_error: i32,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let content = unsafe { str_arg(content, "content") }?;
        let is_error = match is_error {
            0 => false,
            1 => true,
            other => return Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("is_error {other} is not 0 or 1"))),
        };
        finish_tool(completion, if is_error { ToolResult::failure(content) } else { ToolResult::ok(content) })
    })
}

/// IMG-1: finishes a tool call with text and image parts (a screenshot, a rendered chart):
/// `parts_json` as in `arkagent_runtime_run_parts` (`[{"type":"text","text"},{"type":"image",
/// "mime_type","data":"<base64>"},…]`). The model sees the texts (joined by newlines) and
/// then the images: on Anthropic Messages inside the `tool_result`; on Chat Completions,
/// which cannot carry an image in a tool message, the tool message says how many images
/// follow and one user message after the turn's last tool result carries them. A
/// malformed array or a refused image (`ARK_AGENT_RESULT_INVALID_JSON`,
/// `_IMAGE_UNSUPPORTED_TYPE`, `_IMAGE_INVALID`) leaves the call open; an image over the
/// model's bounds is reported to the model as a tool error. `is_error` as in
/// [`arkagent_tool_complete`]. Consumes `completion` on success. Any thread.
///
/// # Safety
/// `parts_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_complete_parts(
    completion: *mut ArkAgentToolCompletion,
    parts_json: *const c_char,
    is_error: i32,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(parts_json, "parts_json") }?;
        let is_error = match is_error {
            0 => false,
            1 => true,
            other => return Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("is_error {other} is not 0 or 1"))),
        };
        let content = arkagent::Content::from_parts_json(json)?;
        let images: Vec<arkagent::ImagePart> = content.images().cloned().collect();
        let text = content.text().into_owned();
        let result = if is_error { ToolResult::failure(text) } else { ToolResult::ok(text) };
        finish_tool(completion, result.with_images(images))
    })
}

/// Finishes a tool call as failed with a stable error code of the tool's own (CORE-2):
/// the model sees `{"error":{"code":"<code>","message":"<message>"}}` and the
/// `tool_call_finished` event carries `"is_error":true,"error_code":"<code>"`. `code`
/// must be non-blank (`ARK_AGENT_RESULT_INVALID_ARGUMENT` otherwise, the call stays
/// open); `message` may be NULL (then empty). Both are copied before the call returns.
/// Consumes `completion`. Any thread. Races with [`arkagent_tool_complete`] and itself
/// exactly as `arkagent_tool_complete` does: one winner, the others get
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`; after the run was cancelled or the runtime freed
/// it is allowed and ignored.
///
/// # Safety
/// `code` a NUL-terminated string; `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_fail(
    completion: *mut ArkAgentToolCompletion,
    code: *const c_char,
    message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let code = unsafe { str_arg(code, "code") }?;
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("");
        if code.trim().is_empty() {
            return Err(FfiError::new(ArkAgentResult::InvalidArgument, "code is blank"));
        }
        finish_tool(completion, ToolResult::failure_with_code(code, message))
    })
}

/// Hands `result` to the waiting call; exactly one caller per completion gets `Ok`.
fn finish_tool(completion: *mut ArkAgentToolCompletion, result: ToolResult) -> FfiResult<()> {
    let state: Arc<ToolCompletionState> = handles::get(Kind::ToolCompletion, completion)?;
    let mut slot = state.reply.lock().map_err(|_| poisoned())?;
    let reply = slot
        .take()
        .ok_or_else(|| FfiError::new(ArkAgentResult::AlreadyCompleted, "this tool call was already answered"))?;
    // Under the lock, as for HTTP completions.
    let _ = handles::remove::<_, ToolCompletionState>(Kind::ToolCompletion, completion);
    drop(slot);
    state.done.cancel();
    let _ = reply.send(result);
    Ok(())
}

/// TOOL-4: why this tool call's abort signal fired, as an `ArkAgentToolAbort` value:
/// `ARK_AGENT_TOOL_ABORT_NONE` (0) while the library still waits for the result;
/// `_TOOL_TIMEOUT` past the call's deadline (the tool's `"timeout_ms"`, else the config's
/// `"tool_timeout_ms"`; the model was answered `tool_timeout`); `_CANCELLED` after
/// `arkagent_runtime_cancel` or `arkagent_runtime_free` mid-run; `_CLOSED` when the
/// runtime stopped waiting otherwise, and for a NULL, finished or unknown handle (stop in
/// every case). A tool that polls stops when it is not 0; whatever it does on its own
/// thread, the run does not wait past the deadline. Its callback, though, runs on the
/// run's thread: while the callback blocks nothing fires (polling inside it reads 0) and
/// the run waits for it to return — return at once and work elsewhere. Never blocks. Any
/// thread.
#[no_mangle]
pub extern "C" fn arkagent_tool_abort_reason(completion: *const ArkAgentToolCompletion) -> i32 {
    let mut reason = ArkAgentToolAbort::Closed;
    let _ = boundary(|| {
        let state: Arc<ToolCompletionState> = handles::get(Kind::ToolCompletion, completion)?;
        if let Some(ctx) = &state.context {
            reason = ctx.abort.reason().map_or(ArkAgentToolAbort::None, ArkAgentToolAbort::from);
        }
        Ok(())
    });
    reason as i32
}

/// TOOL-4: calls `callback(userdata, reason)` once, on a library thread, when this tool
/// call's abort signal fires (`reason` as [`arkagent_tool_abort_reason`] gives it) — at
/// once if it already fired — unless the call is finished first. Never after the blocking
/// call that started the tool call returned (that call waits for it), so `userdata` must
/// stay valid until that call returns. The completion stays valid; finishing it afterwards is allowed and
/// ignored. At most one callback per call. Errors: `ARK_AGENT_RESULT_NULL_ARGUMENT`,
/// `_ALREADY_COMPLETED` (a second callback, or a completion already finished),
/// `_INVALID_HANDLE` (an unknown completion). Any thread.
#[no_mangle]
pub extern "C" fn arkagent_tool_on_abort(
    completion: *mut ArkAgentToolCompletion,
    callback: ArkAgentToolAbortCallback,
    userdata: *mut c_void,
) -> ArkAgentResult {
    boundary(|| {
        let callback = callback.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "callback is NULL"))?;
        let state: Arc<ToolCompletionState> = handles::get(Kind::ToolCompletion, completion)?;
        let (Some(ctx), Some(site)) = (&state.context, &state.site) else {
            return Err(FfiError::new(ArkAgentResult::InvalidHandle, "this tool call has no abort signal"));
        };
        let mut watched = state.watched.lock().map_err(|_| poisoned())?;
        if std::mem::replace(&mut *watched, true) {
            return Err(FfiError::new(ArkAgentResult::AlreadyCompleted, "this tool call already has an abort callback"));
        }
        let (abort, userdata) = (ctx.abort.clone(), UserData(userdata));
        watch_token(site, ctx.cancel.clone(), state.done.clone(), move || {
            let reason = abort.reason().map_or(ArkAgentToolAbort::Closed, ArkAgentToolAbort::from) as i32;
            // SAFETY: the host registered this callback; the blocking call that started the
            // tool call waits for this watcher, so `userdata` is still valid.
            unsafe { callback(userdata.get(), reason) };
        });
        Ok(())
    })
}

/// Registers a host tool from its JSON definition (shared by tool sets and workers).
/// Checks every argument before registering anything.
pub(crate) fn register_host_tool(
    registry: &mut ToolRegistry,
    definition_json: &str,
    callback: ArkAgentToolCallback,
    userdata: *mut c_void,
) -> FfiResult<()> {
    register_host_tool_with(registry, definition_json, callback, userdata, None)
}

/// [`register_host_tool`] with a per-call approval predicate (TOOL-1).
pub(crate) fn register_host_tool_with(
    registry: &mut ToolRegistry,
    definition_json: &str,
    callback: ArkAgentToolCallback,
    userdata: *mut c_void,
    approval: Option<Arc<dyn arkagent::tools::ApprovalPredicate>>,
) -> FfiResult<()> {
    let callback = callback.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "callback is NULL"))?;
    let definition: ToolDefinition = serde_json::from_str(definition_json).map_err(arkagent::ArkAgentError::from)?;
    registry.register_with_approval(definition, Arc::new(HostTool { callback, userdata: UserData(userdata) }), approval)?;
    Ok(())
}

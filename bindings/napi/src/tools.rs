//! Host tools: `ToolDefinition`, `ToolRegistry`, and JS executor functions
//! `(call: ToolCall) => Promise<ToolResult>`.

use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::llm::host_call::WatchSite;
use arkagent::tools::ApprovalPredicate;
use arkagent::{CancellationToken, ToolContext, ToolExecutor, ToolInvocation};
use async_trait::async_trait;
use napi_derive_ohos::napi;

use napi_ohos::bindgen_prelude::{ClassInstance, FnArgs, This};
use napi_ohos::Env;

use crate::args::{constructing, Arg, Setting};
use crate::callback::{JsAsyncFn, JsFailure, JsFunction};
use crate::error::{internal, thrown, Thrown};
use crate::numbers::argument;

/// A tool call the model made, handed to a tool executor.
#[napi(object, js_name = "ToolCall")]
pub struct JsToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as a JSON object text (already validated as JSON).
    pub arguments_json: String,
}

/// What a tool executor resolves with.
#[napi(object, js_name = "ToolResult")]
pub struct JsToolResult {
    pub content: String,
    pub is_error: Option<bool>,
    /// Images the model sees after the text (IMG-1), each a file's bytes (JPEG, PNG, WebP, GIF;
    /// the type is read from the bytes) or a ToolImage (bytes or an https:/data: URL, with a
    /// detail), as C tool results take them. On Anthropic Messages they go inside the
    /// tool_result; on Chat Completions, which cannot put an image in a tool message, one user
    /// message after the turn's last tool result carries them. An image that is refused
    /// (another type, a header that does not parse, a URL neither https: nor data:, over the
    /// model's bounds, a ToolImage with neither or both of data and url, a detail not low,
    /// high or auto) makes the result a tool error naming its code, e.g.
    /// "image_unsupported_type".
    #[napi(ts_type = "(Uint8Array | ToolImage)[]")]
    pub images: Option<Vec<napi_ohos::Either<napi_ohos::bindgen_prelude::Uint8Array, JsToolImage>>>,
}

/// An image of a ToolResult given with its detail, or by URL (IMG-1): `data` or `url`, not
/// both.
#[napi(object, js_name = "ToolImage")]
pub struct JsToolImage {
    /// The file's bytes (JPEG, PNG, WebP, GIF; the type is read from them).
    pub data: Option<napi_ohos::bindgen_prelude::Uint8Array>,
    /// An https: or data: URL, sent as it is.
    pub url: Option<String>,
    /// How closely the model looks (OpenAI's detail; other formats ignore it).
    #[napi(ts_type = "ImageDetail")]
    pub detail: Option<String>,
}

/// The core image part of one `ToolResult.images` entry.
fn tool_image(image: napi_ohos::Either<napi_ohos::bindgen_prelude::Uint8Array, JsToolImage>) -> Result<arkagent::ImagePart, arkagent::ArkAgentError> {
    let invalid = |m: String| arkagent::ArkAgentError::Image { code: arkagent::ErrorCode::ImageInvalid, message: m };
    let (data, url, detail) = match image {
        napi_ohos::Either::A(bytes) => (Some(bytes), None, None),
        napi_ohos::Either::B(JsToolImage { data, url, detail }) => (data, url, detail),
    };
    let detail = match detail {
        None => None,
        Some(d) => Some(serde_json::from_value(serde_json::Value::String(d.clone())).map_err(|_| invalid(format!("detail must be low, high or auto, got {d:?}")))?),
    };
    match (data, url) {
        (Some(bytes), None) => Ok(arkagent::ImagePart::data(arkagent::ImageData::new(bytes.to_vec())?, detail)),
        (None, Some(url)) => arkagent::ImagePart::url(&url, detail),
        _ => Err(invalid("a ToolImage gives data or url, not neither or both".to_owned())),
    }
}

impl From<ToolInvocation> for JsToolCall {
    fn from(call: ToolInvocation) -> Self {
        Self {
            id: call.call_id,
            name: call.name,
            arguments_json: call.arguments.to_string(),
        }
    }
}

impl From<JsToolResult> for arkagent::ToolResult {
    fn from(result: JsToolResult) -> Self {
        let mut images = Vec::new();
        for image in result.images.unwrap_or_default() {
            match tool_image(image) {
                Ok(image) => images.push(image),
                // A refused image: the model sees the tool failed, with the image's code.
                Err(e) => return arkagent::ToolResult::error(e.code().as_str(), &e.to_string()),
            }
        }
        let text = if result.is_error.unwrap_or(false) {
            arkagent::ToolResult::failure(result.content)
        } else {
            arkagent::ToolResult::ok(result.content)
        };
        text.with_images(images)
    }
}

/// A thrown error or rejection is the tool's own failure: the model sees its message, and
/// its string `code`, if any, becomes the result's error code.
impl From<JsFailure> for arkagent::ToolResult {
    fn from(failure: JsFailure) -> Self {
        let mut result = arkagent::ToolResult::failure(failure.message);
        result.error_code = failure.code;
        result
    }
}

/// The arguments of a JS tool executor: the call and its `ToolContext` (seed 000 §3: every
/// tool gets the MemoryService).
pub type ToolArgs = FnArgs<(JsToolCall, crate::memory::ToolContext)>;

/// [`ToolExecutor`] over a JS function.
struct JsToolExecutor {
    execute: JsAsyncFn<ToolArgs, JsToolResult>,
}

#[async_trait]
impl ToolExecutor for JsToolExecutor {
    // Cancellation is handled by the core, which stops awaiting this future; the
    // executor hears of it through `context.signal` (TOOL-4).
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> arkagent::ToolResult {
        // Fires when the executor's Promise settled: its abort listeners stop waiting. Not
        // when this future is dropped: the core drops it after firing the call's signal
        // (a deadline, a cancel, a runtime that stopped waiting), which they must hear.
        let done = CancellationToken::new();
        let context = crate::memory::ToolContext::for_call(ctx, done.clone(), WatchSite::current());
        let settled = self.execute.call(FnArgs::from((call.into(), context))).await;
        done.cancel();
        match settled {
            Ok(result) => result.into(),
            Err(failure) => failure.into(),
        }
    }

    /// Once the function was called, a poll only reads its settled Promise (TOOL-4).
    fn may_poll_after_stop(&self) -> bool {
        true
    }
}

/// TOOL-1: a JS `needsApproval(call)` as the core's predicate; a throw or rejection asks.
struct JsApprovalPredicate {
    decide: JsAsyncFn<JsToolCall, bool>,
}

#[async_trait]
impl ApprovalPredicate for JsApprovalPredicate {
    async fn needs_approval(&self, call: &ToolInvocation) -> bool {
        self.decide.call(call.clone().into()).await.unwrap_or(true)
    }
}

/// TOOL-3: what a ToolPolicy decides for one call: `decision` "allow" (no objection: it
/// runs, unless its tool asks for approval itself), "deny" (it does not run; the model reads
/// a "tool_denied" error result with `reason`) or "ask" (it waits for a person, as if its
/// tool required approval). Any other decision, and a policy that throws or rejects, denies.
#[napi(object, js_name = "PolicyDecision")]
pub struct JsPolicyDecision {
    pub decision: String,
    pub reason: Option<String>,
}

/// TOOL-3: a JS ToolPolicy as the core's.
pub struct JsToolPolicy {
    decide: JsAsyncFn<JsToolCall, JsPolicyDecision>,
}

impl JsToolPolicy {
    /// Wraps the JS function (on the JS thread).
    pub fn new(function: JsFunction<'_, JsToolCall>) -> Result<Self, Thrown> {
        Ok(Self { decide: JsAsyncFn::new(function).map_err(internal)? })
    }
}

#[async_trait]
impl arkagent::tools::ToolPolicy for JsToolPolicy {
    async fn decide(&self, call: &ToolInvocation) -> arkagent::tools::PolicyDecision {
        use arkagent::tools::PolicyDecision;
        let deny = |reason: &str| PolicyDecision::Deny { reason: reason.to_owned() };
        match self.decide.call(call.clone().into()).await {
            Ok(d) if d.decision == "allow" => PolicyDecision::Allow,
            Ok(d) if d.decision == "ask" => PolicyDecision::Ask,
            Ok(d) if d.decision == "deny" => match d.reason.filter(|r| !r.trim().is_empty()) {
                Some(reason) => PolicyDecision::Deny { reason },
                None => deny("the app's policy denied this call"),
            },
            Ok(_) => deny("the app's policy gave no valid decision"),
            Err(_) => deny("the app's policy failed"),
        }
    }
}

/// Describes a tool to the model. `parametersJson` is a JSON Schema object text.
#[napi]
pub struct ToolDefinition {
    name: String,
    description: String,
    parameters_json: String,
    timeout_ms: Option<u32>,
    requires_approval: bool,
}

#[napi]
impl ToolDefinition {
    /// `parametersJson` is parsed when the definition is registered. `timeoutMs` (TOOL-4):
    /// how long one call may run before the model is answered with a "tool_timeout" error
    /// result, the call's `context.signal` fires with reason "tool_timeout" and the run
    /// goes on; absent: the runtime's `AgentRuntimeConfig.toolTimeoutMs`; 0: no deadline.
    /// Never sent to the model. Throws "invalid_argument" for a `timeoutMs` that is not an
    /// integer from 0 to 4294967295.
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        this: This<'_>,
        name: Arg<String>,
        description: Arg<String>,
        parameters_json: Arg<String>,
        timeout_ms: Arg<Option<f64>>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "ToolDefinition")?;
        let timeout_ms = timeout_ms.0.map(|ms| argument::<u32>(ms, "timeoutMs")).transpose()?;
        Ok(Self {
            name: name.0,
            description: description.0,
            parameters_json: parameters_json.0,
            timeout_ms,
            requires_approval: false,
        })
    }

    /// The tool's own deadline in ms (TOOL-4); null: the runtime's.
    #[napi(getter)]
    pub fn timeout_ms(&self) -> Option<u32> {
        self.timeout_ms
    }

    /// TOOL-1: every call waits for a person's answer before it runs (default false): the
    /// run pauses with an "approval_requested" event and resolves with status
    /// "awaiting_approval" and its pendingApprovals; answer with AgentRuntime.approve() or
    /// reject(), then resumeRun(). For a decision per call, give register() a
    /// `needsApproval` function instead. Read when the definition is registered.
    #[napi(getter)]
    pub fn requires_approval(&self) -> bool {
        self.requires_approval
    }

    #[napi(setter)]
    pub fn set_requires_approval(&mut self, value: Setting<bool>) {
        self.requires_approval = value.0;
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    #[napi(getter)]
    pub fn description(&self) -> String {
        self.description.clone()
    }

    #[napi(getter)]
    pub fn parameters_json(&self) -> String {
        self.parameters_json.clone()
    }
}

/// Tools by name.
#[napi]
pub struct ToolRegistry {
    inner: Arc<Mutex<arkagent::ToolRegistry>>,
}

#[napi]
impl ToolRegistry {
    #[napi(constructor)]
    pub fn new(env: &Env, this: This<'_>) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "ToolRegistry")?;
        Ok(Self::from(arkagent::ToolRegistry::new()))
    }

    /// Throws code "tool_name_invalid" for a name that is not 1–64 characters of ASCII
    /// letters, digits, `_` and `-`; "tool_name_duplicate" when the name is taken;
    /// "tool_parameters_invalid" when the parameters are not a JSON object; "invalid_json"
    /// when they are not JSON. A refused definition changes nothing.
    /// `needsApproval` (TOOL-1) decides per call whether it waits for a person (e.g. a
    /// payment above an amount), called with the call before it would run; one that throws
    /// or rejects asks. The definition's `requiresApproval` asks for every call.
    #[napi(ts_args_type = "definition: ToolDefinition, executor: ToolExecutor, needsApproval?: ApprovalPredicate")]
    pub fn register(
        &self,
        definition: Arg<ClassInstance<'_, ToolDefinition>>,
        executor: Arg<JsFunction<'_, ToolArgs>>,
        needs_approval: Arg<Option<JsFunction<'_, JsToolCall>>>,
    ) -> Result<(), Thrown> {
        let (definition, executor) = (definition.0, executor.0);
        let predicate = match needs_approval.0 {
            None => None,
            Some(f) => Some(Arc::new(JsApprovalPredicate { decide: JsAsyncFn::new(f).map_err(internal)? }) as Arc<dyn ApprovalPredicate>),
        };
        let definition_timeout = definition.timeout_ms.map(u64::from);
        let requires_approval = definition.requires_approval;
        let parameters =
            serde_json::from_str(&definition.parameters_json).map_err(|e| thrown(e.into()))?;
        let executor = JsToolExecutor {
            execute: JsAsyncFn::new(executor).map_err(internal)?,
        };
        let mut definition = arkagent::ToolDefinition::new(
            definition.name.clone(),
            definition.description.clone(),
            parameters,
        );
        definition.timeout_ms = definition_timeout;
        definition.requires_approval = requires_approval;
        self.lock()
            .register_with_approval(definition, Arc::new(executor), predicate)
            .map_err(thrown)
    }

    #[napi]
    pub fn unregister(&self, name: Arg<String>) -> bool {
        self.lock().unregister(&name.0)
    }

    #[napi]
    pub fn has(&self, name: Arg<String>) -> bool {
        self.lock().has(&name.0)
    }

    #[napi]
    pub fn names(&self) -> Vec<String> {
        self.lock().names()
    }
}

impl From<arkagent::ToolRegistry> for ToolRegistry {
    fn from(registry: arkagent::ToolRegistry) -> Self {
        Self {
            inner: Arc::new(Mutex::new(registry)),
        }
    }
}

impl ToolRegistry {
    fn lock(&self) -> MutexGuard<'_, arkagent::ToolRegistry> {
        // Every update is a single push or removal: a poisoned lock still holds a valid
        // registry.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A copy of the core registry (executors are shared), for a runtime's config.
    pub fn core(&self) -> arkagent::ToolRegistry {
        self.lock().clone()
    }

    /// Another JS object for this same registry.
    pub fn share(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: ToolCall

// declare: ToolResult

// declare: ToolImage

/**
 * A host tool: resolves with the result the model will see. A rejection is reported to the
 * model as a failed result carrying the error's message; with a string `code` the model
 * sees `{"error":{"code":…,"message":…}}`. Its `context` (seed 000 §3: every tool gets the
 * MemoryService) reads the calling runtime's episodic memory over its live state and
 * reaches its memory namespace — for a sub-agent's tool, the sub-agent's own.
 */
export type ToolExecutor = (call: ToolCall, context: ToolContext) => Promise<ToolResult>;

/**
 * TOOL-1: decides whether one call of a tool waits for a person's approval (true: it
 * waits). Given to ToolRegistry.register(); a throw or rejection counts as true.
 */
export type ApprovalPredicate = (call: ToolCall) => boolean | Promise<boolean>;

// declare: PolicyDecision

/**
 * TOOL-3: the app's check before every tool call (AgentRuntimeConfig.setToolPolicy), after
 * the role's whitelist; never for a tool that does not exist.
 */
export type ToolPolicy = (call: ToolCall) => PolicyDecision | Promise<PolicyDecision>;

// declare: ToolDefinition

// declare: ToolRegistry
*/

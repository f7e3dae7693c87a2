//! Host tools: `ToolDefinition`, `ToolRegistry`, and JS executor functions
//! `(call: ToolCall) => Promise<ToolResult>`.

use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::llm::host_call::WatchSite;
use arkagent::{CancellationToken, ToolContext, ToolExecutor, ToolInvocation};
use async_trait::async_trait;
use napi_derive_ohos::napi;

use napi_ohos::bindgen_prelude::{ClassInstance, FnArgs, This};
use napi_ohos::Env;

use crate::args::{constructing, Arg};
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
    /// the type is read from the bytes). On Anthropic Messages they go inside the tool_result;
    /// on Chat Completions, which cannot put an image in a tool message, one user message after
    /// the turn's last tool result carries them. An image that is refused (another type, a header
    /// that does not parse, over the model's bounds) makes the result a tool error naming its
    /// code, e.g. "image_unsupported_type".
    pub images: Option<Vec<napi_ohos::bindgen_prelude::Uint8Array>>,
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
        for bytes in result.images.unwrap_or_default() {
            match arkagent::ImageData::new(bytes.to_vec()) {
                Ok(image) => images.push(arkagent::ImagePart::data(image, None)),
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
}

/// Describes a tool to the model. `parametersJson` is a JSON Schema object text.
#[napi]
pub struct ToolDefinition {
    name: String,
    description: String,
    parameters_json: String,
    timeout_ms: Option<u32>,
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
        })
    }

    /// The tool's own deadline in ms (TOOL-4); null: the runtime's.
    #[napi(getter)]
    pub fn timeout_ms(&self) -> Option<u32> {
        self.timeout_ms
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

    /// Throws code "tool_name_duplicate" when the name is taken, "invalid_json" on bad parameters.
    #[napi(ts_args_type = "definition: ToolDefinition, executor: ToolExecutor")]
    pub fn register(
        &self,
        definition: Arg<ClassInstance<'_, ToolDefinition>>,
        executor: Arg<JsFunction<'_, ToolArgs>>,
    ) -> Result<(), Thrown> {
        let (definition, executor) = (definition.0, executor.0);
        let definition_timeout = definition.timeout_ms.map(u64::from);
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
        self.lock()
            .register(definition, Arc::new(executor))
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

/**
 * A host tool: resolves with the result the model will see. A rejection is reported to the
 * model as a failed result carrying the error's message; with a string `code` the model
 * sees `{"error":{"code":…,"message":…}}`. Its `context` (seed 000 §3: every tool gets the
 * MemoryService) reads the calling runtime's episodic memory over its live state and
 * reaches its memory namespace — for a sub-agent's tool, the sub-agent's own.
 */
export type ToolExecutor = (call: ToolCall, context: ToolContext) => Promise<ToolResult>;

// declare: ToolDefinition

// declare: ToolRegistry
*/

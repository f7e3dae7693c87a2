//! Read-only views of delegation results (ISO-1, ISO-4, ISO-7): the sub-agent registry,
//! and decomposed tasks and their results (usage sums are in `usage`).

use arkagent::subagent::ChildUsageSummary;
use napi_derive_ohos::napi;
use serde_json::Value;

use crate::args::Arg;
use crate::convert::{optional, Optional};
use crate::error::{private_constructor, Thrown};
use crate::records;

/// ISO-3, the seed's `SubAgentContext.summarize(content)`: the three-level summary a parent
/// receives of a child's answer (a SubAgentContext's `result.summary`) — `content` as it is
/// when it has at most 500 characters (Unicode code points, never cut inside one);
/// otherwise its "## Summary" section (or else its "## Result" section: the heading line up
/// to the next "## " heading) when that has at most 1000; otherwise the first 500
/// characters followed by "[truncated, N chars]", N the full length.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn summarize_result(content: Arg<String>) -> String {
    arkagent::subagent::summarize_result(&content.0)
}

/// One task of a decomposed job (ISO-7).
#[napi(object, js_name = "DecomposedTask")]
pub struct JsDecomposedTask {
    /// A worker name or "clone".
    pub assignee: String,
    pub task_description: String,
    /// Role (tool whitelist); default "general".
    pub role: Option<String>,
    /// What the child needs to know; by default it inherits a condensed view of the conversation.
    pub context: Option<String>,
}

impl From<JsDecomposedTask> for arkagent::subagent::DecomposedTask {
    fn from(task: JsDecomposedTask) -> Self {
        Self {
            assignee: task.assignee,
            task_description: task.task_description,
            role: task.role,
            context: task.context,
        }
    }
}

/// The result of one decomposed task (read-only).
#[napi]
pub struct DecomposedResult {
    inner: arkagent::ToolResult,
}

impl From<arkagent::ToolResult> for DecomposedResult {
    fn from(inner: arkagent::ToolResult) -> Self {
        Self { inner }
    }
}

impl DecomposedResult {
    fn metadata(&self, key: &str) -> Option<&Value> {
        self.inner.metadata.as_ref().and_then(|m| m.get(key))
    }

    fn metadata_str(&self, key: &str) -> Optional<String> {
        optional(
            self.metadata(key)
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    }
}

#[napi]
impl DecomposedResult {
    /// Instances come from `AgentRuntime.runDecomposed()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("DecomposedResult"))
    }

    /// The child's summarized answer, or the error as JSON text.
    #[napi(getter)]
    pub fn content(&self) -> String {
        self.inner.content.clone()
    }

    #[napi(getter)]
    pub fn is_error(&self) -> bool {
        self.inner.is_error
    }

    /// The code when it failed, e.g. "subagent_unknown_assignee", "llm_auth", "token-budget-exceeded".
    #[napi(getter)]
    pub fn error_code(&self) -> Optional<String> {
        optional(self.inner.error_code.clone())
    }

    /// "completed" | "forced" | "failed"; unset when it was refused before a child started.
    #[napi(getter, ts_return_type = "ChildStatus | undefined")]
    pub fn status(&self) -> Optional<String> {
        self.metadata_str("status")
    }

    /// The child's session id, when a child started.
    #[napi(getter)]
    pub fn child_session_id(&self) -> Optional<String> {
        self.metadata_str("child_session_id")
    }

    /// The child's usage, when a child started.
    #[napi(getter, ts_return_type = "ChildUsageSummary | undefined")]
    pub fn child_usage(&self) -> Optional<Value> {
        let usage = self
            .metadata("child_usage")
            .and_then(|v| serde_json::from_value::<ChildUsageSummary>(v.clone()).ok());
        optional(usage.map(|u| records::to_js(&u)))
    }

    /// The result metadata as JSON (service, assignee, role, child ids, status, reason, child_usage).
    #[napi(getter)]
    pub fn metadata_json(&self) -> Optional<String> {
        optional(self.inner.metadata.as_ref().map(Value::to_string))
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: summarizeResult

// declare: DecomposedTask

// declare: DecomposedResult
*/

//! Read-only views of delegation results (SUB-6, ISO-1, ISO-4, ISO-7): usage summaries,
//! the sub-agent registry, and decomposed tasks and their results.

use arkagent::subagent::{ChildUsageSummary as CoreUsage, UsageTotals as CoreTotals};
use napi_derive_ohos::napi;
use serde_json::Value;

use arkagent::ModelUsage;

use crate::args::Arg;
use crate::config::{optional, Optional};
use crate::error::{private_constructor, Thrown};
use crate::runtime::{serde_name, JsModelUsage};

/// Summed usage of model calls (SUB-6); read-only.
#[napi]
pub struct ChildUsageSummary {
    inner: CoreUsage,
}

impl From<CoreUsage> for ChildUsageSummary {
    fn from(inner: CoreUsage) -> Self {
        Self { inner }
    }
}

// JS numbers: token counts are exact below 2^53.
#[napi]
impl ChildUsageSummary {
    /// Instances come from `fromUsages()`, `UsageTotals` and `DecomposedResult.childUsage`;
    /// `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("ChildUsageSummary"))
    }

    /// Sums model usages, e.g. `runtime.usages()` (SUB-6). Throws `invalid_argument` for a
    /// token count that is not a non-negative integer.
    #[napi(factory)]
    pub fn from_usages(usages: Arg<Vec<JsModelUsage>>) -> Result<Self, Thrown> {
        let core: Vec<ModelUsage> = usages.0.iter().map(JsModelUsage::core).collect::<Result<_, _>>()?;
        Ok(CoreUsage::from_usages(&core).into())
    }

    /// `{"prompt_tokens":…,"completion_tokens":…,"total_tokens":…,"call_count":…}`.
    #[napi]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }

    #[napi(getter)]
    pub fn prompt_tokens(&self) -> f64 {
        self.inner.prompt_tokens as f64
    }

    #[napi(getter)]
    pub fn completion_tokens(&self) -> f64 {
        self.inner.completion_tokens as f64
    }

    #[napi(getter)]
    pub fn total_tokens(&self) -> f64 {
        self.inner.total_tokens as f64
    }

    #[napi(getter)]
    pub fn call_count(&self) -> f64 {
        self.inner.call_count as f64
    }
}

/// What a session cost (SUB-6): its own calls plus every delegated child's; read-only.
#[napi]
pub struct UsageTotals {
    inner: CoreTotals,
}

impl From<CoreTotals> for UsageTotals {
    fn from(inner: CoreTotals) -> Self {
        Self { inner }
    }
}

#[napi]
impl UsageTotals {
    /// Instances come from `AgentRuntime.totalUsage()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("UsageTotals"))
    }

    /// The runtime's own model calls (compression included).
    #[napi(getter)]
    pub fn parent(&self) -> ChildUsageSummary {
        self.inner.parent.into()
    }

    /// All delegated children's model calls.
    #[napi(getter)]
    pub fn children(&self) -> ChildUsageSummary {
        self.inner.children.into()
    }

    /// `parent + children`.
    #[napi(getter)]
    pub fn total(&self) -> ChildUsageSummary {
        self.inner.total.into()
    }
}

/// One sub-agent as the registry records it (ISO-1); read-only.
#[napi]
pub struct SubAgentContext {
    inner: arkagent::subagent::SubAgentContext,
}

impl From<arkagent::subagent::SubAgentContext> for SubAgentContext {
    fn from(inner: arkagent::subagent::SubAgentContext) -> Self {
        Self { inner }
    }
}

impl SubAgentContext {
    fn result(&self) -> Option<&arkagent::subagent::SubAgentResult> {
        self.inner.result.as_ref()
    }
}

#[napi]
impl SubAgentContext {
    /// Instances come from `SubAgentRegistryView`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SubAgentContext"))
    }

    /// The child's session id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// The parent's session id ("" when unknown).
    #[napi(getter)]
    pub fn parent_id(&self) -> String {
        self.inner.parent_id.clone().unwrap_or_default()
    }

    #[napi(getter)]
    pub fn role(&self) -> String {
        self.inner.role.clone()
    }

    #[napi(getter)]
    pub fn assignee(&self) -> String {
        self.inner.assignee.clone()
    }

    #[napi(getter)]
    pub fn task(&self) -> String {
        self.inner.task.clone()
    }

    /// "active" | "completed" | "failed".
    #[napi(getter)]
    pub fn status(&self) -> String {
        serde_name(serde_json::to_value(self.inner.status))
    }

    /// The three-level summary the parent received (ISO-3); "" while active.
    #[napi(getter)]
    pub fn summary(&self) -> String {
        self.result().map(|r| r.summary.clone()).unwrap_or_default()
    }

    /// Tokens the child used (reported, else estimated); 0 while active.
    #[napi(getter)]
    pub fn token_count(&self) -> f64 {
        self.result().map_or(0.0, |r| r.token_count as f64)
    }

    /// Distinct tools it called, in first-use order.
    #[napi(getter)]
    pub fn tools_used(&self) -> Vec<String> {
        self.result()
            .map(|r| r.tools_used.clone())
            .unwrap_or_default()
    }

    /// Why it was force-completed, if it was ("token-budget-exceeded", "max-iterations",
    /// "cancelled", "session-closed", …).
    #[napi(getter)]
    pub fn forced_reason(&self) -> Optional<String> {
        optional(self.result().and_then(|r| r.forced_reason.clone()))
    }

    /// The error code when it failed.
    #[napi(getter)]
    pub fn error_code(&self) -> Optional<String> {
        optional(self.result().and_then(|r| r.error_code.clone()))
    }

    /// Tools it may use; `null` means every tool.
    #[napi(getter, ts_return_type = "string[] | null")]
    pub fn allowed_tools(&self) -> Option<Vec<String>> {
        self.inner.allowed_tools.clone()
    }

    #[napi(getter)]
    pub fn max_iterations(&self) -> u32 {
        self.inner.max_iterations
    }

    #[napi(getter)]
    pub fn started_at_ms(&self) -> f64 {
        self.inner.started_at_ms as f64
    }

    #[napi(getter)]
    pub fn ended_at_ms(&self) -> Optional<f64> {
        optional(self.inner.ended_at_ms.map(|t| t as f64))
    }

    /// The whole record as JSON (the seed's `toJSON`), the child's messages included.
    #[napi]
    pub fn to_json(&self) -> String {
        self.inner.to_json()
    }
}

/// Registry totals (ISO-4); read-only.
#[napi]
pub struct SubAgentStats {
    inner: arkagent::subagent::SubAgentStats,
}

#[napi]
impl SubAgentStats {
    /// Instances come from `SubAgentRegistryView.stats`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SubAgentStats"))
    }

    /// Running now.
    #[napi(getter)]
    pub fn active(&self) -> u32 {
        u32::try_from(self.inner.active).unwrap_or(u32::MAX)
    }

    /// Kept in the history (at most 100).
    #[napi(getter)]
    pub fn history(&self) -> u32 {
        u32::try_from(self.inner.history).unwrap_or(u32::MAX)
    }

    /// Ended since the runtime was created.
    #[napi(getter)]
    pub fn completed_count(&self) -> f64 {
        self.inner.completed_count as f64
    }

    /// Tokens used by every ended sub-agent.
    #[napi(getter)]
    pub fn total_tokens(&self) -> f64 {
        self.inner.total_tokens as f64
    }
}

/// A snapshot of a runtime's sub-agent registry (ISO-4); read-only.
#[napi]
pub struct SubAgentRegistryView {
    active: Vec<arkagent::subagent::SubAgentContext>,
    history: Vec<arkagent::subagent::SubAgentContext>,
    stats: arkagent::subagent::SubAgentStats,
}

impl SubAgentRegistryView {
    /// Reads `registry` now; an absent registry (no delegation) is empty.
    pub fn of(registry: Option<&arkagent::subagent::SubAgentRegistry>) -> Self {
        match registry {
            Some(r) => Self {
                active: r.active(),
                history: r.history(),
                stats: r.stats(),
            },
            None => Self {
                active: Vec::new(),
                history: Vec::new(),
                stats: arkagent::subagent::SubAgentStats::default(),
            },
        }
    }
}

#[napi]
impl SubAgentRegistryView {
    /// Instances come from `AgentRuntime.subAgents()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SubAgentRegistryView"))
    }

    /// Running sub-agents, oldest first.
    #[napi(getter)]
    pub fn active(&self) -> Vec<SubAgentContext> {
        self.active
            .iter()
            .cloned()
            .map(SubAgentContext::from)
            .collect()
    }

    /// The last (at most 100) ended sub-agents, oldest first.
    #[napi(getter)]
    pub fn history(&self) -> Vec<SubAgentContext> {
        self.history
            .iter()
            .cloned()
            .map(SubAgentContext::from)
            .collect()
    }

    #[napi(getter)]
    pub fn stats(&self) -> SubAgentStats {
        SubAgentStats { inner: self.stats }
    }
}

/// One task of a decomposed job (ISO-7).
#[napi(object, js_name = "DecomposedTask")]
pub struct JsDecomposedTask {
    /// A worker name or "clone".
    pub assignee: String,
    pub task_description: String,
    /// Role (tool whitelist); default "general".
    pub role: Option<String>,
    /// Explicit context; by default the child inherits a condensed view of the parent.
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

/// The result of one decomposed task (the delegate_task result); read-only.
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
    /// Instances come from `AgentRuntime.runDecomposed()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("DecomposedResult"))
    }

    /// The child's summarized answer, or the error text.
    #[napi(getter)]
    pub fn content(&self) -> String {
        self.inner.content.clone()
    }

    #[napi(getter)]
    pub fn is_error(&self) -> bool {
        self.inner.is_error
    }

    /// The code when it failed, e.g. "subagent_unknown_assignee", "llm_auth",
    /// "token-budget-exceeded".
    #[napi(getter)]
    pub fn error_code(&self) -> Optional<String> {
        optional(self.inner.error_code.clone())
    }

    /// "completed" | "forced" | "failed"; undefined when the task was refused before a
    /// child started.
    #[napi(getter)]
    pub fn status(&self) -> Optional<String> {
        self.metadata_str("status")
    }

    /// The child's session id, when a child started.
    #[napi(getter)]
    pub fn child_session_id(&self) -> Optional<String> {
        self.metadata_str("child_session_id")
    }

    /// The child's usage, when a child started.
    #[napi(getter)]
    pub fn child_usage(&self) -> Optional<ChildUsageSummary> {
        let usage = self
            .metadata("child_usage")
            .and_then(|v| serde_json::from_value::<CoreUsage>(v.clone()).ok());
        optional(usage.map(ChildUsageSummary::from))
    }

    /// The result's metadata as JSON (service, assignee, role, child ids, status, reason,
    /// child_usage), when a child started.
    #[napi(getter)]
    pub fn metadata_json(&self) -> Optional<String> {
        optional(self.inner.metadata.as_ref().map(Value::to_string))
    }
}

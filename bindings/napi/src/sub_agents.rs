//! Read-only views of delegation results (ISO-1, ISO-4, ISO-7): the sub-agent registry,
//! and decomposed tasks and their results (usage sums are in `usage`).

use arkagent::subagent::ChildUsageSummary as CoreUsage;
use napi_derive_ohos::napi;
use serde_json::Value;

use crate::args::Arg;
use crate::convert::{optional, serde_name, Optional};
use crate::error::{private_constructor, Thrown};
use crate::usage::ChildUsageSummary;

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

    /// ISO-3, the seed's `SubAgentContext.summarize(content)`: the core's
    /// `summarize_result`, the summary a parent receives of a child's answer.
    #[napi]
    pub fn summarize(content: Arg<String>) -> String {
        arkagent::subagent::summarize_result(&content.0)
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
    #[napi(getter, ts_return_type = "SubAgentStatus")]
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

    /// What its model calls used, its own children's included (COST-1, COST-2); all zero
    /// while active.
    #[napi(getter)]
    pub fn usage(&self) -> ChildUsageSummary {
        self.result().map(|r| r.usage.clone()).unwrap_or_default().into()
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

    /// The reported usage of every ended sub-agent, each call once (COST-1, COST-2).
    #[napi(getter)]
    pub fn usage(&self) -> ChildUsageSummary {
        self.inner.usage.clone().into()
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
        SubAgentStats { inner: self.stats.clone() }
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

// index.d.ts: the declarations of this module's JS API, with their docs (the promises the
// tests keep). scripts/gen-dts.sh assembles these blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts; edit them here, then regenerate.
/* ts
/** One sub-agent as the registry records it (ISO-1; read-only). */
export class SubAgentContext {
  /** Instances come from `AgentRuntime.subAgents()`. */
  private constructor();
  /**
   * ISO-3, the seed's summarize(content): the three-level summary a parent receives of a
   * child's answer (its `summary`) — `content` as it is when it has at most 500 characters
   * (Unicode code points, never cut inside one); otherwise its "## Summary" section (or
   * else its "## Result" section: the heading line up to the next "## " heading) when that
   * has at most 1000; otherwise the first 500 characters followed by
   * "[truncated, N chars]", N the full length.
   */
  static summarize(content: string): string;
  /** The child's session id. */
  readonly id: string;
  /** The parent's session id. */
  readonly parentId: string;
  /** Role (tool whitelist); "general" when none was given. */
  readonly role: string;
  /** Worker name or "clone". */
  readonly assignee: string;
  readonly task: string;
  /** "active" while it runs, then "completed" (a forced ending too; see forcedReason) or "failed". */
  readonly status: SubAgentStatus;
  /** The three-level summary the parent received (ISO-3); "" while active. */
  readonly summary: string;
  /** Tokens used (reported, else estimated) by it and its own sub-agents; 0 while active.
   * However it ended — force-completed, its session closed, stale, its parent cancelled —
   * what it spent up to its end (a call that failed without an answer used nothing). */
  readonly tokenCount: number;
  /** What its model calls used, its own sub-agents' included (COST-1, COST-2): tokens,
   * cached and reasoning tokens, calls and costs at its own model's price; all zero while active. */
  readonly usage: ChildUsageSummary;
  /** Distinct tools it called, in first-use order (however it ended). */
  readonly toolsUsed: string[];
  /** Why it was force-completed: one of ChildEnding's forced values ("token-budget-exceeded",
   * "max-iterations", "force-completed", "cancelled", "session-closed", "stale"), or the
   * reason a host gave forceCompleteSubAgent. */
  readonly forcedReason?: string;
  /** The error code when it failed. */
  readonly errorCode?: string;
  /** Tools it may use; null: every tool. */
  readonly allowedTools: string[] | null;
  readonly maxIterations: number;
  /** Start time, ms since the Unix epoch. */
  readonly startedAtMs: number;
  /** End time, ms since the Unix epoch. */
  readonly endedAtMs?: number;
  /** The whole record as JSON, the child's own messages included (its messages so far
   * when it was force-completed). */
  toJson(): string;
}

/** Registry totals (ISO-4; read-only). */
export class SubAgentStats {
  /** Instances come from `SubAgentRegistryView.stats`. */
  private constructor();
  /** Running now. */
  readonly active: number;
  /** Kept in the history (at most 100). */
  readonly history: number;
  /** Ended since the runtime was created. */
  readonly completedCount: number;
  /** Tokens used by every ended sub-agent, each call counted once (a nested child's calls
   * are in its parent's tokenCount too, but not counted twice here), force-completed ones
   * included. With reported usage it equals totalUsage().children.totalTokens once the
   * runs that delegated them have settled. */
  readonly totalTokens: number;
  /** The reported usage of every ended sub-agent, each call counted once (COST-1, COST-2):
   * cached and reasoning tokens and per-currency costs included; unlike totalTokens, no
   * estimates. Once the runs that delegated them have settled it equals
   * totalUsage().children, however each child ended. */
  readonly usage: ChildUsageSummary;
}

/** A snapshot of a runtime's sub-agents (ISO-4; read-only). */
export class SubAgentRegistryView {
  /** Instances come from `AgentRuntime.subAgents()`. */
  private constructor();
  /** Running, oldest first. */
  readonly active: SubAgentContext[];
  /** The last (at most 100) ended, oldest first. */
  readonly history: SubAgentContext[];
  readonly stats: SubAgentStats;
}

/** One task of a decomposed job (ISO-7). */
export interface DecomposedTask {
  /** A worker name or "clone". */
  assignee: string;
  taskDescription: string;
  /** Role (tool whitelist); default "general". */
  role?: string;
  /** What the child needs to know; by default it inherits a condensed view of the conversation. */
  context?: string;
}

/** The result of one decomposed task (read-only). */
export class DecomposedResult {
  /** Instances come from `AgentRuntime.runDecomposed()`. */
  private constructor();
  /** The child's summarized answer, or the error as JSON text. */
  readonly content: string;
  readonly isError: boolean;
  /** The code when it failed, e.g. "subagent_unknown_assignee", "llm_auth", "token-budget-exceeded". */
  readonly errorCode?: string;
  /** "completed" | "forced" | "failed"; unset when it was refused before a child started. */
  readonly status?: ChildStatus;
  /** The child's session id, when a child started. */
  readonly childSessionId?: string;
  /** The child's usage, when a child started. */
  readonly childUsage?: ChildUsageSummary;
  /** The result metadata as JSON (service, assignee, role, child ids, status, reason, child_usage). */
  readonly metadataJson?: string;
}
*/

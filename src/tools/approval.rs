//! TOOL-1, TOOL-3: who decides whether a tool call runs. A tool may require a person's
//! approval — always ([`ToolDefinition::requires_approval`](super::ToolDefinition::requires_approval))
//! or per call ([`ApprovalPredicate`], registered with the tool) — and the app may put a
//! [`ToolPolicy`] before every call. A call that needs an answer pauses the run (see
//! [`AgentRuntime::answer_approval`](crate::AgentRuntime::answer_approval)); the host
//! answers with an [`ApprovalDecision`].

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::definition::ToolInvocation;

/// TOOL-1: decides, per call, whether a tool's call waits for a person (e.g. a payment
/// above an amount). Called before the call would run, with its parsed arguments; never
/// for a call its role may not make (ISO-2) or the policy denied.
#[async_trait]
pub trait ApprovalPredicate: Send + Sync {
    /// True: the call waits for an answer.
    async fn needs_approval(&self, call: &ToolInvocation) -> bool;
}

/// TOOL-3: what an app-wide guardrail says about one tool call.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PolicyDecision {
    /// No objection: the call runs, unless its tool asks for approval itself.
    Allow,
    /// Refused: the model reads a `tool_denied` error result with `reason`; nothing runs.
    Deny {
        /// What the model reads.
        reason: String,
    },
    /// The call waits for a person, as if its tool required approval.
    Ask,
}

/// TOOL-3: the app's check before every tool call (after the role's whitelist, ISO-2:
/// a call its role may not make never reaches it). Runs on the run's task; it should
/// answer quickly (a person's answer belongs in [`PolicyDecision::Ask`]).
#[async_trait]
pub trait ToolPolicy: Send + Sync {
    /// The decision for `call` (arguments parsed).
    async fn decide(&self, call: &ToolInvocation) -> PolicyDecision;
}

/// TOOL-1: a person's answer to one pending call.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run the call as the model made it.
    Approve,
    /// Run the call with these arguments (a JSON object text) instead. The model's own
    /// call stays as it made it in the history; the result it reads starts with a line
    /// saying the person changed the arguments, and what they were, so it is not misled
    /// about what ran.
    ApproveWithArguments {
        /// The arguments that run: a JSON object, with every property the tool's schema
        /// lists as `required`.
        arguments: String,
    },
    /// Do not run it: the model reads a `tool_rejected` error result with `reason`.
    Reject {
        /// Why, for the model (may be empty).
        reason: String,
    },
}

//! Tools: definitions shown to the model, executors that run them, and the registry that
//! maps names to both. An unknown tool or invalid arguments become a tool error the
//! model sees ([`ToolResult::error`]), never a panic.

mod abort;
mod approval;
mod definition;
mod namespaced;
mod registry;
mod result;

pub use abort::{AbortReason, ToolAbort};
pub use approval::{ApprovalDecision, ApprovalPredicate, PolicyDecision, ToolPolicy};
pub use definition::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation};
pub use namespaced::{MemoryTier, NamespaceStats, NamespacedMemoryStore, ScopedMemory, GLOBAL_NAMESPACE};
pub use registry::{RegisteredTool, ToolRegistry};
pub use result::ToolResult;

//! MCP-2: the tools every request offers — read, counted, and replaced at a run's start
//! when an MCP server's tools arrive or change.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::Session;
use crate::tools::ToolDefinition;

impl Session {
    /// The tools every request offers.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.lock_encodings().fixed.tool_definitions().to_vec()
    }

    /// How many tools every request offers.
    pub fn tool_count(&self) -> usize {
        self.lock_encodings().fixed.tool_definitions().len()
    }

    /// MCP-2: offers `tools` from the next request on (the request's fixed part encoded
    /// anew, the encoding cache started over).
    pub fn set_tool_definitions(&self, tools: Vec<ToolDefinition>) {
        let mut guard = self.lock_encodings();
        guard.fixed = Arc::new(guard.fixed.with_tools(tools));
        self.generation.fetch_add(1, Ordering::Relaxed);
    }
}

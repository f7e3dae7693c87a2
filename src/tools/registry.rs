use std::sync::Arc;

use super::approval::ApprovalPredicate;
use super::definition::{ToolDefinition, ToolExecutor};
use crate::error::{ArkAgentError, ErrorCode};

/// A definition with its executor.
#[derive(Clone)]
pub struct RegisteredTool {
    /// What the model sees.
    pub definition: ToolDefinition,
    /// What runs.
    pub executor: Arc<dyn ToolExecutor>,
    /// TOOL-1: decides per call whether it waits for approval (besides
    /// [`ToolDefinition::requires_approval`]); `None`: only the definition decides.
    pub approval: Option<Arc<dyn ApprovalPredicate>>,
}

/// Tools by name, in registration order (the order the model sees them).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.iter().map(|t| &t.definition.name)).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool. Errors: `tool_name_invalid` (empty, longer than 64 or outside
    /// `[A-Za-z0-9_-]`), `tool_name_duplicate`, `tool_parameters_invalid` (not an object).
    pub fn register(&mut self, definition: ToolDefinition, executor: Arc<dyn ToolExecutor>) -> Result<(), ArkAgentError> {
        self.register_with_approval(definition, executor, None)
    }

    /// [`register`](Self::register) with a per-call approval predicate (TOOL-1): a call
    /// waits for a person when the definition requires approval or `approval` says so.
    pub fn register_with_approval(
        &mut self,
        definition: ToolDefinition,
        executor: Arc<dyn ToolExecutor>,
        approval: Option<Arc<dyn ApprovalPredicate>>,
    ) -> Result<(), ArkAgentError> {
        let name = &definition.name;
        let valid = !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(ArkAgentError::config(ErrorCode::ToolNameInvalid, format!("invalid tool name {name:?}")));
        }
        if self.has(name) {
            return Err(ArkAgentError::config(ErrorCode::ToolNameDuplicate, format!("tool {name:?} is already registered")));
        }
        if !definition.parameters.is_object() {
            return Err(ArkAgentError::config(ErrorCode::ToolParametersInvalid, "tool parameters must be a JSON Schema object"));
        }
        self.tools.push(RegisteredTool { definition, executor, approval });
        Ok(())
    }

    /// Removes a tool; true when it was there.
    pub fn unregister(&mut self, name: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|t| t.definition.name != name);
        before != self.tools.len()
    }

    /// The tools, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter()
    }

    /// True when `name` is registered.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.definition.name == name)
    }

    /// Names in order.
    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.definition.name.clone()).collect()
    }

    /// Definitions in order.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.definition.clone()).collect()
    }

    /// Copies every tool except those named in `excluded` into `target` (skipping names
    /// `target` already has).
    pub fn copy_into_excluding(&self, target: &mut ToolRegistry, excluded: &[&str]) {
        for tool in &self.tools {
            if !excluded.contains(&tool.definition.name.as_str()) && !target.has(&tool.definition.name) {
                target.tools.push(tool.clone());
            }
        }
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

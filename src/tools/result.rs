use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The result of a tool call as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text given to the model.
    pub content: String,
    /// True when the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// Stable error code when the runtime produced the error (e.g. `unknown_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Structured data for the host (not shown to the model), e.g. child usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self { content: content.into(), is_error: false, error_code: None, metadata: None }
    }

    /// A failed result written by the host tool itself.
    pub fn failure(content: impl Into<String>) -> Self {
        Self { content: content.into(), is_error: true, error_code: None, metadata: None }
    }

    /// A runtime-produced error: the model sees `{"error":{"code":…,"message":…}}`.
    pub fn error(code: &str, message: &str) -> Self {
        Self {
            content: json!({"error": {"code": code, "message": message}}).to_string(),
            is_error: true,
            error_code: Some(code.to_owned()),
            metadata: None,
        }
    }
}

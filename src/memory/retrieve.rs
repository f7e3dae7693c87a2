//! MEM-2: the `retrieve_memory` tool.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::history::MemoryService;
use crate::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolResult};

/// The tool's name.
pub const RETRIEVE_MEMORY_TOOL_NAME: &str = "retrieve_memory";
/// Messages per page by default.
pub const DEFAULT_MEMORY_LIMIT: u64 = 20;
/// Messages per page at most.
pub const MAX_MEMORY_LIMIT: u64 = 100;

/// The definition shown to the model.
pub fn retrieve_memory_definition() -> ToolDefinition {
    ToolDefinition::new(
        RETRIEVE_MEMORY_TOOL_NAME,
        "Read compressed earlier conversation. Without snapshot_id: list the episodes. \
         With snapshot_id: that episode's summary and a page of its original messages.",
        json!({
            "type": "object",
            "properties": {
                "snapshot_id": {"type": "string", "description": "Episode to read; omit to list episodes."},
                "offset": {"type": "integer", "minimum": 0, "description": "First item of the page (default 0)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_MEMORY_LIMIT, "description": "Page size (default 20, max 100)."}
            }
        }),
    )
    .with_timeout_ms(0) // TOOL-4: in-process reads, no deadline
}

/// Executes `retrieve_memory` against a [`MemoryService`].
pub struct RetrieveMemoryTool {
    memory: Arc<dyn MemoryService>,
}

impl RetrieveMemoryTool {
    /// A tool reading `memory`.
    pub fn new(memory: Arc<dyn MemoryService>) -> Self {
        Self { memory }
    }

    fn run(&self, args: &Value) -> Result<Value, ToolResult> {
        let offset = integer_arg(args, "offset", 0, u64::MAX, "invalid_offset", "offset must be a non-negative integer")?;
        let limit = integer_arg(args, "limit", DEFAULT_MEMORY_LIMIT, MAX_MEMORY_LIMIT, "invalid_limit", "limit must be an integer from 1 to 100")?;
        if limit == 0 {
            return Err(ToolResult::error("invalid_limit", "limit must be an integer from 1 to 100"));
        }
        let (offset, limit) = (usize::try_from(offset).unwrap_or(usize::MAX), limit as usize);
        match args.get("snapshot_id") {
            None | Some(Value::Null) => {
                let episodes = self.memory.list_episodes();
                let page: Vec<Value> = episodes
                    .iter()
                    .skip(offset)
                    .take(limit)
                    .map(|e| json!({"snapshot_id": e.id, "created_at_ms": e.created_at_ms, "message_count": e.message_count, "summary": e.summary}))
                    .collect();
                Ok(json!({"total": episodes.len(), "offset": offset, "episodes": page, "next_offset": next(offset, page.len(), episodes.len())}))
            }
            Some(Value::String(id)) if !id.trim().is_empty() => {
                let episode = self
                    .memory
                    .find_episode(id.trim())
                    .ok_or_else(|| ToolResult::error("snapshot_not_found", &format!("no episode with snapshot_id {id:?}")))?;
                let total = episode.archived_messages.len();
                // IMG-4: an image is its line (type, size, id), never its bytes.
                let page: Vec<std::borrow::Cow<'_, crate::history::Message>> =
                    episode.archived_messages.iter().skip(offset).take(limit).map(|m| m.with_image_lines()).collect();
                Ok(json!({
                    "snapshot_id": episode.id, "summary": episode.summary, "total_messages": total,
                    "offset": offset, "messages": page, "next_offset": next(offset, page.len(), total),
                }))
            }
            Some(_) => Err(ToolResult::error("invalid_snapshot_id", "snapshot_id must be a non-empty string")),
        }
    }
}

fn next(offset: usize, taken: usize, total: usize) -> Option<usize> {
    (offset + taken < total).then_some(offset + taken)
}

fn integer_arg(args: &Value, name: &str, default: u64, max: u64, code: &str, message: &str) -> Result<u64, ToolResult> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if n <= max => Ok(n),
            // 5.0 is an integer written as a float; 5.5, -1, "5" and the rest are errors.
            _ => match v.as_f64() {
                Some(f) if f.fract() == 0.0 && f >= 0.0 && f <= max as f64 => Ok(f as u64),
                _ => Err(ToolResult::error(code, message)),
            },
        },
    }
}

#[async_trait]
impl ToolExecutor for RetrieveMemoryTool {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        match self.run(&call.arguments) {
            Ok(v) => ToolResult::ok(v.to_string()),
            Err(e) => e,
        }
    }
}

//! PAR-1 for ArkTS/JS (issue 17 items 10–13): the seeds' helpers for custom compressors
//! (`computeSafeSplitIndex`, `toolCallsPaired`, `validateEpisodicMemoryIds`,
//! `allocateIsolatedSessionId`), a typed `CompressContext` / `CompressOutcome`, the
//! `ToolContext` every tool gets (MemoryService and memory namespace), `MemoryNamespace`,
//! a typed `SubAgentChildEvent`, and the seed's constants. Conversions only: each calls
//! the core.

// The module functions are read only by the napi registration, which napi-derive leaves
// out under cfg(test) (`cargo clippy --all-targets` still compiles that).
#![cfg_attr(test, allow(dead_code))]

use arkagent::memory::{ForeignCompression, MemoryTier, ScopedMemory};
use arkagent::{EventKind, Message};
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::Function;

use crate::args::Arg;
use crate::config::{optional, Optional};
use crate::error::{private_constructor, thrown, Thrown};
use crate::events::JsAgentEvent;
use crate::memory::EpisodicMemory;
use crate::numbers::argument;
use crate::runtime::JsModelUsage;

/// The delegation tool's name (SUB-1).
#[napi]
pub const DELEGATE_TASK_TOOL_NAME: &str = arkagent::subagent::DELEGATE_TASK_TOOL_NAME;
/// The assignee that clones the parent (SUB-1).
#[napi]
pub const CLONE_ASSIGNEE: &str = arkagent::subagent::CLONE_ASSIGNEE;
/// The service id in a delegate_task result's metadata (SUB-1).
#[napi]
pub const SUB_AGENT_SERVICE_ID: &str = arkagent::subagent::SUB_AGENT_SERVICE_ID;

fn messages(json: &str) -> Result<Vec<Message>, Thrown> {
    serde_json::from_str(json).map_err(|e| thrown(e.into()))
}

/// CMP-4: the largest pairing-safe split index keeping `keepRecentMessageCount` messages,
/// or -1. Throws `invalid_json`, `invalid_argument`.
#[napi]
pub fn compute_safe_split_index(
    messages_json: Arg<String>,
    keep_recent_message_count: Arg<f64>,
) -> Result<f64, Thrown> {
    let keep: usize = argument(keep_recent_message_count.0, "keepRecentMessageCount")?;
    let messages = messages(&messages_json.0)?;
    Ok(arkagent::memory::compute_safe_split_index(&messages, keep).map_or(-1.0, |s| s as f64))
}

/// CORE-2: whether every tool call in the messages is paired. Throws `invalid_json`.
#[napi]
pub fn tool_calls_paired(messages_json: Arg<String>) -> Result<bool, Thrown> {
    Ok(arkagent::HistoryInvariants::tool_calls_paired(&messages(
        &messages_json.0,
    )?))
}

/// MEM-3's verdict (read-only).
#[napi]
pub struct EpisodeIdValidation {
    invalid_id: Option<String>,
}

#[napi]
impl EpisodeIdValidation {
    /// Instances come from `validateEpisodicMemoryIds()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("EpisodeIdValidation"))
    }

    #[napi(getter)]
    pub fn valid(&self) -> bool {
        self.invalid_id.is_none()
    }

    /// The first id that is blank or repeats.
    #[napi(getter)]
    pub fn id(&self) -> Optional<String> {
        optional(self.invalid_id.clone())
    }
}

/// MEM-3: checks episode ids (non-blank, unique). Throws `invalid_json`.
#[napi]
pub fn validate_episodic_memory_ids(episodes_json: Arg<String>) -> Result<EpisodeIdValidation, Thrown> {
    let episodes: Vec<arkagent::EpisodicMemory> =
        serde_json::from_str(&episodes_json.0).map_err(|e| thrown(e.into()))?;
    Ok(EpisodeIdValidation {
        invalid_id: arkagent::memory::first_invalid_episode_id(&episodes).map(str::to_owned),
    })
}

/// SUB-9: the seed's isolated session id. `nextId` is called synchronously; a throw or a
/// non-string result throws `invalid_argument` carrying its message.
#[napi(ts_args_type = "parentSessionId: string, requested: string, activeIds: string[], nextId: NextId")]
pub fn allocate_isolated_session_id(
    parent_session_id: Arg<String>,
    requested: Arg<String>,
    active_ids: Arg<Vec<String>>,
    next_id: Arg<Function<'_, (), String>>,
) -> Result<String, Thrown> {
    let mut failure: Option<Thrown> = None;
    let mut draw = || {
        if failure.is_some() {
            return String::new();
        }
        match next_id.0.call(()) {
            Ok(id) => id,
            Err(e) => {
                // napi-ohos caught and cleared a throw: its message is in `reason`.
                failure = Some(napi_ohos::Error::new(
                    "invalid_argument".to_owned(),
                    format!("nextId must return a string: {}", e.reason),
                ));
                String::new()
            }
        }
    };
    let id = arkagent::subagent::allocate_isolated_session_id(
        &parent_session_id.0,
        &requested.0,
        &active_ids.0,
        &mut draw,
    );
    match failure {
        Some(e) => Err(e),
        None => Ok(id),
    }
}

/// The context a custom compressor gets, typed (parsed from its `contextJson`).
#[napi]
pub struct CompressContext {
    estimated_prompt_tokens: Option<u64>,
    force: bool,
}

#[napi]
impl CompressContext {
    /// Instances come from `CompressContext.parse()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("CompressContext"))
    }

    /// Parses a CustomCompressor's `contextJson`. Throws `invalid_json`.
    #[napi]
    pub fn parse(context_json: Arg<String>) -> Result<CompressContext, Thrown> {
        let value: serde_json::Value =
            serde_json::from_str(&context_json.0).map_err(|e| thrown(e.into()))?;
        let estimate = &value["estimated_prompt_tokens"];
        match (value["force"].as_bool(), estimate.is_null(), estimate.as_u64()) {
            (Some(force), true, _) => Ok(Self { estimated_prompt_tokens: None, force }),
            (Some(force), false, Some(t)) => Ok(Self { estimated_prompt_tokens: Some(t), force }),
            _ => Err(napi_ohos::Error::new(
                "invalid_json".to_owned(),
                "not a compressor context: {\"estimated_prompt_tokens\": number | null, \"force\": boolean}".to_owned(),
            )),
        }
    }

    #[napi(getter)]
    pub fn estimated_prompt_tokens(&self) -> Optional<f64> {
        optional(self.estimated_prompt_tokens.map(|t| t as f64))
    }

    #[napi(getter)]
    pub fn force(&self) -> bool {
        self.force
    }
}

/// A custom compressor's answer, typed; `toJson()` is what it resolves with.
#[napi]
pub struct CompressOutcome {
    answer: ForeignCompression,
}

#[napi]
impl CompressOutcome {
    /// Instances come from the static constructors.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("CompressOutcome"))
    }

    /// Nothing to do (default reason "below_threshold").
    #[napi]
    pub fn skipped(reason: Arg<Option<String>>) -> CompressOutcome {
        Self {
            answer: ForeignCompression { outcome: "skipped".into(), reason: reason.0, ..Default::default() },
        }
    }

    /// An attempt failed (default reason "llm_error").
    #[napi]
    pub fn failed(reason: Arg<Option<String>>, error_code: Arg<Option<String>>) -> CompressOutcome {
        Self {
            answer: ForeignCompression {
                outcome: "failed".into(),
                reason: reason.0,
                error_code: error_code.0,
                ..Default::default()
            },
        }
    }

    /// The messages before `splitIndex` move into a new episode with `summary`. Throws
    /// `invalid_argument` for a split index that is not a non-negative integer.
    #[napi]
    pub fn compressed(
        split_index: Arg<f64>,
        summary: Arg<String>,
        episode_id: Arg<Option<String>>,
        usage: Arg<Option<JsModelUsage>>,
    ) -> Result<CompressOutcome, Thrown> {
        let split_index: usize = argument(split_index.0, "splitIndex")?;
        let usage = usage.0.map(|u| u.core()).transpose()?;
        Ok(Self {
            answer: ForeignCompression {
                outcome: "compressed".into(),
                split_index: Some(split_index),
                summary: Some(summary.0),
                episode_id: episode_id.0,
                usage,
                ..Default::default()
            },
        })
    }

    /// "skipped" | "failed" | "compressed".
    #[napi(getter)]
    pub fn outcome(&self) -> String {
        self.answer.outcome.clone()
    }

    #[napi(getter)]
    pub fn reason(&self) -> Optional<String> {
        optional(self.answer.reason.clone())
    }

    /// The JSON a CustomCompressor resolves with.
    #[napi]
    pub fn to_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.answer).map_err(|e| thrown(e.into()))
    }
}

/// Entry counts of one memory namespace (read-only).
#[napi]
pub struct NamespaceStats {
    inner: arkagent::memory::NamespaceStats,
}

#[napi]
impl NamespaceStats {
    /// Instances come from `MemoryNamespace.stats()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("NamespaceStats"))
    }

    #[napi(getter)]
    pub fn working(&self) -> f64 {
        self.inner.working as f64
    }

    #[napi(getter)]
    pub fn short_term(&self) -> f64 {
        self.inner.short_term as f64
    }
}

/// The core tier by its serde name ("working", "short_term").
pub fn memory_tier(name: &str) -> Result<MemoryTier, Thrown> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(|_| {
        napi_ohos::Error::new(
            "invalid_argument".to_owned(),
            format!("unknown memory tier {name:?}; use \"working\" or \"short_term\""),
        )
    })
}

/// One runtime's memory namespace (MEM-4): a handle, live.
#[napi]
pub struct MemoryNamespace {
    inner: ScopedMemory,
}

impl From<ScopedMemory> for MemoryNamespace {
    fn from(inner: ScopedMemory) -> Self {
        Self { inner }
    }
}

#[napi]
impl MemoryNamespace {
    /// Instances come from `AgentRuntime.memory()` and `ToolContext.memory`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("MemoryNamespace"))
    }

    #[napi(getter)]
    pub fn namespace(&self) -> String {
        self.inner.namespace().to_owned()
    }

    /// Stores (or replaces) an entry (JSON text). Throws `invalid_argument`, `invalid_json`.
    #[napi]
    pub fn store(&self, tier: Arg<String>, id: Arg<String>, entry_json: Arg<String>) -> Result<(), Thrown> {
        let tier = memory_tier(&tier.0)?;
        let entry: serde_json::Value = serde_json::from_str(&entry_json.0).map_err(|e| thrown(e.into()))?;
        self.inner.store(tier, &id.0, entry);
        Ok(())
    }

    /// The entry (JSON text), if any.
    #[napi]
    pub fn recall(&self, tier: Arg<String>, id: Arg<String>) -> Result<Optional<String>, Thrown> {
        let tier = memory_tier(&tier.0)?;
        Ok(optional(self.inner.recall(tier, &id.0).map(|e| e.to_string())))
    }

    /// Removes an entry; true when it was there.
    #[napi]
    pub fn forget(&self, tier: Arg<String>, id: Arg<String>) -> Result<bool, Thrown> {
        Ok(self.inner.forget(memory_tier(&tier.0)?, &id.0))
    }

    /// The ids of a tier, sorted.
    #[napi]
    pub fn ids(&self, tier: Arg<String>) -> Result<Vec<String>, Thrown> {
        Ok(self.inner.ids(memory_tier(&tier.0)?))
    }

    #[napi]
    pub fn stats(&self) -> NamespaceStats {
        NamespaceStats { inner: self.inner.stats() }
    }
}

/// What a tool executor gets besides the call (seed 000 §3: the MemoryService).
#[napi]
pub struct ToolContext {
    inner: arkagent::ToolContext,
}

impl From<arkagent::ToolContext> for ToolContext {
    fn from(inner: arkagent::ToolContext) -> Self {
        Self { inner }
    }
}

#[napi]
impl ToolContext {
    /// Instances are handed to tool executors.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("ToolContext"))
    }

    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id.clone()
    }

    #[napi(getter)]
    pub fn run_id(&self) -> String {
        self.inner.run_id.clone()
    }

    /// The calling runtime's episodes over its live state, oldest first.
    #[napi]
    pub fn list_episodes(&self) -> Vec<EpisodicMemory> {
        self.inner
            .episodes
            .as_ref()
            .map(|m| m.list_episodes().into_iter().map(EpisodicMemory::from).collect())
            .unwrap_or_default()
    }

    #[napi]
    pub fn find_episode(&self, snapshot_id: Arg<String>) -> Optional<EpisodicMemory> {
        optional(
            self.inner
                .episodes
                .as_ref()
                .and_then(|m| m.find_episode(&snapshot_id.0))
                .map(EpisodicMemory::from),
        )
    }

    /// The calling runtime's memory namespace (a sub-agent's tool: the sub-agent's).
    #[napi(getter)]
    pub fn memory(&self) -> MemoryNamespace {
        self.inner.memory.clone().into()
    }
}

/// A "sub_agent" event, typed (SUB-7).
#[napi]
pub struct SubAgentChildEvent {
    inner: arkagent::runtime::SubAgentChildEvent,
}

#[napi]
impl SubAgentChildEvent {
    /// Instances come from `SubAgentChildEvent.from()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SubAgentChildEvent"))
    }

    /// The typed view of a "sub_agent" event; undefined for any other event. Throws
    /// `invalid_json` when its payloadJson does not parse.
    #[napi]
    pub fn from(event: Arg<JsAgentEvent>) -> Result<Optional<SubAgentChildEvent>, Thrown> {
        if event.0.kind != "sub_agent" {
            return Ok(optional(None));
        }
        let kind: EventKind = serde_json::from_str(&event.0.payload_json).map_err(|e| thrown(e.into()))?;
        Ok(optional(match kind {
            EventKind::SubAgent(inner) => Some(Self { inner }),
            _ => None,
        }))
    }

    #[napi(getter)]
    pub fn parent_session_id(&self) -> String {
        self.inner.parent_session_id.clone()
    }

    #[napi(getter)]
    pub fn parent_run_id(&self) -> String {
        self.inner.parent_run_id.clone()
    }

    #[napi(getter)]
    pub fn child_session_id(&self) -> String {
        self.inner.child_session_id.clone()
    }

    #[napi(getter)]
    pub fn child_run_id(&self) -> String {
        self.inner.child_run_id.clone()
    }

    #[napi(getter)]
    pub fn assignee(&self) -> String {
        self.inner.assignee.clone()
    }

    #[napi(getter)]
    pub fn task_description(&self) -> String {
        self.inner.task_description.clone()
    }

    #[napi(getter)]
    pub fn depth(&self) -> u32 {
        self.inner.depth
    }

    /// The child's own event.
    #[napi(getter)]
    pub fn event(&self) -> JsAgentEvent {
        JsAgentEvent::from(self.inner.event.as_ref())
    }
}

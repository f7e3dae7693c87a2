//! PAR-1 for ArkTS/JS (issue 17 items 10–13): the seeds' helpers for custom compressors
//! (`computeSafeSplitIndex`, `toolCallsPaired`, `validateEpisodicMemoryIds`,
//! `allocateIsolatedSessionId`), a typed `CompressContext` / `CompressOutcome`, and the
//! seed's constants (delegation's and `retrieve_memory`'s). Conversions only: each calls
//! the core. (The `ToolContext` every tool gets and `MemoryNamespace` are in `memory`, the
//! typed `SubAgentChildEvent` in `events`.)

// The module functions are read only by the napi registration, which napi-derive leaves
// out under cfg(test) (`cargo clippy --all-targets` still compiles that).
#![cfg_attr(test, allow(dead_code))]

use arkagent::compress::ForeignCompression;
use arkagent::Message;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::Function;

use crate::args::Arg;
use crate::codes::ModuleCode;
use crate::convert::{optional, Optional};
use crate::error::{private_constructor, thrown, Thrown};
use crate::numbers::argument;
use crate::records::JsRecord;
use crate::usage::usage_from_js;

/// The delegation tool's name (SUB-1): "delegate_task".
#[napi]
pub const DELEGATE_TASK_TOOL_NAME: &str = arkagent::subagent::DELEGATE_TASK_TOOL_NAME;
/// The assignee that clones the parent (SUB-1): "clone".
#[napi]
pub const CLONE_ASSIGNEE: &str = arkagent::subagent::CLONE_ASSIGNEE;
/// The service id in a delegate_task result's metadata (`service`; SUB-1): "arkagent.sub_agent".
#[napi]
pub const SUB_AGENT_SERVICE_ID: &str = arkagent::subagent::SUB_AGENT_SERVICE_ID;
/// The tool the model reads episodes with (MEM-2): "retrieve_memory", offered whenever the
/// runtime compresses (a contextCompressor or a custom compressor is set).
#[napi]
pub const RETRIEVE_MEMORY_TOOL_NAME: &str = arkagent::memory::RETRIEVE_MEMORY_TOOL_NAME;
/// retrieve_memory's page size when the model gives no `limit` (MEM-2): 20.
#[napi]
pub const DEFAULT_MEMORY_LIMIT: u32 = memory_limit(arkagent::memory::DEFAULT_MEMORY_LIMIT);
/// The largest `limit` retrieve_memory accepts (MEM-2): 100; a larger one is answered with
/// the tool error "invalid_limit".
#[napi]
pub const MAX_MEMORY_LIMIT: u32 = memory_limit(arkagent::memory::MAX_MEMORY_LIMIT);

/// A page size as a JS number (the core's are small: a larger one fails the build).
const fn memory_limit(limit: u64) -> u32 {
    assert!(limit <= u32::MAX as u64, "a memory limit fits a u32");
    limit as u32
}

fn messages(json: &str) -> Result<Vec<Message>, Thrown> {
    serde_json::from_str(json).map_err(|e| thrown(e.into()))
}

/// CMP-4, the seed's computeSafeSplitIndex: the largest index s (1 ≤ s ≤ n −
/// keepRecentMessageCount) at which both messages[0, s) and messages[s, n) keep every tool
/// call paired with its result — what a custom compressor answers as split_index — or -1
/// when there is none. O(n). `messagesJson`: a JSON array of messages as historyJson()
/// gives them (the `history.messages` of a compressor's stateJson). Throws "invalid_json",
/// "invalid_argument".
#[napi]
pub fn compute_safe_split_index(
    messages_json: Arg<String>,
    keep_recent_message_count: Arg<f64>,
) -> Result<f64, Thrown> {
    let keep: usize = argument(keep_recent_message_count.0, "keepRecentMessageCount")?;
    let messages = messages(&messages_json.0)?;
    Ok(arkagent::compress::compute_safe_split_index(&messages, keep).map_or(-1.0, |s| s as f64))
}

/// CORE-2, the seed's HistoryInvariants.toolCallsPaired: within the messages (as for
/// computeSafeSplitIndex), every tool call has exactly one result after it, every result
/// answers an earlier call and no id repeats. Throws "invalid_json".
#[napi]
pub fn tool_calls_paired(messages_json: Arg<String>) -> Result<bool, Thrown> {
    Ok(arkagent::HistoryInvariants::tool_calls_paired(&messages(
        &messages_json.0,
    )?))
}

/// The verdict of validateEpisodicMemoryIds (read-only).
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

    /// Every id is non-blank and unique.
    #[napi(getter)]
    pub fn valid(&self) -> bool {
        self.invalid_id.is_none()
    }

    /// The first id that is blank or repeats an earlier one.
    #[napi(getter)]
    pub fn id(&self) -> Optional<String> {
        optional(self.invalid_id.clone())
    }
}

/// MEM-3, the seed's validateEpisodicMemoryIds — the check importState() makes.
/// `episodesJson`: a JSON array of episodes (`{"id","summary","created_at_ms",
/// "message_count","archived_messages"?}`, e.g. the `history.episodic_memories` of a
/// compressor's stateJson). Throws "invalid_json".
#[napi]
pub fn validate_episodic_memory_ids(episodes_json: Arg<String>) -> Result<EpisodeIdValidation, Thrown> {
    let episodes: Vec<arkagent::EpisodicMemory> =
        serde_json::from_str(&episodes_json.0).map_err(|e| thrown(e.into()))?;
    Ok(EpisodeIdValidation {
        invalid_id: arkagent::memory::first_invalid_episode_id(&episodes).map(str::to_owned),
    })
}

/// SUB-9, the seed's allocateIsolatedSessionId: the trimmed `requested` when it is
/// non-empty, not the trimmed parent id and not in `activeIds`; otherwise
/// `${parent}_w_${nextId()}`, drawn again while it is the parent's id or active, at most 16
/// more times. `nextId` is called synchronously; when it throws or returns something else
/// than a string, this throws "invalid_argument" (the message carries what it threw).
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
                    ModuleCode::InvalidArgument.to_owned_code(),
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

/// A custom compressor's `contextJson`, typed (seed 000 §2: CompressContext).
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

    /// Parses a CustomCompressor's contextJson. Throws "invalid_json".
    #[napi]
    pub fn parse(context_json: Arg<String>) -> Result<CompressContext, Thrown> {
        let value: serde_json::Value =
            serde_json::from_str(&context_json.0).map_err(|e| thrown(e.into()))?;
        let estimate = &value["estimated_prompt_tokens"];
        match (value["force"].as_bool(), estimate.is_null(), estimate.as_u64()) {
            (Some(force), true, _) => Ok(Self { estimated_prompt_tokens: None, force }),
            (Some(force), false, Some(t)) => Ok(Self { estimated_prompt_tokens: Some(t), force }),
            _ => Err(napi_ohos::Error::new(
                arkagent::ErrorCode::InvalidJson.as_str().to_owned(),
                "not a compressor context: {\"estimated_prompt_tokens\": number | null, \"force\": boolean}".to_owned(),
            )),
        }
    }

    /// The next prompt's size for an automatic attempt; unset for compressNow() and overflow.
    #[napi(getter)]
    pub fn estimated_prompt_tokens(&self) -> Optional<f64> {
        optional(self.estimated_prompt_tokens.map(|t| t as f64))
    }

    /// True after the model refused the context as too long: compress whatever the size.
    #[napi(getter)]
    pub fn force(&self) -> bool {
        self.force
    }
}

/// A custom compressor's answer, typed (seed 000 §2: CompressOutcome skipped | compressed |
/// failed); a CustomCompressor resolves with its toJson().
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

    /// Nothing to do; reason a CMP-2 skip code (default "below_threshold").
    #[napi]
    pub fn skipped(reason: Arg<Option<String>>) -> CompressOutcome {
        Self {
            answer: ForeignCompression {
                outcome: "skipped".into(),
                reason: Some(reason.0.unwrap_or_else(|| "below_threshold".into())),
                ..Default::default()
            },
        }
    }

    /// The attempt failed; reason a CMP-2 failure code (default "llm_error").
    #[napi]
    pub fn failed(reason: Arg<Option<String>>, error_code: Arg<Option<String>>) -> CompressOutcome {
        Self {
            answer: ForeignCompression {
                outcome: "failed".into(),
                reason: Some(reason.0.unwrap_or_else(|| "llm_error".into())),
                error_code: error_code.0,
                ..Default::default()
            },
        }
    }

    /// The messages before `splitIndex` move into a new episode with `summary` (episodeId
    /// default: a fresh id; usage: the summarizer's). Throws "invalid_argument" for a split
    /// index that is not a non-negative integer or a usage with a bad count.
    #[napi]
    pub fn compressed(
        split_index: Arg<f64>,
        summary: Arg<String>,
        episode_id: Arg<Option<String>>,
        #[napi(ts_arg_type = "ModelUsage | undefined | null")] usage: Arg<Option<JsRecord>>,
    ) -> Result<CompressOutcome, Thrown> {
        let split_index: usize = argument(split_index.0, "splitIndex")?;
        let usage = usage.0.map(|u| usage_from_js(u.0, "usage")).transpose()?;
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
    #[napi(getter, ts_return_type = "CompressOutcomeKind")]
    pub fn outcome(&self) -> String {
        self.answer.outcome.clone()
    }

    #[napi(getter)]
    pub fn reason(&self) -> Optional<String> {
        optional(self.answer.reason.clone())
    }

    /// The JSON text a CustomCompressor resolves with.
    #[napi]
    pub fn to_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.answer).map_err(|e| thrown(e.into()))
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: DELEGATE_TASK_TOOL_NAME
// declare: CLONE_ASSIGNEE
// declare: SUB_AGENT_SERVICE_ID
// declare: RETRIEVE_MEMORY_TOOL_NAME
// declare: DEFAULT_MEMORY_LIMIT
// declare: MAX_MEMORY_LIMIT

// declare: computeSafeSplitIndex

// declare: toolCallsPaired

// declare: EpisodeIdValidation

// declare: validateEpisodicMemoryIds

/** Draws a fresh id for allocateIsolatedSessionId. */
export type NextId = () => string;

// declare: allocateIsolatedSessionId

// declare: CompressContext

// declare: CompressOutcome
*/

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
use crate::usage::JsModelUsage;

/// The delegation tool's name (SUB-1).
#[napi]
pub const DELEGATE_TASK_TOOL_NAME: &str = arkagent::subagent::DELEGATE_TASK_TOOL_NAME;
/// The assignee that clones the parent (SUB-1).
#[napi]
pub const CLONE_ASSIGNEE: &str = arkagent::subagent::CLONE_ASSIGNEE;
/// The service id in a delegate_task result's metadata (SUB-1).
#[napi]
pub const SUB_AGENT_SERVICE_ID: &str = arkagent::subagent::SUB_AGENT_SERVICE_ID;
/// The episode-reading tool's name (MEM-2).
#[napi]
pub const RETRIEVE_MEMORY_TOOL_NAME: &str = arkagent::memory::RETRIEVE_MEMORY_TOOL_NAME;
/// `retrieve_memory`'s page size when the model gives no limit (MEM-2).
#[napi]
pub const DEFAULT_MEMORY_LIMIT: u32 = memory_limit(arkagent::memory::DEFAULT_MEMORY_LIMIT);
/// The largest limit `retrieve_memory` accepts (MEM-2).
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

/// CMP-4: the largest pairing-safe split index keeping `keepRecentMessageCount` messages,
/// or -1. Throws `invalid_json`, `invalid_argument`.
#[napi]
pub fn compute_safe_split_index(
    messages_json: Arg<String>,
    keep_recent_message_count: Arg<f64>,
) -> Result<f64, Thrown> {
    let keep: usize = argument(keep_recent_message_count.0, "keepRecentMessageCount")?;
    let messages = messages(&messages_json.0)?;
    Ok(arkagent::compress::compute_safe_split_index(&messages, keep).map_or(-1.0, |s| s as f64))
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
                arkagent::ErrorCode::InvalidJson.as_str().to_owned(),
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

    /// "skipped" | "failed" | "compressed" (the d.ts union `CompressOutcomeKind`).
    #[napi(getter, ts_return_type = "CompressOutcomeKind")]
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

// index.d.ts: the declarations of this module's JS API, with their docs (the promises the
// tests keep). scripts/gen-dts.sh assembles these blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts; edit them here, then regenerate.
/* ts
/** The delegation tool's name (SUB-1): "delegate_task". */
export const DELEGATE_TASK_TOOL_NAME: string;
/** The assignee that clones the parent (SUB-1): "clone". */
export const CLONE_ASSIGNEE: string;
/** The service id in a delegate_task result's metadata (`service`; SUB-1): "arkagent.sub_agent". */
export const SUB_AGENT_SERVICE_ID: string;
/**
 * The tool the model reads episodes with (MEM-2): "retrieve_memory", offered whenever the
 * runtime compresses (a contextCompressor or a custom compressor is set).
 */
export const RETRIEVE_MEMORY_TOOL_NAME: string;
/** retrieve_memory's page size when the model gives no `limit` (MEM-2): 20. */
export const DEFAULT_MEMORY_LIMIT: number;
/**
 * The largest `limit` retrieve_memory accepts (MEM-2): 100; a larger one is answered with
 * the tool error "invalid_limit".
 */
export const MAX_MEMORY_LIMIT: number;

/**
 * CMP-4, the seed's computeSafeSplitIndex: the largest index s (1 ≤ s ≤ n −
 * keepRecentMessageCount) at which both messages[0, s) and messages[s, n) keep every tool
 * call paired with its result — what a custom compressor answers as split_index — or -1
 * when there is none. O(n). `messagesJson`: a JSON array of messages as historyJson()
 * gives them (the `history.messages` of a compressor's stateJson). Throws "invalid_json",
 * "invalid_argument".
 */
export function computeSafeSplitIndex(messagesJson: string, keepRecentMessageCount: number): number;

/**
 * CORE-2, the seed's HistoryInvariants.toolCallsPaired: within the messages (as for
 * computeSafeSplitIndex), every tool call has exactly one result after it, every result
 * answers an earlier call and no id repeats. Throws "invalid_json".
 */
export function toolCallsPaired(messagesJson: string): boolean;

/** The verdict of validateEpisodicMemoryIds (read-only). */
export class EpisodeIdValidation {
  /** Instances come from `validateEpisodicMemoryIds()`. */
  private constructor();
  /** Every id is non-blank and unique. */
  readonly valid: boolean;
  /** The first id that is blank or repeats an earlier one. */
  readonly id?: string;
}

/**
 * MEM-3, the seed's validateEpisodicMemoryIds — the check importState() makes.
 * `episodesJson`: a JSON array of episodes (`{"id","summary","created_at_ms",
 * "message_count","archived_messages"?}`, e.g. the `history.episodic_memories` of a
 * compressor's stateJson). Throws "invalid_json".
 */
export function validateEpisodicMemoryIds(episodesJson: string): EpisodeIdValidation;

/** Draws a fresh id for allocateIsolatedSessionId. */
export type NextId = () => string;

/**
 * SUB-9, the seed's allocateIsolatedSessionId: the trimmed `requested` when it is
 * non-empty, not the trimmed parent id and not in `activeIds`; otherwise
 * `${parent}_w_${nextId()}`, drawn again while it is the parent's id or active, at most 16
 * more times. `nextId` is called synchronously; when it throws or returns something else
 * than a string, this throws "invalid_argument" (the message carries what it threw).
 */
export function allocateIsolatedSessionId(parentSessionId: string, requested: string, activeIds: string[],
  nextId: NextId): string;

/** A custom compressor's `contextJson`, typed (seed 000 §2: CompressContext). */
export class CompressContext {
  /** Instances come from `CompressContext.parse()`. */
  private constructor();
  /** Parses a CustomCompressor's contextJson. Throws "invalid_json". */
  static parse(contextJson: string): CompressContext;
  /** The next prompt's size for an automatic attempt; unset for compressNow() and overflow. */
  readonly estimatedPromptTokens?: number;
  /** True after the model refused the context as too long: compress whatever the size. */
  readonly force: boolean;
}

/**
 * A custom compressor's answer, typed (seed 000 §2: CompressOutcome skipped | compressed |
 * failed); a CustomCompressor resolves with its toJson().
 */
export class CompressOutcome {
  /** Instances come from the static constructors. */
  private constructor();
  /** Nothing to do; reason a CMP-2 skip code (default "below_threshold"). */
  static skipped(reason?: string): CompressOutcome;
  /** The attempt failed; reason a CMP-2 failure code (default "llm_error"). */
  static failed(reason?: string, errorCode?: string): CompressOutcome;
  /**
   * The messages before `splitIndex` move into a new episode with `summary` (episodeId
   * default: a fresh id; usage: the summarizer's). Throws "invalid_argument" for a split
   * index that is not a non-negative integer or a usage with a bad count.
   */
  static compressed(splitIndex: number, summary: string, episodeId?: string, usage?: ModelUsage): CompressOutcome;
  /** "skipped" | "failed" | "compressed". */
  readonly outcome: CompressOutcomeKind;
  readonly reason?: string;
  /** The JSON text a CustomCompressor resolves with. */
  toJson(): string;
}
*/

//! Context compression (NAPI-2, seed 000 §2): `ContextCompressor` (the default compressor's
//! settings), `CompressResult`, and `DEFAULT_SUMMARY_PROMPT`.

use std::sync::Arc;

use arkagent::compress::{ContextCompressorConfig, ForeignCompressorCall};
use arkagent::Compression;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{ClassInstance, FnArgs, This};
use napi_ohos::Env;

use crate::args::{constructing, Setting};
use crate::callback::{JsAsyncFn, JsFunction};
use crate::convert::{optional, serde_name, Optional};
use crate::error::{internal, private_constructor, Thrown};
use crate::model_config::ModelConfig;
use crate::numbers::{argument, setting};
use crate::usage::JsModelUsage;

/// The core's structured summary prompt (CMP-8).
// Only the napi registration reads it, and napi-derive leaves that out under cfg(test),
// which `cargo clippy --all-targets` still compiles.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub const DEFAULT_SUMMARY_PROMPT: &str = arkagent::compress::DEFAULT_SUMMARY_PROMPT;

/// The default context compressor, as settings: the runtime builds the core
/// `DefaultContextCompressor` from them (core `Compression::Default`). It summarizes with
/// the runtime's own model and transport unless `summarizerModel` is set.
#[napi]
#[derive(Clone)]
pub struct ContextCompressor {
    config: ContextCompressorConfig,
    /// `None`: the core's default for the threshold (as the core's JSON config does).
    summarizer_max_input_tokens: Option<u64>,
    summarizer: Option<arkagent::ModelConfig>,
}

#[napi]
impl ContextCompressor {
    /// The seed's constructor without client and model (those come from the runtime);
    /// omitted arguments keep the seed's defaults (64000, 10, DEFAULT_SUMMARY_PROMPT, 3).
    /// Throws `invalid_config` for a negative or fractional count.
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        this: This<'_>,
        total_token_threshold: Setting<Option<f64>>,
        keep_recent_message_count: Setting<Option<f64>>,
        summary_prompt: Setting<Option<String>>,
        min_messages_to_summarize: Setting<Option<f64>>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "ContextCompressor")?;
        let mut config = ContextCompressorConfig::default();
        if let Some(v) = total_token_threshold.0 {
            config.total_token_threshold = setting(v, "totalTokenThreshold")?;
        }
        if let Some(v) = keep_recent_message_count.0 {
            config.keep_recent_message_count = setting(v, "keepRecentMessageCount")?;
        }
        if let Some(v) = summary_prompt.0 {
            config.summary_prompt = v;
        }
        if let Some(v) = min_messages_to_summarize.0 {
            config.min_messages_to_summarize = setting(v, "minMessagesToSummarize")?;
        }
        Ok(Self {
            config,
            summarizer_max_input_tokens: None,
            summarizer: None,
        })
    }

    #[napi(getter)]
    pub fn total_token_threshold(&self) -> f64 {
        self.config.total_token_threshold as f64
    }

    #[napi(setter)]
    pub fn set_total_token_threshold(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.config.total_token_threshold = setting(value.0, "totalTokenThreshold")?;
        Ok(())
    }

    #[napi(getter)]
    pub fn keep_recent_message_count(&self) -> f64 {
        self.config.keep_recent_message_count as f64
    }

    #[napi(setter)]
    pub fn set_keep_recent_message_count(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.config.keep_recent_message_count = setting(value.0, "keepRecentMessageCount")?;
        Ok(())
    }

    #[napi(getter)]
    pub fn summary_prompt(&self) -> String {
        self.config.summary_prompt.clone()
    }

    #[napi(setter)]
    pub fn set_summary_prompt(&mut self, value: Setting<String>) {
        self.config.summary_prompt = value.0;
    }

    #[napi(getter)]
    pub fn min_messages_to_summarize(&self) -> f64 {
        self.config.min_messages_to_summarize as f64
    }

    #[napi(setter)]
    pub fn set_min_messages_to_summarize(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.config.min_messages_to_summarize = setting(value.0, "minMessagesToSummarize")?;
        Ok(())
    }

    /// Input tokens one summary request may use (CMP-10); undefined: the threshold.
    #[napi(getter)]
    pub fn summarizer_max_input_tokens(&self) -> Optional<f64> {
        optional(self.summarizer_max_input_tokens.map(|t| t as f64))
    }

    #[napi(setter)]
    pub fn set_summarizer_max_input_tokens(
        &mut self,
        value: Setting<Option<f64>>,
    ) -> Result<(), Thrown> {
        self.summarizer_max_input_tokens = value
            .0
            .map(|v| setting(v, "summarizerMaxInputTokens"))
            .transpose()?;
        Ok(())
    }

    /// A copy of the summarizer's model config (undefined: the runtime's model).
    #[napi(getter)]
    pub fn summarizer_model(&self) -> Optional<ModelConfig> {
        optional(self.summarizer.clone().map(ModelConfig::from))
    }

    /// Stores a copy; `undefined` summarizes with the runtime's model. Anything but a
    /// `ModelConfig` instance is refused before it is unwrapped.
    #[napi(setter)]
    pub fn set_summarizer_model(&mut self, value: Setting<Option<ClassInstance<'_, ModelConfig>>>) {
        self.summarizer = value.0.map(|m| m.core());
    }
}

impl ContextCompressor {
    /// The core compression setting.
    pub fn core(&self) -> Compression {
        let mut config = self.config.clone();
        config.summarizer_max_input_tokens = self.summarizer_max_input_tokens;
        Compression::Default {
            config,
            summarizer: self.summarizer.clone(),
        }
    }
}

/// What one compression attempt did (CMP-2); read-only.
#[napi]
pub struct CompressResult {
    inner: arkagent::compress::CompressResult,
}

impl From<arkagent::compress::CompressResult> for CompressResult {
    fn from(inner: arkagent::compress::CompressResult) -> Self {
        Self { inner }
    }
}

#[napi]
impl CompressResult {
    /// Instances come from `compressNow()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("CompressResult"))
    }

    /// "skipped" | "compressed" | "failed" (the d.ts union `CompressOutcomeKind`).
    #[napi(getter, ts_return_type = "CompressOutcomeKind")]
    pub fn outcome(&self) -> String {
        serde_name(serde_json::to_value(self.inner.outcome))
    }

    /// The reason code, e.g. "below_threshold", "malformed_summary", "compressed" (the
    /// d.ts union `CompressReason`).
    #[napi(getter, ts_return_type = "CompressReason")]
    pub fn reason(&self) -> String {
        self.inner.reason.code().to_owned()
    }

    #[napi(getter)]
    pub fn episode_id(&self) -> Optional<String> {
        optional(self.inner.episode_id.clone())
    }

    #[napi(getter)]
    pub fn error_code(&self) -> Optional<String> {
        optional(self.inner.error_code.clone())
    }

    #[napi(getter)]
    pub fn messages_archived(&self) -> f64 {
        self.inner.messages_archived as f64
    }

    #[napi(getter)]
    pub fn usage(&self) -> Optional<JsModelUsage> {
        optional(self.inner.usage.as_ref().map(JsModelUsage::from))
    }
}

/// The arguments of a JS compressor: the state JSON and the context JSON.
pub type CompressArgs = FnArgs<(String, String)>;

/// `setCustomCompressor(compress, threshold?)` of `AgentRuntimeConfig` and `WorkerConfig`:
/// the core `ForeignCompressor` over `compress` (`None`: no custom compressor) with the
/// core's threshold rule (absent: 64000; 0: every automatic attempt asks). Throws
/// `invalid_argument` for a threshold that is not a non-negative integer.
pub fn custom_compressor(
    compress: Option<JsFunction<'_, CompressArgs>>,
    threshold: Option<f64>,
) -> Result<Option<Arc<dyn arkagent::compress::ContextCompressor>>, Thrown> {
    let threshold = threshold.map(|t| argument::<u64>(t, "threshold")).transpose()?;
    let Some(function) = compress else { return Ok(None) };
    let call = JsCompressCall::new(function).map_err(internal)?;
    Ok(Some(Arc::new(arkagent::compress::ForeignCompressor::new(call, threshold))))
}

/// A compressor written in JS (CMP-1): `(stateJson, contextJson) => Promise<string>`
/// answering a `ForeignCompression` JSON. The core checks the answer and commits
/// transactionally; a throw or rejection fails the attempt with `compressor_error`.
pub struct JsCompressCall {
    compress: JsAsyncFn<CompressArgs, String>,
}

impl JsCompressCall {
    /// Wraps the JS function (on the JS thread).
    pub fn new(function: JsFunction<'_, CompressArgs>) -> napi_ohos::Result<Self> {
        Ok(Self { compress: JsAsyncFn::new(function)? })
    }
}

#[async_trait::async_trait]
impl ForeignCompressorCall for JsCompressCall {
    async fn compress_json(&self, state_json: String, context_json: String, _cancel: arkagent::CancellationToken) -> Result<String, String> {
        self.compress
            .call(FnArgs::from((state_json, context_json)))
            .await
            .map_err(|failure| failure.message)
    }
}

// index.d.ts: the declarations of this module's JS API, with their docs (the promises the
// tests keep). scripts/gen-dts.sh assembles these blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts; edit them here, then regenerate.
/* ts
/**
 * The structured summary prompt of the default compressor (CMP-8): it asks for one
 * `<state_snapshot>` with overall_goal, key_knowledge, file_system_state, recent_actions
 * and current_plan; a reply without all five is rejected ("malformed_summary").
 */
export const DEFAULT_SUMMARY_PROMPT: string;

/**
 * Transactional context compression into episodic memory (the default compressor's
 * settings). Before every model call and after every turn (the final answer's too) the
 * runtime checks the prompt size — the larger of its own CJK-aware estimate and the
 * provider's reported prompt tokens of the last call plus an estimate of the messages
 * added since — and when it reaches `totalTokenThreshold` the older messages are summarized into a
 * `<state_snapshot>` and moved into an `EpisodicMemory`; the last
 * `keepRecentMessageCount` messages stay (never splitting a tool call from its result).
 * A failed or skipped attempt changes nothing. With a compressor configured the model is
 * also offered the `retrieve_memory` tool to read the archived messages.
 * When the summarizer is the conversation's own model (no `summarizerModel`, or one with
 * the same wire format, base URL, model, key and stream setting), the snapshot is asked
 * for with the conversation's next request unchanged (tools and tool choice included) plus
 * one instruction that forbids tool calls, so the provider serves it from its prompt
 * cache; an answer that calls a tool or holds no valid snapshot is asked for once more,
 * then the older messages are summarized from a transcript instead, as they always are
 * for another model.
 * Counts must be non-negative safe integers (else code "invalid_config").
 */
export class ContextCompressor {
  constructor(totalTokenThreshold?: number, keepRecentMessageCount?: number, summaryPrompt?: string,
    minMessagesToSummarize?: number);
  /** Prompt tokens that trigger a compression (default 64000). */
  totalTokenThreshold: number;
  /** Messages kept verbatim at the end (default 10). */
  keepRecentMessageCount: number;
  /** The summary instructions (default DEFAULT_SUMMARY_PROMPT). */
  summaryPrompt: string;
  /** Fewer messages than this to summarize: skipped (default 3). */
  minMessagesToSummarize: number;
  /**
   * Input tokens one summary request may use, as the summarizer model's calibrated
   * estimate counts them plus 15 %: a conversation larger than this is summarized from a
   * transcript, in chunks that fit. Unset: chunks of the threshold's size, but at least
   * 4096 (room for the summary prompt and a chunk), and no limit on the request with the
   * conversation's own bytes (a context-overflow answer to it falls back to chunks).
   * A value too small for the summary prompt and one chunk makes the runtime constructor
   * throw "invalid_config".
   */
  summarizerMaxInputTokens?: number;
  /** A different model for summaries (same transport); unset: the runtime's model. Reading gives a copy. */
  summarizerModel?: ModelConfig;
}

/** What one compression attempt did (read-only). */
export class CompressResult {
  /** Instances come from `AgentRuntime.compressNow()`. */
  private constructor();
  /** "skipped" | "compressed" | "failed". */
  readonly outcome: CompressOutcomeKind;
  /**
   * The reason code. skipped: "no_usage", "history_too_short", "below_threshold",
   * "last_usage_is_compression", "no_safe_split", "backing_off_after_failure" (an
   * automatic attempt within 3 model calls of a failed one is held back; announced in a
   * "compression" event); compressed: "compressed"; failed:
   * "llm_error", "empty_summary", "malformed_summary", "summary_not_smaller", "summarizer_window_too_small",
   * "post_commit_pairing_violation", "cancelled", "compressor_panicked", "state_changed"
   * (the state changed while the compressor worked), "invalid_episode_id" (blank or already
   * used), "invalid_split_index" (0, past the end, or nothing staged), "compressor_error"
   * (a CustomCompressor threw, rejected or answered something unusable). Every value of
   * CompressReason.
   */
  readonly reason: CompressReason;
  /** The new episode's snapshot id, when compressed. */
  readonly episodeId?: string;
  /** The model error's code when reason is "llm_error". */
  readonly errorCode?: string;
  /** Messages moved into the episode (or that would have been). */
  readonly messagesArchived: number;
  /** The summary calls' usage (source "context_compression"); recorded in usages() only when compressed. */
  readonly usage?: ModelUsage;
}

/**
 * A context compressor written in ArkTS/JS (CMP-1): gets the state exactly as exportState()
 * gives it (token_calibration and child_usages included), except that each episode comes
 * without its archived_messages (its id, summary, created_at_ms and message_count are what
 * a new summary folds in), and
 * `{"estimated_prompt_tokens": number | null, "force": boolean}`, and resolves with
 * a JSON text `{"outcome": "skipped" | "failed" | "compressed", "reason"?: code,
 * "split_index"?: number, "summary"?: string, "episode_id"?: string, "usage"?: {…},
 * "error_code"?: string}`. "compressed" needs split_index (the messages before it move into
 * a new episode with summary) and a non-blank summary. The runtime checks everything before
 * it commits, so a custom compressor is as transactional as the default one: anything
 * unusable, a throw or a rejection fails the attempt ("compressor_error", or
 * "invalid_split_index", "post_commit_pairing_violation", "invalid_episode_id",
 * "empty_summary") and changes nothing. Its usage is tagged "context_compression".
 * CompressContext.parse(contextJson) and CompressOutcome give both typed; the helpers
 * computeSafeSplitIndex and toolCallsPaired pick a split the runtime accepts.
 */
export type CustomCompressor = (stateJson: string, contextJson: string) => Promise<string>;
*/

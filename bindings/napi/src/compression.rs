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
use crate::convert::{optional, Optional};
use crate::error::{internal, Thrown};
use crate::model_config::ModelConfig;
use crate::numbers::{argument, setting};

// Only the napi registration reads it, and napi-derive leaves that out under cfg(test),
// which `cargo clippy --all-targets` still compiles.
/// The structured summary prompt of the default compressor (CMP-8): it asks for one
/// `<state_snapshot>` with overall_goal, key_knowledge, file_system_state, recent_actions
/// and current_plan; a reply without all five is rejected ("malformed_summary").
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub const DEFAULT_SUMMARY_PROMPT: &str = arkagent::compress::DEFAULT_SUMMARY_PROMPT;

/// Transactional context compression into episodic memory (the default compressor's
/// settings). Before every model call and after every turn (the final answer's too) the
/// runtime checks the prompt size — the larger of its own CJK-aware estimate and the
/// provider's reported prompt tokens of the last call plus an estimate of the messages
/// added since — and when it reaches `totalTokenThreshold` the older messages are summarized into a
/// `<state_snapshot>` and moved into an `EpisodicMemory`; the last
/// `keepRecentMessageCount` messages stay (never splitting a tool call from its result;
/// with 0, the user's input or tool results the model has yet to answer still stay).
/// A failed or skipped attempt changes nothing; after a failed automatic attempt the
/// automatic ones are skipped ("backing_off_after_failure") until three more model calls
/// were made (compressNow() and a context overflow are never held back). With a
/// compressor configured the model is
/// also offered the `retrieve_memory` tool to read the archived messages.
/// When the summarizer is the conversation's own model (no `summarizerModel`, or one with
/// the same wire format, base URL, model, key and stream setting), the snapshot is asked
/// for with the conversation's next request unchanged (tools and tool choice included) plus
/// one instruction that forbids tool calls, so the provider serves it from its prompt
/// cache; an answer that calls a tool or holds no valid snapshot is asked for once more,
/// then the older messages are summarized from a transcript instead, as they always are
/// for another model.
/// Counts must be non-negative safe integers (else code "invalid_config").
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

    /// Prompt tokens that trigger a compression (default 64000). 0, like a custom
    /// compressor's 0: every automatic attempt compresses (right after a compression
    /// excepted: CMP-7's loop guard).
    #[napi(getter)]
    pub fn total_token_threshold(&self) -> f64 {
        self.config.total_token_threshold as f64
    }

    #[napi(setter)]
    pub fn set_total_token_threshold(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.config.total_token_threshold = setting(value.0, "totalTokenThreshold")?;
        Ok(())
    }

    /// Messages kept verbatim at the end (default 10).
    #[napi(getter)]
    pub fn keep_recent_message_count(&self) -> f64 {
        self.config.keep_recent_message_count as f64
    }

    #[napi(setter)]
    pub fn set_keep_recent_message_count(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.config.keep_recent_message_count = setting(value.0, "keepRecentMessageCount")?;
        Ok(())
    }

    /// The summary instructions (default DEFAULT_SUMMARY_PROMPT).
    #[napi(getter)]
    pub fn summary_prompt(&self) -> String {
        self.config.summary_prompt.clone()
    }

    #[napi(setter)]
    pub fn set_summary_prompt(&mut self, value: Setting<String>) {
        self.config.summary_prompt = value.0;
    }

    /// Fewer messages than this to summarize: skipped (default 3).
    #[napi(getter)]
    pub fn min_messages_to_summarize(&self) -> f64 {
        self.config.min_messages_to_summarize as f64
    }

    #[napi(setter)]
    pub fn set_min_messages_to_summarize(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.config.min_messages_to_summarize = setting(value.0, "minMessagesToSummarize")?;
        Ok(())
    }

    /// Input tokens one summary request may use, as the summarizer model's calibrated
    /// estimate counts them plus 15 %: a conversation larger than this is summarized from a
    /// transcript, in chunks that fit. Unset: chunks of the threshold's size, but at least
    /// 4096 (room for the summary prompt and a chunk), and no limit on the request with the
    /// conversation's own bytes (a context-overflow answer to it falls back to chunks).
    /// A value too small for the summary prompt and one chunk makes the runtime constructor
    /// throw "invalid_config".
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

    /// A different model for summaries (same transport); unset: the runtime's model. Reading gives a copy.
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

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: DEFAULT_SUMMARY_PROMPT

// declare: ContextCompressor

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
 * "empty_summary") and changes nothing. A split index must be at least 1 and at most the
 * number of messages, and leave the last message when the model has yet to answer it (the
 * user's input or a tool result ends the history, as before a model call): else
 * "invalid_split_index". Its usage is tagged "context_compression".
 * CompressContext.parse(contextJson) and CompressOutcome give both typed; the helpers
 * computeSafeSplitIndex (keeping at least 1 message in that case) and toolCallsPaired pick
 * a split the runtime accepts.
 */
export type CustomCompressor = (stateJson: string, contextJson: string) => Promise<string>;
*/

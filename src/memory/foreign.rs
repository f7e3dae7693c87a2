//! CMP-1 for hosts: a compressor written in another language (ArkTS/JS, C). The host gets
//! the state as JSON and answers with a [`ForeignCompression`] as JSON; everything it
//! says is checked here and again at commit ([`super::apply_compression`]), so a foreign
//! compressor is exactly as transactional as the default one.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::compressor::{CompressContext, CompressReason, CompressResult, ContextCompressor, StagedCompression, COMPRESSION_USAGE_SOURCE};
use crate::history::{AgentState, ModelUsage};

/// What a foreign compressor answers (JSON, snake_case):
/// `{"outcome": "skipped" | "failed" | "compressed", "reason"?: "<CMP-2 code>",
/// "split_index"?: n, "summary"?: "…", "episode_id"?: "…", "usage"?: {ModelUsage},
/// "error_code"?: "…"}`.
///
/// `compressed` needs `split_index` (messages before it are archived) and a non-blank
/// `summary`; `episode_id` defaults to a fresh id. `skipped` and `failed` take any
/// CMP-2 reason code (default `below_threshold` / `llm_error`). An answer that is not
/// this shape fails the attempt with `compressor_error`; nothing changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForeignCompression {
    /// `skipped`, `failed` or `compressed`.
    pub outcome: String,
    /// A CMP-2 reason code.
    #[serde(default)]
    pub reason: Option<String>,
    /// Messages before this index move into the new episode (`compressed`).
    #[serde(default)]
    pub split_index: Option<usize>,
    /// The episode's summary (`compressed`).
    #[serde(default)]
    pub summary: Option<String>,
    /// The episode's id; a fresh one when absent.
    #[serde(default)]
    pub episode_id: Option<String>,
    /// Usage of the compressor's model calls; tagged `raw.source = "context_compression"`
    /// and recorded only when the compression commits (CMP-7).
    #[serde(default)]
    pub usage: Option<ModelUsage>,
    /// A model error's code, for `failed` / `llm_error`.
    #[serde(default)]
    pub error_code: Option<String>,
}

impl ForeignCompression {
    /// Parses and checks a foreign answer; anything unusable is `failed/compressor_error`.
    pub fn result_from_json(json: &str, ctx: &CompressContext) -> CompressResult {
        match serde_json::from_str::<ForeignCompression>(json) {
            Ok(answer) => answer.into_result(ctx),
            Err(_) => CompressResult::failed(CompressReason::CompressorError, None),
        }
    }

    /// Checks the answer and turns it into a result the runtime can commit.
    pub fn into_result(self, ctx: &CompressContext) -> CompressResult {
        let usage = self.usage.map(tag);
        let reason = match self.reason.as_deref().map(parse_reason) {
            None => None,
            Some(Some(r)) => Some(r),
            Some(None) => return CompressResult::failed(CompressReason::CompressorError, usage),
        };
        match self.outcome.as_str() {
            "skipped" => match reason.unwrap_or(CompressReason::BelowThreshold) {
                r @ (CompressReason::NoUsage
                | CompressReason::HistoryTooShort
                | CompressReason::BelowThreshold
                | CompressReason::LastUsageIsCompression
                | CompressReason::NoSafeSplit) => CompressResult::skipped(r),
                _ => CompressResult::failed(CompressReason::CompressorError, usage),
            },
            "failed" => match reason.unwrap_or(CompressReason::LlmError) {
                CompressReason::Compressed | CompressReason::NoUsage | CompressReason::HistoryTooShort | CompressReason::BelowThreshold
                | CompressReason::LastUsageIsCompression | CompressReason::NoSafeSplit | CompressReason::BackingOffAfterFailure => {
                    CompressResult::failed(CompressReason::CompressorError, usage)
                }
                r => {
                    let mut result = CompressResult::failed_archiving(r, usage, self.split_index.unwrap_or(0));
                    result.error_code = self.error_code;
                    result
                }
            },
            "compressed" => {
                let (Some(split_index), Some(summary)) = (self.split_index, self.summary) else {
                    return CompressResult::failed(CompressReason::CompressorError, usage);
                };
                let episode_id = self.episode_id.unwrap_or_else(|| ctx.id_generator.next_id());
                let staged = StagedCompression { split_index, summary, episode_id, created_at_ms: ctx.clock.now_ms() };
                CompressResult::compressed(staged, usage)
            }
            _ => CompressResult::failed(CompressReason::CompressorError, usage),
        }
    }
}

fn parse_reason(code: &str) -> Option<CompressReason> {
    serde_json::from_value(Value::String(code.to_owned())).ok()
}

fn tag(mut usage: ModelUsage) -> ModelUsage {
    usage.raw.insert("source".into(), Value::String(COMPRESSION_USAGE_SOURCE.into()));
    usage
}

/// The host side of a foreign compressor: gets the state JSON and the context JSON
/// (`{"estimated_prompt_tokens": n | null, "force": bool}`) and answers a
/// [`ForeignCompression`] as JSON, or an error message (the attempt then fails with
/// `compressor_error`). `cancel` fires when the run is cancelled.
#[async_trait]
pub trait ForeignCompressorCall: Send + Sync {
    /// One compression attempt.
    async fn compress_json(&self, state_json: String, context_json: String, cancel: CancellationToken) -> Result<String, String>;
}

/// A [`ContextCompressor`] over a [`ForeignCompressorCall`] (what the C ABI and the
/// N-API module give the runtime for a host compressor).
pub struct ForeignCompressor<F> {
    call: F,
    threshold: Option<u64>,
}

impl<F: ForeignCompressorCall> ForeignCompressor<F> {
    /// A compressor over `call`; `threshold` is only reported in events.
    pub fn new(call: F, threshold: Option<u64>) -> Self {
        Self { call, threshold }
    }
}

#[async_trait]
impl<F: ForeignCompressorCall> ContextCompressor for ForeignCompressor<F> {
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult {
        let Ok(state_json) = state.to_json() else {
            return CompressResult::failed(CompressReason::CompressorError, None);
        };
        let context_json = serde_json::json!({"estimated_prompt_tokens": ctx.estimated_prompt_tokens, "force": ctx.force}).to_string();
        let answer = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return CompressResult::failed(CompressReason::Cancelled, None),
            answer = self.call.compress_json(state_json, context_json, ctx.cancel.clone()) => answer,
        };
        match answer {
            Ok(json) => ForeignCompression::result_from_json(&json, ctx),
            Err(message) => {
                tracing::warn!(%message, "foreign compressor failed");
                CompressResult::failed(CompressReason::CompressorError, None)
            }
        }
    }

    fn threshold(&self) -> Option<u64> {
        self.threshold
    }
}

//! CMP-1 for hosts: a compressor written in another language (ArkTS/JS, C). The host gets
//! the state as JSON and answers with a [`ForeignCompression`] as JSON; everything it
//! says is checked here and again at commit ([`super::apply_compression`]), so a foreign
//! compressor is exactly as transactional as the default one.
//!
//! PERF-3 / ARCHITECTURE.md's no-copy snapshot: an automatic attempt (before a model call,
//! after a turn) asks the host only when the runtime's own trigger policy — the default
//! compressor's checks against the threshold — says a compression is due, and the state
//! it gets is `export_state`'s JSON without the episodes' archived originals
//! ([`ForeignCompressor`], [`foreign_compressor_state_json`]).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::compressor::{CompressContext, CompressReason, CompressResult, ContextCompressor, StagedCompression};
use super::default_compressor::DEFAULT_TOTAL_TOKEN_THRESHOLD;
use crate::history::{AgentState, ChildUsageRecord, EpisodicMemory, History, Message, ModelUsage, TokenCalibrations};

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
    /// Usage of the compressor's model calls; with source `context_compression`
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
    usage.source = Some(crate::history::UsageSource::ContextCompression);
    usage
}

/// The host side of a foreign compressor: gets the state JSON
/// ([`foreign_compressor_state_json`]: `export_state`'s JSON, byte for byte, except that
/// each episode comes without its `archived_messages`) and the context JSON
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
///
/// When the host is asked: an automatic attempt (pre-flight or post-turn: the context
/// has an estimate and no `force`) runs the default compressor's trigger checks first —
/// `below_threshold` while the prompt size is under the threshold, and
/// `last_usage_is_compression` right after a compression — and answers those itself,
/// without calling the host. A manual attempt (`compress_now`) and an overflow (`force`)
/// always ask the host.
pub struct ForeignCompressor<F> {
    call: F,
    threshold: u64,
}

impl<F: ForeignCompressorCall> ForeignCompressor<F> {
    /// A compressor over `call`; automatic attempts ask it from `threshold` prompt tokens
    /// on. The one rule of every surface (the C ABI's `threshold`, ArkTS's
    /// `setCustomCompressor(compress, threshold?)`): `None` (absent) is the default
    /// compressor's [`DEFAULT_TOTAL_TOKEN_THRESHOLD`] (64000); an explicit `Some(0)` is
    /// what the seed's check (`promptTokens < threshold` skips) makes of 0 — never below
    /// the threshold, so every automatic attempt asks the host (right after a compression
    /// the loop guard still answers `last_usage_is_compression` itself).
    ///
    /// ```
    /// # use arkagent::compress::{ContextCompressor, ForeignCompressor, ForeignCompressorCall};
    /// # struct Host;
    /// # #[async_trait::async_trait]
    /// # impl ForeignCompressorCall for Host {
    /// #     async fn compress_json(&self, _: String, _: String, _: arkagent::CancellationToken) -> Result<String, String> { Err(String::new()) }
    /// # }
    /// assert_eq!(ForeignCompressor::new(Host, None).threshold(), Some(64_000));
    /// assert_eq!(ForeignCompressor::new(Host, Some(0)).threshold(), Some(0));
    /// ```
    pub fn new(call: F, threshold: Option<u64>) -> Self {
        Self { call, threshold: threshold.unwrap_or(DEFAULT_TOTAL_TOKEN_THRESHOLD) }
    }

    /// The runtime's trigger policy for an automatic attempt (CMP-3's checks that need no
    /// compressor settings); `None` when the host should be asked.
    fn skip_reason(&self, state: &AgentState, ctx: &CompressContext) -> Option<CompressReason> {
        let estimate = ctx.estimated_prompt_tokens?;
        if ctx.force {
            return None;
        }
        super::compressor::check_due(state, estimate, self.threshold, ctx.after_compression).err()
    }
}

/// The state as a foreign compressor gets it: `export_state`'s JSON with every episode's
/// archived originals left out (borrowed: nothing is copied to build it). Its fields are
/// [`AgentState`]'s, in its order, with the same `skip_serializing_if` rules.
#[derive(Serialize)]
struct CompressorState<'a> {
    version: u32,
    session_id: &'a str,
    history: CompressorHistory<'a>,
    usages: &'a [ModelUsage],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    child_usages: &'a [ChildUsageRecord],
    #[serde(skip_serializing_if = "TokenCalibrations::is_empty")]
    token_calibration: &'a TokenCalibrations,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    runs: &'a [crate::history::RunMark],
}

#[derive(Serialize)]
struct CompressorHistory<'a> {
    messages: &'a [Message],
    episodic_memories: Vec<CompressorEpisode<'a>>,
}

#[derive(Serialize)]
struct CompressorEpisode<'a> {
    id: &'a str,
    summary: &'a str,
    created_at_ms: u64,
    message_count: usize,
}

impl<'a> From<&'a EpisodicMemory> for CompressorEpisode<'a> {
    fn from(episode: &'a EpisodicMemory) -> Self {
        let EpisodicMemory { id, summary, created_at_ms, message_count, archived_messages: _ } = episode;
        Self { id, summary, created_at_ms: *created_at_ms, message_count: *message_count }
    }
}

/// The JSON a foreign compressor gets for `state`: exactly what `export_state` writes for
/// it (CMP-1; the runtime asks only at points where the history is paired, so nothing is
/// cut) except that each episode has no `archived_messages` key. The destructuring below
/// names every field, so a field added to [`AgentState`], [`History`] or
/// [`EpisodicMemory`] does not compile until it is sent here too.
pub fn foreign_compressor_state_json(state: &AgentState) -> Result<String, serde_json::Error> {
    // No compression runs while a turn waits for approval (TOOL-1): never a pending turn.
    let AgentState { version, session_id, history, usages, child_usages, token_calibration, pending_turn: _, runs } = state;
    let History { messages, episodic_memories } = history;
    let view = CompressorState {
        version: *version,
        session_id,
        history: CompressorHistory { messages, episodic_memories: episodic_memories.iter().map(CompressorEpisode::from).collect() },
        usages,
        child_usages,
        token_calibration,
        runs,
    };
    serde_json::to_string(&view)
}

#[async_trait]
impl<F: ForeignCompressorCall> ContextCompressor for ForeignCompressor<F> {
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult {
        if let Some(reason) = self.skip_reason(state, ctx) {
            return CompressResult::skipped(reason);
        }
        let Ok(state_json) = foreign_compressor_state_json(state) else {
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
        Some(self.threshold)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::history::ChildUsageSummary;
    use crate::ids::{SequentialIdGenerator, SystemClock};

    struct Counting(Arc<AtomicUsize>);

    #[async_trait]
    impl ForeignCompressorCall for Counting {
        async fn compress_json(&self, _state: String, _ctx: String, _cancel: CancellationToken) -> Result<String, String> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(r#"{"outcome":"skipped","reason":"below_threshold"}"#.into())
        }
    }

    fn ctx(estimate: u64) -> CompressContext {
        CompressContext {
            id_generator: Arc::new(SequentialIdGenerator::new("e")),
            clock: Arc::new(SystemClock),
            cancel: CancellationToken::new(),
            estimated_prompt_tokens: Some(estimate),
            force: false,
            after_compression: false,
            conversation: None,
            before_summarizer_call: None,
        }
    }

    /// CMP-1 / issue 28 item 9: with every field of the state filled in (child usages and
    /// a token calibration included), what the host gets is `export_state`'s JSON byte for
    /// byte once each episode's `archived_messages` is taken out.
    #[test]
    fn cmp_1_the_host_state_is_the_export_without_the_archived_originals() {
        use crate::history::{ChildUsageRecord, EpisodicMemory, TokenCalibration};
        let mut state = AgentState::new("s");
        state.history.messages.push(Message::user("hi"));
        state.history.episodic_memories.push(EpisodicMemory {
            id: "ep1".into(),
            summary: "earlier".into(),
            created_at_ms: 7,
            message_count: 1,
            archived_messages: Arc::new(vec![Message::user("ARCHIVED")]),
        });
        state.usages.push(ModelUsage { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, ..ModelUsage::default() });
        state.child_usages.push(ChildUsageRecord {
            call_id: "d1".into(),
            child_session_id: "s_w_1".into(),
            assignee: "clone".into(),
            usage: ChildUsageSummary::default(),
            discarded: false,
        });
        let mut calibration = TokenCalibration::default();
        assert!(calibration.observe(&crate::compress::count_tokens("hello there, how are you today?"), 9));
        state.token_calibration.insert("m".into(), calibration);
        let export = state.to_json().unwrap();
        for key in ["\"child_usages\"", "\"token_calibration\"", "ARCHIVED"] {
            assert!(export.contains(key), "the export has {key}");
        }
        let archive = serde_json::to_string(&state.history.episodic_memories[0].archived_messages).unwrap();
        let without_archive = export.replacen(&format!(",\"archived_messages\":{archive}"), "", 1);
        assert_ne!(without_archive, export);
        assert_eq!(foreign_compressor_state_json(&state).unwrap(), without_archive, "byte for byte");
    }

    /// CMP-7 through a host compressor: right after a compression, a call recorded without
    /// reported usage (SUB-6) does not hide the compression's own usage, so the host is not
    /// asked again (the same checks as the default compressor's).
    #[tokio::test]
    async fn cmp_7_an_unreported_call_after_a_compression_does_not_reopen_the_trigger() {
        let calls = Arc::new(AtomicUsize::new(0));
        let compressor = ForeignCompressor::new(Counting(Arc::clone(&calls)), Some(100));
        let mut state = AgentState::new("s");
        state.usages.push(tag(ModelUsage::default()));
        state.usages.push(ModelUsage::unreported());
        let result = compressor.compress(&state, &ctx(1_000)).await;
        assert_eq!(result.reason, CompressReason::LastUsageIsCompression);
        assert_eq!(calls.load(Ordering::Relaxed), 0);
        // Below the threshold the host is not asked either; above it, once the last
        // reported usage is a model call's, it is.
        assert_eq!(compressor.compress(&state, &ctx(99)).await.reason, CompressReason::BelowThreshold);
        state.usages.push(ModelUsage { prompt_tokens: 10, ..ModelUsage::default() });
        compressor.compress(&state, &ctx(1_000)).await;
        assert_eq!(calls.load(Ordering::Relaxed), 1);
    }
}

//! CMP-1, CMP-2, CMP-5: the compressor interface, its result, and the atomic commit.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::conversation::ConversationPrefix;
use crate::history::{AgentState, EpisodicMemory, HistoryInvariants, Message, ModelUsage};
use crate::ids::{Clock, IdGenerator};

/// The name of [`UsageSource::ContextCompression`](crate::history::UsageSource), the
/// source of the usage a compression call produced (CMP-7).
pub const COMPRESSION_USAGE_SOURCE: &str = crate::history::UsageSource::ContextCompression.as_str();

/// The last usage the provider reported (CMP-3, CMP-7): a call recorded without reported
/// usage (SUB-6) says nothing about the prompt's size nor about a compression.
pub(crate) fn last_reported_usage(state: &AgentState) -> Option<&ModelUsage> {
    state.usages.iter().rev().find(|u| u.is_reported())
}

/// CMP-3's threshold checks of an automatic attempt, in the seed's order, shared by the
/// default compressor and a foreign one: below `threshold` prompt tokens it is not due,
/// nor right after a compression (its own call the last usage, or `after_compression`:
/// CMP-7's loop guard).
pub(crate) fn check_due(state: &AgentState, prompt_tokens: u64, threshold: u64, after_compression: bool) -> Result<(), CompressReason> {
    if prompt_tokens < threshold {
        return Err(CompressReason::BelowThreshold);
    }
    if after_compression || last_reported_usage(state).and_then(|u| u.source) == Some(crate::history::UsageSource::ContextCompression) {
        return Err(CompressReason::LastUsageIsCompression);
    }
    Ok(())
}

/// What a compression attempt did.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressOutcome {
    /// Not needed or not possible; nothing changed.
    Skipped,
    /// The history was compressed into a new episode.
    Compressed,
    /// An attempt was made and failed; nothing changed.
    Failed,
}

/// Why (CMP-2). [`CompressReason::code`] gives the seed's codes.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressReason {
    /// Skipped: no usage recorded yet (and no estimate given).
    NoUsage,
    /// Skipped: not more messages than are kept, or too few to summarize.
    HistoryTooShort,
    /// Skipped: prompt tokens below the threshold.
    BelowThreshold,
    /// Skipped: no model call since the last compression — the last usage is a
    /// compression's own, or the compression reported none (loop guard, CMP-7).
    LastUsageIsCompression,
    /// Skipped: no split point keeps tool calls paired on both sides.
    NoSafeSplit,
    /// Compressed.
    Compressed,
    /// Failed: the summary call failed.
    LlmError,
    /// Failed: the summary was empty.
    EmptySummary,
    /// Failed: the summary was not a well-formed `<state_snapshot>` with five sections.
    MalformedSummary,
    /// Failed: the new history would not be paired.
    PostCommitPairingViolation,
    /// Failed: cancelled while summarizing.
    Cancelled,
    /// Failed: the summary is not smaller than what it replaces (it would not relieve
    /// the window and would only be compressed again).
    SummaryNotSmaller,
    /// Failed: the compressor panicked (a bug); caught, nothing changed.
    CompressorPanicked,
    /// Failed before any call: the summarizer's input window cannot hold the prompt, the
    /// previous snapshot and a minimal chunk (raise `summarizer_max_input_tokens`).
    SummarizerWindowTooSmall,
    /// Skipped by the runtime: an automatic attempt failed less than
    /// `COMPRESSION_BACKOFF_MODEL_CALLS` model calls ago (each attempt costs a summary call).
    BackingOffAfterFailure,
    /// Failed at commit: the state changed while the compressor worked (e.g. an import),
    /// so what it prepared no longer applies. Nothing changed.
    StateChanged,
    /// Failed at commit: the staged episode id is blank or already used by an episode.
    InvalidEpisodeId,
    /// Failed at commit: a `compressed` result without a staged compression, or a split
    /// index of 0, past the end of the history, or taking the last message while the model
    /// has yet to answer it (the user's input or tool results end the history).
    InvalidSplitIndex,
    /// Failed: a foreign (ArkTS/JS or C) compressor threw, rejected, or answered
    /// something that is not a valid `ForeignCompression`.
    CompressorError,
}

impl std::fmt::Display for CompressReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

impl CompressReason {
    /// The stable code, e.g. `"below_threshold"`.
    pub fn code(self) -> &'static str {
        match self {
            Self::NoUsage => "no_usage",
            Self::HistoryTooShort => "history_too_short",
            Self::BelowThreshold => "below_threshold",
            Self::LastUsageIsCompression => "last_usage_is_compression",
            Self::NoSafeSplit => "no_safe_split",
            Self::Compressed => "compressed",
            Self::LlmError => "llm_error",
            Self::EmptySummary => "empty_summary",
            Self::MalformedSummary => "malformed_summary",
            Self::PostCommitPairingViolation => "post_commit_pairing_violation",
            Self::Cancelled => "cancelled",
            Self::SummaryNotSmaller => "summary_not_smaller",
            Self::CompressorPanicked => "compressor_panicked",
            Self::SummarizerWindowTooSmall => "summarizer_window_too_small",
            Self::BackingOffAfterFailure => "backing_off_after_failure",
            Self::StateChanged => "state_changed",
            Self::InvalidEpisodeId => "invalid_episode_id",
            Self::InvalidSplitIndex => "invalid_split_index",
            Self::CompressorError => "compressor_error",
        }
    }
}

/// A prepared compression, applied by [`apply_compression`]: messages `[..split_index]`
/// move into a new episode with `summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StagedCompression {
    /// Messages before this index are archived.
    pub split_index: usize,
    /// The validated snapshot.
    pub summary: String,
    /// The new episode's id.
    pub episode_id: String,
    /// Creation time (injected clock).
    pub created_at_ms: u64,
}

/// The result of [`ContextCompressor::compress`].
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressResult {
    /// What happened.
    pub outcome: CompressOutcome,
    /// Why.
    pub reason: CompressReason,
    /// The new episode's id when compressed.
    pub episode_id: Option<String>,
    /// Usage of the summary call(s), with source `context_compression`. Recorded
    /// in the state only when the compression is committed (CMP-5, CMP-7).
    pub usage: Option<ModelUsage>,
    /// The model error's code when `reason` is `llm_error`.
    pub error_code: Option<String>,
    /// Messages archived (compressed) or that would have been.
    pub messages_archived: usize,
    /// What to commit; `Some` exactly when `outcome` is `compressed`.
    #[serde(skip)]
    pub staged: Option<StagedCompression>,
}

impl CompressResult {
    /// A skipped result.
    pub fn skipped(reason: CompressReason) -> Self {
        Self { outcome: CompressOutcome::Skipped, reason, episode_id: None, usage: None, error_code: None, messages_archived: 0, staged: None }
    }

    /// A failed result (the usage is reported but never recorded).
    pub fn failed(reason: CompressReason, usage: Option<ModelUsage>) -> Self {
        Self { outcome: CompressOutcome::Failed, reason, episode_id: None, usage, error_code: None, messages_archived: 0, staged: None }
    }

    /// A failed result that reports how many messages would have been archived.
    pub fn failed_archiving(reason: CompressReason, usage: Option<ModelUsage>, messages_archived: usize) -> Self {
        Self { messages_archived, ..Self::failed(reason, usage) }
    }

    /// A compressed result carrying what to commit.
    pub fn compressed(staged: StagedCompression, usage: Option<ModelUsage>) -> Self {
        Self {
            outcome: CompressOutcome::Compressed,
            reason: CompressReason::Compressed,
            episode_id: Some(staged.episode_id.clone()),
            usage,
            error_code: None,
            messages_archived: staged.split_index,
            staged: Some(staged),
        }
    }
}

/// What a compressor gets besides the state.
#[derive(Clone)]
pub struct CompressContext {
    /// Id source for the episode (snapshot) id.
    pub id_generator: Arc<dyn IdGenerator>,
    /// Time source for the episode.
    pub clock: Arc<dyn Clock>,
    /// Fires when the run is cancelled. Heed it: a compressor that has not returned 2 s
    /// after it is given up (its result `failed` `cancelled`, nothing committed).
    pub cancel: CancellationToken,
    /// The next prompt's size for automatic attempts (CMP-3, CMP-11): the larger of the
    /// local estimate and the provider's last count plus the messages appended since;
    /// used instead of the last usage. `None` for manual and forced attempts.
    pub estimated_prompt_tokens: Option<u64>,
    /// Skip the usage and threshold checks (the provider just reported a context overflow).
    pub force: bool,
    /// CMP-7: no model call was made since the last committed compression — known to the
    /// runtime even when that compression reported no usage (a custom compressor that
    /// calls no model) — so an attempt that is due is skipped with
    /// `last_usage_is_compression`, as right after a compression that reported one.
    pub after_compression: bool,
    /// COST-3: the conversation being compressed, whose request bytes a summarizer on the
    /// same model reuses as its prefix (the runtime passes its session; `None`: no
    /// conversation to reuse, the summarizer builds its own requests).
    pub conversation: Option<Arc<dyn ConversationPrefix>>,
    /// ISO-5: called with a summarizer call's estimated prompt tokens just before the call
    /// is made (the runtime emits `summarizer_request`; a sub-agent's budget may then fire
    /// `cancel`, and the call is not made). `None`: nobody meters the calls.
    pub before_summarizer_call: Option<Arc<dyn Fn(u64) + Send + Sync>>,
}

impl CompressContext {
    /// ISO-5: announces a summarizer call of `estimated_prompt_tokens` through
    /// [`before_summarizer_call`](Self::before_summarizer_call); false when the call must
    /// not be made (`cancel` fired: a budget, or the run's cancel).
    pub fn summarizer_call_may_start(&self, estimated_prompt_tokens: u64) -> bool {
        if let Some(hook) = &self.before_summarizer_call {
            hook(estimated_prompt_tokens);
        }
        !self.cancel.is_cancelled()
    }
}

/// Compresses long history into episodic memory (CMP-1). Implementations only *prepare*
/// a compression and never mutate anything: the runtime commits a `compressed` result
/// atomically with [`apply_compression`], so a failure can never leave a partial change.
#[async_trait]
pub trait ContextCompressor: Send + Sync {
    /// Decides and prepares.
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult;

    /// The prompt-token threshold, when the compressor has one (reported in events).
    fn threshold(&self) -> Option<u64> {
        None
    }
}

/// Commits a staged compression (CMP-5): the split index (at least 1, and leaving the
/// [`unanswered_tail`]), the pairing of both halves, the
/// episode id (non-blank, unused) and the summary (non-blank) are checked *before*
/// anything changes — whatever a compressor (a foreign one included) staged; then the
/// archived messages move (not copied) into a new episode and the episode is pushed. On
/// error nothing changed.
///
/// THINK-2: what preceded each kept answer's signed reasoning blocks has changed, so the
/// provider would no longer take them: they are dropped from the kept messages, except
/// the open tool cycle's (the last answer, when it made tool calls: its results, and the
/// user's next input after them, may follow it), which the provider requires before its
/// `tool_use` (README, "Thinking models").
/// The episode keeps the archived messages' blocks as they were.
pub fn apply_compression(state: &mut AgentState, staged: StagedCompression) -> Result<(), CompressReason> {
    archive(state, staged).map(|_| ())
}

/// [`apply_compression`]; true when it cleared the reasoning blocks of a kept answer.
pub(crate) fn archive(state: &mut AgentState, staged: StagedCompression) -> Result<bool, CompressReason> {
    let messages = &state.history.messages;
    let split = staged.split_index;
    if split == 0 || split > messages.len() - unanswered_tail(messages) {
        return Err(CompressReason::InvalidSplitIndex);
    }
    if !HistoryInvariants::tool_calls_paired(&messages[split..]) || !HistoryInvariants::tool_calls_paired(&messages[..split]) {
        return Err(CompressReason::PostCommitPairingViolation);
    }
    if staged.episode_id.trim().is_empty() || state.history.episodic_memories.iter().any(|e| e.id == staged.episode_id) {
        return Err(CompressReason::InvalidEpisodeId);
    }
    if staged.summary.trim().is_empty() {
        return Err(CompressReason::EmptySummary);
    }
    let archived: Vec<_> = state.history.messages.drain(..split).collect();
    let cleared = drop_unbound_thinking(&mut state.history.messages);
    state.history.episodic_memories.push(EpisodicMemory {
        id: staged.episode_id,
        summary: staged.summary,
        created_at_ms: staged.created_at_ms,
        message_count: archived.len(),
        archived_messages: Arc::new(archived),
    });
    Ok(cleared)
}

/// CMP-6: the first id from `next_id` that names no episode of `state` (an id generator
/// restarting with the process, as `SequentialIdGenerator` does, repeats ids: a repeated
/// one would be refused with `invalid_episode_id`); after as many tries as there are
/// episodes, and 16 more, one more id.
pub(crate) fn fresh_episode_id(state: &AgentState, next_id: impl Fn() -> String) -> String {
    let episodes = &state.history.episodic_memories;
    let fresh = crate::ids::fresh_id(episodes.len() + 16, &next_id, |id| episodes.iter().any(|e| e.id == id));
    fresh.unwrap_or_else(next_id)
}

/// CMP-4: how many of the latest messages every compression keeps whatever it was asked:
/// the last one when the model has yet to answer it (the user's input or tool results, as
/// before a model call in a run), so the next request still holds what it answers; none
/// when the history ends with the model's answer (or is empty).
pub(crate) fn unanswered_tail(messages: &[Message]) -> usize {
    usize::from(messages.last().is_some_and(|m| !matches!(m, Message::Assistant { .. })))
}

/// THINK-2: clears the reasoning blocks of every answer in `kept` but the open tool
/// cycle's — the last answer, when it made calls: its results may be followed by the
/// user's next input (a run stopped mid-cycle), and Anthropic still wants its blocks
/// before those lastmost results —; true when there were any.
pub(crate) fn drop_unbound_thinking(kept: &mut [Message]) -> bool {
    let last = kept.iter().rposition(|m| matches!(m, Message::Assistant { .. }));
    let open = last.filter(|&i| !kept[i].tool_calls().is_empty());
    let mut cleared = false;
    for (i, message) in kept.iter_mut().enumerate() {
        if let Message::Assistant { thinking, .. } = message {
            if Some(i) != open && !thinking.is_empty() {
                thinking.clear();
                cleared = true;
            }
        }
    }
    cleared
}

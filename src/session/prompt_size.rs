//! CMP-3, CMP-11, CMP-12: the next prompt's size as the compression trigger sees it.

use crate::history::AgentState;
use crate::compress::{count_message_tokens_for, Counting, PromptSizeSource, TokenCalibration, TokenCounts};

/// What the provider reported for the last request: its prompt tokens and how many
/// history messages that request carried. The next prompt is at least that count plus an
/// estimate of the messages appended since.
#[derive(Clone, Copy)]
pub(super) struct ProviderCount {
    pub(super) prompt_tokens: u64,
    pub(super) messages_sent: usize,
}

/// The next prompt's size (CMP-3, CMP-11, CMP-12) and which figure decided it: the
/// larger of the local estimate `counts` (calibrated for this model once the provider
/// reported a count) and the provider's count of the last request plus an estimate of
/// the messages appended since — a provider that counts tool schemas, system text or
/// CJK differently than the estimator still triggers compression on its own numbers,
/// and a calibration never takes the size below what the provider counted.
pub(super) fn prompt_size(
    count: Option<ProviderCount>,
    calibration: TokenCalibration,
    state: &AgentState,
    counts: TokenCounts,
    counting: Counting,
) -> (u64, PromptSizeSource) {
    let local = calibration.estimate(&counts);
    let source = if calibration.is_calibrated() { PromptSizeSource::Calibrated } else { PromptSizeSource::Estimate };
    let Some(count) = count else {
        return (local, source);
    };
    let messages = &state.history.messages;
    if count.messages_sent > messages.len() {
        return (local, source);
    }
    let since: TokenCounts = messages[count.messages_sent..].iter().map(|m| count_message_tokens_for(m, counting)).sum();
    let floor = count.prompt_tokens.saturating_add(calibration.estimate(&since));
    if floor > local {
        (floor, PromptSizeSource::Provider)
    } else {
        (local, source)
    }
}

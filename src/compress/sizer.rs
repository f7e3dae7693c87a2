//! 28.3 (CMP-10, CMP-12): how much summarizer input a text is — the calibrated estimate
//! of the summarizer's own model plus a safety margin. The static estimate runs 23–37 %
//! low on JSON (BENCHMARKS.md, CMP-12), so chunks sized with it overflow a summarizer
//! whose window is exactly `summarizer_max_input_tokens`: the deadlock CMP-10 exists to
//! prevent.

use super::calibration::{TokenCalibration, TokenCounts};
use super::estimate::{count_tokens, CharClasses};
use crate::history::AgentState;

/// Added on top of the calibrated estimate, in percent: a calibration is within about
/// ±10 % after a few calls (CMP-12's benchmark), and the text to size is not the mix it
/// learned from.
pub(super) const MARGIN_PERCENT: u64 = 15;

/// The margin for a model with no calibration yet (a separate summarizer model whose
/// usage never teaches the conversation's calibration, or a session's first
/// compression): the static estimate runs up to 37 % low on JSON, so 50 % keeps every
/// chunk inside the window (issue 40 item 3: `tests/it/cmp_10_chunks.rs`).
pub(super) const UNCALIBRATED_MARGIN_PERCENT: u64 = 50;

/// Sizes summarizer input for one model.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sizer {
    calibration: TokenCalibration,
    margin_percent: u64,
}

impl Sizer {
    /// The calibrated estimate of `model` as learned in `state`, plus [`MARGIN_PERCENT`];
    /// until the provider reported a count for it, the static estimate plus
    /// [`UNCALIBRATED_MARGIN_PERCENT`].
    pub(super) fn of(state: &AgentState, model: &str) -> Self {
        match state.token_calibration.get(model).copied() {
            Some(calibration) => Self { calibration, margin_percent: MARGIN_PERCENT },
            None => Self { calibration: TokenCalibration::default(), margin_percent: UNCALIBRATED_MARGIN_PERCENT },
        }
    }

    /// The static estimate plus [`MARGIN_PERCENT`] (no model calibrated yet).
    pub(super) fn uncalibrated() -> Self {
        Self { calibration: TokenCalibration::default(), margin_percent: MARGIN_PERCENT }
    }

    /// The static estimate, no margin (unit tests of the chunking itself).
    #[cfg(test)]
    pub(super) fn exact_static() -> Self {
        Self::default()
    }

    /// This sizer with a wider margin (the summarizer refused a chunk as too long): each
    /// step at least doubles what is added to the estimate.
    pub(super) fn wider(self) -> Self {
        Self { margin_percent: self.margin_percent.saturating_mul(2).saturating_add(50), ..self }
    }

    /// `tokens` of estimate with the margin on top.
    pub(super) fn with_margin(&self, tokens: u64) -> u64 {
        tokens.saturating_add(tokens.saturating_mul(self.margin_percent) / 100)
    }

    /// Tokens of `counts`: calibrated, with the margin.
    pub(super) fn counts(&self, counts: &TokenCounts) -> u64 {
        self.with_margin(self.calibration.estimate(counts))
    }

    /// Tokens of `text`: calibrated, with the margin.
    pub(super) fn text(&self, text: &str) -> u64 {
        self.counts(&count_tokens(text))
    }

    /// The largest char boundary whose prefix of `text` sizes at most `budget` tokens by
    /// [`text`](Self::text) (at least one character, so progress is certain). One pass.
    pub(super) fn cut_index(&self, text: &str, budget: u64) -> usize {
        let mut classes = CharClasses::default();
        let mut last_ok = 0;
        for (i, c) in text.char_indices() {
            classes.push(c);
            if self.counts(&classes.counts()) > budget {
                break;
            }
            last_ok = i + c.len_utf8();
        }
        last_ok.max(text.chars().next().map_or(0, char::len_utf8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmp_10_a_cut_sizes_within_its_budget_whatever_the_calibration() {
        let text = "{\"id\": 12345, \"temp\": 21.5} 法棍 😀 ".repeat(400);
        let mut state = AgentState::new("s");
        let mut calibration = TokenCalibration::default();
        for _ in 0..10 {
            calibration.observe(&count_tokens(&text), count_tokens(&text).total() * 3 / 2);
        }
        state.token_calibration.insert("m".into(), calibration);
        for sizer in [Sizer::exact_static(), Sizer::of(&state, "m"), Sizer::of(&state, "other")] {
            for budget in [40, 300, 2_000] {
                let cut = sizer.cut_index(&text, budget);
                assert!(sizer.text(&text[..cut]) <= budget, "{sizer:?} budget {budget}: {}", sizer.text(&text[..cut]));
                let next = text[cut..].chars().next().map_or(0, char::len_utf8);
                assert!(sizer.text(&text[..cut + next]) > budget, "{sizer:?} budget {budget}: the largest cut");
                assert!(cut > 0 && text.is_char_boundary(cut));
            }
        }
        assert!(Sizer::of(&state, "m").text(&text) > Sizer::of(&state, "other").text(&text), "the calibration and margin count");
    }
}

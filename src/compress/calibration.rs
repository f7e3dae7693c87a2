//! CMP-12: the static estimate split by script class, and a bounded per-model correction
//! of it learned from the provider's reported `prompt_tokens`.
//!
//! The static estimate (CMP-11) counts one token per CJK character, ASCII / 4 and other
//! characters / 2. Real tokenizers differ per class (DeepSeek, Qwen and o200k spend well
//! under one token per Chinese character; emoji cost more), so after each model call the
//! runtime compares what the provider counted with the estimate of the same request, per
//! class, and scales later estimates by what it learned. No tokenizer ships on device.

use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

use crate::history::calibration::{packed_in, CLASSES, FIT_LEN};
pub use crate::history::{TokenCalibration, TokenCalibrations};

/// The smallest correction factor a class can get: a provider cannot make the estimate
/// fall below a quarter of the static one.
pub const MIN_CALIBRATION_FACTOR: f64 = 0.25;
/// The largest correction factor a class can get.
pub const MAX_CALIBRATION_FACTOR: f64 = 4.0;

/// The static estimate of a text or request, split by script class: tokens of ASCII
/// text (its digits apart: tokenizers such as Qwen's spend a token per digit), of CJK
/// text (ideographs, kana, Hangul, full-width forms), of other text (emoji, other
/// scripts), and of message framing (role and separators; never scaled).
/// [`TokenCounts::total`] is the static estimate ([`crate::compress::estimate_tokens`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Estimated tokens of ASCII text other than digits (4 characters a token).
    pub ascii: u64,
    /// Estimated tokens of ASCII digits (4 characters a token, like other ASCII: a
    /// string's ASCII tokens are split between `ascii` and `digits` by their characters).
    pub digits: u64,
    /// Estimated tokens of CJK text (1 character a token).
    pub cjk: u64,
    /// Estimated tokens of other text (2 characters a token).
    pub other: u64,
    /// Estimated tokens of per-message framing.
    pub framing: u64,
    /// Estimated tokens of images, by the model family's rule (IMG-3): a class of its
    /// own, so a provider's counts correct it apart from the text.
    pub images: u64,
}

impl TokenCounts {
    /// The static estimate: the sum of all classes.
    pub fn total(&self) -> u64 {
        self.text().saturating_add(self.framing)
    }

    /// Estimated tokens of text (framing excluded).
    fn text(&self) -> u64 {
        self.classes().iter().fold(0u64, |a, c| a.saturating_add(*c))
    }

    /// The scaled classes, in [`TokenCalibration::factors`] order.
    fn classes(&self) -> [u64; CLASSES] {
        [self.ascii, self.digits, self.cjk, self.other, self.images]
    }
}

impl Add for TokenCounts {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            ascii: self.ascii.saturating_add(o.ascii),
            digits: self.digits.saturating_add(o.digits),
            cjk: self.cjk.saturating_add(o.cjk),
            other: self.other.saturating_add(o.other),
            framing: self.framing.saturating_add(o.framing),
            images: self.images.saturating_add(o.images),
        }
    }
}

impl AddAssign for TokenCounts {
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}

impl Sum for TokenCounts {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), Add::add)
    }
}

/// Each observation's weight in the fit decays by this factor per later observation.
const FORGETTING: f64 = 0.9;
/// Damping toward the static estimate (factor 1), relative to a class's own evidence:
/// a class seen little or only together with others stays near 1.
const DAMPING: f64 = 0.02;

/// `v` to a multiple of 10⁻⁶: such a number prints and parses back to the same `f64`
/// (serde_json's default parser is exact for it), so a resumed calibration is identical.
fn quantized(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// Beyond this a fit entry is not one observations make (they add size-weighted squares of
/// counts) but an import's: it could overflow when scaled, so the fit starts over.
const MAX_FIT: f64 = 1e300;

/// Index of (i, j), i ≤ j, in the packed upper triangle.
fn packed(i: usize, j: usize) -> usize {
    packed_in(CLASSES, i, j)
}

/// Solves `a x = b` (Gaussian elimination, partial pivoting); `None` when singular.
fn solve(mut a: [[f64; CLASSES]; CLASSES], mut b: [f64; CLASSES]) -> Option<[f64; CLASSES]> {
    for col in 0..CLASSES {
        let pivot = (col..CLASSES).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (pivot_row, pivot_b) = (a[col], b[col]);
        for row in col + 1..CLASSES {
            let m = a[row][col] / pivot_row[col];
            for (v, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *v -= m * p;
            }
            b[row] -= m * pivot_b;
        }
    }
    let mut x = [0.0; CLASSES];
    for row in (0..CLASSES).rev() {
        let tail: f64 = (row + 1..CLASSES).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// A factor as applied: within the bounds whatever was stored or imported.
fn bounded(f: f64) -> f64 {
    if f.is_finite() {
        f.clamp(MIN_CALIBRATION_FACTOR, MAX_CALIBRATION_FACTOR)
    } else {
        1.0
    }
}

impl TokenCalibration {
    /// The factors as applied (within the bounds), in [`TokenCounts`] order: ASCII,
    /// digits, CJK, other, images.
    pub fn factors(&self) -> [f64; CLASSES] {
        [self.ascii, self.digits, self.cjk, self.other, self.images].map(bounded)
    }

    /// True once a provider count was learned from: estimates are calibrated.
    pub fn is_calibrated(&self) -> bool {
        self.observations > 0
    }

    /// The calibrated estimate of `counts` (the static one until calibrated). O(1): the
    /// runtime keeps per-class counts of its history and scales them.
    pub fn estimate(&self, counts: &TokenCounts) -> u64 {
        if !self.is_calibrated() {
            return counts.total();
        }
        let text: f64 = self.factors().iter().zip(counts.classes()).map(|(f, c)| f * c as f64).sum();
        // Rounded up, less float noise (14/23 × 23 must stay 14); a float beyond u64
        // saturates in the cast.
        counts.framing.saturating_add((text - 1e-6).ceil().max(0.0) as u64)
    }

    /// Learns from one request whose static counts were `counts` and for which the
    /// provider reported `prompt_tokens`. Returns false (nothing learned) when the report
    /// is missing (0) or implausible: no factors within the bounds could explain it (a
    /// provider reporting 10⁹ for a short prompt). Otherwise the factors are refitted:
    /// weighted least squares over the observations so far (each weighted by its size,
    /// older ones decaying), damped toward 1 (a class seen little stays near the static
    /// estimate), each factor then kept within the bounds. Requests of different mixes
    /// tell the classes apart; one odd report among larger earlier ones moves little.
    pub fn observe(&mut self, counts: &TokenCounts, prompt_tokens: u64) -> bool {
        let text = counts.text();
        let target = prompt_tokens as f64 - counts.framing as f64;
        if prompt_tokens == 0 || text == 0 || target <= 0.0 {
            return false;
        }
        let implied = target / text as f64;
        if !(MIN_CALIBRATION_FACTOR..=MAX_CALIBRATION_FACTOR).contains(&implied) {
            return false;
        }
        let x = counts.classes().map(|c| c as f64);
        // Weight 1/size: squared errors grow with size², so larger requests count more,
        // by their size, not its square.
        let w = 1.0 / target;
        if self.fit.iter().any(|v| !v.is_finite() || v.abs() > MAX_FIT) {
            self.fit = [0.0; FIT_LEN];
        }
        for v in &mut self.fit {
            *v *= FORGETTING;
        }
        let moments = CLASSES * (CLASSES + 1) / 2;
        for i in 0..CLASSES {
            for j in i..CLASSES {
                self.fit[packed(i, j)] += w * x[i] * x[j];
            }
            self.fit[moments + i] += w * x[i] * target;
        }
        let mut a: [[f64; CLASSES]; CLASSES] =
            std::array::from_fn(|i| std::array::from_fn(|j| self.fit[packed(i.min(j), i.max(j))]));
        let mut b = [0.0; CLASSES];
        for i in 0..CLASSES {
            // Damping toward 1: (A + D) f = m + D·1.
            let d = DAMPING * a[i][i] + 1e-9;
            a[i][i] += d;
            b[i] = self.fit[moments + i] + d;
        }
        if let Some(f) = solve(a, b) {
            [self.ascii, self.digits, self.cjk, self.other, self.images] = f.map(|v| quantized(bounded(v)));
        }
        self.fit = self.fit.map(quantized);
        self.observations = self.observations.saturating_add(1);
        true
    }
}

/// Which figure decided a prompt's size (CMP-12), as the `model_request` event reports
/// it: why compression fired, or did not.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptSizeSource {
    /// The static local estimate (no provider count learned from yet for this model).
    Estimate,
    /// The local estimate scaled by the model's calibration.
    Calibrated,
    /// The provider's count of the previous request plus an estimate of the messages
    /// appended since: larger than the local estimate.
    Provider,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(ascii: u64, cjk: u64, other: u64) -> TokenCounts {
        TokenCounts { ascii, digits: 0, cjk, other, framing: 8, images: 0 }
    }

    #[test]
    fn factors_stay_in_bounds_and_wild_reports_are_ignored() {
        let mut c = TokenCalibration::default();
        for report in [0, 1, 5, 1_000_000_000, u64::MAX] {
            assert!(!c.observe(&counts(100, 100, 0), report), "report {report}");
        }
        assert!(!c.is_calibrated());
        // Reports at the edge of plausibility, repeated, push the factors to the bounds only.
        for _ in 0..50 {
            assert!(c.observe(&counts(100, 100, 0), 8 + 800));
        }
        assert!(c.ascii <= MAX_CALIBRATION_FACTOR && c.cjk <= MAX_CALIBRATION_FACTOR);
        assert!(c.estimate(&counts(100, 100, 100)) <= 8 + 1200);
        for _ in 0..50 {
            assert!(c.observe(&counts(100, 100, 0), 8 + 50));
        }
        assert!(c.estimate(&counts(100, 100, 100)) >= 8 + 75);
    }

    #[test]
    fn a_calibration_round_trips_through_json_bit_identical() {
        let mut cal = TokenCalibration::default();
        let mut seed = 7u64;
        for _ in 0..500 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let pick = |shift: u32| (seed >> shift) % 5000;
            let c = TokenCounts { ascii: pick(1), digits: pick(13) / 10, cjk: pick(25), other: pick(37) / 7, framing: 40, images: pick(7) / 3 };
            cal.observe(&c, 40 + (c.total() - 40) * (50 + pick(49) % 100) / 100);
            let json = serde_json::to_string(&cal).unwrap_or_default();
            let back: TokenCalibration = serde_json::from_str(&json).unwrap_or_default();
            assert_eq!(back, cal, "{json}");
        }
        assert!(cal.observations > 400);
    }

    #[test]
    fn mixed_requests_separate_the_classes() {
        // A provider at 0.6 per CJK estimate token and 1.2 per ASCII one.
        let truth = |c: &TokenCounts| c.framing + (0.6 * c.cjk as f64 + 1.2 * c.ascii as f64) as u64;
        let mut cal = TokenCalibration::default();
        for (a, k) in [(300, 100), (100, 300), (250, 200), (120, 500), (400, 90), (200, 200)] {
            let c = counts(a, k, 0);
            cal.observe(&c, truth(&c));
        }
        assert!((cal.cjk - 0.6).abs() < 0.08, "{cal:?}");
        assert!((cal.ascii - 1.2).abs() < 0.12, "{cal:?}");
    }

    /// IMG-3: images are a class of their own — a provider counting photos at half the
    /// family rule's figure corrects the image factor, not the text's.
    #[test]
    fn img_3_provider_counts_correct_the_image_class() {
        let truth = |c: &TokenCounts| c.framing + c.ascii + c.images / 2;
        let mut cal = TokenCalibration::default();
        for (ascii, images) in [(300, 0), (100, 1105), (250, 765), (120, 2000), (400, 0), (80, 765)] {
            let c = TokenCounts { ascii, images, framing: 8, ..TokenCounts::default() };
            assert!(cal.observe(&c, truth(&c)));
        }
        assert!((cal.images - 0.5).abs() < 0.08, "{cal:?}");
        assert!((cal.ascii - 1.0).abs() < 0.1, "{cal:?}");
        let photo = TokenCounts { images: 1000, framing: 4, ..TokenCounts::default() };
        assert!((cal.estimate(&photo) as i64 - 504).abs() < 80, "{}", cal.estimate(&photo));
    }

    /// A calibration stored before images (4 classes, a fit of 14 values) loads: its
    /// factors and fit carry over, the image factor starts at 1.
    #[test]
    fn img_3_a_calibration_stored_before_images_loads() {
        let old = r#"{"ascii":1.2,"digits":1.0,"cjk":0.6,"other":1.5,"observations":3,"fit":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]}"#;
        let cal: TokenCalibration = serde_json::from_str(old).unwrap_or_default();
        assert_eq!((cal.ascii, cal.cjk, cal.images, cal.observations), (1.2, 0.6, 1.0, 3));
        // (0,0) (0,3) (3,3) and the moments land where the 5-class layout keeps them.
        assert_eq!(cal.fit[packed(0, 0)], 1.0);
        assert_eq!(cal.fit[packed(0, 3)], 4.0);
        assert_eq!(cal.fit[packed(3, 3)], 10.0);
        assert_eq!(cal.fit[packed(0, 4)], 0.0);
        assert_eq!(&cal.fit[15..19], &[11.0, 12.0, 13.0, 14.0]);
        let text = TokenCounts { ascii: 100, framing: 4, ..TokenCounts::default() };
        assert_eq!(cal.estimate(&text), 4 + 120);
    }
}

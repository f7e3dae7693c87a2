//! CMP-12's record: a per-model correction of the static token estimate, persisted with
//! the session (`AgentState.token_calibration`, the store's `sessions.token_calibration`).
//! How it is learned and applied lives in `compress/calibration.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A per-script-class correction of the static estimate for one model (CMP-12): each
/// class's estimated tokens are multiplied by its factor, each factor kept within
/// [`MIN_CALIBRATION_FACTOR`, `MAX_CALIBRATION_FACTOR`] (0.25 to 4). Until a first
/// observation it is the identity (the static estimate stands).
///
/// ```
/// use arkagent::compress::{count_tokens, TokenCalibration};
/// let text = "你好，今天北京的天气怎么样？我想去颐和园散步。";
/// let mut calibration = TokenCalibration::default();
/// assert_eq!(calibration.estimate(&count_tokens(text)), 23); // static: one per character
/// assert!(calibration.observe(&count_tokens(text), 14)); // the provider counted 14
/// assert_eq!(calibration.estimate(&count_tokens(text)), 15); // 14, damped toward 23
/// assert!(!calibration.observe(&count_tokens(text), 1_000_000_000)); // implausible: ignored
/// assert_eq!(calibration.estimate(&count_tokens(text)), 15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenCalibration {
    /// Factor for ASCII text other than digits.
    pub ascii: f64,
    /// Factor for ASCII digits.
    #[serde(default = "one")]
    pub digits: f64,
    /// Factor for CJK text.
    pub cjk: f64,
    /// Factor for other text.
    pub other: f64,
    /// Factor for images (IMG-3): the family rule's count scaled like a script class.
    #[serde(default = "one")]
    pub images: f64,
    /// Provider counts learned from (implausible ones are not counted).
    pub observations: u32,
    /// What the factors are fitted to: the decayed, size-weighted sums of the least-squares
    /// fit over the observations (the Gram matrix's upper triangle, row by row, then the
    /// moments). Kept so that later requests refine the fit instead of replacing it.
    /// (A calibration stored before images had 4 classes; its fit is read into the
    /// 5-class layout, the image class empty.)
    #[serde(default = "empty_fit", deserialize_with = "fit_of_any_version")]
    pub fit: [f64; FIT_LEN],
}

fn one() -> f64 {
    1.0
}

/// Classes with a factor: ASCII, digits, CJK, other, images.
pub(crate) const CLASSES: usize = 5;
/// The upper triangle of a 5 × 5 matrix, then a 5-vector.
pub(crate) const FIT_LEN: usize = CLASSES * (CLASSES + 1) / 2 + CLASSES;

/// Classes before images (a stored calibration's fit of 4 × 5 / 2 + 4 = 14 values).
const OLD_CLASSES: usize = 4;

fn empty_fit() -> [f64; FIT_LEN] {
    [0.0; FIT_LEN]
}

/// Index of (i, j), i ≤ j, in the packed upper triangle of an n × n matrix.
pub(crate) fn packed_in(n: usize, i: usize, j: usize) -> usize {
    i * n - i * (i + 1) / 2 + j
}

/// A stored fit: the current layout as it is, the 4-class one moved into it (the image
/// row and column empty), anything else forgotten (the factors still stand).
fn fit_of_any_version<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<[f64; FIT_LEN], D::Error> {
    let values = Vec::<f64>::deserialize(deserializer)?;
    let mut fit = [0.0; FIT_LEN];
    if values.len() == FIT_LEN {
        fit.copy_from_slice(&values);
    } else if values.len() == OLD_CLASSES * (OLD_CLASSES + 1) / 2 + OLD_CLASSES {
        let (old_moments, new_moments) = (OLD_CLASSES * (OLD_CLASSES + 1) / 2, CLASSES * (CLASSES + 1) / 2);
        for i in 0..OLD_CLASSES {
            for j in i..OLD_CLASSES {
                fit[packed_in(CLASSES, i, j)] = values[packed_in(OLD_CLASSES, i, j)];
            }
            fit[new_moments + i] = values[old_moments + i];
        }
    }
    Ok(fit)
}

impl Default for TokenCalibration {
    fn default() -> Self {
        Self { ascii: 1.0, digits: 1.0, cjk: 1.0, other: 1.0, images: 1.0, observations: 0, fit: [0.0; FIT_LEN] }
    }
}

/// A session's calibrations, one per model name (CMP-12); persisted with the session.
pub type TokenCalibrations = BTreeMap<String, TokenCalibration>;


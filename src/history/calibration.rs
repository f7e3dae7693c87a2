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
    /// Provider counts learned from (implausible ones are not counted).
    pub observations: u32,
    /// What the factors are fitted to: the decayed, size-weighted sums of the least-squares
    /// fit over the observations (the Gram matrix's upper triangle, row by row, then the
    /// moments). Kept so that later requests refine the fit instead of replacing it.
    #[serde(default)]
    pub fit: [f64; FIT_LEN],
}

fn one() -> f64 {
    1.0
}

/// Classes with a factor: ASCII, digits, CJK, other.
pub(crate) const CLASSES: usize = 4;
/// The upper triangle of a 4 × 4 matrix, then a 4-vector.
pub(crate) const FIT_LEN: usize = CLASSES * (CLASSES + 1) / 2 + CLASSES;

impl Default for TokenCalibration {
    fn default() -> Self {
        Self { ascii: 1.0, digits: 1.0, cjk: 1.0, other: 1.0, observations: 0, fit: [0.0; FIT_LEN] }
    }
}

/// A session's calibrations, one per model name (CMP-12); persisted with the session.
pub type TokenCalibrations = BTreeMap<String, TokenCalibration>;


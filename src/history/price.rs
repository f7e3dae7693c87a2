//! The price a host sets for a model (COST-2) and what one call cost at it. No price
//! lives in the library: without a host price nothing is priced, and a missing cost is
//! never reported as 0.
//!
//! A price per 1M tokens is resolved to a millionth of the currency unit, so one token
//! costs a whole number of 10⁻¹² units; a call's cost is rounded once, to the nearest
//! nano (half up).

use serde::{Deserialize, Serialize};

use super::{Cost, ModelUsage};

/// Largest price accepted, per 1M tokens (guards against a unit mistake; 10⁹ of any
/// currency per 1M tokens is above every published price).
pub const MAX_PRICE_PER_MILLION: f64 = 1e9;

/// Longest currency code accepted, in bytes.
pub const MAX_CURRENCY_LEN: usize = 16;

/// What a model costs, per 1M tokens, in one currency (COST-2). Set by the host on
/// [`ModelConfig::price`](crate::llm::ModelConfig::price); the library has no price of
/// its own.
///
/// JSON: `{"currency":"USD","input_per_million":0.27,"cached_input_per_million":0.07,
/// "output_per_million":1.1,"cache_write_per_million"?:0.3375}`; unknown keys are rejected.
///
/// A call is priced as: prompt tokens served from the cache (`cached_tokens`) at
/// `cached_input_per_million`; prompt tokens written to the cache
/// (`cache_write_tokens`, Anthropic's cache creation) at `cache_write_per_million` when
/// that is set; the rest of the prompt at `input_per_million`; completion tokens
/// (reasoning included, as providers bill them) at `output_per_million`.
///
/// ```
/// use arkagent::history::{ModelPrice, ModelUsage};
/// let price = ModelPrice::new("USD", 0.27, 0.07, 1.10);
/// let usage = ModelUsage { prompt_tokens: 1_000, cached_tokens: Some(800), completion_tokens: 100, ..Default::default() };
/// // 200 × 0.27 + 800 × 0.07 + 100 × 1.10 per 1M tokens = 0.00022 USD
/// assert_eq!(price.cost_of(&usage).nanos, 220_000);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Currency code, non-empty, without spaces, at most 16 bytes (ISO 4217 such as
    /// `"USD"` or `"CNY"` recommended). Totals keep one sum per currency as written.
    pub currency: String,
    /// Uncached prompt tokens, per 1M tokens.
    pub input_per_million: f64,
    /// Prompt tokens served from the provider's prompt cache, per 1M tokens.
    pub cached_input_per_million: f64,
    /// Completion tokens (reasoning included), per 1M tokens.
    pub output_per_million: f64,
    /// Prompt tokens written to the provider's cache (Anthropic's cache creation), per
    /// 1M tokens; absent: they are priced as uncached input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_per_million: Option<f64>,
}

impl ModelPrice {
    /// A price without a cache-write rate.
    pub fn new(currency: impl Into<String>, input_per_million: f64, cached_input_per_million: f64, output_per_million: f64) -> Self {
        Self { currency: currency.into(), input_per_million, cached_input_per_million, output_per_million, cache_write_per_million: None }
    }

    /// The same price with a cache-write rate.
    pub fn with_cache_write(mut self, cache_write_per_million: f64) -> Self {
        self.cache_write_per_million = Some(cache_write_per_million);
        self
    }

    /// Checks the price: a currency code (non-empty, no whitespace or control
    /// characters, at most 16 bytes) and every rate finite, not negative and at most
    /// 10⁹. The runtime reports a failure as `invalid_config`.
    pub fn validate(&self) -> Result<(), String> {
        let code = &self.currency;
        if code.is_empty() || code.len() > MAX_CURRENCY_LEN || code.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("price currency {code:?} must be a code of 1 to {MAX_CURRENCY_LEN} bytes without spaces"));
        }
        let rates = [
            ("input_per_million", Some(self.input_per_million)),
            ("cached_input_per_million", Some(self.cached_input_per_million)),
            ("output_per_million", Some(self.output_per_million)),
            ("cache_write_per_million", self.cache_write_per_million),
        ];
        for (name, rate) in rates {
            if let Some(rate) = rate.filter(|r| !(r.is_finite() && (0.0..=MAX_PRICE_PER_MILLION).contains(r))) {
                return Err(format!("price {name} must be a finite number from 0 to {MAX_PRICE_PER_MILLION}, got {rate}"));
            }
        }
        Ok(())
    }

    /// What `usage` cost at this price, rounded to the nearest nano. Counts are clamped
    /// so that no prompt token is priced twice (cached ≤ prompt, written ≤ the uncached
    /// rest); arithmetic saturates.
    pub fn cost_of(&self, usage: &ModelUsage) -> Cost {
        let prompt = usage.prompt_tokens;
        let cached = usage.cached_tokens.unwrap_or(0).min(prompt);
        let written = match self.cache_write_per_million {
            Some(_) => usage.cache_write_tokens.unwrap_or(0).min(prompt - cached),
            None => 0,
        };
        let uncached = prompt - cached - written;
        // Tokens × micro-units per 1M tokens = 10⁻¹² units ("picos").
        let picos = [
            (uncached, self.input_per_million),
            (cached, self.cached_input_per_million),
            (written, self.cache_write_per_million.unwrap_or(0.0)),
            (usage.completion_tokens, self.output_per_million),
        ]
        .into_iter()
        .fold(0u128, |acc, (tokens, rate)| acc.saturating_add(u128::from(tokens).saturating_mul(micros(rate))));
        let nanos = picos.saturating_add(500) / 1_000;
        Cost { currency: self.currency.clone(), nanos: u64::try_from(nanos).unwrap_or(u64::MAX) }
    }
}

/// A rate per 1M tokens in millionths of the currency unit (rounded; an invalid rate,
/// which [`ModelPrice::validate`] refuses, counts as 0).
fn micros(rate: f64) -> u128 {
    if rate.is_finite() && rate > 0.0 {
        (rate * 1e6).round() as u128
    } else {
        0
    }
}

#[cfg(test)]
#[path = "price_tests.rs"]
mod tests;

//! Retry policy for model calls (LLM-3): exponential backoff with full jitter, bounded
//! attempts, `Retry-After` honoured but capped.

use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// Default attempts per model call (the first try included).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Default backoff before the first retry, before jitter.
pub const DEFAULT_INITIAL_BACKOFF_MS: u64 = 500;
/// Default cap of one backoff (and of a server's `Retry-After`).
pub const DEFAULT_MAX_BACKOFF_MS: u64 = 8_000;

/// How a failed model call is retried. Only retryable classes are retried (rate limit,
/// server error, timeout, transport; see [`LlmError::is_retryable`]), never after a
/// streamed answer has started reaching the caller, and never past cancellation.
///
/// Backoff before retry `n` (0-based) is a uniformly random value in
/// `0..=min(max_backoff_ms, initial_backoff_ms * 2^n)` ("full jitter"). A server's
/// `Retry-After` replaces it, capped at `max_backoff_ms`.
///
/// Deserializes from `{"max_attempts"?, "initial_backoff_ms"?, "max_backoff_ms"?}`; missing
/// fields take the defaults (3, 500, 8000).
///
/// ```
/// use arkagent::llm::RetryPolicy;
/// let p: RetryPolicy = serde_json::from_str(r#"{"max_attempts": 5}"#).unwrap();
/// assert_eq!((p.max_attempts, p.initial_backoff_ms, p.max_backoff_ms), (5, 500, 8000));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in total, the first included; `0` and `1` both mean "no retry".
    pub max_attempts: u32,
    /// Backoff ceiling before the first retry; doubles per retry.
    pub initial_backoff_ms: u64,
    /// Upper bound of any single wait, `Retry-After` included.
    pub max_backoff_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            initial_backoff_ms: DEFAULT_INITIAL_BACKOFF_MS,
            max_backoff_ms: DEFAULT_MAX_BACKOFF_MS,
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// The exponential ceiling before retry `retry` (0-based), before jitter.
    pub fn backoff_ceiling_ms(&self, retry: u32) -> u64 {
        let factor = 1u64.checked_shl(retry.min(63)).unwrap_or(u64::MAX);
        self.initial_backoff_ms.saturating_mul(factor).min(self.max_backoff_ms)
    }

    /// How long to wait before retry `retry` (0-based) after `error`: the server's
    /// `Retry-After` when it sent one (capped), otherwise full-jitter backoff.
    pub fn delay_ms(&self, error: &LlmError, retry: u32, jitter: &mut Jitter) -> u64 {
        match error.retry_after_ms() {
            Some(ms) => ms.min(self.max_backoff_ms),
            None => jitter.below_inclusive(self.backoff_ceiling_ms(retry)),
        }
    }
}

/// A small deterministic random source for backoff jitter (xorshift64*). Not for anything
/// security related. Seeded per request (see [`Jitter::for_request`]) or explicitly, so
/// tests are reproducible and no `rand` dependency is needed.
#[derive(Debug, Clone)]
pub struct Jitter {
    state: u64,
}

impl Jitter {
    /// A generator with this seed (any value; 0 is remapped).
    pub fn seeded(seed: u64) -> Self {
        // splitmix64 scrambles weak seeds (0, 1, 2…) into well-mixed states.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Self { state: if z == 0 { 0x2545_F491_4F6C_DD1D } else { z } }
    }

    /// A generator seeded from the request's URL and body (FNV-1a), so two different
    /// requests retrying at once do not wake up in lockstep.
    pub fn for_request(url: &str, body: &str) -> Self {
        let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
        for byte in url.bytes().chain([0u8]).chain(body.bytes()) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
        }
        Self::seeded(hash)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..=max`.
    pub fn below_inclusive(&mut self, max: u64) -> u64 {
        match max.checked_add(1) {
            Some(bound) => self.next_u64() % bound,
            None => self.next_u64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llm_3_backoff_ceiling_doubles_and_is_capped() {
        let p = RetryPolicy::default();
        let ceilings: Vec<u64> = (0..6).map(|n| p.backoff_ceiling_ms(n)).collect();
        assert_eq!(ceilings, [500, 1000, 2000, 4000, 8000, 8000]);
        assert_eq!(p.backoff_ceiling_ms(200), 8000);
    }

    #[test]
    fn llm_3_full_jitter_is_deterministic_per_seed_and_within_bounds() {
        let p = RetryPolicy::default();
        let err = LlmError::Server { status: 503, retry_after_ms: None };
        let run = |seed| {
            let mut j = Jitter::seeded(seed);
            (0..64).map(|n| p.delay_ms(&err, n % 6, &mut j)).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        for (n, d) in run(7).iter().enumerate() {
            assert!(*d <= p.backoff_ceiling_ms(n as u32 % 6));
        }
        // Full jitter spreads over the range rather than clustering at the ceiling.
        let mut j = Jitter::seeded(1);
        let samples: Vec<u64> = (0..1000).map(|_| j.below_inclusive(1000)).collect();
        assert!(samples.iter().any(|s| *s < 250) && samples.iter().any(|s| *s > 750));
    }

    #[test]
    fn llm_3_retry_after_overrides_backoff_and_is_capped() {
        let p = RetryPolicy { max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 5_000 };
        let mut j = Jitter::seeded(0);
        let limited = LlmError::RateLimited { retry_after_ms: Some(2_000) };
        assert_eq!(p.delay_ms(&limited, 0, &mut j), 2_000);
        let long = LlmError::RateLimited { retry_after_ms: Some(3_600_000) };
        assert_eq!(p.delay_ms(&long, 0, &mut j), 5_000);
    }

    #[test]
    fn llm_3_request_seed_depends_on_the_request() {
        let a = Jitter::for_request("u", "a").next_u64();
        assert_eq!(a, Jitter::for_request("u", "a").next_u64());
        assert_ne!(a, Jitter::for_request("u", "b").next_u64());
    }
}

//! The injectable id generator and clock (ground: every layer may use them).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Produces unique ids (run ids, session ids, missing tool call ids). Injectable so
/// tests are deterministic (CORE-6).
pub trait IdGenerator: Send + Sync {
    /// A new id.
    fn next_id(&self) -> String;
}

/// Random 64-bit hex ids (seeded by the process's hash randomness), unique within a
/// process by construction of the counter.
#[derive(Debug, Default)]
pub struct DefaultIdGenerator {
    counter: AtomicU64,
    seed: RandomState,
}

impl IdGenerator for DefaultIdGenerator {
    fn next_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut h = self.seed.build_hasher();
        h.write_u64(n);
        format!("{:016x}{:04x}", h.finish(), n & 0xffff)
    }
}

/// `prefix-1`, `prefix-2`, … for tests. It starts again at 1 in every process: in a
/// session resumed from a store, the run ids and (for the default compressor) episode ids
/// it already has are skipped.
#[derive(Debug)]
pub struct SequentialIdGenerator {
    prefix: String,
    counter: AtomicU64,
}

impl SequentialIdGenerator {
    /// Starts at `prefix-1`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Self { prefix: prefix.into(), counter: AtomicU64::new(0) }
    }
}

impl IdGenerator for SequentialIdGenerator {
    fn next_id(&self) -> String {
        format!("{}-{}", self.prefix, self.counter.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// The first of `tries` ids drawn from `next_id` that `taken` does not hold: a generator
/// restarting with the process, as [`SequentialIdGenerator`] does, repeats ids (CHAT-1
/// run ids, CMP-6 episode ids).
pub(crate) fn fresh_id(tries: usize, next_id: impl Fn() -> String, taken: impl Fn(&str) -> bool) -> Option<String> {
    (0..tries).map(|_| next_id()).find(|id| !taken(id))
}

/// Wall-clock time, injectable (CORE-6).
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
    }
}

/// A clock that only moves when told to, for tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self { now: AtomicU64::new(start_ms) }
    }
    /// Moves the clock forward.
    pub fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::Relaxed)
    }
}

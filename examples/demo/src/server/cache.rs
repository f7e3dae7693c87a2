//! The simulated model's prompt cache (COST-2's demo): like a real provider's automatic
//! prefix cache, a request's leading bytes that an earlier request already sent are
//! "cached". Counted in characters / 4, like the rest of the simulated usage.

use std::sync::Mutex;

/// Earlier request bodies kept for prefix matching.
const KEPT: usize = 16;

/// The bodies seen so far (the last [`KEPT`]).
#[derive(Debug, Default)]
pub struct PromptCache {
    bodies: Mutex<Vec<String>>,
}

impl PromptCache {
    /// The cached tokens of `body`: its longest common prefix with a kept body, in
    /// characters / 4 (never more than `prompt_tokens`); then keeps `body`.
    pub fn hit(&self, body: &str, prompt_tokens: u64) -> u64 {
        let mut bodies = self.bodies.lock().unwrap_or_else(|p| p.into_inner());
        let common = bodies
            .iter()
            .map(|b| b.chars().zip(body.chars()).take_while(|(x, y)| x == y).count())
            .max()
            .unwrap_or(0);
        if bodies.len() == KEPT {
            bodies.remove(0);
        }
        bodies.push(body.to_owned());
        (common as u64 / 4).min(prompt_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_2_a_request_extending_an_earlier_one_is_cached_up_to_there() {
        let cache = PromptCache::default();
        assert_eq!(cache.hit("abcdefgh", 2), 0);
        assert_eq!(cache.hit("abcdefghijkl", 3), 2);
        assert_eq!(cache.hit("xyz", 1), 0);
    }
}

//! COST-5: a simulated provider that applies DeepSeek's documented prefix-cache rules
//! (api-docs.deepseek.com, "Context Caching"): a request hits the cache only on a whole
//! stored *cache prefix unit*; units are stored at the end of each request's input and
//! at the end of the model's output, where the service detects a prefix common to
//! several requests (a unit for later requests), and at fixed token intervals inside
//! long inputs and outputs. Tokens come from a real tokenizer; a request is rendered as
//! a token sequence the way a chat template renders it: a role marker and the tokens of
//! each message (the tool definitions right after the system prompt).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::tokenizer::Tokenizer;

/// Marker tokens (above any vocabulary): one per role, and the tool definitions.
const BOS: u32 = u32::MAX;
const SYSTEM: u32 = u32::MAX - 1;
const USER: u32 = u32::MAX - 2;
const ASSISTANT: u32 = u32::MAX - 3;
const TOOL: u32 = u32::MAX - 4;
const TOOLS: u32 = u32::MAX - 5;

/// A common prefix shorter than this is not worth a unit.
const MIN_DETECTED: usize = 64;
/// Earlier sequences compared for common prefixes and for what is new.
const RECENT: usize = 8;

/// What one request was: its kind, sizes and what the cache did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Served {
    pub kind: Kind,
    pub prompt: u64,
    pub hit: u64,
    pub output: u64,
    /// Prompt tokens no earlier request or answer started with (the least any cache
    /// must miss).
    pub new: u64,
}

/// Which call a request is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kind {
    /// A call of the run loop.
    #[default]
    Main,
    /// The first call of the run loop after a compression was committed.
    FirstAfterCompression,
    /// A summarizer call.
    Summarizer,
}

/// The simulated provider's cache and tokenizer state.
pub struct Provider {
    tokenizer: Box<dyn Tokenizer>,
    tokens: HashMap<String, Arc<[u32]>>,
    units: HashSet<(usize, u64)>,
    interval: usize,
    /// The last [`RECENT`] input+output sequences, and the latest per first segment.
    recent: Vec<Arc<[u32]>>,
    by_start: HashMap<u64, Arc<[u32]>>,
}

/// `h[i]`: hash of the first `i` tokens.
fn prefix_hashes(seq: &[u32]) -> Vec<u64> {
    let mut h = Vec::with_capacity(seq.len() + 1);
    let mut acc = 0xcbf2_9ce4_8422_2325u64;
    h.push(acc);
    for &t in seq {
        acc = acc.wrapping_mul(0x0000_0100_0000_01b3).wrapping_add(u64::from(t) + 1);
        h.push(acc);
    }
    h
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Provider {
    /// A provider counting with `tokenizer`, storing interval units every `interval` tokens.
    pub fn new(tokenizer: Box<dyn Tokenizer>, interval: usize) -> Self {
        Self { tokenizer, tokens: HashMap::new(), units: HashSet::new(), interval, recent: Vec::new(), by_start: HashMap::new() }
    }

    /// Forgets the cache (a new session starts cold); keeps the tokenizer's memo.
    pub fn reset(&mut self) {
        self.units.clear();
        self.recent.clear();
        self.by_start.clear();
    }

    /// The tokenizer's name.
    pub fn tokenizer_name(&self) -> &str {
        self.tokenizer.name()
    }

    /// Token count of `text` (memoized).
    pub fn count(&mut self, text: &str) -> u64 {
        self.encode(&[text.to_owned()]);
        self.tokens[text].len() as u64
    }

    fn encode(&mut self, texts: &[String]) {
        let missing: Vec<&str> = texts.iter().map(String::as_str).filter(|t| !self.tokens.contains_key(*t)).collect();
        if missing.is_empty() {
            return;
        }
        let encoded = self.tokenizer.encode_many(&missing);
        for (text, ids) in missing.iter().zip(encoded) {
            self.tokens.insert((*text).to_owned(), ids.into());
        }
    }

    /// A message as the template renders it: role marker, then its texts.
    fn message_parts(message: &Value) -> (u32, Vec<String>) {
        let role = match message["role"].as_str() {
            Some("system") => SYSTEM,
            Some("user") => USER,
            Some("assistant") => ASSISTANT,
            _ => TOOL,
        };
        let mut texts = Vec::new();
        if let Some(id) = message["tool_call_id"].as_str() {
            texts.push(id.to_owned());
        }
        // THINK-2: reasoning sent back is rendered before the answer, as DeepSeek does.
        if let Some(reasoning) = message["reasoning_content"].as_str() {
            texts.push(reasoning.to_owned());
        }
        if let Some(content) = message["content"].as_str() {
            texts.push(content.to_owned());
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            texts.push(format!("{}({})", call["function"]["name"].as_str().unwrap_or(""), call["function"]["arguments"].as_str().unwrap_or("")));
        }
        (role, texts)
    }

    /// The request's token sequence: BOS, the messages, the tools after the first system message.
    pub fn render(&mut self, body: &Value, answer: Option<&Value>) -> (Vec<u32>, usize) {
        let mut parts: Vec<(u32, Vec<String>)> = Vec::new();
        let tools = body.get("tools").filter(|t| t.is_array()).map(|t| t.to_string());
        for (i, m) in body["messages"].as_array().into_iter().flatten().enumerate() {
            parts.push(Self::message_parts(m));
            if i == 0 {
                if let Some(tools) = &tools {
                    parts.push((TOOLS, vec![tools.clone()]));
                }
            }
        }
        let input_parts = parts.len();
        if let Some(answer) = answer {
            parts.push(Self::message_parts(answer));
        }
        let all: Vec<String> = parts.iter().flat_map(|(_, t)| t.iter().cloned()).collect();
        self.encode(&all);
        let mut seq = vec![BOS];
        let mut input_len = 1;
        for (i, (role, texts)) in parts.iter().enumerate() {
            seq.push(*role);
            for t in texts {
                seq.extend_from_slice(&self.tokens[t.as_str()]);
            }
            if i + 1 == input_parts {
                input_len = seq.len();
            }
        }
        (seq, input_len)
    }

    /// Serves one request: `seq` (input then answer), `input_len` tokens of input;
    /// `resent` of its tokens re-render content the provider has seen (a summarizer's
    /// transcript), so they are not new to it though no earlier request starts with them.
    pub fn serve(&mut self, kind: Kind, seq: Vec<u32>, input_len: usize, resent: u64) -> Served {
        let hashes = prefix_hashes(&seq);
        let input = &seq[..input_len];
        let hit = (1..=input_len).rev().find(|&l| self.units.contains(&(l, hashes[l]))).unwrap_or(0);
        // Common prefixes with what the provider has seen recently (and the latest
        // request that began the same way: a summarizer's own prompt).
        let start = hashes[input_len.min(3)];
        let seen = self.recent.iter().chain(self.by_start.get(&start));
        let shared = seen.map(|s| common_prefix(input, s)).max().unwrap_or(0);
        if shared >= MIN_DETECTED && shared > hit {
            self.units.insert((shared, hashes[shared]));
        }
        // Units at the end of the input, of the output, and every `interval` tokens.
        self.units.insert((input_len, hashes[input_len]));
        self.units.insert((seq.len(), hashes[seq.len()]));
        for l in (self.interval..seq.len()).step_by(self.interval.max(1)) {
            self.units.insert((l, hashes[l]));
        }
        let seq: Arc<[u32]> = seq.into();
        if self.recent.len() == RECENT {
            self.recent.remove(0);
        }
        self.recent.push(Arc::clone(&seq));
        self.by_start.insert(start, Arc::clone(&seq));
        Served {
            kind,
            prompt: input_len as u64,
            hit: hit as u64,
            output: (seq.len() - input_len) as u64,
            new: ((input_len - shared.max(hit).min(input_len)) as u64).saturating_sub(resent),
        }
    }
}

//! PERF-2, PERF-7: the request body, encoded once per message and lent to the transport.
//! The bytes are the model's wire format's (WIRE-1: a `BodyWriter` from the config's
//! protocol); this file only decides when to start over, what to append and when to
//! close and reopen, never how a message looks on the wire.

use std::collections::HashSet;
use std::sync::Arc;

use crate::history::{AgentState, Message};
use crate::llm::{protocol_of, BodyWriter, ChatRequest, ModelConfig, Reopen, RequestEncoder, RequestParts, ToolChoice};
use crate::compress::{count_message_tokens_for, count_request_tokens_for, Counting, TokenCounts};
use crate::tools::ToolDefinition;

/// What every request of a session carries besides the conversation, fixed for the
/// session's life: the model and sampling fields, the system prompt sent (the configured
/// one plus built-in sections, ISO-8), the tools offered and the tool choice.
pub struct RequestShape {
    /// The model and its request fields.
    pub model: ModelConfig,
    /// The system prompt sent ("" for none).
    pub system_prompt: String,
    /// The tools offered.
    pub tool_definitions: Vec<ToolDefinition>,
    /// The tool choice sent with requests that offer tools.
    pub tool_choice: Option<ToolChoice>,
}

/// The encoding cache and the fixed part it was built on, under one lock (MCP-2: the fixed
/// part is replaced when the tools change).
pub(super) struct Encodings {
    pub(super) cache: EncodingCache,
    pub(super) fixed: Arc<FixedEncodings>,
}

/// What never changes after construction, encoded once.
pub(super) struct FixedEncodings {
    /// The model's wire format's encoder: the model, system prompt, tools, tool choice
    /// and sampling fields encoded once (WIRE-1).
    encoder: Box<dyn RequestEncoder>,
    /// Estimated tokens of the system prompt and tools (CMP-11's estimate, fixed part),
    /// per script class (CMP-12).
    tokens: TokenCounts,
    /// What they were encoded from (the from-scratch reference encodes it again).
    shape: RequestShape,
    /// How the model's prompt is counted: its family's image rule (IMG-3), the reasoning
    /// it sends back (THINK-2).
    counting: Counting,
}

impl FixedEncodings {
    pub(super) fn new(shape: RequestShape) -> Self {
        let parts = RequestParts {
            system_prompt: &shape.system_prompt,
            tools: &shape.tool_definitions,
            tool_choice: shape.tool_choice.as_ref(),
        };
        let counting = Counting::of(&shape.model);
        Self {
            encoder: protocol_of(&shape.model).request_encoder(&shape.model, parts),
            tokens: count_request_tokens_for(&shape.system_prompt, &[], &[], &shape.tool_definitions, counting),
            shape,
            counting,
        }
    }

    /// The same request shape offering `tools` instead (MCP-2).
    pub(super) fn with_tools(&self, tools: Vec<ToolDefinition>) -> Self {
        let s = &self.shape;
        Self::new(RequestShape { model: s.model.clone(), system_prompt: s.system_prompt.clone(), tool_definitions: tools, tool_choice: s.tool_choice.clone() })
    }

}

/// PERF-7: the encodings of the history's first `history_len` messages and of the
/// memory context, valid for one state generation. A committed message is encoded once;
/// an append only encodes what was appended; anything else (compression commit, import,
/// seeding, a failed run's rollback) bumps the generation and the cache starts over.
///
/// PERF-2: the cache *is* the open request body (the wire format's head with the system
/// prompt and the memory context, then the history). A request closes it (the format's
/// `BodyWriter::close`: the closing brackets, for Anthropic also the moving cache
/// breakpoint) and lends it to the transport as the body itself; the next
/// `EncodingCache::sync` takes it back (cutting the closing off, `Reopen`) once the
/// transport let go, or copies the open prefix if the host still holds it. So no turn
/// copies the history's JSON: the session holds the messages once and their encoding once.
#[derive(Default)]
pub(super) struct EncodingCache {
    generation: u64,
    /// The open body: the head and the history encodings. Empty while lent (see `lent`)
    /// or before `writer`.
    body: String,
    /// The writer of this generation, once `body` holds its head (system prompt, memory
    /// context).
    writer: Option<Box<dyn BodyWriter>>,
    /// The body lent to the last request, and how to reopen it.
    lent: Option<(Arc<String>, Reopen)>,
    context_tokens: TokenCounts,
    history_len: usize,
    history_tokens: TokenCounts,
    /// Their tool call ids (fresh ids are checked against them), as hashes.
    call_ids: CallIds,
    /// Their images (IMG-5's per-request count).
    images: usize,
}

impl EncodingCache {
    /// Takes the lent body back (PERF-2): the same allocation when the transport has let
    /// go of it, a copy of its prefix when the host still holds it.
    fn reclaim(&mut self) {
        if let Some((lent, reopen)) = self.lent.take() {
            self.body = match Arc::try_unwrap(lent) {
                Ok(mut body) => {
                    reopen.apply(&mut body);
                    body
                }
                Err(shared) => reopen.copy(&shared),
            };
        }
    }

    /// Heap bytes held: the body (or the lent one), the ids.
    pub(super) fn heap_bytes(&self) -> usize {
        let body = self.lent.as_ref().map_or(self.body.capacity(), |(b, _)| b.capacity());
        body + self.call_ids.heap_bytes()
    }
}

impl FixedEncodings {
    /// The tools every request offers.
    pub(super) fn tool_definitions(&self) -> &[ToolDefinition] {
        &self.shape.tool_definitions
    }

    /// Heap bytes of the fixed encodings (PERF-2's report).
    pub(super) fn heap_bytes(&self) -> usize {
        self.encoder.heap_bytes()
    }

    fn estimate_from_scratch(&self, state: &AgentState) -> TokenCounts {
        let context: Vec<Message> = memory_context(state).into_iter().collect();
        count_request_tokens_for(&self.shape.system_prompt, &context, &state.history.messages, &self.shape.tool_definitions, self.counting)
    }

    /// The body of the request for `state`, encoded from scratch by the wire format
    /// (the reference the cached bodies are checked against).
    pub(super) fn body_from_scratch(&self, state: &AgentState) -> String {
        let shape = &self.shape;
        let context: Vec<Message> = memory_context(state).into_iter().collect();
        let request = ChatRequest {
            system_prompt: Some(shape.system_prompt.as_str()),
            context_messages: &context,
            messages: &state.history.messages,
            tools: &shape.tool_definitions,
            tool_choice: shape.tool_choice.as_ref(),
        };
        protocol_of(&shape.model).encode_request(&shape.model, &request)
    }
}

impl EncodingCache {
    /// Brings the cache up to date with `state` at `generation`.
    fn sync(&mut self, fixed: &FixedEncodings, state: &AgentState, generation: u64) -> &mut Self {
        let cache = self;
        let messages = &state.history.messages;
        if cache.generation != generation || cache.history_len > messages.len() {
            *cache = EncodingCache { generation, ..EncodingCache::default() };
        }
        cache.reclaim();
        let writer = cache.writer.get_or_insert_with(|| {
            let mut writer = fixed.encoder.writer();
            let context: Vec<Message> = memory_context(state).into_iter().collect();
            cache.body = writer.start(&context);
            cache.context_tokens = context.iter().map(|m| count_message_tokens_for(m, fixed.counting)).sum();
            writer
        });
        let closing = writer.close_len() + 1;
        for m in &messages[cache.history_len..] {
            let piece = writer.encode(m);
            super::gentle::reserve_string(&mut cache.body, piece.len() + closing);
            cache.body.push_str(&piece);
            cache.history_tokens += count_message_tokens_for(m, fixed.counting);
            cache.images += m.images().count();
            m.tool_calls().iter().for_each(|c| cache.call_ids.insert(&c.id));
        }
        cache.history_len = messages.len();
        cache
    }

    /// The tool call ids in `state`'s history, from the cache (PERF-7: no walk).
    pub(super) fn call_ids(&mut self, fixed: &FixedEncodings, state: &AgentState, generation: u64) -> &CallIds {
        let seen = &self.sync(fixed, state, generation).call_ids;
        #[cfg(debug_assertions)]
        {
            let mut scratch = CallIds::default();
            state.history.messages.iter().flat_map(Message::tool_calls).for_each(|c| scratch.insert(&c.id));
            assert_eq!(scratch.0, seen.0);
        }
        seen
    }

    /// The images in `state`'s history, from the cache (IMG-5; PERF-7: no walk).
    pub(super) fn image_count(&mut self, fixed: &FixedEncodings, state: &AgentState, generation: u64) -> usize {
        let images = self.sync(fixed, state, generation).images;
        debug_assert_eq!(images, state.history.messages.iter().map(|m| m.images().count()).sum::<usize>());
        images
    }

    /// The local prompt estimate of the next request (CMP-11), per script class.
    pub(super) fn estimate(&mut self, fixed: &FixedEncodings, state: &AgentState, generation: u64) -> TokenCounts {
        let cache = self.sync(fixed, state, generation);
        let local = fixed.tokens + cache.context_tokens + cache.history_tokens;
        debug_assert_eq!(local, fixed.estimate_from_scratch(state));
        local
    }

    /// PERF-7: the request body for `state`, assembled from cached encodings, and the
    /// local prompt estimate per script class. PERF-2: the body is the cache itself, lent
    /// (no copy).
    pub(super) fn request_body(&mut self, fixed: &FixedEncodings, state: &AgentState, generation: u64) -> (Arc<String>, TokenCounts) {
        let cache = self.sync(fixed, state, generation);
        let reopen = match cache.writer.as_ref() {
            Some(writer) => {
                super::gentle::reserve_string(&mut cache.body, writer.close_len());
                writer.close(&mut cache.body)
            }
            // `sync` always starts a writer; nothing to close without one.
            None => Reopen { keep: cache.body.len(), restore: "" },
        };
        let body = Arc::new(std::mem::take(&mut cache.body));
        cache.lent = Some((Arc::clone(&body), reopen));
        let local = fixed.tokens + cache.context_tokens + cache.history_tokens;
        #[cfg(debug_assertions)]
        {
            assert_eq!(*body, fixed.body_from_scratch(state), "PERF-7: the cached body differs from a from-scratch encoding");
            assert_eq!(local, fixed.estimate_from_scratch(state));
        }
        (body, local)
    }
}

impl EncodingCache {
    /// COST-3: the request body for `state` with `last` appended as its last message, a
    /// message the history does not keep (a summarizer's instruction): the open body
    /// closed by the format's [`BodyWriter::close_with`], lent like
    /// [`request_body`](Self::request_body). Nothing else changes, and the next `sync`
    /// cuts `last` off again (`Reopen` to the open body's length): the cache comes back
    /// byte for byte. No message is encoded again; the body is not copied (it may grow
    /// by `last` and the closing, in place).
    pub(super) fn request_body_with(&mut self, fixed: &FixedEncodings, state: &AgentState, generation: u64, last: &Message) -> Arc<String> {
        let cache = self.sync(fixed, state, generation);
        let reopen = match cache.writer.as_ref() {
            Some(writer) => writer.close_with(&mut cache.body, last),
            None => Reopen { keep: cache.body.len(), restore: "" },
        };
        // (Each format's unit tests compare `close_with` with its from-scratch encoding of
        // the history plus `last`; a debug check here would copy the history.)
        let body = Arc::new(std::mem::take(&mut cache.body));
        cache.lent = Some((Arc::clone(&body), reopen));
        body
    }
}

/// The tool call ids of a history, held as 64-bit hashes (PERF-2: 10,000 ids as strings
/// in a set held 0.7 MB, as hashes 0.13 MB). A fresh id whose hash is held is treated as
/// taken and replaced by a new unique one: a false match (odds ~n / 2^64) only renames an
/// id that was unique already, which pairing does not notice.
#[derive(Default)]
pub(super) struct CallIds(HashSet<u64>);

impl CallIds {
    fn hash(id: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        // Keyed with zeros: an id hashes the same for the cache's whole life.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut hasher);
        hasher.finish()
    }

    /// Holds `id`.
    pub(super) fn insert(&mut self, id: &str) {
        self.0.insert(Self::hash(id));
    }

    /// Whether `id` (or an id with its hash) is held.
    pub(super) fn contains(&self, id: &str) -> bool {
        self.0.contains(&Self::hash(id))
    }

    fn heap_bytes(&self) -> usize {
        // A hashbrown table: one key and one control byte per bucket.
        self.0.capacity() * (std::mem::size_of::<u64>() + 1)
    }
}

/// The latest episode's snapshot as a context message (CMP-9): the model keeps seeing
/// what was compressed, and learns how to read the originals.
fn memory_context(state: &AgentState) -> Option<Message> {
    let episode = state.history.episodic_memories.last()?;
    Some(Message::system(format!(
        "Earlier conversation was compressed into episodic memory. Latest state snapshot \
         (snapshot_id {}, {} episode(s) in all; read the original messages with the \
         retrieve_memory tool):\n{}",
        episode.id,
        state.history.episodic_memories.len(),
        episode.summary
    )))
}

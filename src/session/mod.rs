//! The conversation's one owner (layer L7, below sub-agents and the run loop): the
//! [`AgentState`] and its generation, the request encoding and prompt-size caches
//! (PERF-2, PERF-7, CMP-12), the provider's last count (CMP-3, CMP-11), the compression
//! backoff and the store's commit cursor (STORE-2, STORE-3).
//!
//! The state changes only through doors that say what happens (STYLE 13, ARCH-2), each
//! applying the secret redactor (LLM-4) and the history's invariants where it enters:
//! [`Session::push_input`] and [`Session::take_back`] (the user's input, and the rollback
//! of a run whose first model call failed), [`Session::push_answer`] (the model's answer
//! with its usage; tool call ids made unique), [`Session::push_tool_results`] (a turn's
//! results, together), [`Session::record_unreported_usage`] (a call cut off mid-answer),
//! [`Session::apply_compression`], [`Session::import`], [`Session::attach`] (a resumed
//! session) and [`Session::seed`] (a child's context). [`Session::next_request`] is the
//! request side: the body, its per-class counts, the prompt size and the message count;
//! the session is also the compressor's [`ConversationPrefix`] (COST-3: a summarizer on
//! the conversation's model gets the next request's body with its instruction appended,
//! lent from the same cache, which comes back unchanged).
//! Readers that must not write (events, sub-agents, the memory service) get a
//! [`StateView`]; a delegation records its children's usage through a [`ChildUsageSink`].

mod cursor;
mod encoding;
mod gentle;
mod images;
mod prompt_size;
mod pending;
mod prefix_side;
mod redact;
mod rewind;
mod store_side;
mod tools_side;
mod view;

use std::collections::HashSet;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::compress::{CompressReason, PromptSizeSource, StagedCompression, TokenCalibration, TokenCounts};
use crate::error::ArkAgentError;
use crate::history::{AgentState, Content, Message, ModelUsage, RunMark, ToolCall};
use crate::ids::{Clock, IdGenerator};
use crate::llm::ModelConfig;
use crate::tools::ToolResult;

pub use cursor::{last_consistent_len, Committed};
pub use encoding::RequestShape;
pub use rewind::{RewindResult, RewindUndo};
pub use view::{ChildUsageSink, SessionState, StateView};
use cursor::Persist;
use encoding::{EncodingCache, Encodings, FixedEncodings};
use images::ImageBounds;
use prompt_size::ProviderCount;
use redact::Redactor;
use view::{lock_cell, StateCell};

/// After a failed automatic compression, automatic attempts (pre-flight, post-turn) pause
/// for this many model calls: every attempt costs a summary call, and a failure tends to
/// repeat. Manual and overflow-forced attempts are never held back.
pub const COMPRESSION_BACKOFF_MODEL_CALLS: usize = 3;

/// One conversation: the state and everything derived from it. Lock order (never
/// reversed): persist → state → counts; the encoding cache is locked alone or under the
/// state's snapshot only.
pub struct Session {
    cell: StateCell,
    /// Bumped by every mutable access to the state except the appending doors (see
    /// [`StateGuard`]): a history that changed other than by appending has a new one.
    generation: AtomicU64,
    /// The model whose calibration is used and learned (CMP-12), and every request is for.
    model: ModelConfig,
    /// LLM-4: the model config's secrets, removed at every door.
    redactor: Redactor,
    clock: Arc<dyn Clock>,
    /// Fresh tool call ids for answers whose ids are missing or repeat (CORE-2).
    ids: Arc<dyn IdGenerator>,
    /// PERF-7: the system prompt and tools array, encoded once (replaced only when an MCP
    /// server's tools arrive or change, at a run's start: MCP-2), beside the per-message
    /// encoding cache under its lock (one lock for both: no extra lock per request).
    encodings: Mutex<Encodings>,
    /// How the model's prompt is counted (its image rule, the reasoning it sends back).
    counting: crate::compress::Counting,
    /// The provider's last count and the compression backoff, reset together.
    counts: Mutex<Counts>,
    /// STORE-2: the session store this session commits to, and what it has committed.
    persist: Mutex<Option<Persist>>,
    /// IMG-5: the model's image bounds, checked at the doors.
    image_bounds: ImageBounds,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("session_id", &self.view().session_id()).finish_non_exhaustive()
    }
}

/// The state lock; mutable access bumps the generation, so no writer can forget to
/// invalidate the encoding cache (only [`Session::append`] bypasses it).
struct StateGuard<'a> {
    guard: MutexGuard<'a, Arc<AgentState>>,
    generation: &'a AtomicU64,
}

impl Deref for StateGuard<'_> {
    type Target = Arc<AgentState>;
    fn deref(&self) -> &Self::Target {
        &self.guard
    }
}

impl DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.generation.fetch_add(1, Ordering::Relaxed);
        &mut self.guard
    }
}

/// What the provider counted, when compression last failed, and the last prompt size
/// computed: what the reset ritual forgets.
#[derive(Default)]
struct Counts {
    /// The provider's own count of the last request (CMP-3, CMP-11); cleared whenever the
    /// history is replaced (compression commit, import, seeding).
    provider: Option<ProviderCount>,
    /// Usages recorded when the last automatic compression attempt failed.
    compression_failed_at: Option<usize>,
    /// Usages recorded right after the last committed compression (CMP-7).
    compressed_at: Option<usize>,
    /// [`Session::next_prompt_size`]'s last answer, reused by [`Session::next_request`]
    /// while the state is the same (the pre-flight check's size is the request's).
    size: Option<(SizeKey, (u64, PromptSizeSource))>,
}

/// Identifies a state for the prompt-size memo: appends change the lengths, everything
/// else the generation (the provider count and calibration change only with an answer).
#[derive(Clone, Copy, PartialEq, Eq)]
struct SizeKey {
    generation: u64,
    messages: usize,
    usages: usize,
}

impl SizeKey {
    fn of(state: &AgentState, generation: u64) -> Self {
        Self { generation, messages: state.history.messages.len(), usages: state.usages.len() }
    }
}

fn message_content_mut(message: &mut Message) -> Option<&mut Content> {
    match message {
        Message::User { content } | Message::Tool { content, .. } => Some(content),
        Message::System { .. } | Message::Assistant { .. } => None,
    }
}

/// What [`Session::push_input`] pushed, for [`Session::take_back`].
#[derive(Debug)]
pub struct PushedInput {
    message: Message,
    run_id: String,
}

impl PushedInput {
    /// The input as stored (redacted).
    pub fn text(&self) -> &str {
        self.message.text().unwrap_or_default()
    }
}

/// What [`Session::push_answer`] stored of the answer: its text and its tool calls (ids
/// made unique, arguments redacted) — what the loop runs and reports.
#[derive(Debug)]
pub struct Answer {
    /// The answer's text, if any.
    pub text: Option<String>,
    /// The tool calls to run, in order; empty for a final answer.
    pub tool_calls: Vec<ToolCall>,
}

/// The next model request, as [`Session::next_request`] prepares it.
#[derive(Debug)]
pub struct NextRequest {
    /// PERF-2: the body, the encoding cache itself, lent (no copy).
    pub body: Arc<String>,
    /// CMP-12: the local estimate of the prompt per script class (what its usage will
    /// calibrate against).
    pub counts: TokenCounts,
    /// The prompt's size as the compression trigger sees it (CMP-3, CMP-11, CMP-12).
    pub prompt_size: u64,
    /// Which figure decided `prompt_size`.
    pub prompt_size_source: PromptSizeSource,
    /// History messages the request carries.
    pub message_count: usize,
}

impl Session {
    /// The session owning `state` (see [`SessionState`]), for requests of the shape
    /// `shape`; `ids` makes tool call ids unique.
    pub fn new(state: SessionState, shape: RequestShape, clock: Arc<dyn Clock>, ids: Arc<dyn IdGenerator>) -> Self {
        let model = shape.model.clone();
        let image_bounds = ImageBounds::of(&shape.model);
        Self {
            image_bounds,
            cell: state.cell,
            generation: AtomicU64::new(0),
            model,
            redactor: state.redactor,
            clock,
            ids,
            counting: crate::compress::Counting::of(&shape.model),
            encodings: Mutex::new(Encodings { cache: EncodingCache::default(), fixed: Arc::new(FixedEncodings::new(shape)) }),
            counts: Mutex::new(Counts::default()),
            persist: Mutex::new(None),
        }
    }

    /// A read-only view of the live state.
    pub fn view(&self) -> StateView {
        StateView::over(&self.cell)
    }

    /// The current state, shared (O(1)).
    pub fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&self.lock_raw())
    }

    /// The current state, shared, and its generation (read under the lock, so they match).
    fn snapshot_with_generation(&self) -> (Arc<AgentState>, u64) {
        let guard = self.lock_raw();
        (Arc::clone(&guard), self.generation.load(Ordering::Relaxed))
    }

    /// The number of live history messages.
    pub fn message_count(&self) -> usize {
        self.lock_raw().history.messages.len()
    }

    fn lock(&self) -> StateGuard<'_> {
        StateGuard { guard: self.lock_raw(), generation: &self.generation }
    }

    fn lock_raw(&self) -> MutexGuard<'_, Arc<AgentState>> {
        lock_cell(&self.cell)
    }

    /// Appends to the state (history messages, usages) without invalidating the encoding
    /// cache: `f` must only push. The one writer that may bypass the generation; in debug
    /// builds every assembled body is checked against a from-scratch encoding.
    /// Appends through `f`, which adds at most `room.messages` messages and
    /// `room.usages` usages (their room made first, by an eighth at a time: PERF-2).
    fn append<R>(&self, room: Room, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut guard = self.lock_raw();
        let state = Arc::make_mut(&mut guard);
        gentle::reserve_vec(&mut state.history.messages, room.messages);
        gentle::reserve_vec(&mut state.usages, room.usages);
        let before = state.history.messages.len();
        let r = f(state);
        debug_assert!(state.history.messages.len() >= before, "append only appends");
        r
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How much one append adds (its room is made before it, PERF-2).
#[derive(Clone, Copy)]
struct Room {
    messages: usize,
    usages: usize,
}

/// The doors: every change to the state (STYLE 13, ARCH-2).
impl Session {
    /// Pushes the user's input (its texts redacted, never its image bytes) as a user
    /// message. IMG-5: an image of a type the model's family does not take
    /// (`image_unsupported_type`), over the byte cap (`image_too_large`) or past the
    /// per-request limit (`too_many_images`) refuses the input whole: nothing is written.
    ///
    /// CHAT-1: the run `run_id` is marked as beginning at this message (with the usages
    /// and sub-agent records counted so far), the point a rewind or a fork names.
    pub fn push_input(&self, run_id: &str, input: impl Into<Content>) -> Result<PushedInput, ArkAgentError> {
        let mut message = Message::user(input);
        if let Some(content) = message.content() {
            self.check_input(content)?;
        }
        self.redactor.message(&mut message);
        self.share_known_images(&mut message);
        self.append(Room { messages: 1, usages: 0 }, |state| {
            let mark = RunMark {
                run_id: run_id.to_owned(),
                message: state.absolute_end(),
                usages: state.usages.len() as u64,
                child_usages: state.child_usages.len() as u64,
            };
            state.runs.push(mark);
            state.history.messages.push(message.clone());
        });
        Ok(PushedInput { message, run_id: run_id.to_owned() })
    }

    /// IMG-5: whether `input` would pass [`push_input`](Self::push_input)'s image checks
    /// now (nothing written either way).
    pub fn check_input(&self, input: &Content) -> Result<(), ArkAgentError> {
        match self.image_bounds.check_each(input)? {
            // Text only: nothing to count (PERF-1: no walk of the encoding cache per turn).
            0 => Ok(()),
            adding => self.image_bounds.check_count(self.images_in_request(), adding),
        }
    }

    /// IMG-4: a photo the session already holds (sent before, or kept in an episode) is
    /// stored once: the new message shares the held bytes.
    fn share_known_images(&self, message: &mut Message) {
        let Some(content) = message_content_mut(message) else { return };
        let crate::history::Content::Parts(parts) = content else { return };
        let state = self.snapshot();
        for part in parts.iter_mut() {
            let crate::history::ContentPart::Image(image) = part else { continue };
            let crate::history::ImageSource::Data(data) = &mut image.source else { continue };
            if let Some(held) = state.find_image(data.id()) {
                if !held.ptr_eq(data) {
                    *data = data.sharing(held.bytes());
                }
            }
        }
    }

    /// Images the next request carries (the history's; cached, PERF-7: no walk).
    fn images_in_request(&self) -> usize {
        let (state, generation) = self.snapshot_with_generation();
        let mut guard = self.lock_encodings();
        let Encodings { cache, fixed } = &mut *guard;
        cache.image_count(fixed, &state, generation)
    }

    /// CORE-4: takes `input` back out — when it is still the last message, i.e. the model
    /// produced nothing for it (a compression committed meanwhile stays). True when it was
    /// taken out.
    pub fn take_back(&self, input: &PushedInput) -> bool {
        let mut guard = self.lock();
        if guard.history.messages.last() != Some(&input.message) {
            return false;
        }
        let state = Arc::make_mut(&mut guard);
        state.history.messages.pop();
        if state.runs.last().is_some_and(|m| m.run_id == input.run_id) {
            state.runs.pop();
        }
        true
    }

    /// Pushes the model's answer with its usage (SUB-6: every call made has its usage
    /// entry, reported or not). The answer's tool calls get unique, non-empty ids
    /// (CORE-2: providers that omit or repeat them would break pairing) and its texts are
    /// redacted. A provider-reported usage (not a compression's) becomes the provider
    /// count the next prompt size starts from (CMP-3, CMP-11) and teaches this model's
    /// calibration from `sent`, the static counts of the request it answered (CMP-12; a
    /// missing or implausible count teaches nothing).
    pub fn push_answer(&self, message: Message, usage: Option<&ModelUsage>, sent: &TokenCounts) -> Answer {
        let mut message = self.with_unique_call_ids(message);
        self.redactor.message(&mut message);
        let answer = Answer { text: message.text().map(str::to_owned), tool_calls: message.tool_calls().to_vec() };
        self.append(Room { messages: 1, usages: 1 }, |state| {
            self.record_usage(state, usage, sent);
            state.history.messages.push(message);
        });
        answer
    }

    /// A usage entry for the call just answered; the provider count and the calibration
    /// learn from a reported one.
    fn record_usage(&self, state: &mut AgentState, usage: Option<&ModelUsage>, sent: &TokenCounts) {
        let Some(usage) = usage else {
            state.usages.push(ModelUsage::unreported());
            return;
        };
        state.usages.push(usage.clone());
        if usage.source == Some(crate::history::UsageSource::ContextCompression) {
            return;
        }
        let messages_sent = state.history.messages.len();
        self.counts().provider = Some(ProviderCount { prompt_tokens: usage.prompt_tokens, messages_sent });
        match state.token_calibration.get_mut(&self.model.model) {
            Some(calibration) => {
                calibration.observe(sent, usage.prompt_tokens);
            }
            None => {
                let mut calibration = TokenCalibration::default();
                if calibration.observe(sent, usage.prompt_tokens) {
                    state.token_calibration.insert(self.model.model.clone(), calibration);
                }
            }
        }
    }

    /// `message` with every tool call id unique and non-empty: ids already in the history
    /// (from the encoding cache, PERF-7: no walk) or earlier in the answer are replaced.
    fn with_unique_call_ids(&self, message: Message) -> Message {
        let Message::Assistant { content, mut tool_calls, reasoning, thinking } = message else {
            return message;
        };
        if !tool_calls.is_empty() {
            let (state, generation) = self.snapshot_with_generation();
            let mut guard = self.lock_encodings();
            let Encodings { cache, fixed } = &mut *guard;
            let seen = cache.call_ids(fixed, &state, generation);
            let mut fresh: HashSet<String> = HashSet::new();
            for call in &mut tool_calls {
                while call.id.is_empty() || seen.contains(&call.id) || fresh.contains(&call.id) {
                    call.id = format!("call_{}", self.ids.next_id());
                }
                fresh.insert(call.id.clone());
            }
        }
        Message::Assistant { content, tool_calls, reasoning, thinking }
    }

    /// Pushes a turn's tool results together, one per call in the calls' order (CORE-2:
    /// the turn is paired once they are in), redacted. IMG-5: a result whose images the
    /// model's bounds refuse goes in as a tool error naming the code instead.
    pub fn push_tool_results(&self, calls: &[ToolCall], results: Vec<ToolResult>) {
        debug_assert_eq!(calls.len(), results.len(), "one result per call");
        // Counted only when a result carries an image (PERF-1).
        let mut images = None;
        let results: Vec<Message> = calls.iter().zip(results).map(|(call, result)| self.result_message(&call.id, result, &mut images)).collect();
        self.append(Room { messages: results.len(), usages: 0 }, |state| state.history.messages.extend(results));
    }

    /// The `tool` message answering `call_id` with `result`, as [`push_tool_results`]
    /// makes it (bounded, redacted).
    fn result_message(&self, call_id: &str, result: ToolResult, images: &mut Option<usize>) -> Message {
        let is_error = result.is_error;
        let content = self.bounded(result.into_model_parts(), images);
        let is_error = is_error || content.is_err();
        let content = content.unwrap_or_else(|e| Content::Text(ToolResult::error(e.code().as_str(), &e.to_string()).content));
        let mut message = Message::tool_result(call_id, content, is_error);
        self.redactor.message(&mut message);
        self.share_known_images(&mut message);
        message
    }

    /// `content` when its images are within the bounds (`images`: those already in the
    /// request, counted on once needed); the refusal otherwise.
    fn bounded(&self, content: Content, images: &mut Option<usize>) -> Result<Content, ArkAgentError> {
        let adding = self.image_bounds.check_each(&content)?;
        if adding > 0 {
            let in_request = images.get_or_insert_with(|| self.images_in_request());
            self.image_bounds.check_count(*in_request, adding)?;
            *in_request += adding;
        }
        Ok(content)
    }

    /// SUB-6: a model call cut off mid-answer (cancelled, its stream broke): recorded as
    /// what the stream reported first (`cut_off`: Anthropic's input tokens), else as an
    /// "unreported" usage; the provider count and the calibration learn nothing from it.
    pub fn record_unreported_usage(&self, cut_off: Option<ModelUsage>) {
        let usage = cut_off.unwrap_or_else(ModelUsage::unreported);
        self.append(Room { messages: 0, usages: 1 }, |state| state.usages.push(usage));
    }

    /// CMP-6: commits a staged compression if the state is still `snapshot` (what the
    /// compressor read): the summary is redacted (LLM-4: a summarizer that echoed the key
    /// does not bring it into the episode), the history shortened, the summary's usage
    /// recorded and the counts reset. `StateChanged` when another writer got there first;
    /// otherwise `apply_compression`'s own checks, made before anything changes.
    pub fn apply_compression(&self, snapshot: Arc<AgentState>, mut staged: StagedCompression, usage: Option<&ModelUsage>) -> Result<(), CompressReason> {
        self.redactor.text(&mut staged.summary);
        let mut guard = self.lock();
        if !Arc::ptr_eq(&guard, &snapshot) {
            return Err(CompressReason::StateChanged);
        }
        drop(snapshot); // the lock holds the only other reference: no copy below
        let state = Arc::make_mut(&mut guard);
        // THINK-2: blocks cleared from kept answers go from the store too (rewritten).
        let cleared = crate::compress::archive(state, staged)?.then(|| state.archived_count());
        state.usages.extend(usage.cloned());
        let calls = state.usages.len();
        drop(guard);
        if let Some(archived) = cleared {
            self.rewrite_stored_from(archived);
        }
        self.reset_counts();
        self.counts().compressed_at = Some(calls);
        Ok(())
    }

    /// Seeds the history (a fresh child's context slice, redacted): the provider's count
    /// is forgotten.
    pub fn seed(&self, mut messages: Vec<Message>) {
        messages.iter_mut().for_each(|m| self.redactor.message(m));
        Arc::make_mut(&mut self.lock()).history.messages = messages;
        let mut counts = self.counts();
        (counts.provider, counts.size) = (None, None);
    }

    /// The reset ritual, in one place: the state becomes `state`, the provider's count is
    /// forgotten and the compression backoff reset. (`state` is redacted by the caller.)
    fn reset_to(&self, mut state: AgentState) {
        // PERF-2: an imported or resumed long chat carries no empty slots (a JSON array
        // is read by doubling); appends then grow it by an eighth.
        state.history.messages.shrink_to_fit();
        state.usages.shrink_to_fit();
        *self.lock() = Arc::new(state);
        self.reset_counts();
    }

    /// Forgets the provider's count, the remembered prompt size and the compression
    /// backoff (the ritual's in-memory part).
    fn reset_counts(&self) {
        let mut counts = self.counts();
        counts.provider = None;
        counts.size = None;
        counts.compression_failed_at = None;
        counts.compressed_at = None;
    }

    /// CMP-7: whether no usage was recorded since the last committed compression (`calls`:
    /// usages recorded now) — no model call was made since, whatever that compression
    /// reported. Forgotten with the counts (an import, a resume).
    pub fn just_compressed(&self, calls: usize) -> bool {
        self.counts().compressed_at == Some(calls)
    }

    /// True while automatic compression attempts pause after a failure: fewer than
    /// [`COMPRESSION_BACKOFF_MODEL_CALLS`] calls since (`calls`: usages recorded now).
    pub fn compression_backing_off(&self, calls: usize) -> bool {
        let failed_at = self.counts().compression_failed_at;
        failed_at.is_some_and(|at| calls < at + COMPRESSION_BACKOFF_MODEL_CALLS)
    }

    /// An automatic compression attempt failed with `calls` usages recorded.
    pub fn compression_failed(&self, calls: usize) {
        self.counts().compression_failed_at = Some(calls);
    }
}

/// The request side: encodings (PERF-2, PERF-7) and the prompt size (CMP-3, CMP-11, CMP-12).
impl Session {
    /// Heap bytes of the encoding cache and of the fixed encodings (PERF-2's report).
    pub fn encoding_heap_bytes(&self) -> (usize, usize) {
        let guard = self.lock_encodings();
        (guard.cache.heap_bytes(), guard.fixed.heap_bytes())
    }

    fn lock_encodings(&self) -> MutexGuard<'_, Encodings> {
        self.encodings.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next request for the current state: PERF-7's body assembled from cached
    /// encodings and lent (PERF-2: no copy; the next use of the cache takes it back), the
    /// local estimate per script class, the prompt size with its source (the one
    /// [`next_prompt_size`](Self::next_prompt_size) computed for this very state, if it
    /// did) and the message count.
    pub fn next_request(&self) -> NextRequest {
        let (state, generation) = self.snapshot_with_generation();
        let (body, counts) = {
            let mut guard = self.lock_encodings();
            let Encodings { cache, fixed } = &mut *guard;
            cache.request_body(fixed, &state, generation)
        };
        let key = SizeKey::of(&state, generation);
        let remembered = self.counts().size.filter(|(k, _)| *k == key).map(|(_, size)| size);
        let (prompt_size, prompt_size_source) = remembered.unwrap_or_else(|| self.prompt_size(&state, counts));
        NextRequest { body, counts, prompt_size, prompt_size_source, message_count: state.history.messages.len() }
    }

    /// The body of the request for `state`, encoded from scratch with the typed wire
    /// structs (the reference the cached bodies are checked against).
    pub fn body_from_scratch(&self, state: &AgentState) -> String {
        let fixed = Arc::clone(&self.lock_encodings().fixed); // encoded without the lock
        fixed.body_from_scratch(state)
    }

    /// The next prompt's size (CMP-3, CMP-11, CMP-12) and which figure decided it: the
    /// larger of the local estimate `counts` (calibrated for this model once the provider
    /// reported a count) and the provider's count of the last request plus an estimate of
    /// the messages appended since.
    fn prompt_size(&self, state: &AgentState, counts: TokenCounts) -> (u64, PromptSizeSource) {
        // CMP-12: this model's calibration in `state` (the identity until one is learned).
        let calibration: TokenCalibration = state.token_calibration.get(&self.model.model).copied().unwrap_or_default();
        let count = self.counts().provider;
        prompt_size::prompt_size(count, calibration, state, counts, self.counting)
    }

    /// The current state's prompt size and its source (what the compression trigger
    /// checks), remembered for [`next_request`](Self::next_request).
    pub fn next_prompt_size(&self) -> (u64, PromptSizeSource) {
        let (state, generation) = self.snapshot_with_generation();
        let mut guard = self.lock_encodings();
        let Encodings { cache, fixed } = &mut *guard;
        let local = cache.estimate(fixed, &state, generation);
        drop(guard);
        let size = self.prompt_size(&state, local);
        self.counts().size = Some((SizeKey::of(&state, generation), size));
        size
    }
}

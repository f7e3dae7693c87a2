//! The conversation's one owner (layer L5, below sub-agents and the run loop): the
//! [`AgentState`] and its generation, the request encoding and prompt-size caches
//! (PERF-2, PERF-7, CMP-12), the provider's last count (CMP-3, CMP-11), the compression
//! backoff and the store's commit cursor (STORE-2, STORE-3).
//!
//! Its doors: [`Session::append`] (push only; the caches follow), [`Session::replace`]
//! (the reset ritual, written once: forget the provider count, reset the backoff, mark
//! the stored session for a rewrite), [`Session::request_body`], [`Session::prompt_size`]
//! and [`Session::commit`]. Readers that must not write (events, sub-agents, the memory
//! service) get a [`StateView`].

mod cursor;
mod encoding;
mod prompt_size;

use std::collections::HashSet;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{AgentState, ChildUsageRecord, Message, ModelUsage};
use crate::ids::Clock;
use crate::compress::{apply_compression, CompressReason, PromptSizeSource, StagedCompression, TokenCalibration, TokenCounts, COMPRESSION_USAGE_SOURCE};
use crate::store::SharedStore;
use crate::tools::ToolDefinition;

pub use cursor::{last_consistent_len, Committed};
pub use encoding::RequestShape;
use cursor::{Cursor, Persist};
use encoding::{EncodingCache, FixedEncodings};
use prompt_size::ProviderCount;

/// After a failed automatic compression, automatic attempts (pre-flight, post-turn) pause
/// for this many model calls: every attempt costs a summary call, and a failure tends to
/// repeat. Manual and overflow-forced attempts are never held back.
pub const COMPRESSION_BACKOFF_MODEL_CALLS: usize = 3;

/// The state cell. The state sits behind an `Arc` so a compression can read a snapshot
/// without holding the lock or copying the history; appends go through `Arc::make_mut`,
/// which copies nothing while no snapshot is alive (CMP-6).
type StateCell = Arc<Mutex<Arc<AgentState>>>;

/// A view of a session's live state: its id, O(1) snapshots, and one append no cache
/// depends on (a child's usage record, SUB-6). What event stamping, delegation and the
/// memory service get instead of the session itself.
#[derive(Clone)]
pub struct StateView {
    cell: StateCell,
}

impl StateView {
    /// A new cell holding `state`.
    pub fn new(state: AgentState) -> Self {
        Self { cell: Arc::new(Mutex::new(Arc::new(state))) }
    }

    /// The current state, shared (O(1)).
    pub fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&lock_cell(&self.cell))
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        lock_cell(&self.cell).session_id.clone()
    }

    /// Records a delegated child's usage (SUB-6). Only appends to `child_usages`, which
    /// neither the encodings nor the prompt size read: the generation stays.
    pub fn append_child_usage(&self, record: ChildUsageRecord) {
        Arc::make_mut(&mut lock_cell(&self.cell)).child_usages.push(record);
    }

    /// The cell itself, for the memory service (MEM-1: it only reads).
    pub(crate) fn shared_cell(&self) -> Arc<Mutex<Arc<AgentState>>> {
        Arc::clone(&self.cell)
    }
}

fn lock_cell(cell: &StateCell) -> MutexGuard<'_, Arc<AgentState>> {
    // A poisoned lock only means a panic elsewhere between statements on plain data;
    // every update here is a single push or swap, so the state is still valid.
    cell.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One conversation: the state and everything derived from it. Lock order (never
/// reversed): persist → state → counts; the encoding cache is locked alone.
pub struct Session {
    cell: StateCell,
    /// Bumped by every mutable access to the state except [`Session::append`] (see
    /// [`StateGuard`]): a history that changed other than by appending has a new one.
    generation: AtomicU64,
    /// The model whose calibration is used and learned (CMP-12).
    model: String,
    clock: Arc<dyn Clock>,
    /// PERF-7: the system prompt and tools array, encoded once (both fixed for the
    /// session's life), and the per-message encoding cache.
    fixed: FixedEncodings,
    encodings: Mutex<EncodingCache>,
    /// The provider's last count and the compression backoff, reset together.
    counts: Mutex<Counts>,
    /// STORE-2: the session store this session commits to, and what it has committed.
    persist: Mutex<Option<Persist>>,
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

/// What the provider counted and when compression last failed: what the reset ritual
/// forgets.
#[derive(Default)]
struct Counts {
    /// The provider's own count of the last request (CMP-3, CMP-11); cleared whenever the
    /// history is replaced (compression commit, import, seeding).
    provider: Option<ProviderCount>,
    /// Usages recorded when the last automatic compression attempt failed.
    compression_failed_at: Option<usize>,
}

/// What [`Session::replace`] replaced, to put back with [`Session::restore`] when the
/// store refused the new state.
pub struct Replaced {
    state: Arc<AgentState>,
    backoff: Option<usize>,
    cursor: Option<Cursor>,
}

impl Session {
    /// A session over `view`'s cell (create the view first with [`StateView::new`]), for
    /// requests of the shape `shape`.
    pub fn new(view: &StateView, shape: RequestShape, clock: Arc<dyn Clock>) -> Self {
        let model = shape.model.model.clone();
        Self {
            cell: Arc::clone(&view.cell),
            generation: AtomicU64::new(0),
            model,
            clock,
            fixed: FixedEncodings::new(shape),
            encodings: Mutex::new(EncodingCache::default()),
            counts: Mutex::new(Counts::default()),
            persist: Mutex::new(None),
        }
    }

    /// A read-only view of the live state.
    pub fn view(&self) -> StateView {
        StateView { cell: Arc::clone(&self.cell) }
    }

    /// The current state, shared (O(1)).
    pub fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&self.lock_raw())
    }

    /// The current state, shared, and its generation (read under the lock, so they match).
    pub fn snapshot_with_generation(&self) -> (Arc<AgentState>, u64) {
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
    pub fn append<R>(&self, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut guard = self.lock_raw();
        let state = Arc::make_mut(&mut guard);
        let before = state.history.messages.len();
        let r = f(state);
        debug_assert!(state.history.messages.len() >= before, "append only appends");
        r
    }

    /// Mutates the state in place (copy-on-write only if a snapshot is alive); the
    /// encoding cache starts over.
    pub fn update<R>(&self, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut guard = self.lock();
        f(Arc::make_mut(&mut guard))
    }

    /// Appends the model's answer with its usage (SUB-6: every call made has its usage
    /// entry, reported or not). A provider-reported usage (not a compression's) becomes
    /// the provider count the next prompt size starts from (CMP-3, CMP-11) and teaches
    /// this model's calibration from `sent`, the static counts of the request it answered
    /// (CMP-12; a missing or implausible count teaches nothing).
    pub fn append_answer(&self, message: Message, usage: Option<&ModelUsage>, sent: &TokenCounts) {
        self.append(|state| {
            if let Some(usage) = usage {
                state.usages.push(usage.clone());
                if usage.source() != Some(COMPRESSION_USAGE_SOURCE) {
                    let messages_sent = state.history.messages.len();
                    self.counts().provider = Some(ProviderCount { prompt_tokens: usage.prompt_tokens, messages_sent });
                    match state.token_calibration.get_mut(&self.model) {
                        Some(calibration) => {
                            calibration.observe(sent, usage.prompt_tokens);
                        }
                        None => {
                            let mut calibration = TokenCalibration::default();
                            if calibration.observe(sent, usage.prompt_tokens) {
                                state.token_calibration.insert(self.model.clone(), calibration);
                            }
                        }
                    }
                }
            } else {
                state.usages.push(ModelUsage::unreported());
            }
            state.history.messages.push(message);
        });
    }

    /// Seeds the history (a fresh child's context slice): the provider's count is
    /// forgotten.
    pub fn seed(&self, messages: Vec<Message>) {
        self.update(|s| s.history.messages = messages);
        self.forget_provider_count();
    }

    /// The reset ritual, in one place: the state is replaced by `state`, the provider's
    /// count is forgotten, the compression backoff reset, and with `rewrite_store` the
    /// next commit rewrites the stored session. Returns what was replaced, for
    /// [`restore`](Self::restore).
    pub fn replace(&self, state: AgentState, rewrite_store: bool) -> Replaced {
        let cursor = if rewrite_store { self.mark_rewrite() } else { self.cursor() };
        let old_state = std::mem::replace(&mut *self.lock(), Arc::new(state));
        let backoff = self.reset_counts();
        Replaced { state: old_state, backoff, cursor }
    }

    /// Puts back what [`replace`](Self::replace) replaced: the state, the compression
    /// backoff and the store cursor (the provider's count stays forgotten).
    pub fn restore(&self, replaced: Replaced) {
        *self.lock() = replaced.state;
        self.counts().compression_failed_at = replaced.backoff;
        if let Some(cursor) = replaced.cursor {
            self.set_cursor(cursor);
        }
    }

    /// Forgets the provider's count and resets the compression backoff (the ritual's
    /// in-memory part); returns the backoff that was set.
    fn reset_counts(&self) -> Option<usize> {
        let mut counts = self.counts();
        counts.provider = None;
        counts.compression_failed_at.take()
    }

    fn forget_provider_count(&self) {
        self.counts().provider = None;
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// CMP-6: commits a staged compression if the state is still `snapshot` (what the
    /// compressor read): the history is shortened, the summary's usage recorded and the
    /// counts reset. `StateChanged` when another writer got there first; otherwise
    /// `apply_compression`'s own checks, made before anything changes.
    pub fn apply_compression(&self, snapshot: Arc<AgentState>, staged: StagedCompression, usage: Option<&ModelUsage>) -> Result<(), CompressReason> {
        let mut guard = self.lock();
        if !Arc::ptr_eq(&guard, &snapshot) {
            return Err(CompressReason::StateChanged);
        }
        drop(snapshot); // the lock holds the only other reference: no copy below
        let state = Arc::make_mut(&mut guard);
        apply_compression(state, staged)?;
        if let Some(usage) = usage {
            state.usages.push(usage.clone());
        }
        drop(guard);
        self.reset_counts();
        Ok(())
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
    /// The tools every request offers.
    pub fn tool_definitions(&self) -> &[ToolDefinition] {
        self.fixed.tool_definitions()
    }

    /// Heap bytes of the encoding cache and of the fixed encodings (PERF-2's report).
    pub fn encoding_heap_bytes(&self) -> (usize, usize) {
        (self.lock_encodings().heap_bytes(), self.fixed.heap_bytes())
    }

    fn lock_encodings(&self) -> MutexGuard<'_, EncodingCache> {
        self.encodings.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Calls `f` with the tool call ids in `state`'s history, from the encoding cache
    /// (PERF-7: no walk).
    pub fn with_call_ids<R>(&self, state: &AgentState, generation: u64, f: impl FnOnce(&HashSet<String>) -> R) -> R {
        f(self.lock_encodings().call_ids(&self.fixed, state, generation))
    }

    /// PERF-7: the request body for `state` at `generation`, assembled from cached
    /// encodings, and the local prompt estimate per script class. PERF-2: the body is the
    /// cache itself, lent (no copy); the next use of the cache takes it back.
    pub fn request_body(&self, state: &AgentState, generation: u64) -> (Arc<String>, TokenCounts) {
        self.lock_encodings().request_body(&self.fixed, state, generation)
    }

    /// The body of the request for `state`, encoded from scratch with the typed wire
    /// structs (the reference the cached bodies are checked against).
    pub fn body_from_scratch(&self, state: &AgentState) -> String {
        self.fixed.body_from_scratch(state)
    }

    /// The next prompt's size (CMP-3, CMP-11, CMP-12) and which figure decided it: the
    /// larger of the local estimate `counts` (calibrated for this model once the provider
    /// reported a count) and the provider's count of the last request plus an estimate of
    /// the messages appended since.
    pub fn prompt_size(&self, state: &AgentState, counts: TokenCounts) -> (u64, PromptSizeSource) {
        // CMP-12: this model's calibration in `state` (the identity until one is learned).
        let calibration: TokenCalibration = state.token_calibration.get(&self.model).copied().unwrap_or_default();
        let count = self.counts().provider;
        prompt_size::prompt_size(count, calibration, state, counts)
    }

    /// [`prompt_size`](Self::prompt_size) of the current state.
    pub fn next_prompt_size(&self) -> (u64, PromptSizeSource) {
        let (state, generation) = self.snapshot_with_generation();
        let local = self.lock_encodings().estimate(&self.fixed, &state, generation);
        self.prompt_size(&state, local)
    }
}

/// The store side (STORE-2, STORE-3, STORE-4, STORE-6).
impl Session {
    fn lock_persist(&self) -> MutexGuard<'_, Option<Persist>> {
        self.persist.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when a session store is attached.
    pub fn has_store(&self) -> bool {
        self.lock_persist().is_some()
    }

    /// Attaches `store` (STORE-4): opens `session_id` (default: this session's) in it. A
    /// session with commits replaces the state (it is resumed); a new one starts from the
    /// current state, written in full at the next commit. The caller holds the run slot.
    /// Errors: `session_locked`, the store's codes, `invalid_config` when a store is
    /// already attached or the id is empty.
    pub fn attach(&self, store: SharedStore, session_id: Option<&str>) -> Result<(), ArkAgentError> {
        let mut persist = self.lock_persist();
        if persist.is_some() {
            return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "a store is already attached"));
        }
        let session_id = match session_id {
            Some(id) if id.trim().is_empty() => return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "session_id is empty")),
            Some(id) => id.to_owned(),
            None => self.snapshot().session_id.clone(),
        };
        let (opened, state) = Persist::open(&store, session_id, &self.snapshot())?;
        *persist = Some(opened);
        drop(persist);
        self.replace(state, false);
        Ok(())
    }

    /// Detaches the store (STORE-6), releasing the session's lock; true when one was
    /// attached. The caller holds the run slot.
    pub fn detach(&self) -> bool {
        self.lock_persist().take().is_some()
    }

    /// The store cursor, when a store is attached.
    fn cursor(&self) -> Option<Cursor> {
        self.lock_persist().as_ref().map(|p| p.cursor)
    }

    /// Marks the stored session for a rewrite at the next commit; returns the cursor before.
    fn mark_rewrite(&self) -> Option<Cursor> {
        let mut persist = self.lock_persist();
        let p = persist.as_mut()?;
        let before = p.cursor;
        p.cursor.replace_all = true;
        Some(before)
    }

    fn set_cursor(&self, cursor: Cursor) {
        if let Some(p) = self.lock_persist().as_mut() {
            p.cursor = cursor;
        }
    }

    /// STORE-2: commits what is new since the last commit point — paired messages only
    /// (an open turn is cut, as in `export_state`), new episodes with their originals, new
    /// usages and sub-agent records — in one store transaction. No store, or nothing new:
    /// `Ok(None)`. On error nothing of this commit is stored and the cursor stays (lowered
    /// to the new end when the history shrank), so the next commit point retries it.
    pub fn commit(&self) -> Result<Option<Committed>, ArkAgentError> {
        let mut guard = self.lock_persist();
        let Some(p) = guard.as_mut() else { return Ok(None) };
        p.commit(&self.snapshot(), &*self.clock)
    }
}

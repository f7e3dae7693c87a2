//! ISO-4: every sub-agent, live and past. Thread-safe; share one `Arc` across runtimes
//! to see all sessions' sub-agents in one place.
//!
//! The registry is the one source of truth for running children: a delegation is
//! registered here when it reserves its slot (before its runtime is built), the
//! concurrency budget counts the entries here, and a runtime's `active_children()` is a
//! view of them. So what `active()` lists, `force_complete_all` reaches, at every moment.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::context::{SubAgentContext, SubAgentResult, SubAgentStatus};
use super::ending::ChildEnding;
use super::progress::{ChildProgress, ChildSpending};
use crate::history::{ChildUsageSummary, Message};

/// Completed contexts kept for history.
pub const REGISTRY_HISTORY_CAPACITY: usize = 100;

/// Totals (`getStats`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentStats {
    /// Running now.
    pub active: usize,
    /// Kept in the history ring (≤ 100).
    pub history: usize,
    /// Completed or failed since the registry was created (a resumed or imported session's
    /// earlier children are in its `total_usage()`, not here).
    pub completed_count: u64,
    /// Tokens used by every ended sub-agent, each call counted once (a nested child's
    /// tokens are in its parent's `token_count` too, but counted here once). A
    /// force-completed one counts what it spent up to its end, like any other, a call it
    /// had in flight by its prompt estimate (as the budget charged it; no usage reports
    /// it): once the runs wound down, this equals the children part of the parents'
    /// `total_usage()` unless such a call was cut off.
    pub total_tokens: u64,
    /// The reported usage of every ended sub-agent, each call counted once (COST-1,
    /// COST-2): tokens, cached and reasoning tokens, calls and per-currency costs, from
    /// each result's [`usage`](SubAgentResult::usage) with a nested child's part counted
    /// in the child alone, forced endings included. Unlike `total_tokens` it holds no
    /// estimates: once the runs wound down it equals the children part of the parents'
    /// `total_usage()`.
    #[serde(default)]
    pub usage: ChildUsageSummary,
}

/// A registry read at one moment (ISO-4): running and ended sub-agents and the totals, as
/// the C and ArkTS surfaces hand it out.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RegistrySnapshot {
    /// Running sub-agents, oldest first.
    pub active: Vec<SubAgentContext>,
    /// The last (at most 100) ended sub-agents, oldest first.
    pub history: Vec<SubAgentContext>,
    /// Totals.
    pub stats: SubAgentStats,
}

impl RegistrySnapshot {
    /// `registry` read now; no registry (a runtime that cannot delegate) reads empty.
    pub fn of(registry: Option<&SubAgentRegistry>) -> Self {
        registry.map_or_else(Self::default, |r| Self { active: r.active(), history: r.history(), stats: r.stats() })
    }
}

struct Active {
    context: SubAgentContext,
    cancel: CancellationToken,
    /// The delegation tree (one root runtime and its descendants) and the depth in it
    /// (1: a child of the root) whose concurrency budget this child counts against;
    /// `None` for entries registered by hand. A delegation's entry is settled by its run
    /// after a forced completion ([`conclude`](SubAgentRegistry::conclude)).
    tree: Option<(u64, u32)>,
    /// The child's live record once its run starts (delegations only): what a forced
    /// completion archives.
    progress: Option<Arc<dyn ChildProgress>>,
}

/// Tokens and usage: the two figures the totals add.
#[derive(Debug, Clone, Default)]
struct Figures {
    tokens: u64,
    usage: ChildUsageSummary,
}

impl Figures {
    fn of(result: Option<&SubAgentResult>) -> Self {
        result.map(|r| Self { tokens: r.token_count, usage: r.usage.clone() }).unwrap_or_default()
    }

    fn plus(self, other: &Self) -> Self {
        Self { tokens: self.tokens.saturating_add(other.tokens), usage: self.usage.plus(other.usage.clone()) }
    }

    fn minus(self, other: &Self) -> Self {
        Self { tokens: self.tokens.saturating_sub(other.tokens), usage: self.usage.minus(&other.usage) }
    }
}

/// A delegated child force-completed while its run still winds down: the figures it was
/// archived with and the part of them the totals hold (its own calls: its running
/// children count when they end), until its delegation settles it with its final ones.
struct Unsettled {
    figures: Figures,
    counted: Figures,
    /// The parent whose `descendants` entry holds `figures` (it was open then).
    folded_into: Option<String>,
    /// The reason it was forced with (its record's `forced_reason`).
    reason: String,
}

#[derive(Default)]
struct Inner {
    active: HashMap<String, Active>,
    completed: VecDeque<SubAgentContext>,
    completed_count: u64,
    /// What every ended sub-agent spent, each call counted once.
    totals: Figures,
    /// Figures of ended sub-agents whose parent is open (running, or force-completed and
    /// unsettled), by parent id: a parent's figures cover its subtree, so the totals add
    /// only the part that is its own (each call counted once).
    descendants: HashMap<String, Figures>,
    /// Force-completed delegations whose run is still winding down, by id.
    unsettled: HashMap<String, Unsettled>,
}

impl Inner {
    /// True while `id` may still gain descendants' figures: running, or unsettled.
    fn is_open(&self, id: &str) -> bool {
        self.active.contains_key(id) || self.unsettled.contains_key(id)
    }
}

/// The registry.
#[derive(Default)]
pub struct SubAgentRegistry {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for SubAgentRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgentRegistry").field("stats", &self.stats()).finish()
    }
}

impl SubAgentRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a running sub-agent; `cancel` stops it on a forced completion.
    pub fn register(&self, context: SubAgentContext, cancel: CancellationToken) {
        self.lock().active.insert(context.id.clone(), Active { context, cancel, tree: None, progress: None });
    }

    /// Registers a child at `depth` of delegation tree `tree` unless `limit` of that
    /// tree's children at that depth are running (`Err(true)`) or its id is taken by a
    /// running one (`Err(false)`). Check and insert happen under one lock.
    pub(crate) fn try_register(&self, tree: u64, depth: u32, limit: usize, context: SubAgentContext, cancel: CancellationToken) -> Result<(), bool> {
        let mut inner = self.lock();
        if inner.active.values().filter(|a| a.tree == Some((tree, depth))).count() >= limit {
            return Err(true);
        }
        if inner.active.contains_key(&context.id) {
            return Err(false);
        }
        inner.active.insert(context.id.clone(), Active { context, cancel, tree: Some((tree, depth)), progress: None });
        Ok(())
    }

    /// Ids of every running sub-agent.
    pub(crate) fn active_ids(&self) -> Vec<String> {
        self.lock().active.keys().cloned().collect()
    }

    /// Ids of the running children of `parent_session_id`, oldest first.
    pub fn active_ids_of(&self, parent_session_id: &str) -> Vec<String> {
        self.active().into_iter().filter(|c| c.parent_id.as_deref() == Some(parent_session_id)).map(|c| c.id).collect()
    }

    /// Running children at `depth` of delegation tree `tree`.
    pub(crate) fn active_in_tree(&self, tree: u64, depth: u32) -> usize {
        self.lock().active.values().filter(|a| a.tree == Some((tree, depth))).count()
    }

    /// True while `id` is running.
    pub fn is_active(&self, id: &str) -> bool {
        self.lock().active.contains_key(id)
    }

    /// Attaches a running delegation's live record (once its run starts): a forced
    /// completion archives what it reads there. No effect once `id` ended.
    pub(crate) fn track(&self, id: &str, progress: Arc<dyn ChildProgress>) {
        if let Some(active) = self.lock().active.get_mut(id) {
            active.progress = Some(progress);
        }
    }

    /// Ends a sub-agent with its result (status from the result: failed when it has an
    /// error code). Unknown ids are ignored (it may have been force-completed).
    pub fn complete(&self, id: &str, result: SubAgentResult, messages: Vec<Message>, now_ms: u64) {
        let mut inner = self.lock();
        let Some(Active { context, .. }) = inner.active.remove(id) else { return };
        Self::archive_result(&mut inner, context, result, messages, now_ms);
    }

    /// A delegation's run ended with `result` (its final figures): archived as
    /// [`complete`](Self::complete) does (`None`), or — when it was force-completed while
    /// its run wound down — that record keeps its ending and gets these figures and
    /// messages, and its reason is returned (SUB-8: the parent is answered as forced, even
    /// when the run ended with a final answer; the registry decides, under its lock).
    pub(crate) fn conclude(&self, id: &str, result: SubAgentResult, messages: Vec<Message>, now_ms: u64) -> Option<String> {
        let mut inner = self.lock();
        match inner.active.remove(id) {
            Some(Active { context, .. }) => {
                Self::archive_result(&mut inner, context, result, messages, now_ms);
                None
            }
            None => {
                let figures = Figures::of(Some(&result));
                Self::settle(&mut inner, id, figures, result.tools_used, messages)
            }
        }
    }

    /// A delegation dropped before its run ended (its parent's run was cancelled): the
    /// child ends force-completed with `reason` and what it spent, or — when it was
    /// force-completed already — that record gets these figures.
    pub(crate) fn abandon(&self, id: &str, reason: &str, spending: ChildSpending, now_ms: u64) {
        let mut inner = self.lock();
        match inner.active.remove(id) {
            Some(Active { mut context, cancel, .. }) => {
                cancel.cancel();
                context.force_complete(reason, now_ms);
                Self::record_spending(&mut context, spending);
                Self::archive(&mut inner, context);
            }
            None => {
                let figures = Figures { tokens: spending.token_count, usage: spending.usage };
                Self::settle(&mut inner, id, figures, spending.tools_used, spending.messages);
            }
        }
    }

    /// Forces one active sub-agent to end with `reason` and cancels it. Its record holds
    /// what it spent up to now — tokens, usage, tools used, messages — and the
    /// [`stats`](Self::stats) count it; a delegated child's record gets its final figures
    /// once its run has wound down (a call cut off by the cancel, the results answering
    /// it).
    pub fn force_complete(&self, id: &str, reason: &str, now_ms: u64) -> bool {
        Self::force(&mut self.lock(), id, reason, now_ms)
    }

    /// Ends every active sub-agent of a parent session (call when it closes), oldest
    /// first, and every active descendant of those (children of children when
    /// `max_depth` > 1); returns how many direct children were ended. Each is cancelled
    /// and completed with `session-closed`, its record holding what it spent (as
    /// [`force_complete`](Self::force_complete)). It reaches every child that
    /// [`active_ids_of`](Self::active_ids_of) lists, including one whose runtime is still
    /// being built: that one never starts its run.
    pub fn force_complete_all(&self, parent_session_id: &str, now_ms: u64) -> usize {
        let mut inner = self.lock();
        let mut closing: Vec<String> = vec![parent_session_id.to_owned()];
        let mut direct = 0;
        let mut i = 0;
        while i < closing.len() {
            let parent = closing[i].clone();
            let mut children: Vec<(u64, String)> = inner
                .active
                .values()
                .filter(|a| a.context.parent_id.as_deref() == Some(parent.as_str()))
                .map(|a| (a.context.started_at_ms, a.context.id.clone()))
                .collect();
            children.sort();
            for (_, id) in children {
                if Self::force(&mut inner, &id, ChildEnding::SessionClosed.as_str(), now_ms) {
                    direct += usize::from(i == 0);
                    closing.push(id);
                }
            }
            i += 1;
        }
        direct
    }

    /// Drops history entries that ended more than `max_age_ms` ago, and force-completes
    /// active ones started more than `max_age_ms` ago (stuck; `stale`, recorded as
    /// [`force_complete`](Self::force_complete) does). Returns how many were removed or
    /// ended.
    pub fn cleanup(&self, max_age_ms: u64, now_ms: u64) -> usize {
        let stale: Vec<String> =
            self.active().into_iter().filter(|c| now_ms.saturating_sub(c.started_at_ms) > max_age_ms).map(|c| c.id).collect();
        let mut n = stale.iter().filter(|id| self.force_complete(id, ChildEnding::Stale.as_str(), now_ms)).count();
        let mut inner = self.lock();
        let before = inner.completed.len();
        inner.completed.retain(|c| now_ms.saturating_sub(c.ended_at_ms.unwrap_or(c.started_at_ms)) <= max_age_ms);
        n += before - inner.completed.len();
        n
    }

    /// Running sub-agents (oldest first).
    pub fn active(&self) -> Vec<SubAgentContext> {
        let mut list: Vec<SubAgentContext> = self.lock().active.values().map(|a| a.context.clone()).collect();
        list.sort_by(|a, b| a.started_at_ms.cmp(&b.started_at_ms).then_with(|| a.id.cmp(&b.id)));
        list
    }

    /// The last ≤ 100 ended sub-agents, oldest first.
    pub fn history(&self) -> Vec<SubAgentContext> {
        self.lock().completed.iter().cloned().collect()
    }

    /// Totals.
    pub fn stats(&self) -> SubAgentStats {
        let inner = self.lock();
        SubAgentStats {
            active: inner.active.len(),
            history: inner.completed.len(),
            completed_count: inner.completed_count,
            total_tokens: inner.totals.tokens,
            usage: inner.totals.usage.clone(),
        }
    }

    /// Ends active `id` with `reason`: its live record read first (what it spent up to
    /// now; under the registry's lock, which the record's leaf locks never wait for),
    /// then cancelled. A delegation's child stays unsettled until its run wound down.
    fn force(inner: &mut Inner, id: &str, reason: &str, now_ms: u64) -> bool {
        let Some(Active { mut context, cancel, tree, progress }) = inner.active.remove(id) else { return false };
        let spending = progress.map(|p| p.spending());
        cancel.cancel();
        context.force_complete(reason, now_ms);
        let own = spending.as_ref().map(|s| Figures { tokens: s.own_tokens, usage: s.own_usage.clone() }).unwrap_or_default();
        if let Some(spending) = spending {
            Self::record_spending(&mut context, spending);
        }
        if tree.is_some() {
            Self::archive_unsettled(inner, context, own);
        } else {
            Self::archive(inner, context);
        }
        true
    }

    fn archive_result(inner: &mut Inner, mut context: SubAgentContext, result: SubAgentResult, messages: Vec<Message>, now_ms: u64) {
        context.status = if result.error_code.is_some() { SubAgentStatus::Failed } else { SubAgentStatus::Completed };
        context.messages = messages;
        context.result = Some(result);
        context.ended_at_ms = Some(now_ms);
        Self::archive(inner, context);
    }

    /// Puts what a child spent into its (force-completed) record.
    fn record_spending(context: &mut SubAgentContext, spending: ChildSpending) {
        context.messages = spending.messages;
        if let Some(result) = context.result.as_mut() {
            result.token_count = spending.token_count;
            result.usage = spending.usage;
            result.tools_used = spending.tools_used;
        }
    }

    /// A final record: the totals add its figures less its ended descendants'.
    fn archive(inner: &mut Inner, context: SubAgentContext) {
        let figures = Figures::of(context.result.as_ref());
        let descendants = inner.descendants.remove(&context.id).unwrap_or_default();
        inner.totals = std::mem::take(&mut inner.totals).plus(&figures.clone().minus(&descendants));
        Self::fold(inner, &context, &figures);
        Self::push_history(inner, context);
    }

    /// A forced delegation whose run still winds down: the totals add its own calls.
    fn archive_unsettled(inner: &mut Inner, context: SubAgentContext, own: Figures) {
        let figures = Figures::of(context.result.as_ref());
        inner.totals = std::mem::take(&mut inner.totals).plus(&own);
        let folded_into = Self::fold(inner, &context, &figures);
        let reason = context.result.as_ref().and_then(|r| r.forced_reason.clone()).unwrap_or_default();
        inner.unsettled.insert(context.id.clone(), Unsettled { figures, counted: own, folded_into, reason });
        Self::push_history(inner, context);
    }

    /// Adds an ended child's `figures` to its parent's descendants while the parent is
    /// open; returns the parent then.
    fn fold(inner: &mut Inner, context: &SubAgentContext, figures: &Figures) -> Option<String> {
        let parent = context.parent_id.clone().filter(|p| inner.is_open(p))?;
        let entry = inner.descendants.entry(parent.clone()).or_default();
        *entry = std::mem::take(entry).plus(figures);
        Some(parent)
    }

    /// An unsettled record gets its final figures: the totals hold them less its
    /// descendants' instead of its own part at the forced completion, its open parent's
    /// descendants follow, and the record in the history is updated in place. Returns the
    /// reason it was forced with (`None`: no such record).
    fn settle(inner: &mut Inner, id: &str, figures: Figures, tools_used: Vec<String>, messages: Vec<Message>) -> Option<String> {
        let unsettled = inner.unsettled.remove(id)?;
        let descendants = inner.descendants.remove(id).unwrap_or_default();
        inner.totals = std::mem::take(&mut inner.totals).minus(&unsettled.counted).plus(&figures.clone().minus(&descendants));
        if let Some(parent) = unsettled.folded_into.filter(|p| inner.is_open(p)) {
            let entry = inner.descendants.entry(parent).or_default();
            *entry = std::mem::take(entry).minus(&unsettled.figures).plus(&figures);
        }
        if let Some(context) = inner.completed.iter_mut().rev().find(|c| c.id == id) {
            context.messages = messages;
            if let Some(result) = context.result.as_mut() {
                (result.token_count, result.usage, result.tools_used) = (figures.tokens, figures.usage, tools_used);
            }
        }
        Some(unsettled.reason)
    }

    fn push_history(inner: &mut Inner, context: SubAgentContext) {
        inner.completed_count += 1;
        if inner.completed.len() == REGISTRY_HISTORY_CAPACITY {
            inner.completed.pop_front();
        }
        inner.completed.push_back(context);
    }
}

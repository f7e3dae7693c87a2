//! ISO-4: every sub-agent, live and past. Thread-safe; share one `Arc` across runtimes
//! to see all sessions' sub-agents in one place.
//!
//! The registry is the one source of truth for running children: a delegation is
//! registered here when it reserves its slot (before its runtime is built), the
//! concurrency budget counts the entries here, and a runtime's `active_children()` is a
//! view of them. So what `active()` lists, `force_complete_all` reaches, at every moment.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::context::{SubAgentContext, SubAgentResult, SubAgentStatus};
use super::ending::ChildEnding;
use crate::history::ChildUsageSummary;

/// Completed contexts kept for history.
pub const REGISTRY_HISTORY_CAPACITY: usize = 100;

/// Totals (`getStats`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentStats {
    /// Running now.
    pub active: usize,
    /// Kept in the history ring (≤ 100).
    pub history: usize,
    /// Completed or failed since the registry was created.
    pub completed_count: u64,
    /// Tokens used by every ended sub-agent, each call counted once (a nested child's
    /// tokens are in its parent's `token_count` too, but counted here once).
    pub total_tokens: u64,
    /// The reported usage of every ended sub-agent, each call counted once (COST-1,
    /// COST-2): tokens, cached and reasoning tokens, calls and per-currency costs, from
    /// each result's [`usage`](SubAgentResult::usage) with a nested child's part counted
    /// in the child alone. Unlike `total_tokens` it holds no estimates.
    #[serde(default)]
    pub usage: ChildUsageSummary,
}

struct Active {
    context: SubAgentContext,
    cancel: CancellationToken,
    /// The delegation tree (one root runtime and its descendants) and the depth in it
    /// (1: a child of the root) whose concurrency budget this child counts against;
    /// `None` for entries registered by hand.
    tree: Option<(u64, u32)>,
}

#[derive(Default)]
struct Inner {
    active: HashMap<String, Active>,
    completed: VecDeque<SubAgentContext>,
    total_tokens: u64,
    completed_count: u64,
    /// Tokens of ended sub-agents whose parent is still running, by parent id: a
    /// parent's `token_count` covers its subtree, so `total_tokens` adds only the part
    /// that is its own (each call counted once).
    descendant_tokens: HashMap<String, u64>,
    /// `usage` of every ended sub-agent, each call once (as `total_tokens`).
    usage: ChildUsageSummary,
    /// Usage of ended sub-agents whose parent is still running, by parent id (as
    /// `descendant_tokens`).
    descendant_usage: HashMap<String, ChildUsageSummary>,
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
        self.lock().active.insert(context.id.clone(), Active { context, cancel, tree: None });
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
        inner.active.insert(context.id.clone(), Active { context, cancel, tree: Some((tree, depth)) });
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

    /// Ends a sub-agent with its result (status from the result: failed when it has an
    /// error code). Unknown ids are ignored (it may have been force-completed).
    pub fn complete(&self, id: &str, result: SubAgentResult, messages: Vec<crate::history::Message>, now_ms: u64) {
        let mut inner = self.lock();
        let Some(Active { mut context, .. }) = inner.active.remove(id) else { return };
        context.status = if result.error_code.is_some() { SubAgentStatus::Failed } else { SubAgentStatus::Completed };
        context.messages = messages;
        context.result = Some(result);
        context.ended_at_ms = Some(now_ms);
        Self::archive(&mut inner, context);
    }

    /// Forces one active sub-agent to end with `reason` and cancels it.
    pub fn force_complete(&self, id: &str, reason: &str, now_ms: u64) -> bool {
        self.force_complete_with(id, reason, None, None, now_ms)
    }

    /// [`force_complete`](Self::force_complete) keeping the child's messages and usage,
    /// when known.
    pub(crate) fn force_complete_with(
        &self,
        id: &str,
        reason: &str,
        messages: Option<Vec<crate::history::Message>>,
        usage: Option<ChildUsageSummary>,
        now_ms: u64,
    ) -> bool {
        let mut inner = self.lock();
        let Some(Active { mut context, cancel, .. }) = inner.active.remove(id) else { return false };
        cancel.cancel();
        context.force_complete(reason, now_ms);
        if let Some(messages) = messages {
            context.messages = messages;
        }
        if let (Some(usage), Some(result)) = (usage, context.result.as_mut()) {
            result.usage = usage;
        }
        Self::archive(&mut inner, context);
        true
    }

    /// Ends every active sub-agent of a parent session (call when it closes), oldest
    /// first, and every active descendant of those (children of children when
    /// `max_depth` > 1); returns how many direct children were ended. Each is cancelled
    /// and completed with `session-closed`. It reaches every child that
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
                if let Some(Active { mut context, cancel, .. }) = inner.active.remove(&id) {
                    cancel.cancel();
                    context.force_complete(ChildEnding::SessionClosed.as_str(), now_ms);
                    Self::archive(&mut inner, context);
                    if i == 0 {
                        direct += 1;
                    }
                    closing.push(id);
                }
            }
            i += 1;
        }
        direct
    }

    /// Drops history entries that ended more than `max_age_ms` ago, and force-completes
    /// active ones started more than `max_age_ms` ago (stuck). Returns how many were
    /// removed or ended.
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
            total_tokens: inner.total_tokens,
            usage: inner.usage.clone(),
        }
    }

    fn archive(inner: &mut Inner, context: SubAgentContext) {
        inner.completed_count += 1;
        let subtree = context.result.as_ref().map_or(0, |r| r.token_count);
        let descendants = inner.descendant_tokens.remove(&context.id).unwrap_or_default();
        inner.total_tokens = inner.total_tokens.saturating_add(subtree.saturating_sub(descendants));
        let subtree_usage = context.result.as_ref().map(|r| r.usage.clone()).unwrap_or_default();
        let descendant_usage = inner.descendant_usage.remove(&context.id).unwrap_or_default();
        inner.usage = std::mem::take(&mut inner.usage).plus(subtree_usage.clone().minus(&descendant_usage));
        if let Some(parent) = context.parent_id.as_ref().filter(|p| inner.active.contains_key(*p)) {
            let entry = inner.descendant_tokens.entry(parent.clone()).or_default();
            *entry = entry.saturating_add(subtree);
            let entry = inner.descendant_usage.entry(parent.clone()).or_default();
            *entry = std::mem::take(entry).plus(subtree_usage);
        }
        if inner.completed.len() == REGISTRY_HISTORY_CAPACITY {
            inner.completed.pop_front();
        }
        inner.completed.push_back(context);
    }
}

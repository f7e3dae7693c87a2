//! ISO-4: every sub-agent, live and past. Thread-safe; share one `Arc` across runtimes
//! to see all sessions' sub-agents in one place.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::context::{SubAgentContext, SubAgentResult, SubAgentStatus};

/// Completed contexts kept for history.
pub const REGISTRY_HISTORY_CAPACITY: usize = 100;

/// Totals (`getStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentStats {
    /// Running now.
    pub active: usize,
    /// Kept in the history ring (≤ 100).
    pub history: usize,
    /// Completed or failed since the registry was created.
    pub completed_count: u64,
    /// Tokens used by every ended sub-agent.
    pub total_tokens: u64,
}

struct Active {
    context: SubAgentContext,
    cancel: CancellationToken,
}

#[derive(Default)]
struct Inner {
    active: HashMap<String, Active>,
    completed: VecDeque<SubAgentContext>,
    total_tokens: u64,
    completed_count: u64,
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
        self.lock().active.insert(context.id.clone(), Active { context, cancel });
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
        let mut inner = self.lock();
        let Some(Active { mut context, cancel }) = inner.active.remove(id) else { return false };
        cancel.cancel();
        context.force_complete(reason, now_ms);
        Self::archive(&mut inner, context);
        true
    }

    /// Ends every active sub-agent of a parent session (call when it closes), oldest
    /// first; returns how many. Each is cancelled and completed with `session-closed`.
    pub fn force_complete_all(&self, parent_session_id: &str, now_ms: u64) -> usize {
        let ids: Vec<String> =
            self.active().into_iter().filter(|c| c.parent_id.as_deref() == Some(parent_session_id)).map(|c| c.id).collect();
        ids.iter().filter(|id| self.force_complete(id, "session-closed", now_ms)).count()
    }

    /// Drops history entries that ended more than `max_age_ms` ago, and force-completes
    /// active ones started more than `max_age_ms` ago (stuck). Returns how many were
    /// removed or ended.
    pub fn cleanup(&self, max_age_ms: u64, now_ms: u64) -> usize {
        let stale: Vec<String> =
            self.active().into_iter().filter(|c| now_ms.saturating_sub(c.started_at_ms) > max_age_ms).map(|c| c.id).collect();
        let mut n = stale.iter().filter(|id| self.force_complete(id, "stale", now_ms)).count();
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
        }
    }

    fn archive(inner: &mut Inner, context: SubAgentContext) {
        inner.completed_count += 1;
        inner.total_tokens = inner.total_tokens.saturating_add(context.result.as_ref().map_or(0, |r| r.token_count));
        if inner.completed.len() == REGISTRY_HISTORY_CAPACITY {
            inner.completed.pop_front();
        }
        inner.completed.push_back(context);
    }
}

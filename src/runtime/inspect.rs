//! What a runtime shows: its config, tools, state and parts of it, memory, observers,
//! sub-agents.

use std::sync::Arc;

use super::agent::AgentRuntime;
use super::config::AgentRuntimeConfig;
use super::events::{AgentObserver, Subscription};
use crate::history::{AgentState, Message, ModelUsage, UsageTotals};
use crate::memory::{EpisodicMemory, MemoryService, ScopedMemory};
use crate::subagent::SubAgentRegistry;
use crate::tools::ToolDefinition;

impl AgentRuntime {

    /// The config.
    pub fn config(&self) -> &AgentRuntimeConfig {
        &self.inner.config
    }

    /// The tools the model is offered (host tools plus built-ins such as `retrieve_memory`,
    /// and MCP servers' tools once connected: MCP-2).
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.inner.session.tool_definitions()
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        self.inner.session.snapshot().session_id.clone()
    }

    /// A copy of the whole state.
    pub fn state(&self) -> AgentState {
        (*self.inner.session.snapshot()).clone()
    }

    /// A copy of the messages: the live history. While a turn's tools run or the turn
    /// waits for approval it ends with that turn's model answer (mid-turn, with the results
    /// so far), which [`export_state`](Self::export_state) — the committed history, always
    /// paired — leaves out until the turn is paired.
    pub fn messages(&self) -> Vec<Message> {
        self.inner.session.live_messages()
    }

    /// IMG-4: the image with content id `id` (SHA-256 hex, as a memory line names it),
    /// from the live history or an episode's archived originals: the host reads a
    /// compressed-out photo's bytes back; with `keep_original_images` (IMG-9), also a
    /// photo the image codec replaced, by its own id. `None` when the session holds none.
    pub fn image(&self, id: &str) -> Option<crate::history::ImageData> {
        self.inner.session.snapshot().find_image(id).or_else(|| self.inner.originals.lock().ok()?.get(id).cloned())
    }

    /// A copy of the recorded usages.
    pub fn usages(&self) -> Vec<ModelUsage> {
        self.inner.session.snapshot().usages.clone()
    }

    /// The episodes compressed so far (cheap: archived messages are shared).
    pub fn episodic_memories(&self) -> Vec<EpisodicMemory> {
        self.inner.session.snapshot().history.episodic_memories.clone()
    }

    /// PERF-2: the heap bytes this runtime holds, per component (history, episodes,
    /// usages, encoding cache, fixed encodings). Approximate (capacities); for finding
    /// where a long chat's memory goes.
    pub fn memory_report(&self) -> super::memory_report::MemoryReport {
        let state = self.inner.session.snapshot();
        let mut report = super::memory_report::state_report(&state);
        (report.encoding_cache, report.fixed_encodings) = self.inner.session.encoding_heap_bytes();
        report
    }

    /// Read-only access to episodic memory over the live state (MEM-1).
    pub fn memory(&self) -> Arc<dyn MemoryService> {
        self.inner.session.view().memory_service()
    }

    /// The body of the next model request for the current state, encoded from scratch
    /// with the typed wire structs (no cache). The runtime assembles its bodies from
    /// cached encodings (PERF-7); tests and benchmarks compare the two byte for byte.
    #[doc(hidden)]
    pub fn request_body_from_scratch(&self) -> String {
        self.inner.session.body_from_scratch(&self.inner.session.snapshot())
    }

    /// Subscribes an observer; keep the returned [`Subscription`] alive.
    pub fn subscribe(&self, observer: Arc<dyn AgentObserver>) -> Subscription {
        self.inner.emitter.bus.subscribe(observer)
    }

    /// Unsubscribes by id; true when it was subscribed.
    pub fn unsubscribe(&self, subscription_id: u64) -> bool {
        self.inner.emitter.bus.unsubscribe(subscription_id)
    }

    /// The one documented total of what this session cost (SUB-6): its own calls
    /// (compression included) plus every delegated child's, each counted once.
    pub fn total_usage(&self) -> UsageTotals {
        self.inner.session.snapshot().total_usage()
    }

    /// 0 for a root runtime, 1 for its children, 2 for theirs (`max_depth` > 1).
    pub fn depth(&self) -> u32 {
        self.inner.depth
    }

    /// Session ids of this runtime's sub-agents running now: a view of the
    /// [`sub_agent_registry`](Self::sub_agent_registry), so it always agrees with the
    /// registry's active list, and `force_complete_all(session_id)` ends every child it
    /// lists — including one whose runtime is still being built.
    pub fn active_children(&self) -> Vec<String> {
        self.inner.sub_agents.as_ref().map(|s| s.active_children()).unwrap_or_default()
    }

    /// This runtime's working and short-term memory namespace (MEM-4).
    pub fn working_memory(&self) -> ScopedMemory {
        self.inner.memory.clone()
    }

    /// The registry tracking this runtime's sub-agents (ISO-4), when delegation is on.
    pub fn sub_agent_registry(&self) -> Option<Arc<SubAgentRegistry>> {
        self.inner.sub_agents.as_ref().map(|s| Arc::clone(s.registry()))
    }

    /// Seeds a fresh child's history with its parent's context slice.
    pub(crate) fn seed_history(&self, messages: Vec<Message>) {
        self.inner.session.seed(messages);
    }
}

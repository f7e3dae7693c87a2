//! Memory as JS sees it: `EpisodicMemory`, a read-only view of one compressed stretch of
//! conversation; `MemoryNamespace` (MEM-4) with its `NamespaceStats`; and the
//! `ToolContext` every tool gets (seed 000 §3: the MemoryService and the namespace).

use arkagent::memory::{MemoryTier, ScopedMemory};
use napi_derive_ohos::napi;

use crate::args::Arg;
use crate::codes::ModuleCode;
use crate::convert::{optional, Optional};
use crate::callback::{JsFunction, JsListener};
use crate::error::{internal, private_constructor, thrown, Thrown};

/// One compressed stretch of conversation (read-only).
#[napi]
pub struct EpisodicMemory {
    inner: arkagent::EpisodicMemory,
}

impl From<arkagent::EpisodicMemory> for EpisodicMemory {
    fn from(inner: arkagent::EpisodicMemory) -> Self {
        Self { inner }
    }
}

#[napi]
impl EpisodicMemory {
    /// Instances come from `AgentRuntime.episodicMemories()`, `listEpisodes()` and `findEpisode()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("EpisodicMemory"))
    }

    /// Snapshot id, unique within the session.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// The `<state_snapshot>` summary.
    #[napi(getter)]
    pub fn summary(&self) -> String {
        self.inner.summary.clone()
    }

    /// Creation time, milliseconds since the Unix epoch.
    #[napi(getter)]
    pub fn created_at_ms(&self) -> f64 {
        self.inner.created_at_ms as f64
    }

    /// How many messages the episode covers.
    #[napi(getter)]
    pub fn message_count(&self) -> u32 {
        u32::try_from(self.inner.message_count).unwrap_or(u32::MAX)
    }

    /// The archived original messages as JSON (an array).
    #[napi(getter)]
    pub fn archived_messages_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.inner.archived_messages).map_err(|e| thrown(e.into()))
    }
}

/// Entry counts of one memory namespace (MEM-4; read-only).
#[napi]
pub struct NamespaceStats {
    inner: arkagent::memory::NamespaceStats,
}

#[napi]
impl NamespaceStats {
    /// Instances come from `MemoryNamespace.stats()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("NamespaceStats"))
    }

    #[napi(getter)]
    pub fn working(&self) -> f64 {
        self.inner.working as f64
    }

    #[napi(getter)]
    pub fn short_term(&self) -> f64 {
        self.inner.short_term as f64
    }
}

/// The core tier by its serde name ("working", "short_term").
pub fn memory_tier(name: &str) -> Result<MemoryTier, Thrown> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(|_| {
        napi_ohos::Error::new(
            ModuleCode::InvalidArgument.to_owned_code(),
            format!("unknown memory tier {name:?}; use \"working\" or \"short_term\""),
        )
    })
}

/// One runtime's working and short-term memory (MEM-4): "global" for a root runtime, the
/// child's session id for a sub-agent; namespaces never see each other's entries. A live
/// handle. `tier`: "working" | "short_term" (else "invalid_argument").
#[napi]
pub struct MemoryNamespace {
    inner: ScopedMemory,
}

impl From<ScopedMemory> for MemoryNamespace {
    fn from(inner: ScopedMemory) -> Self {
        Self { inner }
    }
}

#[napi]
impl MemoryNamespace {
    /// Instances come from `AgentRuntime.memory()` and `ToolContext.memory`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("MemoryNamespace"))
    }

    #[napi(getter)]
    pub fn namespace(&self) -> String {
        self.inner.namespace().to_owned()
    }

    /// Stores (or replaces) an entry (JSON text). Throws "invalid_argument", "invalid_json".
    #[napi]
    pub fn store(&self, tier: Arg<String>, id: Arg<String>, entry_json: Arg<String>) -> Result<(), Thrown> {
        let tier = memory_tier(&tier.0)?;
        let entry: serde_json::Value = serde_json::from_str(&entry_json.0).map_err(|e| thrown(e.into()))?;
        self.inner.store(tier, &id.0, entry);
        Ok(())
    }

    /// The entry (JSON text), if any.
    #[napi]
    pub fn recall(&self, tier: Arg<String>, id: Arg<String>) -> Result<Optional<String>, Thrown> {
        let tier = memory_tier(&tier.0)?;
        Ok(optional(self.inner.recall(tier, &id.0).map(|e| e.to_string())))
    }

    /// Removes an entry; true when it was there.
    #[napi]
    pub fn forget(&self, tier: Arg<String>, id: Arg<String>) -> Result<bool, Thrown> {
        Ok(self.inner.forget(memory_tier(&tier.0)?, &id.0))
    }

    /// The ids of a tier, sorted.
    #[napi]
    pub fn ids(&self, tier: Arg<String>) -> Result<Vec<String>, Thrown> {
        Ok(self.inner.ids(memory_tier(&tier.0)?))
    }

    #[napi]
    pub fn stats(&self) -> NamespaceStats {
        NamespaceStats { inner: self.inner.stats() }
    }
}

/// What a tool executor gets besides the call (read-only services; never the state).
#[napi]
pub struct ToolContext {
    inner: arkagent::ToolContext,
    /// Fires when the call is over (TOOL-4: its abort listeners stop waiting).
    done: arkagent::CancellationToken,
    site: Option<arkagent::llm::host_call::WatchSite>,
}

impl ToolContext {
    /// The context of one running call: `done` fires when the call is over, `site` is
    /// where its abort listeners wait.
    pub fn for_call(
        inner: arkagent::ToolContext,
        done: arkagent::CancellationToken,
        site: Option<arkagent::llm::host_call::WatchSite>,
    ) -> Self {
        Self { inner, done, site }
    }
}

#[napi]
impl ToolContext {
    /// Instances come from the runtime, one per tool executor call.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("ToolContext"))
    }

    /// The calling runtime's session id.
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id.clone()
    }

    #[napi(getter)]
    pub fn run_id(&self) -> String {
        self.inner.run_id.clone()
    }

    /// The calling runtime's episodes over its live state, oldest first (MEM-1).
    #[napi]
    pub fn list_episodes(&self) -> Vec<EpisodicMemory> {
        self.inner
            .episodes
            .as_ref()
            .map(|m| m.list_episodes().into_iter().map(EpisodicMemory::from).collect())
            .unwrap_or_default()
    }

    /// The episode with this snapshot id, if any (MEM-1).
    #[napi]
    pub fn find_episode(&self, snapshot_id: Arg<String>) -> Optional<EpisodicMemory> {
        optional(
            self.inner
                .episodes
                .as_ref()
                .and_then(|m| m.find_episode(&snapshot_id.0))
                .map(EpisodicMemory::from),
        )
    }

    /// The calling runtime's memory namespace.
    #[napi(getter)]
    pub fn memory(&self) -> MemoryNamespace {
        self.inner.memory.clone().into()
    }

    /// TOOL-4: this call's abort signal — it fires on the call's deadline, on the run's
    /// cancel and when the runtime stops waiting; see ToolAbortSignal.
    #[napi(getter)]
    pub fn signal(&self) -> ToolAbortSignal {
        ToolAbortSignal::new(&self.inner, self.done.clone(), self.site.clone())
    }
}

/// TOOL-4: a tool call's abort signal, like the web's `AbortSignal`: it fires once, when
/// the call passes its deadline (reason "tool_timeout": the model was answered with a
/// "tool_timeout" error result), when the run is cancelled (`AgentRuntime.cancel()`, a
/// sub-agent's force-completion: "cancelled") or when the runtime stops waiting for the
/// call otherwise ("closed"). It never fires for a call whose Promise settled first.
/// Whatever the executor does, the run does not wait for it past the deadline; a tool that
/// listens stops its work (a request, a dialog) instead of finishing it for nobody. What
/// it resolves with after the signal fired is ignored.
#[napi]
pub struct ToolAbortSignal {
    abort: arkagent::tools::ToolAbort,
    token: arkagent::CancellationToken,
    done: arkagent::CancellationToken,
    site: Option<arkagent::llm::host_call::WatchSite>,
}

#[napi]
impl ToolAbortSignal {
    /// Instances come from `ToolContext.signal`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("ToolAbortSignal"))
    }

    /// Whether the signal fired.
    #[napi(getter)]
    pub fn aborted(&self) -> bool {
        self.abort.reason().is_some()
    }

    /// Why it fired: "tool_timeout", "cancelled" or "closed"; null while it has not.
    #[napi(getter)]
    pub fn reason(&self) -> Option<String> {
        self.abort.reason().map(|r| r.as_str().to_owned())
    }

    /// Calls `listener()` once, on the JS thread, when the signal fires — soon after, if it
    /// already fired — unless the call's Promise settled first; `signal.reason` then says
    /// why (as with the web's AbortSignal). Several listeners may be added; one that throws
    /// is ignored.
    #[napi(ts_args_type = "listener: () => void")]
    pub fn on_abort(&self, listener: Arg<JsFunction<'_, ()>>) -> Result<(), Thrown> {
        let listener = JsListener::new(listener.0).map_err(internal)?;
        let fire = move || listener.notify(());
        match &self.site {
            Some(site) => arkagent::llm::host_call::watch_token(site, self.token.clone(), self.done.clone(), fire),
            // Not from a running call (no runtime to watch on): only a fired signal is heard.
            None if self.token.is_cancelled() => fire(),
            None => {}
        }
        Ok(())
    }
}

impl ToolAbortSignal {
    /// The signal of the call `ctx` belongs to; `done` fires when the call is over.
    pub fn new(
        ctx: &arkagent::ToolContext,
        done: arkagent::CancellationToken,
        site: Option<arkagent::llm::host_call::WatchSite>,
    ) -> Self {
        Self { abort: ctx.abort.clone(), token: ctx.cancel.clone(), done, site }
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: EpisodicMemory

// declare: NamespaceStats

// declare: MemoryNamespace

// declare: ToolContext

// declare: ToolAbortSignal
*/

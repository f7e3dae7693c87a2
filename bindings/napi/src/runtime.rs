//! `AgentRuntime`: one conversation, delegating every call to the core runtime.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::memory::MemoryService;
use arkagent::runtime::RunSlot;
use arkagent::{ArkAgentError, RunOutcome, Subscription};
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{ClassInstance, PromiseRaw, This, ToNapiValue};
use napi_ohos::Env;
use serde_json::Value;

use crate::approval_order::AnswerQueue;
use crate::args::{constructing, Arg};
use crate::callback::JsFunction;
use crate::config::AgentRuntimeConfig;
use crate::convert::{optional, Optional};
use crate::error::{internal, rejection, thrown, CodedError, Thrown};
use crate::events::{JsAgentEvent, JsObserver};
use crate::images::{image_info, ContentPart, JsImageInfo};
use crate::memory::{memory_tier, EpisodicMemory, MemoryNamespace};
use crate::numbers::argument;
use crate::store::SessionStore;
use crate::tools::ToolRegistry;
use crate::transport::{JsTransport, TransportArgs};
use crate::records;

/// One conversation with a model and tools.
#[napi]
pub struct AgentRuntime {
    core: arkagent::AgentRuntime,
    /// Read-only episodic memory over the live state (MEM-1).
    memory: Arc<dyn MemoryService>,
    /// Live JS listeners by subscription id; dropping one unsubscribes it.
    subscriptions: Mutex<HashMap<u32, Subscription>>,
    /// Approval answers given and not yet made, kept in the order JS gave them (TOOL-1).
    answers: Arc<AnswerQueue>,
}

#[napi]
impl AgentRuntime {
    /// With `store`, the runtime opens the session `config.sessionId` in it — set a fixed
    /// id to resume a chat after a restart; when it is empty a new id is generated, so a new
    /// session is created every time (read it back from `sessionId`). A session with commits
    /// is resumed: its history, episodes (retrieve_memory reaches their archived originals)
    /// and usages replace the new runtime's empty state; the loading is synchronous (a few
    /// ms for a normal chat, 38 ms at 10,000 messages). From then on every commit point (the
    /// user message with the run start, each assistant message with its tool results, each
    /// compression, usages) is written in one transaction, off the JS thread, and reported
    /// by a "session_committed" event. Throws "session_locked" while another runtime (in
    /// this process or another) has the session — until that runtime's detachStore() or its
    /// garbage collection — and the SessionStore codes; "tool_name_duplicate" when `tools`
    /// has a tool named "retrieve_memory" and the runtime compresses, or "delegate_task" and
    /// it delegates (those names are the library's). Without `store` nothing is persisted
    /// (exportState()/importState() remain).
    #[napi(
        constructor,
        ts_args_type = "config: AgentRuntimeConfig, transport: HttpTransport, tools: ToolRegistry, store?: SessionStore"
    )]
    pub fn new(
        env: &Env,
        this: This<'_>,
        config: Arg<ClassInstance<'_, AgentRuntimeConfig>>,
        transport: Arg<JsFunction<'_, TransportArgs>>,
        tools: Arg<ClassInstance<'_, ToolRegistry>>,
        store: Arg<Option<ClassInstance<'_, SessionStore>>>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "AgentRuntime")?;
        let (config, transport, tools) = (config.0, transport.0, tools.0);
        let mut config = config.core();
        // MEM-4: working memory belongs to a runtime, also when several are built from
        // one config object.
        config.memory_store = arkagent::memory::NamespacedMemoryStore::new();
        config.tools = tools.core();
        config.store = store.0.map(|store| store.shared());
        let transport = JsTransport::new(transport).map_err(internal)?;
        let core = arkagent::AgentRuntime::new(config, Arc::new(transport)).map_err(thrown)?;
        Ok(Self {
            memory: core.memory(),
            core,
            subscriptions: Mutex::new(HashMap::new()),
            answers: Arc::default(),
        })
    }

    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.core.session_id()
    }

    /// Runs until a final answer, max iterations or cancel(). The run is registered before
    /// the Promise is returned: a cancel() right after run() cancels it, and a run() (or
    /// compressNow()) while a run is active rejects with code "run_in_progress".
    /// When it rejects with a model error and the model had produced nothing in this run (its
    /// first call failed), the input is taken out again: the history is as before the run
    /// (a compression committed meanwhile stays), so a retry never sends the input twice and
    /// an input too large for the model cannot wedge the session. After a later call fails,
    /// the history ends with the last tool results, paired.
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        input: Arg<String>,
    ) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let input = input.0;
        // The core claims the run slot here, on the JS thread, before the Promise is
        // returned: a `cancel()` right after `run()` reaches this run, and a second `run()`
        // is refused with `run_in_progress` (as a rejection, like every run error).
        // The slot is handed back with the outcome and freed only here, as the Promise
        // settles: a `run()` issued before that is refused, never squeezed in between.
        let started = self.core.start_run_holding_slot(input);
        settle_holding_slot(env, started, |outcome: Result<RunOutcome, _>| outcome.map(|o| records::to_js(&o)))
    }

    /// run() with ordered text and image parts as the input (IMG-1): e.g.
    /// `[ContentPart.text('what is this plant?'), ContentPart.image(jpegBytes, 'image/jpeg')]`.
    /// The photo goes to the model as its wire format carries images (an OpenAI-compatible
    /// `image_url` data URL, an Anthropic `image` block), encoded once for the whole chat;
    /// it is kept in the history, exportState() and the SessionStore. Rejects, with nothing
    /// written and nothing sent, with "image_unsupported_type" (a HEIC/HEIF photo for a
    /// model family that does not take it: pack it as JPEG first), "image_too_large" (over
    /// ModelConfig.maxImageBytes) or "too_many_images" (the request would carry more than
    /// ModelConfig.maxImagesPerRequest; earlier photos leave the request when a compression
    /// archives them — compressNow() does only once the prompt reaches the threshold — or
    /// when rewind() drops their runs).
    #[napi(ts_args_type = "parts: ContentPart[]", ts_return_type = "Promise<RunResult>")]
    pub fn run_parts<'env>(
        &self,
        env: &'env Env,
        parts: Arg<Vec<ClassInstance<'_, ContentPart>>>,
    ) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let content = arkagent::Content::Parts(parts.0.iter().map(|p| p.core()).collect());
        let started = self.core.start_run_holding_slot(content);
        settle_holding_slot(env, started, |outcome: Result<RunOutcome, _>| outcome.map(|o| records::to_js(&o)))
    }

    /// The image with this id (SHA-256 hex), from the live history or an episode's archived
    /// originals — the id a compressed-out photo's line names in summaries and retrieve_memory
    /// results ("[image image/jpeg, 4032×3024 px, N bytes, id …]"); undefined when the
    /// session holds none.
    #[napi(ts_return_type = "ImageInfo | undefined")]
    pub fn image(&self, id: Arg<String>) -> Optional<JsImageInfo> {
        optional(self.core.image(&id.0).as_ref().map(image_info))
    }

    /// One compression attempt now, with the compressor's usual checks; resolves "skipped"
    /// ("no_usage") when no compressor is configured. Like run(), it takes the run slot
    /// before the Promise is returned: it rejects with "run_in_progress" while a run is
    /// active, and a run() (or compressNow()) called before it settles is refused the same
    /// way. A failed or skipped attempt leaves exportState() byte-identical.
    #[napi(ts_return_type = "Promise<CompressResult>")]
    pub fn compress_now<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let started = self.core.start_compress_now_holding_slot();
        settle_holding_slot(env, started, |result| Ok(records::to_js(&result)))
    }

    /// Releases this runtime's session in its SessionStore, so that another runtime can open
    /// it now (on a page rebuilt, say) rather than when this one is garbage-collected.
    /// What was committed stays; nothing more is committed. A turn paused for approval goes
    /// with the stored session: pendingApprovals() is then empty here, and approve(),
    /// reject() and resumeRun() reject with "approval_not_pending" — so the runtime that
    /// opens the session next is the one that answers, and no call runs twice. false when no
    /// store is attached. Throws "run_in_progress" during a run.
    #[napi]
    pub fn detach_store(&self) -> Result<bool, Thrown> {
        self.core.detach_store().map_err(thrown)
    }

    /// Cancels the active run, if any: in-flight HTTP and tools stop, history stays paired.
    #[napi]
    pub fn cancel(&self) {
        self.core.cancel();
    }

    /// The whole state (history, episodic memories, usages, session id) as JSON. Callable at
    /// any moment — from a tool, a listener at any event, while a run is in flight — and
    /// always accepted by importState(): while a turn's tools are running, it holds the last
    /// consistent history (without that open turn). The API key never appears in it, even
    /// when a tool, the model or the input echoed it (replaced by "<redacted>").
    #[napi]
    pub fn export_state(&self) -> Result<String, Thrown> {
        self.core.export_state().map_err(thrown)
    }

    /// Replaces the state with an exported one. Throws "invalid_json", "invalid_state" or
    /// "run_in_progress" (nothing changes). Without a store the state is replaced and the run
    /// slot free before this returns (a run() right after it runs on the imported state),
    /// and the Promise resolves. With one, the import is first written to the store
    /// (replacing the stored session) off the JS thread and the state is replaced only when
    /// that write succeeded; otherwise the Promise rejects with the store's code
    /// ("store_full", "store_read_only", "store_io", "store_corrupt") and the old state is
    /// kept, in memory and stored. A photo of the imported history out of this model's
    /// bounds rejects it with the image's code ("image_too_large", "too_many_images", …),
    /// nothing changed. With a store, until it settles, run() and compressNow() are refused
    /// with "run_in_progress".
    #[napi(ts_return_type = "Promise<void>")]
    pub fn import_state<'env>(
        &self,
        env: &'env Env,
        state_json: Arg<String>,
    ) -> Result<PromiseRaw<'env, ()>, Thrown> {
        let import = self.core.start_import_state_holding_slot(&state_json.0).map_err(thrown)?;
        env.spawn_future_with_callback(
            async move { Ok(import.await) },
            move |env: &'env Env, (result, _slot): (Result<(), arkagent::ArkAgentError>, Option<RunSlot>)| {
                result.map_err(|e| rejection(env, CodedError::from(e)))
            },
        )
        .map_err(internal)
    }

    /// The messages as JSON (an array): the live history. While a turn's tools run or the
    /// turn waits for approval it ends with that turn's model answer (mid-turn, with the
    /// results so far), which exportState() — the committed history, always paired —
    /// leaves out until the turn is paired.
    #[napi]
    pub fn history_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.core.messages()).map_err(|e| thrown(e.into()))
    }

    /// The episodes compressed out of the live history, oldest first.
    #[napi]
    pub fn episodic_memories(&self) -> Vec<EpisodicMemory> {
        self.core
            .episodic_memories()
            .into_iter()
            .map(EpisodicMemory::from)
            .collect()
    }

    /// The episodes over the live state (after compressions and imports), oldest first.
    #[napi]
    pub fn list_episodes(&self) -> Vec<EpisodicMemory> {
        self.memory
            .list_episodes()
            .into_iter()
            .map(EpisodicMemory::from)
            .collect()
    }

    /// The episode with this snapshot id, if any.
    #[napi]
    pub fn find_episode(&self, snapshot_id: Arg<String>) -> Optional<EpisodicMemory> {
        optional(
            self.memory
                .find_episode(&snapshot_id.0)
                .map(EpisodicMemory::from),
        )
    }

    #[napi(ts_return_type = "ModelUsage[]")]
    pub fn usages(&self) -> Value {
        records::to_js(&self.core.usages())
    }

    /// Returns a subscription id.
    #[napi(ts_args_type = "listener: AgentEventListener")]
    pub fn subscribe(&self, listener: Arg<JsFunction<'_, JsAgentEvent>>) -> Result<u32, Thrown> {
        let observer = JsObserver::new(listener.0).map_err(internal)?;
        let subscription = self.core.subscribe(Arc::new(observer));
        let id = u32::try_from(subscription.id()).map_err(|_| {
            napi_ohos::Error::new(arkagent::ErrorCode::InvalidState.as_str().to_owned(), "too many subscriptions")
        })?;
        self.lock_subscriptions().insert(id, subscription);
        Ok(id)
    }

    /// false for an unknown id; "invalid_argument" for one that is not an integer in 0..4294967295.
    #[napi]
    pub fn unsubscribe(&self, subscription_id: Arg<f64>) -> Result<bool, Thrown> {
        let id: u32 = argument(subscription_id.0, "subscriptionId")?;
        Ok(self.lock_subscriptions().remove(&id).is_some())
    }

    /// This runtime's memory namespace (MEM-4): store, recall, forget, ids, stats.
    #[napi]
    pub fn memory(&self) -> MemoryNamespace {
        self.core.working_memory().into()
    }

    /// Stores an entry (JSON text) in this runtime's own memory namespace (MEM-4; a
    /// sub-agent's namespace is freed when it ends, and reads never create one); tier:
    /// "working" | "short_term". Throws "invalid_argument" for another tier, "invalid_json".
    #[napi]
    pub fn memory_store(
        &self,
        tier: Arg<String>,
        id: Arg<String>,
        entry_json: Arg<String>,
    ) -> Result<(), Thrown> {
        let tier = memory_tier(&tier.0)?;
        let entry: serde_json::Value =
            serde_json::from_str(&entry_json.0).map_err(|e| thrown(e.into()))?;
        self.core.working_memory().store(tier, &id.0, entry);
        Ok(())
    }

    /// The entry (JSON text) stored under `id` in this runtime's namespace, if any.
    #[napi]
    pub fn memory_recall(
        &self,
        tier: Arg<String>,
        id: Arg<String>,
    ) -> Result<Optional<String>, Thrown> {
        let tier = memory_tier(&tier.0)?;
        Ok(optional(
            self.core
                .working_memory()
                .recall(tier, &id.0)
                .map(|entry| entry.to_string()),
        ))
    }
}

impl AgentRuntime {
    /// The core runtime (for the delegation methods in `runtime_delegation`).
    pub fn core(&self) -> &arkagent::AgentRuntime {
        &self.core
    }

    /// The approval answers not yet made (for `runtime_approval`).
    pub(crate) fn answers(&self) -> &Arc<AnswerQueue> {
        &self.answers
    }

    fn lock_subscriptions(&self) -> MutexGuard<'_, HashMap<u32, Subscription>> {
        // The map holds no invariant a panic could break.
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.

/// Settles a Promise with an operation the core started holding the run slot (CORE-4):
/// a refused start rejects with its code; otherwise the slot comes back with the outcome
/// and is dropped only in the settle callback, on the JS thread, so nothing can claim the
/// slot between the work ending and the Promise settling. `convert` turns the outcome
/// into the JS value (or the core error to reject with).
pub(crate) fn settle_holding_slot<'env, O, V>(
    env: &'env Env,
    started: Result<impl Future<Output = (O, RunSlot)> + Send + 'static, ArkAgentError>,
    convert: impl FnOnce(O) -> Result<V, ArkAgentError> + 'static,
) -> Result<PromiseRaw<'env, V>, Thrown>
where
    O: Send + 'static,
    V: ToNapiValue,
{
    let started = started.map_err(CodedError::from);
    env.spawn_future_with_callback(
        async move {
            Ok(match started {
                Ok(work) => {
                    let (outcome, slot) = work.await;
                    (Ok(outcome), Some(slot))
                }
                Err(e) => (Err(e), None),
            })
        },
        move |env: &'env Env, (outcome, _slot): (Result<O, CodedError>, Option<RunSlot>)| {
            outcome
                .and_then(|o| convert(o).map_err(CodedError::from))
                .map_err(|e| rejection(env, e))
        },
    )
    .map_err(internal)
}

/* ts
// declare: AgentRuntime
*/

//! STORE-6, ArkTS surface: `SessionStore` (a SQLite file or memory) with list and delete;
//! `AgentRuntime` takes one as its optional 4th constructor argument.
//!
//! Every call is synchronous, on the JS thread: opening a store is a few milliseconds
//! (integrity check of a small file), listing is one indexed query, and a runtime
//! constructed with a store loads its session (38 ms at 10⁴ messages, measured in
//! BENCHMARKS.md; a few ms for the hundreds of messages of a normal chat). Commits during
//! a run happen on the run's worker thread, never on the JS thread.

use std::sync::Arc;

use arkagent::store::{InMemorySessionStore, SharedStore, SqliteStore};
use arkagent::ArkAgentError;
use napi_derive_ohos::napi;

use crate::args::Arg;
use crate::codes::ModuleCode;
use crate::error::{private_constructor, thrown, Thrown};
use crate::records;

/// Durable sessions (STORE-6): where runtimes commit their sessions so that an app killed
/// at any instant loses nothing committed. One SQLite file (WAL journal), e.g.
/// `context.filesDir + '/sessions.db'` (in a page, `context` is
/// `this.getUIContext().getHostContext()`). Pass it as the 4th argument of the
/// AgentRuntime constructor. The API key is never written to it.
///
/// Every method is synchronous: opening a store takes a few milliseconds, list() is one
/// query, delete() one transaction — below a frame for normal sizes.
/// Errors (the `code` of the thrown Error): "store_corrupt" (not a readable SQLite file:
/// corrupt, truncated or something else), "store_foreign" (another application's
/// database), "store_newer_schema" (written by a newer library; left untouched),
/// "store_read_only" (the file or its directory cannot be written), "store_full" (the disk
/// is full; nothing committed is damaged), "store_io" (any other failure, e.g. the path is
/// a directory), "session_locked" (a runtime has the session open).
#[napi]
pub struct SessionStore {
    core: SharedStore,
}

#[napi]
impl SessionStore {
    /// Instances come from `open()` and `openMemory()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SessionStore"))
    }

    /// Opens the store at `path`, creating the file if absent; an older schema is migrated
    /// forward. "invalid_argument" for an empty path; the store codes above.
    #[napi]
    pub fn open(path: Arg<String>) -> Result<SessionStore, Thrown> {
        let path = path.0;
        if path.is_empty() {
            return Err(napi_ohos::Error::new(ModuleCode::InvalidArgument.to_owned_code(), "path is empty".to_owned()));
        }
        let store = SqliteStore::open(&path).map_err(|e| thrown(ArkAgentError::from(e)))?;
        Ok(Self { core: Arc::new(store) })
    }

    /// A store in memory, gone with the process (tests, previews).
    #[napi]
    pub fn open_memory() -> SessionStore {
        Self { core: Arc::new(InMemorySessionStore::new()) }
    }

    /// Every session, most recently updated first (by updatedMs; sessions of the same
    /// millisecond by id).
    #[napi(ts_return_type = "SessionSummary[]")]
    pub fn list(&self) -> Result<serde_json::Value, Thrown> {
        let list = self.core.list_sessions().map_err(|e| thrown(ArkAgentError::from(e)))?;
        Ok(records::to_js(&list))
    }

    /// Deletes a session with its episodes, archived originals and usages; false when it did
    /// not exist. "session_locked" while a runtime has it open.
    #[napi]
    pub fn delete(&self, session_id: Arg<String>) -> Result<bool, Thrown> {
        self.core.delete_session(&session_id.0).map_err(|e| thrown(ArkAgentError::from(e)))
    }
}

impl SessionStore {
    /// The shared core store, for a runtime to attach.
    pub fn shared(&self) -> SharedStore {
        Arc::clone(&self.core)
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: SessionStore
*/

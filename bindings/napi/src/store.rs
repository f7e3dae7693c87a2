//! STORE-6, ArkTS surface: `SessionStore` (a SQLite file or memory) with list and delete;
//! `AgentRuntime` takes one as its optional 4th constructor argument.
//!
//! Every call is synchronous, on the JS thread: opening a store is a few milliseconds
//! (integrity check of a small file), listing is one indexed query, and a runtime
//! constructed with a store loads its session (38 ms at 10⁴ messages, measured in
//! BENCHMARKS.md; a few ms for the hundreds of messages of a normal chat). Commits during
//! a run happen on the run's worker thread, never on the JS thread.

use std::sync::Arc;

use arkagent::store::{InMemorySessionStore, SessionSummary as CoreSummary, SharedStore, SqliteStore};
use arkagent::ArkAgentError;
use napi_derive_ohos::napi;

use crate::args::Arg;
use crate::codes::ModuleCode;
use crate::error::{private_constructor, thrown, Thrown};

/// One session of a store, as `SessionStore.list()` returns it.
#[napi(object, js_name = "SessionSummary")]
pub struct JsSessionSummary {
    pub id: String,
    pub title: String,
    pub updated_ms: f64,
    pub message_count: f64,
    pub total_tokens: f64,
    pub commit_seq: f64,
}

// JS numbers: exact below 2^53.
impl From<CoreSummary> for JsSessionSummary {
    fn from(s: CoreSummary) -> Self {
        Self {
            id: s.id,
            title: s.title,
            updated_ms: s.updated_ms as f64,
            message_count: s.message_count as f64,
            total_tokens: s.total_tokens as f64,
            commit_seq: s.commit_seq as f64,
        }
    }
}

/// Where sessions are kept: a SQLite file (`open`) or memory (`openMemory`).
#[napi]
pub struct SessionStore {
    core: SharedStore,
}

#[napi]
impl SessionStore {
    /// Instances come from `open()` and `openMemory()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SessionStore"))
    }

    /// Opens (creating if absent) the SQLite store at `path`; an older schema is migrated
    /// forward. Errors: the store codes (`store_corrupt`, `store_foreign`,
    /// `store_newer_schema`, `store_read_only`, `store_full`, `store_io`);
    /// `invalid_argument` for an empty path.
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

    /// Every session, most recently updated first.
    #[napi]
    pub fn list(&self) -> Result<Vec<JsSessionSummary>, Thrown> {
        let list = self.core.list_sessions().map_err(|e| thrown(ArkAgentError::from(e)))?;
        Ok(list.into_iter().map(JsSessionSummary::from).collect())
    }

    /// Deletes a session with its episodes, archived originals and usages; false when it
    /// did not exist. Throws `session_locked` while a runtime has it open.
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

// index.d.ts: the declarations of this module's JS API, with their docs (the promises the
// tests keep). scripts/gen-dts.sh assembles these blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts; edit them here, then regenerate.
/* ts
/** One session of a SessionStore, as list() returns it. */
export interface SessionSummary {
  /** Session id (AgentRuntimeConfig.sessionId). */
  id: string;
  /** The first user text's first line, at most 80 characters; "" before the first run. */
  title: string;
  /** Time of the last commit, milliseconds since the Unix epoch. */
  updatedMs: number;
  /** Messages the session ever had: live plus archived by compressions. */
  messageCount: number;
  /** Total tokens: the session's own model calls plus its sub-agents'. */
  totalTokens: number;
  /** Sequence number of the last commit (1 for the first). */
  commitSeq: number;
}

/**
 * Durable sessions (STORE-6): where runtimes commit their sessions so that an app killed
 * at any instant loses nothing committed. One SQLite file (WAL journal), e.g.
 * `context.filesDir + '/sessions.db'` (in a page, `context` is
 * `this.getUIContext().getHostContext()`). Pass it as the 4th argument of the
 * AgentRuntime constructor. The API key is never written to it.
 *
 * Every method is synchronous: opening a store takes a few milliseconds, list() is one
 * query, delete() one transaction — below a frame for normal sizes.
 * Errors (the `code` of the thrown Error): "store_corrupt" (not a readable SQLite file:
 * corrupt, truncated or something else), "store_foreign" (another application's
 * database), "store_newer_schema" (written by a newer library; left untouched),
 * "store_read_only" (the file or its directory cannot be written), "store_full" (the disk
 * is full; nothing committed is damaged), "store_io" (any other failure, e.g. the path is
 * a directory), "session_locked" (a runtime has the session open).
 */
export class SessionStore {
  /** Instances come from `open()` and `openMemory()`. */
  private constructor();
  /**
   * Opens the store at `path`, creating the file if absent; an older schema is migrated
   * forward. "invalid_argument" for an empty path; the store codes above.
   */
  static open(path: string): SessionStore;
  /** A store in memory, gone with the process (tests, previews). */
  static openMemory(): SessionStore;
  /** Every session, most recently updated first. */
  list(): SessionSummary[];
  /**
   * Deletes a session with its episodes, archived originals and usages; false when it did
   * not exist. "session_locked" while a runtime has it open.
   */
  delete(sessionId: string): boolean;
}
*/

//! STORE-6, C surface: a session store handle, list and delete, and attaching a store and
//! a session to a runtime before its first run.

use std::ffi::c_char;
use std::sync::Arc;

use crate::boundary::{boundary, free_boundary};
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use crate::handles::{self, Kind};
use crate::runtime::{runtime_handle, ArkAgentRuntime};
use crate::strings::{opt_str_arg, str_arg, write_out_string};
use arkagent::error::ArkAgentError;
use arkagent::store::{SessionStore, SqliteStore};

/// Opaque: a session store (one SQLite file). Owned by the caller; free with
/// [`arkagent_store_free`]. A runtime it was attached to keeps the store open on its own.
/// Thread-safe; its calls block on file I/O.
pub struct ArkAgentStore {
    _private: [u8; 0],
}

/// The registered object: the store as the runtime config holds it.
struct StoreHandle(Arc<dyn SessionStore>);

fn store_handle(store: *const ArkAgentStore) -> FfiResult<Arc<StoreHandle>> {
    handles::get(Kind::Store, store)
}

fn null(what: &str) -> FfiError {
    FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL"))
}

/// Opens (creating if absent) the session store at `path` (on OHOS a file under the app's
/// `filesDir`, e.g. `<filesDir>/sessions.db`) into `*out`. SQLite, WAL journal; an
/// older schema is migrated forward. Errors: `ARK_AGENT_RESULT_STORE_CORRUPT` (not a
/// readable SQLite file: corrupt, truncated or something else),
/// `ARK_AGENT_RESULT_STORE_FOREIGN` (another application's database),
/// `ARK_AGENT_RESULT_STORE_NEWER_SCHEMA`, `ARK_AGENT_RESULT_STORE_READ_ONLY`,
/// `ARK_AGENT_RESULT_STORE_FULL`, `ARK_AGENT_RESULT_STORE_IO`; the file is left as it was.
///
/// # Safety
/// `path` a NUL-terminated string; `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_store_open(path: *const c_char, out: *mut *mut ArkAgentStore) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let path = unsafe { str_arg(path, "path") }?;
        if out.is_null() {
            return Err(null("out"));
        }
        let store = SqliteStore::open(path).map_err(ArkAgentError::from)?;
        let handle: *mut ArkAgentStore = handles::insert(Kind::Store, Arc::new(StoreHandle(Arc::new(store))));
        // SAFETY: `out` is non-NULL and valid for a write by contract.
        unsafe { *out = handle };
        Ok(())
    })
}

/// Frees a store handle. Runtimes it was attached to keep the file open until they are
/// freed. NULL and already-freed handles are ignored.
#[no_mangle]
pub extern "C" fn arkagent_store_free(store: *mut ArkAgentStore) {
    free_boundary(|| handles::remove::<_, StoreHandle>(Kind::Store, store).map(drop));
}

/// Writes the sessions as a JSON array to `*out_json`, most recently updated first (by
/// `updated_ms`; sessions of the same millisecond by id):
/// an array of `SessionSummary` (`include/JSON-SHAPES.md`). Free with `arkagent_string_free`.
///
/// # Safety
/// `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_store_list(store: *mut ArkAgentStore, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        if out_json.is_null() {
            return Err(null("out_json"));
        }
        let list = store_handle(store)?.0.list_sessions().map_err(ArkAgentError::from)?;
        let json = serde_json::to_string(&list).map_err(ArkAgentError::from)?;
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out_json, json) }
    })
}

/// Deletes a session with its episodes, archived originals and usages.
/// `*out_deleted` (if `out_deleted` is not NULL) gets whether it existed.
/// `ARK_AGENT_RESULT_SESSION_LOCKED` while a runtime (in any process) has it open.
///
/// # Safety
/// `session_id` a NUL-terminated string; `out_deleted` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_store_delete(store: *mut ArkAgentStore, session_id: *const c_char, out_deleted: *mut bool) -> ArkAgentResult {
    boundary(|| {
        let handle = store_handle(store)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(session_id, "session_id") }?;
        let deleted = handle.0.delete_session(id).map_err(ArkAgentError::from)?;
        if !out_deleted.is_null() {
            // SAFETY: non-NULL and valid for a write by contract.
            unsafe { *out_deleted = deleted };
        }
        Ok(())
    })
}

/// Attaches `store` to `runtime` and opens the session `session_id` in it (NULL: the
/// runtime's own session id, from the config's `"session_id"` or generated). Call it
/// before the first run: a session with commits replaces the runtime's state (the
/// runtime resumes it: history, episodes reachable through `retrieve_memory`, usages);
/// a new session starts from the runtime's current state, written to the store before
/// this returns (freed or killed right after, nothing is lost; a runtime with nothing in
/// it yet has nothing to write: its session is listed from its first commit, and while
/// this runtime holds it another runtime's fork onto that id gives
/// `ARK_AGENT_RESULT_SESSION_LOCKED`). From then on the runtime
/// commits at every commit point (the user message with the run start; each assistant
/// message with its tool results once paired; each compression with its episode and
/// originals; usages; sub-agent records) and emits a `session_committed` event per
/// commit. Errors: `ARK_AGENT_RESULT_SESSION_LOCKED` while another runtime (in any
/// process) has the session, `ARK_AGENT_RESULT_RUN_IN_PROGRESS`,
/// `ARK_AGENT_RESULT_INVALID_CONFIG` (a store is already attached, or `session_id` is
/// empty), the store codes. A run whose commit fails ends with the store's code.
///
/// # Safety
/// `session_id` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_attach_store(
    runtime: *mut ArkAgentRuntime,
    store: *mut ArkAgentStore,
    session_id: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let rt = runtime_handle(runtime)?;
        let store = store_handle(store)?;
        // SAFETY: forwarded contract.
        let id = unsafe { opt_str_arg(session_id, "session_id") }?;
        rt.runtime.attach_store(Arc::clone(&store.0), id).map_err(FfiError::from)
    })
}

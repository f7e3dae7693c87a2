//! Issue 17 store items through the public Rust API: `import_state` with a store is one
//! transaction (STORE-2/CORE-6: a failed store write keeps the old state, in memory and
//! stored), and the v1→v2 migration titles sessions by the same rule as new ones (STORE-1,
//! STORE-4).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arkagent::store::{Commit, OpenedSession, SessionLease, SessionStore, SessionSummary, StoreError};
use arkagent::{AgentRuntime, MemoryStore, SqliteStore};

use crate::store::{busy_model, store_config, temp_dir};
use crate::support::*;

/// A memory store whose commits fail with `store_full` while `fail` is set.
struct ArmedStore {
    inner: MemoryStore,
    fail: Arc<AtomicBool>,
}

struct ArmedLease {
    inner: Box<dyn SessionLease>,
    fail: Arc<AtomicBool>,
}

impl SessionLease for ArmedLease {
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::Full("simulated".into()));
        }
        self.inner.commit(commit)
    }
}

impl SessionStore for ArmedStore {
    fn open_session(&self, id: &str) -> Result<OpenedSession, StoreError> {
        let opened = self.inner.open_session(id)?;
        Ok(OpenedSession { lease: Box::new(ArmedLease { inner: opened.lease, fail: self.fail.clone() }), state: opened.state })
    }
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        self.inner.list_sessions()
    }
    fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_session(id)
    }
}

#[tokio::test]
async fn store_2_core_6_a_failed_import_write_keeps_the_old_state_in_memory_and_in_the_store() {
    let donor = {
        let mut config = store_config(Arc::new(MemoryStore::new()), "donor", false);
        config.store = None;
        let donor = AgentRuntime::new(config, busy_model()).unwrap();
        donor.run("a different conversation").await.unwrap();
        donor.export_state().unwrap()
    };
    let mem = MemoryStore::new();
    let fail = Arc::new(AtomicBool::new(false));
    let store: Arc<dyn SessionStore> = Arc::new(ArmedStore { inner: mem.clone(), fail: fail.clone() });
    let rt = AgentRuntime::new(store_config(store, "mine", false), busy_model()).unwrap();
    rt.run("weather in Paris?").await.unwrap();
    let before = rt.export_state().unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());

    fail.store(true, Ordering::SeqCst);
    let err = rt.import_state(&donor).unwrap_err();
    assert_eq!(err.code(), "store_full");
    assert_eq!(rt.export_state().unwrap(), before, "the old state is kept");
    assert!(!recorder.types().contains(&"session_committed".to_string()));
    assert!(!rt.is_running(), "the run slot is free again");

    // The next commit point continues the old session; the import is never written.
    fail.store(false, Ordering::SeqCst);
    rt.run("and in Oslo?").await.unwrap();
    let expected = rt.state();
    drop(rt);
    let stored = mem.open_session("mine").unwrap().state.unwrap();
    assert_eq!(stored.history.messages, expected.history.messages, "the store follows the kept state");
    assert!(stored.history.messages.iter().all(|m| !format!("{m:?}").contains("a different conversation")));
}

#[tokio::test]
async fn store_4_a_successful_import_with_a_store_is_stored_at_once() {
    let donor = {
        let mut config = store_config(Arc::new(MemoryStore::new()), "donor", false);
        config.store = None;
        let donor = AgentRuntime::new(config, busy_model()).unwrap();
        donor.run("a different conversation").await.unwrap();
        donor.state()
    };
    let mem = MemoryStore::new();
    let rt = AgentRuntime::new(store_config(Arc::new(mem.clone()), "mine", false), busy_model()).unwrap();
    rt.run("weather in Paris?").await.unwrap();
    rt.import_state(&donor.to_json().unwrap()).unwrap();
    assert_eq!(rt.state().history, donor.history);
    drop(rt);
    assert_eq!(mem.open_session("mine").unwrap().state.unwrap().history, donor.history);
}

#[tokio::test]
async fn store_1_store_4_migrated_titles_are_the_first_line_trimmed_to_80_characters() {
    let dir = temp_dir("migrate-title");
    let path = dir.join("v1.db");
    SqliteStore::create_at_version(&path, 1).unwrap();
    let long: String = "长".repeat(100);
    SqliteStore::execute_raw(
        &path,
        &format!(
            r#"INSERT INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens) VALUES ('lines', 1, 3, 1, 1, 0);
               INSERT INTO messages VALUES ('lines', 0, '{{"role":"user","content":"\n  plan the trip\nday 1: Hangzhou\nday 2: Suzhou"}}');
               INSERT INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens) VALUES ('long', 1, 2, 1, 1, 0);
               INSERT INTO messages VALUES ('long', 0, '{{"role":"user","content":"{long}"}}');"#
        ),
    )
    .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let titles: Vec<(String, String)> = store.list_sessions().unwrap().into_iter().map(|s| (s.id, s.title)).collect();
    assert_eq!(titles, vec![("lines".into(), "plan the trip".into()), ("long".into(), "长".repeat(80))]);
    // The same rule as a session stored today.
    let fresh = MemoryStore::new();
    let rt = AgentRuntime::new(
        store_config(Arc::new(fresh.clone()), "new", false),
        ScriptedModel::new(vec![text_reply("ok", 10)]),
    )
    .unwrap();
    rt.run("\n  plan the trip\nday 1: Hangzhou\nday 2: Suzhou").await.unwrap();
    assert_eq!(fresh.list_sessions().unwrap()[0].title, "plan the trip");
}

/// The same through the C ABI, with a real SQLite write failure (another process holds the
/// write lock): tests/c/store_import.c.
#[test]
fn store_2_core_6_c_a_failed_import_write_keeps_the_old_state() {
    let stdout = crate::c_abi::compile_and_run("store_import");
    assert!(stdout.contains("store_import: ") && stdout.contains(" passed, 0 failed"), "{stdout}");
}

//! Issue 17 store items through the public Rust API: `import_state` with a store is one
//! transaction (STORE-2/CORE-6: a failed store write keeps the old state, in memory and
//! stored), and the v1→v2 migration titles sessions by the same rule as new ones (STORE-1,
//! STORE-4).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arkagent::store::{Commit, OpenedSession, SessionLease, SessionStore, SessionSummary, StoreError};
use arkagent::{AgentRuntime, InMemorySessionStore, SqliteStore};

use crate::store::{busy_model, store_config, temp_dir};
use crate::support::*;

/// A memory store whose commits fail with `store_full` while `fail` is set.
struct ArmedStore {
    inner: InMemorySessionStore,
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
        let mut config = store_config(Arc::new(InMemorySessionStore::new()), "donor", false);
        config.store = None;
        let donor = AgentRuntime::new(config, busy_model()).unwrap();
        donor.run("a different conversation").await.unwrap();
        donor.export_state().unwrap()
    };
    let mem = InMemorySessionStore::new();
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
        let mut config = store_config(Arc::new(InMemorySessionStore::new()), "donor", false);
        config.store = None;
        let donor = AgentRuntime::new(config, busy_model()).unwrap();
        donor.run("a different conversation").await.unwrap();
        donor.state()
    };
    let mem = InMemorySessionStore::new();
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
    let fresh = InMemorySessionStore::new();
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
    let stdout = crate::c_programs::compile_and_run("store_import");
    assert!(stdout.contains("store_import: ") && stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// A second SQLite connection holding the store's write lock (an open `BEGIN IMMEDIATE`)
/// until dropped.
struct WriteLock(rusqlite::Connection);

impl WriteLock {
    fn hold(path: &std::path::Path) -> Self {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        Self(conn)
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.0.execute_batch("ROLLBACK");
    }
}

/// What a reader sees: the user inputs (`messages`), the number of usages (`usages`), the
/// episode ids (`memory().list_episodes()`) and the export.
fn seen(rt: &AgentRuntime) -> (Vec<String>, usize, Vec<String>, String) {
    let users = rt.messages().iter().filter_map(|m| if let arkagent::Message::User { content } = m { Some(content.to_string()) } else { None }).collect();
    let episodes = rt.memory().list_episodes().into_iter().map(|e| e.id).collect();
    (users, rt.usages().len(), episodes, rt.export_state().unwrap())
}

/// Issue 28 item 1 (STORE-2, CORE-6): with a store, `import_state` is invisible until its
/// store write commits. While another connection holds SQLite's write lock, readers on
/// other threads (`messages`, `usages`, `memory().list_episodes()`, `export_state`) see
/// the old conversation for as long as the import waits; held past the store's busy
/// timeout, the import fails with `store_io` and nothing changed; released in time, the
/// import succeeds and every reader sees the imported conversation.
#[test]
fn store_2_core_6_an_import_is_invisible_until_its_store_write_commits() {
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let imported = {
        let mut config = store_config(Arc::new(InMemorySessionStore::new()), "donor", false);
        config.store = None;
        let donor = AgentRuntime::new(config, busy_model()).unwrap();
        tokio.block_on(donor.run("a different conversation")).unwrap();
        let mut state = donor.state();
        state.history.episodic_memories.push(arkagent::EpisodicMemory {
            id: "theirs-1".into(),
            summary: snapshot_text("theirs", "imported"),
            created_at_ms: 1,
            message_count: 0,
            archived_messages: Arc::new(Vec::new()),
        });
        state.to_json().unwrap()
    };
    let path = temp_dir("import-invisible").join("sessions.db");
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let rt = AgentRuntime::new(store_config(store.clone(), "mine", false), busy_model()).unwrap();
    tokio.block_on(rt.run("my own conversation")).unwrap();
    let before = seen(&rt);
    assert_eq!(before.0, vec!["my own conversation".to_owned()]);
    assert!(before.2.is_empty());

    let import = |rt: &AgentRuntime| {
        let (rt, json) = (rt.clone(), imported.clone());
        std::thread::spawn(move || rt.import_state(&json))
    };
    // Held past the busy timeout: the old state all along, then `store_io`.
    {
        let _lock = WriteLock::hold(&path);
        let importing = import(&rt);
        std::thread::sleep(std::time::Duration::from_millis(400));
        assert!(!importing.is_finished(), "the import waits for the write lock");
        assert_eq!(seen(&rt), before, "while the write waits, readers see the old state");
        let err = importing.join().unwrap().unwrap_err();
        assert_eq!(err.code(), "store_io");
        assert_eq!(seen(&rt), before, "a failed write changed nothing");
    }
    // Released in time: the old state until the write commits, then the new one.
    let lock = WriteLock::hold(&path);
    let importing = import(&rt);
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert!(!importing.is_finished(), "the import waits for the write lock");
    assert_eq!(seen(&rt), before, "while the write waits, readers see the old state");
    drop(lock);
    importing.join().unwrap().unwrap();
    let after = seen(&rt);
    assert_eq!(after.0, vec!["a different conversation".to_owned()]);
    assert_eq!(after.2, vec!["theirs-1".to_owned()]);
    drop(rt);
    let stored = store.open_session("mine").unwrap().state.unwrap();
    assert_eq!(stored.history.episodic_memories.len(), 1, "what readers see is what is stored");
}

/// CHAT-1, STORE-2: a regenerate whose run fails before an answer and whose put-back write
/// fails too (the store filled up meanwhile) leaves the session rewound, in memory and in
/// the store alike; once the store takes writes again, the next run commits and the listed
/// total is still the sum of the usages (no usage counted twice).
#[tokio::test]
async fn chat_1_store_2_a_failed_put_back_write_leaves_the_session_rewound_and_counted_once() {
    let mem = InMemorySessionStore::new();
    let fail = Arc::new(AtomicBool::new(false));
    let trip = Arc::new(AtomicBool::new(false));
    let store: Arc<dyn SessionStore> = Arc::new(ArmedStore { inner: mem.clone(), fail: fail.clone() });
    let busy = busy_model();
    let (fail_on_call, tripped) = (fail.clone(), trip.clone());
    let model = ScriptedModel::with(move |body: &serde_json::Value, i| {
        if tripped.swap(false, Ordering::SeqCst) {
            // The provider fails, and from now on so does the store.
            fail_on_call.store(true, Ordering::SeqCst);
            return Reply::Raw(500, r#"{"error":{"message":"down","type":"server_error"}}"#.into());
        }
        busy.respond(body, i)
    });
    let rt = AgentRuntime::new(store_config(store, "put-back-full", false), model).unwrap();
    rt.run("weather in Paris?").await.unwrap();
    let rewound = rt.messages().len();
    let second = rt.run("and in Oslo?").await.unwrap().run_id;
    trip.store(true, Ordering::SeqCst);
    let err = rt.regenerate(&second).await.unwrap_err();
    assert_eq!(err.code(), "llm_server");
    assert_eq!(rt.messages().len(), rewound, "the put-back was not written, so it was not made");
    fail.store(false, Ordering::SeqCst);
    rt.run("and in Rome?").await.unwrap();
    let expected = rt.state();
    drop(rt);
    let stored = mem.open_session("put-back-full").unwrap().state.unwrap();
    assert_eq!(serde_json::to_value(&stored).unwrap(), serde_json::to_value(&expected).unwrap(), "the store follows the history");
    let sum: u64 = expected.usages.iter().map(|u| u.total_tokens).sum();
    assert_eq!(mem.list_sessions().unwrap()[0].total_tokens, sum, "every usage counted once");
}

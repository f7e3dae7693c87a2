//! The embedded SQLite [`SessionStore`] (STORE-1): the bundled SQLite (the device's own
//! is not in the NDK's stable API), WAL journal, a versioned schema migrated forward on
//! open, one transaction per commit, and a lock file per open session.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};

use super::session::{checked_state, Commit, OpenedSession, SessionLease, SessionStore, SessionSummary};
use super::sqlite_images::{drop_session_images, message_row, write_images, RowReader};
pub use super::sqlite_schema::SCHEMA_VERSION;
use super::sqlite_schema::{migrate, APPLICATION_ID};
use crate::error::StoreError;
use crate::history::{AgentState, EpisodicMemory, ModelUsage, PendingTurn, TokenCalibrations};
use crate::history::{ChildUsageRecord, RunMark};

/// `PRAGMA synchronous` for the WAL. See BENCHMARKS.md for the measurement behind the
/// default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqliteSync {
    /// `NORMAL` (default): the WAL is synced at checkpoints, not at each commit. A killed
    /// app loses nothing committed (the OS keeps the written pages); only a power loss
    /// can roll back the last commits, never corrupt the file.
    #[default]
    Normal,
    /// `FULL`: every commit is synced to the device (survives power loss), at the cost
    /// of one fsync per turn.
    Full,
}

struct Inner {
    path: PathBuf,
    lock_dir: PathBuf,
    conn: Mutex<Connection>,
}

/// Sessions in one SQLite file (cheap to clone; clones share the connection).
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.inner.path).finish()
    }
}

fn sqlite_code(e: &rusqlite::Error) -> Option<ErrorCode> {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
        _ => None,
    }
}

/// Maps a SQLite failure to a store code.
fn map_err(e: rusqlite::Error) -> StoreError {
    match sqlite_code(&e) {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt(e.to_string()),
        Some(ErrorCode::DiskFull) => StoreError::Full(e.to_string()),
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly(e.to_string()),
        _ => StoreError::Io(e.to_string()),
    }
}

fn io_err(what: &str, e: std::io::Error) -> StoreError {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => StoreError::ReadOnly(format!("{what}: {e}")),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => StoreError::Full(format!("{what}: {e}")),
        _ => StoreError::Io(format!("{what}: {e}")),
    }
}

/// Whether `path` (or, when it does not exist, its directory) can be written; the
/// I/O error when not.
fn probe_writable(path: &Path) -> Result<(), std::io::Error> {
    if path.exists() {
        return OpenOptions::new().append(true).open(path).map(|_| ());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let probe = dir.join(format!(".arkagent-probe-{}", std::process::id()));
    OpenOptions::new().write(true).create_new(true).open(&probe)?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Refines an open-time failure: "cannot open" or "read-only" in an unwritable place is
/// `store_read_only`.
fn map_open_err(path: &Path, e: rusqlite::Error) -> StoreError {
    match sqlite_code(&e) {
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::SystemIoFailure) => match probe_writable(path) {
            Err(io) => io_err(&format!("{}", path.display()), io),
            Ok(()) => map_err(e),
        },
        _ => map_err(e),
    }
}

impl SqliteStore {
    /// Opens (creating if absent) the store at `path`: e.g. `<filesDir>/sessions.db` on
    /// OHOS. Migrates an older schema forward. Errors: `store_corrupt` (not a readable
    /// SQLite file: corrupt, truncated, something else), `store_foreign` (another
    /// application's database), `store_newer_schema`, `store_read_only`, `store_full`,
    /// `store_io`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, SqliteSync::default(), None)
    }

    /// [`open`](Self::open) with a `synchronous` level and an optional size limit in
    /// pages (`PRAGMA max_page_count`; a commit past it fails with `store_full`).
    pub fn open_with(path: impl AsRef<Path>, sync: SqliteSync, max_page_count: Option<u64>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        Self::open_inner(path, sync, max_page_count).map_err(|e| match e {
            // SQLite reports an unwritable place as "cannot open" or "I/O error" at
            // whichever step first needs to write (the WAL index, the journal).
            StoreError::Io(message) => match probe_writable(path) {
                Err(io) => io_err(&message, io),
                Ok(()) => StoreError::Io(message),
            },
            other => other,
        })
    }

    fn open_inner(path: &Path, sync: SqliteSync, max_page_count: Option<u64>) -> Result<Self, StoreError> {
        // Absolute now: SQLite resolves a relative path once, at open; the lock directory
        // must not move with a later change of the working directory.
        let path = std::path::absolute(path).map_err(|e| io_err(&format!("{}", path.display()), e))?;
        let conn = Self::connect(&path)?;
        let version = check_file(&conn)?;
        if version < SCHEMA_VERSION {
            probe_writable(&path).map_err(|e| io_err(&format!("{}", path.display()), e))?;
        }
        let mode: String =
            conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(|e| map_open_err(&path, e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Io(format!("journal_mode is {mode}, WAL unavailable")));
        }
        let sync_sql = match sync {
            SqliteSync::Normal => "PRAGMA synchronous=NORMAL",
            SqliteSync::Full => "PRAGMA synchronous=FULL",
        };
        conn.execute_batch(sync_sql).map_err(map_err)?;
        // PERF-2: a 512 KiB page cache (SQLite's default is 2 MB per connection). The store
        // appends at commit points and reads whole sessions only on resume and list, so a
        // larger cache would only hold pages a phone app has no use for.
        conn.execute_batch("PRAGMA cache_size=-512").map_err(map_err)?;
        quick_check(&conn)?;
        migrate(&conn, version, SCHEMA_VERSION).map_err(|e| map_open_err(&path, e))?;
        if let Some(pages) = max_page_count {
            let _: i64 = conn.query_row(&format!("PRAGMA max_page_count={pages}"), [], |r| r.get(0)).map_err(map_err)?;
        }
        let lock_dir = lock_dir_of(&path);
        Ok(Self { inner: Arc::new(Inner { path, lock_dir, conn: Mutex::new(conn) }) })
    }

    /// Creates a store file at an earlier schema version (for migration tests).
    #[doc(hidden)]
    pub fn create_at_version(path: impl AsRef<Path>, version: i64) -> Result<(), StoreError> {
        let path = path.as_ref();
        let conn = Self::connect(path)?;
        conn.execute_batch("PRAGMA journal_mode=WAL").map_err(map_err)?;
        migrate(&conn, 0, version).map_err(map_err)
    }

    /// Runs SQL on the store's connection (tests: seed an old file, fake a newer one).
    #[doc(hidden)]
    pub fn execute_raw(path: impl AsRef<Path>, sql: &str) -> Result<(), StoreError> {
        Self::connect(path.as_ref())?.execute_batch(sql).map_err(map_err)
    }

    fn connect(path: &Path) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| map_open_err(path, e))?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(map_err)?;
        Ok(conn)
    }

    /// The file's path (absolute).
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.inner.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_session(&self, session_id: &str) -> Result<SessionLock, StoreError> {
        SessionLock::acquire(&self.inner.lock_dir, session_id)
    }
}

/// The directory of per-session lock files beside the store file.
fn lock_dir_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".locks");
    path.with_file_name(name)
}

/// Reads the schema version without changing the file. Errors for a file that is not
/// SQLite, another application's database or a newer schema.
fn check_file(conn: &Connection) -> Result<i64, StoreError> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(map_err)?;
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).map_err(map_err)?;
    if tables.is_empty() {
        // A new file, or another application's database before its first table.
        if app != 0 && app != APPLICATION_ID {
            return Err(StoreError::Foreign(format!("application_id is {app:#x}")));
        }
        return Ok(0);
    }
    if !tables.iter().any(|t| t == "arkagent_schema") {
        return Err(StoreError::Foreign(format!("it has tables {tables:?} and no arkagent_schema")));
    }
    if app != APPLICATION_ID {
        return Err(StoreError::Foreign(format!("application_id is {app:#x}")));
    }
    let version: Option<i64> = conn.query_row("SELECT max(version) FROM arkagent_schema", [], |r| r.get(0)).map_err(map_err)?;
    let version = version.unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { found: version, supported: SCHEMA_VERSION });
    }
    Ok(version)
}

fn quick_check(conn: &Connection) -> Result<(), StoreError> {
    let rows: Vec<String> = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(map_err)?;
    if rows.len() == 1 && rows[0] == "ok" {
        Ok(())
    } else {
        Err(StoreError::Corrupt(format!("integrity check: {}", rows.join("; "))))
    }
}

/// A session's lock: a small SQLite file held in exclusive locking mode. The OS drops the
/// lock when the process dies (a killed app leaves no stale lock); two connections of
/// one process conflict too.
struct SessionLock {
    conn: Option<Mutex<Connection>>,
    file: PathBuf,
}

impl SessionLock {
    fn acquire(dir: &Path, session_id: &str) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| io_err("lock directory", e))?;
        let file = dir.join(lock_name(session_id));
        let conn = Connection::open(&file).map_err(|e| map_open_err(&file, e))?;
        let locked = conn
            .busy_timeout(Duration::ZERO)
            .and_then(|_| conn.query_row("PRAGMA locking_mode=EXCLUSIVE", [], |_| Ok(())))
            .and_then(|_| conn.query_row("PRAGMA journal_mode=OFF", [], |_| Ok(())))
            .and_then(|_| {
                conn.execute_batch(
                    "BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS owner(pid INTEGER); DELETE FROM owner;
                     INSERT INTO owner VALUES (0); COMMIT;",
                )
            });
        match locked {
            Ok(()) => Ok(Self { conn: Some(Mutex::new(conn)), file }),
            Err(e) if matches!(sqlite_code(&e), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)) => {
                Err(StoreError::SessionLocked(session_id.to_owned()))
            }
            Err(e) => Err(map_open_err(&file, e)),
        }
    }

    /// Removes the lock file (while still holding the lock, so an opener that has not
    /// opened the file yet creates a fresh one), then releases the lock.
    fn release_and_remove(mut self) {
        let _ = std::fs::remove_file(&self.file);
        self.conn = None;
    }
}

/// A file name for a session id: its bytes in hex when short, else a hash.
fn lock_name(session_id: &str) -> String {
    let bytes = session_id.as_bytes();
    if bytes.len() <= 60 {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("s-{hex}.lock")
    } else {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("h-{h:016x}-{}.lock", bytes.len())
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Io(format!("serialize: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("stored record does not parse: {e}")))
}

fn json_rows(conn: &Connection, sql: &str, p: impl rusqlite::Params) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_err)?;
    let rows = stmt.query_map(p, |r| r.get::<_, String>(0)).map_err(map_err)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(map_err)
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl SqliteStore {
    fn load(&self, session_id: &str) -> Result<Option<AgentState>, StoreError> {
        let conn = self.conn();
        let exists: Option<(Option<String>, Option<String>)> = conn
            .query_row("SELECT token_calibration, pending_turn FROM sessions WHERE id = ?1", [session_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(map_err)?;
        let Some((calibration, pending)) = exists else {
            return Ok(None);
        };
        let mut state = AgentState::new(session_id);
        if let Some(json) = calibration {
            state.token_calibration = from_json::<TokenCalibrations>(&json)?;
        }
        if let Some(json) = pending {
            state.pending_turn = Some(from_json::<PendingTurn>(&json)?);
        }
        let mut rows = RowReader::new(&conn, session_id);
        for json in json_rows(&conn, "SELECT json FROM messages WHERE session_id = ?1 ORDER BY pos", [session_id])? {
            state.history.messages.push(rows.message(&json)?);
        }
        let episodes: Vec<(i64, String, String, i64)> = {
            let mut stmt = conn
                .prepare_cached("SELECT ord, id, summary, created_at_ms FROM episodes WHERE session_id = ?1 ORDER BY ord")
                .map_err(map_err)?;
            let rows = stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).map_err(map_err)?;
            rows.collect::<Result<_, _>>().map_err(map_err)?
        };
        for (ord, id, summary, created) in episodes {
            let archived = json_rows(
                &conn,
                "SELECT json FROM archived WHERE session_id = ?1 AND episode_ord = ?2 ORDER BY ord",
                params![session_id, ord],
            )?
            .iter()
            .map(|j| rows.message(j))
            .collect::<Result<Vec<_>, _>>()?;
            state.history.episodic_memories.push(EpisodicMemory {
                id,
                summary,
                created_at_ms: u64::try_from(created).unwrap_or(0),
                message_count: archived.len(),
                archived_messages: Arc::new(archived),
            });
        }
        for json in json_rows(&conn, "SELECT json FROM usages WHERE session_id = ?1 ORDER BY ord", [session_id])? {
            state.usages.push(from_json::<ModelUsage>(&json)?);
        }
        for json in json_rows(&conn, "SELECT json FROM child_usages WHERE session_id = ?1 ORDER BY ord", [session_id])? {
            state.child_usages.push(from_json::<ChildUsageRecord>(&json)?);
        }
        for json in json_rows(&conn, "SELECT json FROM runs WHERE session_id = ?1 ORDER BY ord", [session_id])? {
            state.runs.push(from_json::<RunMark>(&json)?);
        }
        checked_state(state).map(Some)
    }

    fn apply(&self, session_id: &str, c: &Commit) -> Result<u64, StoreError> {
        // Encode before the transaction: nothing fails inside it but SQLite.
        let mut images = Vec::new();
        let messages: Vec<String> = c.messages.iter().map(|m| message_row(m, &mut images)).collect::<Result<_, _>>()?;
        let usages: Vec<String> = c.usages.iter().map(to_json).collect::<Result<_, _>>()?;
        let children: Vec<String> = c.child_usages.iter().map(to_json).collect::<Result<_, _>>()?;
        let calibration: Option<String> = c.token_calibration.as_ref().map(to_json).transpose()?;
        let pending: Option<Option<String>> = c.pending_turn.as_ref().map(|p| p.as_ref().map(to_json).transpose()).transpose()?;
        let marks = RunRows::of(c)?;
        let mut episodes = Vec::with_capacity(c.episodes.len());
        for e in &c.episodes {
            let archived: Vec<String> = e.archived_messages.iter().map(|m| message_row(m, &mut images)).collect::<Result<_, _>>()?;
            episodes.push((e, archived));
        }
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(map_err)?;
        let seq: i64 = {
            let id = session_id;
            if c.replace_all {
                for table in SESSION_TABLES {
                    tx.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id]).map_err(map_err)?;
                }
                tx.execute("UPDATE sessions SET total_tokens = 0, title = NULL, token_calibration = NULL, pending_turn = NULL WHERE id = ?1", [id])
                    .map_err(map_err)?;
                drop_session_images(&tx, id).map_err(map_err)?;
            }
            write_images(&tx, id, &images).map_err(map_err)?;
            tx.prepare_cached(
                "INSERT OR IGNORE INTO sessions(id, created_ms, updated_ms, seq, message_count, total_tokens)
                 VALUES (?1, ?2, ?2, 0, 0, 0)",
            )
            .and_then(|mut s| s.execute(params![id, i64_of(c.now_ms)]))
            .map_err(map_err)?;
            write_episodes(&tx, id, c.episodes_from, &episodes)?;
            if !c.episodes.is_empty() {
                tx.prepare_cached("DELETE FROM messages WHERE session_id = ?1 AND pos < ?2")
                    .and_then(|mut s| s.execute(params![id, i64_of(c.archived_through)]))
                    .map_err(map_err)?;
            }
            tx.prepare_cached("DELETE FROM messages WHERE session_id = ?1 AND pos >= ?2")
                .and_then(|mut s| s.execute(params![id, i64_of(c.messages_from)]))
                .map_err(map_err)?;
            {
                let mut stmt =
                    tx.prepare_cached("INSERT INTO messages(session_id, pos, json) VALUES (?1, ?2, ?3)").map_err(map_err)?;
                for (i, json) in messages.iter().enumerate() {
                    stmt.execute(params![id, i64_of(c.messages_from + i as u64), json]).map_err(map_err)?;
                }
            }
            write_rows(&tx, id, "usages", c.usages_from, &usages)?;
            write_rows(&tx, id, "child_usages", c.child_usages_from, &children)?;
            marks.write(&tx, id)?;
            tx.prepare_cached(
                "UPDATE sessions SET seq = seq + 1, updated_ms = ?2, message_count = ?3,
                    total_tokens = min(total_tokens, 9223372036854775807 - ?4) + ?4, title = CASE WHEN ?9 THEN ?5 ELSE coalesce(title, ?5) END,
                    token_calibration = coalesce(?6, token_calibration),
                    pending_turn = CASE WHEN ?7 THEN ?8 ELSE pending_turn END
                 WHERE id = ?1 RETURNING seq",
            )
            .and_then(|mut s| {
                s.query_row(
                    params![
                        id,
                        i64_of(c.now_ms),
                        i64_of(c.end()),
                        i64_of(c.tokens()),
                        c.title_candidate(),
                        calibration,
                        pending.is_some(),
                        pending.clone().flatten(),
                        c.retitles()
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(map_err)?
        };
        tx.commit().map_err(map_err)?;
        Ok(u64::try_from(seq).unwrap_or(0))
    }
}

/// The tables holding a session's rows (besides `sessions` and the image tables).
const SESSION_TABLES: [&str; 6] = ["messages", "episodes", "archived", "usages", "child_usages", "runs"];

/// CHAT-1: a commit's run marks, encoded before the transaction.
struct RunRows {
    runs: Option<(usize, Vec<String>)>,
}

impl RunRows {
    fn of(c: &Commit) -> Result<Self, StoreError> {
        let runs = match &c.runs {
            Some((from, marks)) => Some((*from, marks.iter().map(to_json).collect::<Result<_, _>>()?)),
            None => None,
        };
        Ok(Self { runs })
    }

    /// Replaces the stored marks from the commit's index on (a rewind shortens them),
    /// when they changed.
    fn write(&self, tx: &rusqlite::Transaction<'_>, id: &str) -> Result<(), StoreError> {
        match &self.runs {
            // `write_rows` deletes from `from` on before it inserts; a shortened list with
            // nothing new deletes only.
            Some((from, rows)) if rows.is_empty() => {
                tx.prepare_cached("DELETE FROM runs WHERE session_id = ?1 AND ord >= ?2")
                    .and_then(|mut s| s.execute(params![id, i64_of(*from as u64)]))
                    .map_err(map_err)?;
            }
            Some((from, rows)) => write_rows(tx, id, "runs", *from, rows)?,
            None => {}
        }
        Ok(())
    }
}

/// Writes a commit's episodes (from position `from`) with their archived originals,
/// encoded beforehand.
fn write_episodes(tx: &rusqlite::Transaction<'_>, id: &str, from: usize, episodes: &[(&EpisodicMemory, Vec<String>)]) -> Result<(), StoreError> {
    for (i, (e, archived)) in episodes.iter().enumerate() {
        let ord = i64_of((from + i) as u64);
        tx.prepare_cached(
            "INSERT OR REPLACE INTO episodes(session_id, ord, id, summary, created_at_ms, message_count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .and_then(|mut s| s.execute(params![id, ord, e.id, e.summary, i64_of(e.created_at_ms), i64_of(archived.len() as u64)]))
        .map_err(map_err)?;
        let mut stmt = tx
            .prepare_cached("INSERT OR REPLACE INTO archived(session_id, episode_ord, ord, json) VALUES (?1, ?2, ?3, ?4)")
            .map_err(map_err)?;
        for (j, json) in archived.iter().enumerate() {
            stmt.execute(params![id, ord, j as i64, json]).map_err(map_err)?;
        }
    }
    Ok(())
}

/// Replaces the rows of `table` (`usages` or `child_usages`) from position `from` on with
/// `rows` (JSON, encoded beforehand); nothing when there are none.
fn write_rows(tx: &rusqlite::Transaction<'_>, id: &str, table: &str, from: usize, rows: &[String]) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    tx.prepare_cached(&format!("DELETE FROM {table} WHERE session_id = ?1 AND ord >= ?2"))
        .and_then(|mut s| s.execute(params![id, from as i64]))
        .map_err(map_err)?;
    let mut stmt = tx.prepare_cached(&format!("INSERT INTO {table}(session_id, ord, json) VALUES (?1, ?2, ?3)")).map_err(map_err)?;
    for (i, json) in rows.iter().enumerate() {
        stmt.execute(params![id, (from + i) as i64, json]).map_err(map_err)?;
    }
    Ok(())
}

impl SessionStore for SqliteStore {
    fn open_session(&self, session_id: &str) -> Result<OpenedSession, StoreError> {
        let lock = self.lock_session(session_id)?;
        let state = self.load(session_id)?;
        Ok(OpenedSession { lease: Box::new(SqliteLease { store: self.clone(), id: session_id.to_owned(), _lock: lock }), state })
    }

    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, coalesce(title, ''), updated_ms, message_count, total_tokens, seq FROM sessions
                 ORDER BY updated_ms DESC, id",
            )
            .map_err(map_err)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SessionSummary {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    updated_ms: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    message_count: u64::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
                    // A file written before the sum saturated may hold a REAL there.
                    total_tokens: match r.get::<_, rusqlite::types::Value>(4)? {
                        rusqlite::types::Value::Integer(n) => u64::try_from(n).unwrap_or(0),
                        rusqlite::types::Value::Real(x) => x as u64,
                        _ => 0,
                    },
                    commit_seq: u64::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
                })
            })
            .map_err(map_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(map_err)
    }

    fn delete_session(&self, session_id: &str) -> Result<bool, StoreError> {
        let lock = self.lock_session(session_id)?;
        let deleted = {
            let mut conn = self.conn();
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(map_err)?;
            for table in SESSION_TABLES {
                tx.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [session_id]).map_err(map_err)?;
            }
            drop_session_images(&tx, session_id).map_err(map_err)?;
            let n = tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id]).map_err(map_err)?;
            tx.commit().map_err(map_err)?;
            n > 0
        };
        lock.release_and_remove();
        Ok(deleted)
    }
}

struct SqliteLease {
    store: SqliteStore,
    id: String,
    _lock: SessionLock,
}

impl SessionLease for SqliteLease {
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        self.store.apply(&self.id, commit)
    }
}

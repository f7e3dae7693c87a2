//! The SQLite store's schema: its version, the forward migrations and their backfills.

use rusqlite::{params, Connection};

use super::session::title_of;
use super::sqlite_images::MIGRATION_4;

/// The schema version this library writes. Files of any earlier version are migrated
/// forward when opened; a newer file gives `store_newer_schema` and is left untouched.
pub const SCHEMA_VERSION: i64 = 7;

/// `PRAGMA application_id` of an arkagent store ("ARKA").
pub(super) const APPLICATION_ID: i64 = 0x4152_4b41;

/// The forward migrations: `MIGRATIONS[i]` takes a file from version `i` to `i + 1`.
const MIGRATIONS: [&str; 7] = [
    // 1: the first schema.
    "CREATE TABLE arkagent_schema(version INTEGER PRIMARY KEY NOT NULL);
     CREATE TABLE sessions(id TEXT PRIMARY KEY NOT NULL, created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL, seq INTEGER NOT NULL, message_count INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL);
     CREATE TABLE messages(session_id TEXT NOT NULL, pos INTEGER NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY(session_id, pos)) WITHOUT ROWID;
     CREATE TABLE episodes(session_id TEXT NOT NULL, ord INTEGER NOT NULL, id TEXT NOT NULL,
        summary TEXT NOT NULL, created_at_ms INTEGER NOT NULL, message_count INTEGER NOT NULL,
        PRIMARY KEY(session_id, ord)) WITHOUT ROWID;
     CREATE TABLE archived(session_id TEXT NOT NULL, episode_ord INTEGER NOT NULL,
        ord INTEGER NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY(session_id, episode_ord, ord)) WITHOUT ROWID;
     CREATE TABLE usages(session_id TEXT NOT NULL, ord INTEGER NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY(session_id, ord)) WITHOUT ROWID;
     CREATE TABLE child_usages(session_id TEXT NOT NULL, ord INTEGER NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY(session_id, ord)) WITHOUT ROWID;",
    // 2: a stored title (the first user text), backfilled for existing sessions by
    // `backfill_titles` (the rule of `title_of`: first line, trimmed, 80 characters).
    "ALTER TABLE sessions ADD COLUMN title TEXT;",
    // 3: the session's token calibration (CMP-12), JSON; none for existing sessions (the
    // static estimate stands until the next provider count).
    "ALTER TABLE sessions ADD COLUMN token_calibration TEXT;",
    // 4: images stored once, content-addressed, with each session's references (IMG-1, IMG-4).
    MIGRATION_4,
    // 5 (THINK-1): message rows may carry an answer's reasoning exactly as received — an
    // empty `reasoning` kept apart from none, Anthropic's signed `thinking` blocks. The
    // tables are unchanged (a row is the message's JSON, and rows of version 4 read as
    // answers without blocks); the version says that a library of version 4, which would
    // drop the blocks on reading and then have the provider refuse the tool cycle, must
    // refuse the file (`store_newer_schema`) instead.
    "SELECT 1;",
    // 6 (TOOL-2): the turn paused for approval, JSON (the state's `pending_turn`); none for
    // existing sessions. A library of version 5 would drop it and lose the pending calls.
    "ALTER TABLE sessions ADD COLUMN pending_turn TEXT;",
    // 7 (CHAT-1): where each run began (the points a rewind or a fork names), JSON rows;
    // usage rows may say `discarded`. Sessions of earlier versions have no marks: their
    // runs cannot be named. A library of version 6 would drop the marks.
    "CREATE TABLE runs(session_id TEXT NOT NULL, ord INTEGER NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY(session_id, ord)) WITHOUT ROWID;",
];

/// Migration 2's backfill: each existing session's title from its first user text, by the
/// same rule as a new session's ([`title_of`]). The rows are read in Rust: the bundled
/// SQLite has no JSON functions (PERF-9).
fn backfill_titles(conn: &Connection) -> Result<(), rusqlite::Error> {
    let ids: Vec<String> = conn.prepare("SELECT id FROM sessions")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let mut messages = conn.prepare("SELECT json FROM messages WHERE session_id = ?1 ORDER BY pos")?;
    for id in ids {
        let mut rows = messages.query([&id])?;
        while let Some(row) = rows.next()? {
            let json: String = row.get(0)?;
            if let Some(text) = first_user_text(&json) {
                conn.execute("UPDATE sessions SET title = ?1 WHERE id = ?2", params![title_of(&text), id])?;
                break;
            }
        }
    }
    Ok(())
}

/// A stored message's text when it is a user message (schema 1 wrote `content` as a
/// string); `None` for any other row.
fn first_user_text(json: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Row {
        role: String,
        content: Option<String>,
    }
    serde_json::from_str::<Row>(json).ok().filter(|row| row.role == "user").and_then(|row| row.content)
}

/// Applies the migrations from `from` up to `to`, each in its own transaction with its
/// version row.
pub(super) fn migrate(conn: &Connection, from: i64, to: i64) -> Result<(), rusqlite::Error> {
    for version in from..to {
        let Some(sql) = usize::try_from(version).ok().and_then(|v| MIGRATIONS.get(v)) else { break };
        let next = version + 1;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        conn.execute_batch(sql)
            .and_then(|()| if next == 2 { backfill_titles(conn) } else { Ok(()) })
            .and_then(|()| {
                conn.execute_batch(&format!(
                    "PRAGMA application_id = {APPLICATION_ID};
                     INSERT INTO arkagent_schema(version) VALUES ({next}); COMMIT;"
                ))
            })
            .inspect_err(|_| {
                let _ = conn.execute_batch("ROLLBACK");
            })?;
    }
    Ok(())
}

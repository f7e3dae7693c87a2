//! Durable sessions (STORE-1..6): the [`SessionStore`] interface the runtime writes to at
//! its commit points, with an embedded SQLite implementation (`SqliteStore`, the
//! default; it needs the default `sqlite` feature) and an in-memory one ([`InMemorySessionStore`]).
//!
//! The runtime never rewrites a session: each [`Commit`] appends what is new since the
//! last one (messages, episodes with their archived originals, usages, sub-agent records)
//! in one transaction, and carries absolute positions so a store applies it idempotently.
//! A store hands out a [`SessionLease`] per open session; while it is alive, opening the
//! same session again (in this process or another) fails with `session_locked`.

mod in_memory;
mod session;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_images;
#[cfg(feature = "sqlite")]
mod sqlite_schema;

pub use crate::error::StoreError;
pub use in_memory::InMemorySessionStore;
pub use session::{Commit, OpenedSession, SessionLease, SessionStore, SessionSummary, SharedStore};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteStore, SqliteSync, SCHEMA_VERSION};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    /// README: `SqliteStore` needs the default `sqlite` feature, which gates rusqlite.
    #[test]
    fn store_1_sqlite_is_a_default_feature_gating_rusqlite() {
        let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        assert!(manifest.lines().any(|l| l.trim() == r#"default = ["sqlite"]"#), "sqlite is not a default feature");
        assert!(manifest.lines().any(|l| l.trim() == r#"sqlite = ["dep:rusqlite"]"#), "the sqlite feature does not gate rusqlite");
        let rusqlite = manifest.lines().find(|l| l.starts_with("rusqlite =")).unwrap();
        assert!(rusqlite.contains("optional = true"), "{rusqlite}");
    }
}

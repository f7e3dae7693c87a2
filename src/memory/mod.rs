//! Episodic memory and reading it back (seed 000 §3: MEM-1..MEM-4): the read-only
//! [`MemoryService`], the `retrieve_memory` tool, namespaced working memory and the
//! `<state_snapshot>` check. Compression itself lives in `compress/`.

mod retrieve;
mod service;
mod snapshot;

pub use crate::history::{first_invalid_episode_id, validate_episodic_memory_ids, EpisodicMemory, MemoryService};
pub use crate::tools::{MemoryTier, NamespaceStats, NamespacedMemoryStore, ScopedMemory, GLOBAL_NAMESPACE};
pub use retrieve::{retrieve_memory_definition, RetrieveMemoryTool, DEFAULT_MEMORY_LIMIT, MAX_MEMORY_LIMIT, RETRIEVE_MEMORY_TOOL_NAME};
pub use service::{RuntimeMemoryService, StateSource};
pub(crate) use snapshot::{validate_snapshot, SnapshotError};
pub use snapshot::SNAPSHOT_SECTIONS;

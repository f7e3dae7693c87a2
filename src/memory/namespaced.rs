//! MEM-4: namespaced working and short-term memory. Every runtime writes to its own
//! namespace (`"global"` for a root, the child's session id for a sub-agent); namespaces
//! never see each other's entries. One store may be shared by a parent and its children.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The namespace of a root runtime.
pub const GLOBAL_NAMESPACE: &str = "global";

/// Which memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryTier {
    /// Scratch state for the current task.
    Working,
    /// Facts worth keeping for the session.
    ShortTerm,
}

type Entries = HashMap<String, Value>;

/// The store: `(namespace, tier) → id → entry`.
#[derive(Debug, Default)]
pub struct NamespacedMemoryStore {
    inner: Mutex<HashMap<(String, MemoryTier), Entries>>,
}

/// Entry counts of one namespace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceStats {
    /// Working entries.
    pub working: usize,
    /// Short-term entries.
    pub short_term: usize,
}

impl NamespacedMemoryStore {
    /// An empty store.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A view restricted to `namespace` (empty or blank means `"global"`).
    pub fn scope(self: &Arc<Self>, namespace: &str) -> ScopedMemory {
        let ns = namespace.trim();
        ScopedMemory { store: Arc::clone(self), namespace: if ns.is_empty() { GLOBAL_NAMESPACE.to_owned() } else { ns.to_owned() } }
    }

    /// Namespaces that hold entries.
    pub fn namespaces(&self) -> Vec<String> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut names: Vec<String> = inner.iter().filter(|(_, e)| !e.is_empty()).map(|((ns, _), _)| ns.clone()).collect();
        names.sort();
        names.dedup();
        names
    }

    fn with<R>(&self, namespace: &str, tier: MemoryTier, f: impl FnOnce(&mut Entries) -> R) -> R {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(inner.entry((namespace.to_owned(), tier)).or_default())
    }
}

/// Memory of one namespace. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ScopedMemory {
    store: Arc<NamespacedMemoryStore>,
    namespace: String,
}

impl ScopedMemory {
    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Stores (or replaces) an entry.
    pub fn store(&self, tier: MemoryTier, id: &str, entry: Value) {
        self.store.with(&self.namespace, tier, |e| e.insert(id.to_owned(), entry));
    }

    /// Reads an entry of this namespace only.
    pub fn recall(&self, tier: MemoryTier, id: &str) -> Option<Value> {
        self.store.with(&self.namespace, tier, |e| e.get(id).cloned())
    }

    /// Removes an entry; true when it was there.
    pub fn forget(&self, tier: MemoryTier, id: &str) -> bool {
        self.store.with(&self.namespace, tier, |e| e.remove(id).is_some())
    }

    /// Ids in this namespace and tier, sorted.
    pub fn ids(&self, tier: MemoryTier) -> Vec<String> {
        let mut ids = self.store.with(&self.namespace, tier, |e| e.keys().cloned().collect::<Vec<_>>());
        ids.sort();
        ids
    }

    /// Entry counts.
    pub fn stats(&self) -> NamespaceStats {
        NamespaceStats {
            working: self.store.with(&self.namespace, MemoryTier::Working, |e| e.len()),
            short_term: self.store.with(&self.namespace, MemoryTier::ShortTerm, |e| e.len()),
        }
    }

    /// Removes every entry of this namespace.
    pub fn clear(&self) {
        for tier in [MemoryTier::Working, MemoryTier::ShortTerm] {
            self.store.with(&self.namespace, tier, Entries::clear);
        }
    }
}

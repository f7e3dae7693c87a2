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

/// One namespace's entries. A namespace exists only while it holds an entry: reads never
/// create one, and removing the last entry (or `clear`) frees it.
#[derive(Debug, Default)]
struct Namespace {
    working: Entries,
    short_term: Entries,
}

impl Namespace {
    fn tier(&self, tier: MemoryTier) -> &Entries {
        match tier {
            MemoryTier::Working => &self.working,
            MemoryTier::ShortTerm => &self.short_term,
        }
    }

    fn tier_mut(&mut self, tier: MemoryTier) -> &mut Entries {
        match tier {
            MemoryTier::Working => &mut self.working,
            MemoryTier::ShortTerm => &mut self.short_term,
        }
    }

    fn is_empty(&self) -> bool {
        self.working.is_empty() && self.short_term.is_empty()
    }
}

/// The store: `namespace → tier → id → entry`.
#[derive(Debug, Default)]
pub struct NamespacedMemoryStore {
    inner: Mutex<HashMap<String, Namespace>>,
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

    /// A view restricted to `namespace` (empty or blank means `"global"`). Creates
    /// nothing: the namespace comes into being with its first entry.
    pub fn scope(self: &Arc<Self>, namespace: &str) -> ScopedMemory {
        let ns = namespace.trim();
        ScopedMemory { store: Arc::clone(self), namespace: if ns.is_empty() { GLOBAL_NAMESPACE.to_owned() } else { ns.to_owned() } }
    }

    /// The namespaces the store holds, sorted. Every one holds at least one entry: a
    /// namespace is freed with its last entry, and a sub-agent's when the sub-agent ends.
    pub fn namespaces(&self) -> Vec<String> {
        let mut names: Vec<String> = self.lock().keys().cloned().collect();
        names.sort();
        names
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Namespace>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads one tier of a namespace; an absent namespace reads as empty.
    fn read<R>(&self, namespace: &str, tier: MemoryTier, f: impl FnOnce(Option<&Entries>) -> R) -> R {
        f(self.lock().get(namespace).map(|n| n.tier(tier)))
    }

    /// Changes one tier of a namespace, creating it only when `create` is set, and
    /// freeing it when it ends up empty.
    fn write<R>(&self, namespace: &str, tier: MemoryTier, create: bool, f: impl FnOnce(&mut Entries) -> R) -> Option<R> {
        let mut inner = self.lock();
        if create {
            inner.entry(namespace.to_owned()).or_default();
        }
        let ns = inner.get_mut(namespace)?;
        let out = f(ns.tier_mut(tier));
        if ns.is_empty() {
            inner.remove(namespace);
        }
        Some(out)
    }

    /// Frees a whole namespace; true when it held entries.
    fn remove(&self, namespace: &str) -> bool {
        self.lock().remove(namespace).is_some()
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
        self.store.write(&self.namespace, tier, true, |e| e.insert(id.to_owned(), entry));
    }

    /// Reads an entry of this namespace only.
    pub fn recall(&self, tier: MemoryTier, id: &str) -> Option<Value> {
        self.store.read(&self.namespace, tier, |e| e.and_then(|e| e.get(id).cloned()))
    }

    /// Removes an entry; true when it was there.
    pub fn forget(&self, tier: MemoryTier, id: &str) -> bool {
        self.store.write(&self.namespace, tier, false, |e| e.remove(id).is_some()).unwrap_or(false)
    }

    /// Ids in this namespace and tier, sorted.
    pub fn ids(&self, tier: MemoryTier) -> Vec<String> {
        let mut ids = self.store.read(&self.namespace, tier, |e| e.map(|e| e.keys().cloned().collect::<Vec<_>>()).unwrap_or_default());
        ids.sort();
        ids
    }

    /// Entry counts.
    pub fn stats(&self) -> NamespaceStats {
        NamespaceStats {
            working: self.store.read(&self.namespace, MemoryTier::Working, |e| e.map_or(0, HashMap::len)),
            short_term: self.store.read(&self.namespace, MemoryTier::ShortTerm, |e| e.map_or(0, HashMap::len)),
        }
    }

    /// Removes every entry of this namespace and frees it; true when it held entries.
    pub fn clear(&self) -> bool {
        self.store.remove(&self.namespace)
    }
}

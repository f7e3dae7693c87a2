//! `EpisodicMemory`: a read-only view of one compressed stretch of conversation.

use napi_derive_ohos::napi;

use crate::error::{private_constructor, thrown, Thrown};

/// One episode of the history, as the core stores it (CMP-8).
#[napi]
pub struct EpisodicMemory {
    inner: arkagent::EpisodicMemory,
}

impl From<arkagent::EpisodicMemory> for EpisodicMemory {
    fn from(inner: arkagent::EpisodicMemory) -> Self {
        Self { inner }
    }
}

#[napi]
impl EpisodicMemory {
    /// Instances come from `episodicMemories()`, `listEpisodes()` and `findEpisode()`; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("EpisodicMemory"))
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    #[napi(getter)]
    pub fn summary(&self) -> String {
        self.inner.summary.clone()
    }

    /// JS numbers: exact below 2^53 ms.
    #[napi(getter)]
    pub fn created_at_ms(&self) -> f64 {
        self.inner.created_at_ms as f64
    }

    #[napi(getter)]
    pub fn message_count(&self) -> u32 {
        u32::try_from(self.inner.message_count).unwrap_or(u32::MAX)
    }

    /// The archived original messages as a JSON array.
    #[napi(getter)]
    pub fn archived_messages_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.inner.archived_messages).map_err(|e| thrown(e.into()))
    }
}

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::AgentRuntime;
use crate::history::{AgentState, Message};
use crate::llm::{HttpRequest, HttpResponse, HttpTransport, ModelConfig, TransportError};
use crate::compress::{CompressContext, CompressOutcome, CompressReason, CompressResult, ContextCompressor, StagedCompression};
use crate::runtime::{AgentRuntimeConfig, Compression};

struct NoNetwork;
#[async_trait::async_trait]
impl HttpTransport for NoNetwork {
    async fn send(&self, _r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        panic!("no model call expected")
    }
}

/// Replaces the history while it "summarizes", as a concurrent writer would.
struct Meddling(Mutex<Option<AgentRuntime>>);
#[async_trait::async_trait]
impl ContextCompressor for Meddling {
    async fn compress(&self, _state: &AgentState, _ctx: &CompressContext) -> CompressResult {
        let rt = self.0.lock().unwrap().take().unwrap();
        rt.seed_history(vec![Message::user("replaced")]);
        let staged = StagedCompression { split_index: 1, summary: "s".into(), episode_id: "e".into(), created_at_ms: 0 };
        CompressResult::compressed(staged, None)
    }
}

#[tokio::test]
async fn cmp_5_a_state_changed_under_the_compressor_fails_with_state_changed() {
    let meddling = Arc::new(Meddling(Mutex::new(None)));
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://h/v1", "k", "m"));
    config.compression = Some(Compression::Custom(meddling.clone()));
    let rt = AgentRuntime::new(config, Arc::new(NoNetwork)).unwrap();
    rt.seed_history(vec![Message::user("a"), Message::user("b")]);
    *meddling.0.lock().unwrap() = Some(rt.clone());
    let result = rt.compress_now().await.unwrap();
    assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::StateChanged));
    assert_eq!(result.reason.code(), "state_changed");
    assert_eq!(rt.messages(), vec![Message::user("replaced")], "the newer state is kept untouched");
    assert!(rt.episodic_memories().is_empty());
}

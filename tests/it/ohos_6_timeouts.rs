//! OHOS-6: the core's time limits. `request_timeout_ms` bounds an attempt until the
//! response arrives (a request that does not stream: its whole body); a streamed body is
//! guarded chunk to chunk by `idle_timeout_ms`, with no total limit.

use std::time::{Duration, Instant};

use arkagent::llm::{BodyStream, RetryPolicy, StreamDelta};
use arkagent::{AgentRuntimeConfig, CancellationToken, ChatClient, LlmError, ModelConfig, ToolRegistry};

use crate::llm_fake::*;

/// A streaming config: `request_timeout_ms`, `idle_timeout_ms`, `attempts` in total.
fn timed(request_ms: u64, idle_ms: u64, attempts: u32) -> ModelConfig {
    let mut c = config();
    c.request_timeout_ms = request_ms;
    c.idle_timeout_ms = idle_ms;
    c.retry = RetryPolicy { max_attempts: attempts, initial_backoff_ms: 1, max_backoff_ms: 1 };
    c
}

fn done_event() -> String {
    "data: [DONE]\n\n".to_owned()
}

/// `n` text deltas "a", then `[DONE]`, as separate chunks.
fn trickle(n: usize) -> Vec<Vec<u8>> {
    let mut chunks: Vec<Vec<u8>> = (0..n).map(|_| delta_event(r#"{"content":"a"}"#).into_bytes()).collect();
    chunks.push(done_event().into_bytes());
    chunks
}

#[tokio::test]
async fn ohos_6_idle_timeout_fails_a_stalled_stream_and_cancels_the_host() {
    let (tx, rx) = BodyStream::channel();
    assert!(tx.send(delta_event(r#"{"content":"part"}"#).into_bytes())); // then silence
    let model = FakeProvider::new(vec![Step::Stream(rx)]);
    let client = ChatClient::new(model.clone(), timed(60_000, 100, 1));
    let start = Instant::now();
    let seen = std::sync::Mutex::new(Vec::new());
    let e = client
        .send_streaming(request(&client), &CancellationToken::new(), &|d: StreamDelta| seen.lock().unwrap().push(d))
        .await
        .unwrap_err();
    assert_eq!(e, LlmError::Timeout);
    assert_eq!(e.code(), "llm_timeout");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(100) && took < Duration::from_secs(10), "{took:?}");
    assert_eq!(seen.lock().unwrap().len(), 1, "the delta before the stall was delivered");
    // The host's request was cancelled and its sink refuses further bytes.
    assert!(model.tokens.lock().unwrap()[0].is_cancelled());
    assert!(!tx.send(b"late".to_vec()));
}

#[tokio::test]
async fn ohos_6_a_stream_that_keeps_trickling_outlives_the_request_timeout() {
    // 16 chunks 25 ms apart: about 400 ms in all, four times the request timeout, each
    // gap far below the idle timeout.
    let chunks = trickle(15);
    let model = FakeProvider::new(vec![Step::Chunks { chunks: chunks.clone(), gap: Duration::from_millis(25), then_fail: None }]);
    let client = ChatClient::new(model.clone(), timed(100, 2_000, 1));
    let start = Instant::now();
    let r = client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap();
    assert_eq!(r.message.text(), Some("a".repeat(15).as_str()));
    assert!(start.elapsed() >= Duration::from_millis(100), "the stream really outlived request_timeout_ms");
    assert_eq!(model.request_count(), 1);

    // Without an idle timeout (0) the stream is not limited at all.
    let model = FakeProvider::new(vec![Step::Chunks { chunks: chunks.clone(), gap: Duration::from_millis(25), then_fail: None }]);
    let client = ChatClient::new(model, timed(100, 0, 1));
    assert!(client.send(request(&client), &CancellationToken::new()).await.is_ok());

    // A request that does not stream is bounded as a whole by request_timeout_ms.
    let model = FakeProvider::new(vec![Step::Chunks { chunks, gap: Duration::from_millis(25), then_fail: None }]);
    let mut c = timed(100, 2_000, 1);
    c.stream = false;
    let client = ChatClient::new(model.clone(), c);
    assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err(), LlmError::Timeout);
    assert!(model.tokens.lock().unwrap()[0].is_cancelled());
}

#[tokio::test]
async fn ohos_6_request_timeout_bounds_a_stream_until_its_response_arrives() {
    let model = FakeProvider::new(vec![Step::Hang]);
    let client = ChatClient::new(model.clone(), timed(60, 60_000, 1));
    let start = Instant::now();
    assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err(), LlmError::Timeout);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(model.tokens.lock().unwrap()[0].is_cancelled());
}

#[tokio::test]
async fn ohos_6_idle_timeouts_are_retried_per_the_retry_policy() {
    // Stalled before any delta reached the caller: retried, the next attempt answers.
    let (tx, rx) = BodyStream::channel();
    assert!(tx.send(b": keep-alive\n\n".to_vec()));
    let answer = Step::Chunks { chunks: trickle(2), gap: Duration::ZERO, then_fail: None };
    let model = FakeProvider::new(vec![Step::Stream(rx), answer]);
    let client = ChatClient::new(model.clone(), timed(60_000, 80, 3));
    let r = client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap();
    assert_eq!(r.message.text(), Some("aa"));
    assert_eq!(model.request_count(), 2);
    assert!(model.tokens.lock().unwrap()[0].is_cancelled(), "the stalled request was cancelled");
    drop(tx);

    // Stalled after a delta was shown: returned as is, never retried.
    let (tx, rx) = BodyStream::channel();
    assert!(tx.send(delta_event(r#"{"content":"shown"}"#).into_bytes()));
    let model = FakeProvider::new(vec![Step::Stream(rx), Step::Chunks { chunks: trickle(1), gap: Duration::ZERO, then_fail: None }]);
    let client = ChatClient::new(model.clone(), timed(60_000, 80, 3));
    let e = client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap_err();
    assert_eq!(e, LlmError::Timeout);
    assert_eq!(model.request_count(), 1);
    drop(tx);

    // Every attempt stalls: as many attempts as the policy allows, then the timeout.
    let stalled = || {
        let (tx, rx) = BodyStream::channel();
        std::mem::forget(tx); // never ends, never fails
        Step::Stream(rx)
    };
    let model = FakeProvider::new(vec![stalled(), stalled()]);
    let client = ChatClient::new(model.clone(), timed(60_000, 50, 2));
    assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err(), LlmError::Timeout);
    assert_eq!(model.request_count(), 2);
    assert!(model.tokens.lock().unwrap().iter().all(CancellationToken::is_cancelled));
}

#[test]
fn ohos_6_idle_timeout_config_default_and_json() {
    let c = ModelConfig::new("http://h/v1", "k", "m");
    assert_eq!((c.request_timeout_ms, c.idle_timeout_ms), (60_000, 120_000));
    assert_eq!(arkagent::llm::DEFAULT_IDLE_TIMEOUT_MS, 120_000);
    let rt = AgentRuntimeConfig::from_json(r#"{"model":{"base_url":"h","api_key":"k","model":"m","idle_timeout_ms":2500}}"#, ToolRegistry::new()).unwrap();
    assert_eq!(rt.model.idle_timeout_ms, 2500);
    let rt = AgentRuntimeConfig::from_json(r#"{"model":{"base_url":"h","api_key":"k","model":"m"}}"#, ToolRegistry::new()).unwrap();
    assert_eq!(rt.model.idle_timeout_ms, 120_000);
}

//! LLM-3: classification at the client, retries with backoff, Retry-After, timeout,
//! cancellation.

use std::time::{Duration, Instant};

use arkagent::llm::{BodyStream, RetryPolicy, StreamDelta, TransportErrorKind};
use arkagent::{AgentRuntimeConfig, CancellationToken, ChatClient, LlmError, ModelConfig, ToolRegistry, TransportError};
use serde_json::json;

use crate::llm_fake::*;

fn ok_body() -> String {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]}).to_string()
}

fn with_retry(policy: RetryPolicy) -> ModelConfig {
    let mut c = config();
    c.retry = policy;
    c
}

#[tokio::test]
async fn llm_3_retryable_failures_are_retried_then_succeed() {
    each_wire(|| async {
        let model = FakeProvider::new(vec![
            Step::status(503, "upstream overloaded"),
            Step::Fail(TransportError::network("connection reset")),
            Step::ok(ok_body()),
        ]);
        let client = ChatClient::new(model.clone(), config());
        let r = client.send(request(&client), &CancellationToken::new()).await.unwrap();
        assert_eq!(r.message.text(), Some("done"));
        assert_eq!(model.request_count(), 3);
        // Every attempt sends the same request.
        let requests = model.requests.lock().unwrap();
        assert!(requests.windows(2).all(|w| w[0] == w[1]));
    })
    .await;
}

#[tokio::test]
async fn llm_3_attempts_are_bounded_and_the_last_error_is_returned() {
    each_wire(|| async {
        let model = FakeProvider::new(vec![Step::status(500, "{}"), Step::status(502, "{}"), Step::status(504, "{}")]);
        let client = ChatClient::new(model.clone(), config());
        let e = client.send(request(&client), &CancellationToken::new()).await.unwrap_err();
        assert_eq!(e, LlmError::Server { status: 504, retry_after_ms: None });
        assert_eq!(model.request_count(), 3);
    })
    .await;
}

#[tokio::test]
async fn llm_3_non_retryable_classes_are_not_retried() {
    each_wire(|| async {
        let cases = [
            (401, json!({"error": {"message": "Incorrect API key", "code": "invalid_api_key"}}), "llm_auth"),
            (403, json!({"error": {"message": "forbidden"}}), "llm_auth"),
            (400, json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}), "llm_context_overflow"),
            (400, json!({"error": {"message": "bad", "code": "invalid_request_error"}}), "llm_bad_request"),
            (429, json!({"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}), "llm_bad_request"),
            (402, json!({"error": {"message": "Insufficient Balance"}}), "llm_bad_request"),
        ];
        for (status, body, code) in cases {
            let model = FakeProvider::new(vec![Step::status(status, body.to_string())]);
            let client = ChatClient::new(model.clone(), config());
            let e = client.send(request(&client), &CancellationToken::new()).await.unwrap_err();
            assert_eq!(e.code(), code, "{status} {body}");
            assert_eq!(model.request_count(), 1, "{status} was retried");
        }
        // Malformed answers are not retried either.
        let model = FakeProvider::new(vec![Step::ok("{not json")]);
        let client = ChatClient::new(model.clone(), config());
        assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err().code(), "llm_malformed_response");
        assert_eq!(model.request_count(), 1);
    })
    .await;
}

#[tokio::test]
async fn llm_3_retry_after_overrides_the_backoff() {
    each_wire(|| async {
        let limited = |secs: &str| {
            Step::Full(429, vec![("Retry-After".into(), secs.into())], br#"{"error":{"code":"rate_limit_exceeded","message":"slow down"}}"#.to_vec())
        };
        // Backoff alone would wait at most 1 ms; the server asks for 300 ms (under the cap).
        let model = FakeProvider::new(vec![limited("0.3"), Step::ok(ok_body())]);
        let client = ChatClient::new(model.clone(), with_retry(RetryPolicy { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 10_000 }));
        let start = Instant::now();
        client.send(request(&client), &CancellationToken::new()).await.unwrap();
        assert!(start.elapsed() >= Duration::from_millis(300), "waited {:?}", start.elapsed());
        assert_eq!(model.request_count(), 2);

        // A huge Retry-After is capped at max_backoff_ms (here 200 ms), not obeyed for an hour.
        let model = FakeProvider::new(vec![limited("3600"), Step::ok(ok_body())]);
        let client = ChatClient::new(model.clone(), with_retry(RetryPolicy { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 200 }));
        let start = Instant::now();
        client.send(request(&client), &CancellationToken::new()).await.unwrap();
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(5), "waited {waited:?}");

        // The error keeps the server's wait when retries run out.
        let model = FakeProvider::new(vec![limited("2")]);
        let client = ChatClient::new(model, with_retry(RetryPolicy::none()));
        assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err(), LlmError::RateLimited { retry_after_ms: Some(2000) });
    })
    .await;
}

#[tokio::test]
async fn llm_3_backoff_grows_exponentially_with_jitter_bounded_by_the_policy() {
    each_wire(|| async {
        // With full jitter each wait lies in [0, ceiling]; the total of 3 retries is at most
        // 40 + 80 + 160 ms and (seeded) deterministic per request.
        let policy = RetryPolicy { max_attempts: 4, initial_backoff_ms: 40, max_backoff_ms: 160 };
        let model = FakeProvider::new(vec![Step::status(500, ""), Step::status(500, ""), Step::status(500, ""), Step::ok(ok_body())]);
        let client = ChatClient::new(model.clone(), with_retry(policy)).with_jitter_seed(42);
        let start = Instant::now();
        client.send(request(&client), &CancellationToken::new()).await.unwrap();
        assert!(start.elapsed() < Duration::from_millis(280 + 2000), "waited {:?}", start.elapsed());
        assert_eq!(model.request_count(), 4);
        let mut jitter = arkagent::llm::Jitter::seeded(42);
        let err = LlmError::Server { status: 500, retry_after_ms: None };
        let delays: Vec<u64> = (0..3).map(|n| policy.delay_ms(&err, n, &mut jitter)).collect();
        assert!(delays.iter().zip([40, 80, 160]).all(|(d, cap)| *d <= cap), "{delays:?}");
    })
    .await;
}

#[tokio::test]
async fn llm_3_cancellation_wins_over_a_pending_retry_sleep() {
    each_wire(|| async {
        // The server asks for a 60 s pause (503 + Retry-After), allowed by the policy.
        let model = FakeProvider::new(vec![Step::Full(503, vec![("Retry-After".into(), "60".into())], Vec::new()), Step::ok(ok_body())]);
        let client = ChatClient::new(model.clone(), with_retry(RetryPolicy { max_attempts: 3, initial_backoff_ms: 1, max_backoff_ms: 120_000 }));
        let cancel = CancellationToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            canceller.cancel();
        });
        let start = Instant::now();
        let e = client.send(request(&client), &cancel).await.unwrap_err();
        assert_eq!(e, LlmError::Cancelled);
        assert!(start.elapsed() < Duration::from_secs(2));
        assert_eq!(model.request_count(), 1, "no attempt after cancellation");
    })
    .await;
}

#[tokio::test]
async fn llm_3_cancellation_stops_an_in_flight_request_and_tells_the_host() {
    each_wire(|| async {
        let model = FakeProvider::new(vec![Step::Hang]);
        let client = ChatClient::new(model.clone(), config());
        let cancel = CancellationToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            canceller.cancel();
        });
        assert_eq!(client.send(request(&client), &cancel).await.unwrap_err(), LlmError::Cancelled);
        assert!(model.tokens.lock().unwrap()[0].is_cancelled());
    })
    .await;
}

#[tokio::test]
async fn llm_3_request_timeout_bounds_each_attempt() {
    each_wire(|| async {
        let model = FakeProvider::new(vec![Step::Hang, Step::Hang]);
        let mut c = with_retry(RetryPolicy { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 1 });
        c.request_timeout_ms = 50;
        let client = ChatClient::new(model.clone(), c);
        let start = Instant::now();
        let e = client.send(request(&client), &CancellationToken::new()).await.unwrap_err();
        assert_eq!(e, LlmError::Timeout);
        assert!(start.elapsed() >= Duration::from_millis(100) && start.elapsed() < Duration::from_secs(5));
        assert_eq!(model.request_count(), 2);
        // The host was told to stop each timed-out request.
        assert!(model.tokens.lock().unwrap().iter().all(CancellationToken::is_cancelled));
        // A host-reported timeout is classified the same way.
        let model = FakeProvider::new(vec![Step::Fail(TransportError::timeout("read timed out"))]);
        let client = ChatClient::new(model, with_retry(RetryPolicy::none()));
        assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err(), LlmError::Timeout);
        let model = FakeProvider::new(vec![Step::Fail(TransportError { kind: TransportErrorKind::Cancelled, message: String::new() })]);
        let client = ChatClient::new(model, with_retry(RetryPolicy::none()));
        assert_eq!(client.send(request(&client), &CancellationToken::new()).await.unwrap_err(), LlmError::Cancelled);
    })
    .await;
}

#[tokio::test]
async fn llm_3_timeout_covers_a_stalled_stream() {
    each_wire(|| async {
        let (tx, rx) = BodyStream::channel();
        tx.send(delta_event(r#"{"content":"part"}"#).into_bytes()); // then nothing
        let model = FakeProvider::new(vec![Step::Stream(rx), Step::ok(ok_body())]);
        let mut c = config();
        c.idle_timeout_ms = 80; // a streamed body is guarded by the idle timeout (OHOS-6)
        let client = ChatClient::new(model.clone(), c);
        // Through `send` nothing was shown to anyone: the stalled attempt is retried.
        let r = client.send(request(&client), &CancellationToken::new()).await.unwrap();
        assert_eq!(r.message.text(), Some("done"));
        assert_eq!(model.request_count(), 2);
        drop(tx);
    })
    .await;
}

#[tokio::test]
async fn llm_3_never_retries_after_deltas_were_delivered() {
    each_wire(|| async {
        let mut started = delta_event(r#"{"content":"已经显示"}"#);
        started += &delta_event(r#"{"content":"的文字"}"#);
        let failing = || Step::Chunks { chunks: vec![started.clone().into_bytes()], gap: Duration::ZERO, then_fail: Some(TransportError::network("reset")) };
        let model = FakeProvider::new(vec![failing(), Step::ok(ok_body())]);
        let client = ChatClient::new(model.clone(), config());
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |d: StreamDelta| seen.lock().unwrap().push(d);
        let e = client.send_streaming(request(&client), &CancellationToken::new(), &sink).await.unwrap_err();
        assert_eq!(e.code(), "llm_transport");
        assert_eq!(model.request_count(), 1);
        assert_eq!(seen.lock().unwrap().len(), 2);

        // A stream that fails before any delta reached the caller is retried.
        let silent = Step::Chunks {
            chunks: vec![delta_event(r#"{"role":"assistant","content":""}"#).into_bytes()],
            gap: Duration::ZERO,
            then_fail: Some(TransportError::network("reset")),
        };
        let model = FakeProvider::new(vec![silent, Step::ok(ok_body())]);
        let client = ChatClient::new(model.clone(), config());
        let r = client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap();
        assert_eq!(r.message.text(), Some("done"));
        assert_eq!(model.request_count(), 2);
    })
    .await;
}

#[test]
fn llm_3_retry_and_timeout_config_defaults_and_json() {
    let c = ModelConfig::new("http://h/v1", "k", "m");
    assert_eq!(c.retry, RetryPolicy { max_attempts: 3, initial_backoff_ms: 500, max_backoff_ms: 8000 });
    assert_eq!(c.request_timeout_ms, 60_000);
    // Older config JSON without the new fields still loads.
    let rt = AgentRuntimeConfig::from_json(r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m"}}"#, ToolRegistry::new()).unwrap();
    assert_eq!(rt.model.retry, RetryPolicy::default());
    let rt = AgentRuntimeConfig::from_json(
        r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m","retry":{"max_attempts":1,"max_backoff_ms":100},"request_timeout_ms":5000}}"#,
        ToolRegistry::new(),
    )
    .unwrap();
    assert_eq!(rt.model.retry, RetryPolicy { max_attempts: 1, initial_backoff_ms: 500, max_backoff_ms: 100 });
    assert_eq!(rt.model.request_timeout_ms, 5000);
    assert_eq!(
        AgentRuntimeConfig::from_json(r#"{"model":{"base_url":"h","api_key":"k","model":"m","retry":{"attempts":2}}}"#, ToolRegistry::new()).unwrap_err().code(),
        "invalid_json"
    );
}

/// OHOS-9: a host that learns the status only after a streamed body (NetworkKit at API 12)
/// fails the stream with the answer it really got; the client classifies it like any error
/// answer — `Retry-After` honoured, a quota 429 not retried — and never prints its body.
#[tokio::test]
async fn ohos_9_a_stream_failed_with_an_error_answer_is_classified_like_that_answer() {
    use arkagent::llm::ErrorAnswer;
    let body = br#"{"error":{"code":"rate_limit_exceeded","message":"slow down, sk-secret-echo"}}"#.to_vec();
    let answer = |status: u16, headers: Vec<(String, String)>, body: &[u8]| ErrorAnswer { status, headers, body: body.to_vec() };
    // The body streamed as a 200, then the 429 with Retry-After: 0.3 s (backoff alone: ≤ 1 ms).
    let failing = |answer: ErrorAnswer| Step::Chunks { chunks: vec![body.clone()], gap: Duration::ZERO, then_fail: Some(TransportError::status(answer)) };
    let limited = answer(429, vec![("retry-after".into(), "0.3".into())], &body);
    let model = FakeProvider::new(vec![failing(limited.clone()), Step::ok(ok_body())]);
    let client = ChatClient::new(model.clone(), with_retry(RetryPolicy { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 10_000 }));
    let start = Instant::now();
    let r = client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap();
    assert_eq!(r.message.text(), Some("done"));
    assert!(start.elapsed() >= Duration::from_millis(300), "waited {:?}", start.elapsed());
    assert_eq!(model.request_count(), 2);

    // Classified as the status and body say.
    let cases = [
        (limited, LlmError::RateLimited { retry_after_ms: Some(300) }),
        (answer(503, vec![("Retry-After".into(), "2".into())], b"upstream"), LlmError::Server { status: 503, retry_after_ms: Some(2000) }),
        (answer(401, Vec::new(), b""), LlmError::Auth { status: 401 }),
    ];
    for (answer, want) in cases {
        let model = FakeProvider::new(vec![failing(answer)]);
        let client = ChatClient::new(model, with_retry(RetryPolicy::none()));
        assert_eq!(client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap_err(), want);
    }
    let quota = answer(429, Vec::new(), br#"{"error":{"code":"insufficient_quota","message":"no"}}"#);
    let model = FakeProvider::new(vec![failing(quota), Step::ok(ok_body())]);
    let client = ChatClient::new(model.clone(), config());
    let e = client.send_streaming(request(&client), &CancellationToken::new(), &|_| {}).await.unwrap_err();
    assert_eq!((e.code().as_str(), model.request_count()), ("llm_bad_request", 1));

    // Its Debug names the status and the header names, never the body or a header value.
    let shown = format!("{:?}", TransportError::status(answer(429, vec![("x-echo".into(), "sk-header-echo".into())], &body)));
    assert!(shown.contains("429") && shown.contains("x-echo") && !shown.contains("sk-"), "{shown}");
}

//! COST-3: a summarizer that hits the provider's prefix cache, through the Rust API, on
//! the exact bytes the transport receives, in both wire formats. When the summarizer is
//! the conversation's own model its request is the last main request's bytes up to the
//! end of its last message, then the compression instruction; tools, tool choice, the
//! stream flag and every other field unchanged. An answer calling a tool (or without a
//! valid snapshot) is asked again once, then the chunked transcript (CMP-10) is used, as
//! it is for another model or a conversation too big for the summarizer's window. The
//! encoding cache comes back as it was: the next request is byte for byte what a session
//! that never asked for the summary would send.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::compress::{CompressOutcome, CompressReason, ContextCompressorConfig, COMPRESSION_USAGE_SOURCE};
use arkagent::llm::ToolChoice;
use arkagent::runtime::Compression;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, CancellationToken, HttpRequest, HttpResponse, HttpTransport, SequentialIdGenerator,
    ToolDefinition, ToolRegistry, TransportError,
};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::prefix::{assert_same_request, assert_summarizer_reuses, view, Recording};
use crate::support::*;
use crate::wire_fake::{wire, Wire};

const URL: &str = "http://127.0.0.1:9/v1";

fn weather_tools(tool: Arc<WeatherTool>) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
    tools.register(ToolDefinition::new("get_weather", "Weather for a city", schema), tool).unwrap();
    tools
}

/// A weather assistant (system prompt, one tool, an explicit tool choice) compressing
/// above 900 prompt tokens, keeping 4 messages; `compression` set, else none.
fn config(stream: bool, compression: Option<ContextCompressorConfig>) -> AgentRuntimeConfig {
    let mut model = model_config(URL, API_KEY, "cost3-model");
    model.stream = stream;
    model.retry = arkagent::llm::RetryPolicy::none();
    let mut c = AgentRuntimeConfig::new(model);
    c.system_prompt = "You are a weather assistant. Answer briefly.".into();
    c.tools = weather_tools(Arc::new(WeatherTool::default()));
    c.tool_choice = Some(ToolChoice::Auto);
    c.session_id = Some("cost3".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("c3"));
    c.compression = compression.map(|config| Compression::Default { config, summarizer: None });
    c
}

fn compressing() -> Option<ContextCompressorConfig> {
    Some(ContextCompressorConfig { keep_recent_message_count: 4, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(900) })
}

/// Answers from the request alone: a summary request of either form gets `summary`,
/// `task N` one tool call `w-N`, its result a text.
fn answering(summary: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Arc<ScriptedModel> {
    ScriptedModel::with(move |body: &Value, _| {
        if is_summary_request(body) {
            return summary(body);
        }
        let size = body.to_string().len() as u64 / 4;
        let messages = body["messages"].as_array().unwrap();
        let task = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned();
        let n = task.trim_start_matches("task ");
        if messages.last().unwrap()["role"] == "user" {
            tool_calls_reply(&[(&format!("w-{n}"), "get_weather", json!({"city": format!("city {n}")}))], size)
        } else {
            text_reply(&format!("In city {n} it is sunny, 21 degrees, light wind from the west."), size)
        }
    })
}

fn snapshot_reply() -> Reply {
    text_reply(&snapshot_text("weather for many cities", "looked up the weather"), 700)
}

fn model() -> Arc<ScriptedModel> {
    answering(|_| snapshot_reply())
}

/// The state after `runs` turns of an uncompressed session (the last usage well above
/// the threshold).
async fn long_state(runs: usize) -> String {
    let rt = AgentRuntime::new(config(false, None), model()).unwrap();
    for i in 0..runs {
        rt.run(&format!("task {i}")).await.unwrap();
    }
    rt.export_state().unwrap()
}

fn kind(body: &str) -> &'static str {
    let v = view().openai(body);
    if is_prefix_summary_request(&v) {
        "prefix"
    } else if is_transcript_summary_request(&v) {
        "transcript"
    } else {
        "main"
    }
}

fn kinds(bodies: &[String]) -> Vec<&'static str> {
    bodies.iter().map(|b| kind(b)).collect()
}

fn compression_usages(rt: &AgentRuntime) -> Vec<arkagent::ModelUsage> {
    rt.usages().into_iter().filter(|u| u.source_name() == Some(COMPRESSION_USAGE_SOURCE)).collect()
}

#[tokio::test]
async fn cost_3_the_summarizer_request_is_the_last_main_requests_bytes_then_the_instruction() {
    each_wire(|| async {
        for stream in [false, true] {
            let transport = Arc::new(Recording::new(model()));
            let rt = AgentRuntime::new(config(stream, compressing()), transport.clone()).unwrap();
            for i in 0..14 {
                rt.run(&format!("task {i}")).await.unwrap();
            }
            let bodies = transport.bodies();
            let mut checked = 0;
            let mut last_main: Option<&String> = None;
            for body in &bodies {
                match kind(body) {
                    "prefix" => {
                        let previous = last_main.expect("a main request before the summarizer's");
                        assert_summarizer_reuses(view(), previous, body, compression_instruction_mark());
                        let v = view().openai(body);
                        assert_eq!(v["tool_choice"], "auto", "the conversation's tool choice, not \"none\"");
                        assert_eq!(v["tools"].as_array().map(Vec::len), Some(2), "get_weather and retrieve_memory");
                        assert_eq!(v["stream"].as_bool().unwrap_or(false), stream);
                        if wire() == Wire::Anthropic {
                            // The moving breakpoint is on the instruction, the latest block.
                            assert!(body.ends_with(r#","cache_control":{"type":"ephemeral"}}]}]}"#), "{body}");
                        }
                        checked += 1;
                    }
                    "main" => last_main = Some(body),
                    _ => panic!("the transcript was used though the summarizer is the conversation's model"),
                }
            }
            assert!(checked >= 2, "{checked} summarizer requests checked (stream {stream})");
            assert_eq!(rt.episodic_memories().len(), checked, "one request per compression, each committed");
            let usages = compression_usages(&rt);
            assert_eq!(usages.len(), checked);
            assert!(usages.iter().all(|u| u.call_count == 1 && u.prompt_tokens == 700));
        }
    })
    .await;
}

#[tokio::test]
async fn cost_3_an_answer_calling_a_tool_is_asked_again_once_then_the_transcript_is_used() {
    each_wire(|| async {
        let state = long_state(14).await;
        let tool = Arc::new(WeatherTool::default());
        let model = answering(|body| {
            if is_prefix_summary_request(body) {
                // Summarizing with tools offered: the model calls one anyway.
                tool_calls_reply(&[("sneaky", "get_weather", json!({"city": "Paris"}))], 650)
            } else {
                snapshot_reply()
            }
        });
        let transport = Arc::new(Recording::new(model));
        let mut c = config(false, compressing());
        c.tools = weather_tools(tool.clone());
        let rt = AgentRuntime::new(c, transport.clone()).unwrap();
        rt.import_state(&state).unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!(result.outcome, CompressOutcome::Compressed);
        let bodies = transport.bodies();
        assert_eq!(kinds(&bodies), ["prefix", "prefix", "transcript"]);
        assert_eq!(bodies[0], bodies[1], "asked again with the same bytes");
        assert!(tool.calls.lock().unwrap().is_empty(), "a summarizer's tool call is never run");
        let usage = result.usage.unwrap();
        assert_eq!((usage.call_count, usage.prompt_tokens), (3, 650 + 650 + 700));
        assert_eq!(rt.episodic_memories()[0].summary, snapshot_text("weather for many cities", "looked up the weather"));
        // A tool choice that forces a call fails the same way (it is never changed).
        let mut forced = config(false, compressing());
        forced.tool_choice = Some(ToolChoice::Required);
        let transport = Arc::new(Recording::new(answering(|body| {
            if is_prefix_summary_request(body) {
                assert_eq!(body["tool_choice"], "required", "the conversation's tool choice is kept");
                return tool_calls_reply(&[("forced", "get_weather", json!({}))], 650);
            }
            snapshot_reply()
        })));
        let rt = AgentRuntime::new(forced, transport.clone()).unwrap();
        rt.import_state(&state).unwrap();
        assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
        assert_eq!(kinds(&transport.bodies()), ["prefix", "prefix", "transcript"]);
    })
    .await;
}

#[tokio::test]
async fn cost_3_another_summarizer_model_key_or_stream_setting_uses_the_transcript() {
    each_wire(|| async {
        let state = long_state(14).await;
        for (model, key, stream) in [("summary-model", API_KEY, false), ("cost3-model", "sk-test-OTHER-key-987654", false), ("cost3-model", API_KEY, true)] {
            let mut summarizer = model_config(URL, key, model);
            summarizer.retry = arkagent::llm::RetryPolicy::none();
            summarizer.stream = stream;
            let transport = Arc::new(Recording::new(model_for_key(key)));
            let mut c = config(false, None);
            c.compression = Some(Compression::Default { config: compressing().unwrap(), summarizer: Some(summarizer) });
            let rt = AgentRuntime::new(c, transport.clone()).unwrap();
            rt.import_state(&state).unwrap();
            assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
            let bodies = transport.bodies();
            assert_eq!(kinds(&bodies), ["transcript"], "{model} {key} {stream}");
            assert_eq!(view().openai(&bodies[0])["model"], model);
        }
    })
    .await;
}

/// [`model`] behind a check of the key each request carries (the scripted model checks
/// it is [`API_KEY`]): requests with `key` are answered as if they carried it.
fn model_for_key(key: &'static str) -> Arc<KeyAgnostic> {
    Arc::new(KeyAgnostic { inner: model(), key })
}

struct KeyAgnostic {
    inner: Arc<ScriptedModel>,
    key: &'static str,
}

#[async_trait]
impl HttpTransport for KeyAgnostic {
    async fn send(&self, mut request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        for (_, value) in request.headers.iter_mut() {
            *value = value.replace(self.key, API_KEY);
        }
        self.inner.send(request, cancel).await
    }
}

#[tokio::test]
async fn cost_3_a_conversation_too_big_for_the_summarizer_window_uses_the_transcript() {
    each_wire(|| async {
        // Long enough for a window below it to hold the summary prompt (2.1 tokens per
        // estimated ASCII token by this model's calibration) and a chunk.
        let state = long_state(40).await;
        let exported: Value = serde_json::from_str(&state).unwrap();
        let prompt = exported["usages"].as_array().unwrap().last().unwrap()["prompt_tokens"].as_u64().unwrap();
        // An explicit window below the conversation's size: no request on its bytes.
        let small = ContextCompressorConfig { summarizer_max_input_tokens: Some(prompt * 3 / 4), ..compressing().unwrap() };
        let transport = Arc::new(Recording::new(model()));
        let rt = AgentRuntime::new(config(false, Some(small)), transport.clone()).unwrap();
        rt.import_state(&state).unwrap();
        assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
        let seen = kinds(&transport.bodies());
        assert!(!seen.is_empty() && seen.iter().all(|k| *k == "transcript"), "{seen:?}");
        // A window it fits: the request on the conversation's bytes.
        let large = ContextCompressorConfig { summarizer_max_input_tokens: Some(prompt * 2), ..compressing().unwrap() };
        let transport = Arc::new(Recording::new(model()));
        let rt = AgentRuntime::new(config(false, Some(large)), transport.clone()).unwrap();
        rt.import_state(&state).unwrap();
        assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
        assert_eq!(kinds(&transport.bodies()), ["prefix"]);
        // No window set, and the model says the request is too long: the transcript.
        let overflow = answering(|body| {
            if is_prefix_summary_request(body) {
                return Reply::Raw(400, json!({"error": {"message": "too long", "code": "context_length_exceeded"}}).to_string());
            }
            snapshot_reply()
        });
        let transport = Arc::new(Recording::new(overflow));
        let rt = AgentRuntime::new(config(false, compressing()), transport.clone()).unwrap();
        rt.import_state(&state).unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!(result.outcome, CompressOutcome::Compressed);
        let seen = kinds(&transport.bodies());
        assert_eq!(seen[0], "prefix");
        assert!(seen.len() > 1 && seen[1..].iter().all(|k| *k == "transcript"), "{seen:?}");
        assert_eq!(result.usage.unwrap().call_count as usize, seen.len() - 1, "the refused request had no usage");
    })
    .await;
}

/// Passes requests on and keeps every body alive, as a host that has not let go of them
/// yet: the session must copy its body back instead of reclaiming it.
struct Hoarding<T> {
    inner: Arc<T>,
    kept: Mutex<Vec<Arc<String>>>,
}

#[async_trait]
impl<T: HttpTransport + 'static> HttpTransport for Hoarding<T> {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        self.kept.lock().unwrap().push(Arc::clone(&request.body));
        self.inner.send(request, cancel).await
    }
}

/// The first main request body of `task 14` on a runtime that imported `state`, after
/// `before` ran on it (a compression attempt answered by `summary`, or nothing). During
/// `task 14` every summary request fails (a server error), so its pre-flight attempt
/// changes nothing and the main request carries the history as `before` left it.
async fn next_body_after<F, Fut>(state: &str, summary: fn(&Value) -> Reply, hoard: bool, before: F) -> String
where
    F: FnOnce(AgentRuntime) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let running = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let during_run = running.clone();
    let recording = Arc::new(Recording::new(answering(move |body| {
        if during_run.load(std::sync::atomic::Ordering::SeqCst) {
            return Reply::Raw(500, json!({"error": {"message": "busy"}}).to_string());
        }
        summary(body)
    })));
    let transport: Arc<dyn HttpTransport> =
        if hoard { Arc::new(Hoarding { inner: recording.clone(), kept: Mutex::default() }) } else { recording.clone() };
    let rt = AgentRuntime::new(config(false, compressing()), transport).unwrap();
    rt.import_state(state).unwrap();
    before(rt.clone()).await;
    let sent = recording.bodies().len();
    running.store(true, std::sync::atomic::Ordering::SeqCst);
    rt.run("task 14").await.unwrap();
    let bodies = recording.bodies();
    bodies[sent..].iter().find(|b| kind(b) == "main").expect("a main request").clone()
}

#[tokio::test]
async fn cost_3_after_a_failed_or_cancelled_summary_the_next_request_is_byte_identical() {
    each_wire(|| async {
        let state = long_state(14).await;
        for hoard in [false, true] {
            let untouched = next_body_after(&state, |_| snapshot_reply(), hoard, |_| async {}).await;
            let failed = next_body_after(&state, |_| text_reply("no snapshot here", 600), hoard, |rt| async move {
                let result = rt.compress_now().await.unwrap();
                assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::MalformedSummary));
            })
            .await;
            assert_same_request(&untouched, &failed);
            let cancelled = next_body_after(&state, |_| Reply::Hang, hoard, |rt| async move {
                let attempt = tokio::spawn({
                    let rt = rt.clone();
                    async move { rt.compress_now().await.unwrap() }
                });
                tokio::time::sleep(Duration::from_millis(30)).await;
                assert!(rt.cancel());
                let result = attempt.await.unwrap();
                assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::Cancelled));
            })
            .await;
            assert_same_request(&untouched, &cancelled);
        }
    })
    .await;
}

#[tokio::test]
async fn cost_3_after_a_committed_summary_the_next_request_is_what_a_resumed_session_sends() {
    each_wire(|| async {
        let state = long_state(14).await;
        for hoard in [false, true] {
            let exported = Arc::new(Mutex::new(String::new()));
            let keep = exported.clone();
            let compressed = next_body_after(&state, |_| snapshot_reply(), hoard, |rt| async move {
                assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
                *keep.lock().unwrap() = rt.export_state().unwrap();
            })
            .await;
            let exported = exported.lock().unwrap().clone();
            let resumed = next_body_after(&exported, |_| snapshot_reply(), hoard, |_| async {}).await;
            assert_same_request(&resumed, &compressed);
            assert!(compressed.contains("weather for many cities"), "the new snapshot is in the request");
        }
    })
    .await;
}

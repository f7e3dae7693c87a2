//! CMP-10 with CMP-12 (issue 28 item 3): transcript chunks are sized with the calibrated
//! estimate of the summarizer's model, with a margin. A summarizer whose window is
//! exactly `summarizer_max_input_tokens`, counting with a real tokenizer (o200k_base) and
//! refusing anything over it, compresses a JSON-heavy history — on which the static
//! estimate runs low — without one refused request.

use std::sync::{Arc, Mutex};

use arkagent::compress::{CompressOutcome, ContextCompressorConfig};
use arkagent::runtime::Compression;
use arkagent::{AgentRuntime, AgentRuntimeConfig, EventKind, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::*;

/// The summarizer's window, as `summarizer_max_input_tokens` and as the model enforces it.
const WINDOW: u64 = 3_000;

fn o200k(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len() as u64
}

/// What the provider counts for a request (its OpenAI-compatible view): o200k tokens of
/// every message's text and tool calls and of the tools, 3 framing tokens a message and
/// 3 to prime the reply.
fn prompt_tokens(body: &Value) -> u64 {
    let mut n = 3;
    for m in body["messages"].as_array().unwrap() {
        n += 3 + o200k(m["content"].as_str().unwrap_or_default());
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            n += o200k(c["function"]["name"].as_str().unwrap()) + o200k(c["function"]["arguments"].as_str().unwrap());
        }
    }
    n + body["tools"].as_array().into_iter().flatten().map(|t| o200k(&t["function"].to_string())).sum::<u64>()
}

/// Hourly readings of a station as JSON: digits, punctuation and short keys, which
/// o200k splits far finer than four characters a token.
struct Readings;

#[async_trait]
impl ToolExecutor for Readings {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let station = call.arguments["station"].as_u64().unwrap_or(0);
        let rows: Vec<Value> = (0..24)
            .map(|h| {
                let x = station * 31 + h;
                json!({"t": format!("2026-12-{:02}T{h:02}:00:00Z", 1 + station % 28), "temp_c": (x % 400) as f64 / 10.0 - 5.0,
                       "rh": (x * 7 % 100) as f64 / 100.0, "wind": [x % 360, (x * 3 % 250) as f64 / 10.0], "ok": !x.is_multiple_of(5)})
            })
            .collect();
        ToolResult::ok(json!({"station": station, "unit": "metric", "rows": rows}).to_string())
    }
}

/// One tool call a turn (`station N` for `turn N`), then a short answer; summary requests
/// over [`WINDOW`] are refused with a context-length error, the others get a snapshot.
/// `summaries` gets each summary request's real size.
fn model(summaries: Arc<Mutex<Vec<u64>>>) -> Arc<ScriptedModel> {
    ScriptedModel::with(move |body: &Value, _| {
        let tokens = prompt_tokens(body);
        if is_summary_request(body) {
            summaries.lock().unwrap().push(tokens);
            if tokens > WINDOW {
                let error = json!({"error": {"message": format!("{tokens} tokens exceed the context window"), "code": "context_length_exceeded"}});
                return Reply::Raw(400, error.to_string());
            }
            return text_reply(&snapshot_text("weather statistics for all stations", "read station data"), tokens);
        }
        let messages = body["messages"].as_array().unwrap();
        let user = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default();
        let n: u64 = user.trim_start_matches("turn ").parse().unwrap_or(0);
        if messages.last().unwrap()["role"] == "user" {
            tool_calls_reply(&[(&format!("r-{n}"), "readings", json!({"station": n}))], tokens)
        } else {
            text_reply(&format!("Station {n}: mild, humid, light wind."), tokens)
        }
    })
}

#[tokio::test]
async fn cmp_10_cmp_12_chunks_fit_a_summarizer_window_counted_by_a_real_tokenizer_on_json() {
    each_wire(|| async {
        let summaries = Arc::new(Mutex::new(Vec::new()));
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "json-model"));
        c.model.retry = arkagent::llm::RetryPolicy::none();
        let mut tools = ToolRegistry::new();
        let schema = json!({"type": "object", "properties": {"station": {"type": "integer"}}});
        tools.register(ToolDefinition::new("readings", "Hourly readings of a weather station", schema), Arc::new(Readings)).unwrap();
        c.tools = tools;
        // The conversation outgrows the window before it compresses: the summary goes
        // through the chunked transcript, sized for the window.
        let config = ContextCompressorConfig { keep_recent_message_count: 4, summarizer_max_input_tokens: Some(WINDOW), ..ContextCompressorConfig::with_threshold(8_000) };
        c.compression = Some(Compression::Default { config, summarizer: None });
        let rt = AgentRuntime::new(c, model(summaries.clone())).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        for turn in 0..24 {
            rt.run(&format!("turn {turn}")).await.unwrap();
        }
        let outcomes: Vec<(CompressOutcome, String)> = recorder
            .0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Compression { outcome, reason, .. } if *outcome != CompressOutcome::Skipped => Some((*outcome, reason.code().to_owned())),
                _ => None,
            })
            .collect();
        let sizes = summaries.lock().unwrap().clone();
        assert!(sizes.len() >= 4, "the history was summarized in chunks: {sizes:?}");
        assert!(sizes.iter().all(|&t| t <= WINDOW), "a summary request over the window: {sizes:?}");
        assert!(outcomes.len() >= 2 && outcomes.iter().all(|(o, _)| *o == CompressOutcome::Compressed), "{outcomes:?}");
        assert!(sizes.iter().any(|&t| t > WINDOW * 2 / 3), "the chunks use the window: {sizes:?}");
    })
    .await;
}

/// Issue 40 item 3: a summarizer on another model is never calibrated by the conversation
/// (its own usage teaches nothing the conversation's model learns), so its chunks are sized
/// by the static estimate with the wider margin: the same JSON-heavy history, summarized by
/// "summary-model" with a window counted by a real tokenizer, fits without one refusal.
#[tokio::test]
async fn cmp_10_cmp_12_a_separate_uncalibrated_summarizer_gets_chunks_that_fit_its_window() {
    each_wire(|| async {
        let summaries = Arc::new(Mutex::new(Vec::new()));
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "json-model"));
        c.model.retry = arkagent::llm::RetryPolicy::none();
        let mut tools = ToolRegistry::new();
        let schema = json!({"type": "object", "properties": {"station": {"type": "integer"}}});
        tools.register(ToolDefinition::new("readings", "Hourly readings of a weather station", schema), Arc::new(Readings)).unwrap();
        c.tools = tools;
        let mut summarizer = model_config("http://127.0.0.1:9/v1", API_KEY, "summary-model");
        summarizer.retry = arkagent::llm::RetryPolicy::none();
        let config = ContextCompressorConfig { keep_recent_message_count: 4, summarizer_max_input_tokens: Some(WINDOW), ..ContextCompressorConfig::with_threshold(8_000) };
        c.compression = Some(Compression::Default { config, summarizer: Some(summarizer) });
        let rt = AgentRuntime::new(c, model(summaries.clone())).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        for turn in 0..24 {
            rt.run(&format!("turn {turn}")).await.unwrap();
        }
        assert!(!rt.state().token_calibration.contains_key("summary-model"), "never calibrated");
        let sizes = summaries.lock().unwrap().clone();
        assert!(sizes.len() >= 4, "the history was summarized in chunks: {sizes:?}");
        // A chunk the summarizer refuses as too long is cut smaller and sent again: every
        // attempt compresses, and refusals stay the exception.
        let outcomes: Vec<CompressOutcome> = recorder
            .0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Compression { outcome, .. } if *outcome != CompressOutcome::Skipped => Some(*outcome),
                _ => None,
            })
            .collect();
        assert!(outcomes.len() >= 2 && outcomes.iter().all(|o| *o == CompressOutcome::Compressed), "{outcomes:?} {sizes:?}");
        let refused = sizes.iter().filter(|&&t| t > WINDOW).count();
        assert!(refused * 4 <= sizes.len(), "refusals stay the exception: {sizes:?}");
    })
    .await;
}

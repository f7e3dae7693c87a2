//! A scripted model speaking the real wire protocol through the host transport,
//! asserting on every request it receives. It speaks the running test's wire format
//! (WIRE-1, `wire_fake`): replies are scripted in the OpenAI-compatible shape and
//! translated to Anthropic Messages under `Wire::Anthropic`, whole or as SSE when the
//! request asks for a stream; the requests it records are the OpenAI-compatible view.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::{
    AgentEvent, AgentObserver, CancellationToken, HttpRequest, HttpResponse, HttpTransport,
    ToolContext, ToolExecutor, ToolInvocation, ToolResult, TransportError,
};
use async_trait::async_trait;
use serde_json::{json, Value};

pub use crate::wire_fake::{each_wire, speak, wire, Wire};
use crate::wire_fake::{anthropic_to_openai, check_anthropic, completion_to_sse, error_to_anthropic, whole_to_anthropic, SseToAnthropic};

pub const API_KEY: &str = "sk-test-SECRET-0123456789";

/// `ModelConfig::new` speaking the running test's wire format.
pub fn model_config(base_url: &str, api_key: &str, model: &str) -> arkagent::ModelConfig {
    speak(arkagent::ModelConfig::new(base_url, api_key, model))
}

/// One scripted reply.
pub enum Reply {
    /// HTTP 200 with this chat.completion JSON.
    Json(Value),
    /// Any status and raw body.
    Raw(u16, String),
    /// A transport failure.
    Fail(TransportError),
    /// Never answers (until cancelled).
    Hang,
}

type Responder = Box<dyn Fn(&Value, usize) -> Reply + Send + Sync>;

pub struct ScriptedModel {
    replies: Mutex<VecDeque<Reply>>,
    responder: Option<Responder>,
    /// The wire format it speaks (the running test's when it was built).
    wire: Wire,
    pub requests: Mutex<Vec<Value>>,
    /// Every request body as sent, in its own wire format (IMG-2's exact parts).
    pub raw: Mutex<Vec<Value>>,
}

impl ScriptedModel {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Self { replies: Mutex::new(replies.into()), responder: None, wire: wire(), requests: Mutex::default(), raw: Mutex::default() })
    }

    /// A model answering each request (body, index) through `f`.
    pub fn with(f: impl Fn(&Value, usize) -> Reply + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self { replies: Mutex::default(), responder: Some(Box::new(f)), wire: wire(), requests: Mutex::default(), raw: Mutex::default() })
    }

    /// The reply of a model built with [`ScriptedModel::with`] to `body` (no request is
    /// recorded).
    pub fn respond(&self, body: &Value, index: usize) -> Reply {
        (self.responder.as_ref().expect("a model built with ScriptedModel::with"))(body, index)
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// Checks one request the way a strict provider of its wire format would; returns
    /// the OpenAI-compatible view of its body.
    fn check(&self, request: &HttpRequest) -> Value {
        check_request(self.wire, request)
    }


    /// A raw reply in the model's wire format (bodies that are neither JSON nor SSE, and
    /// error bodies that are not OpenAI-compatible, stay as they are).
    fn render(&self, status: u16, body: String) -> HttpResponse {
        let body = match (self.wire, status) {
            (Wire::OpenAi, _) => body,
            (Wire::Anthropic, 200..=299) => String::from_utf8(SseToAnthropic::default().convert(body.as_bytes())).unwrap(),
            (Wire::Anthropic, _) => String::from_utf8(error_to_anthropic(body.as_bytes())).unwrap(),
        };
        HttpResponse::full(status, body)
    }

    /// A scripted completion in the model's wire format; SSE when the request asked
    /// for a stream.
    fn render_json(&self, v: &Value, stream: bool) -> HttpResponse {
        HttpResponse::full(200, render_completion(self.wire, v, stream))
    }
}

/// Checks one request the way a strict provider of `wire` would (method, URL, the key in
/// its header and nowhere else, the protocol's own rules, every tool call answered once);
/// returns the OpenAI-compatible view of its body.
pub fn check_request(wire: Wire, request: &HttpRequest) -> Value {
    if wire == Wire::Anthropic {
        let body = anthropic_to_openai(&check_anthropic(request, API_KEY));
        check_messages(&body);
        return body;
    }
    assert_eq!(request.method, "POST");
    assert!(request.url.ends_with("/chat/completions"), "url {}", request.url);
    let auth = request.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    assert_eq!(auth.map(|(_, v)| v.as_str()), Some(format!("Bearer {API_KEY}").as_str()));
    assert!(!request.body.contains(API_KEY), "API key leaked into the request body");
    let body: Value = serde_json::from_str(&request.body).expect("request body is JSON");
    check_messages(&body);
    body
}

/// A scripted (OpenAI-shaped) completion as a server of `wire` sends it; SSE when `stream`.
pub fn render_completion(wire: Wire, v: &Value, stream: bool) -> String {
    match (wire, stream) {
        (Wire::OpenAi, false) => v.to_string(),
        (Wire::OpenAi, true) => completion_to_sse(v),
        (Wire::Anthropic, false) => whole_to_anthropic(v).to_string(),
        (Wire::Anthropic, true) => String::from_utf8(SseToAnthropic::default().convert(completion_to_sse(v).as_bytes())).unwrap(),
    }
}

/// The OpenAI-compatible view's rules: a model, and every assistant tool call answered
/// by a following tool message, once.
fn check_messages(body: &Value) {
    {
        assert!(body["model"].is_string());
        let messages = body["messages"].as_array().expect("messages array");
        // Every assistant tool call is answered by a following tool message, once.
        let mut open: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for m in messages {
            match m["role"].as_str().unwrap() {
                "assistant" => {
                    assert!(open.is_empty(), "unanswered tool calls before a new assistant message: {open:?}");
                    for c in m["tool_calls"].as_array().into_iter().flatten() {
                        let id = c["id"].as_str().unwrap().to_owned();
                        assert!(!id.is_empty() && seen.insert(id.clone()), "duplicate or empty id");
                        assert_eq!(c["type"], "function");
                        open.push(id);
                    }
                }
                "tool" => {
                    let id = m["tool_call_id"].as_str().unwrap();
                    let pos = open.iter().position(|o| o == id).expect("tool result answers an open call");
                    open.remove(pos);
                }
                "user" | "system" => assert!(open.is_empty(), "tool calls left open before {m}"),
                other => panic!("unexpected role {other}"),
            }
        }
        assert!(open.is_empty(), "request ends with unanswered tool calls {open:?}");
    }
}

#[async_trait]
impl HttpTransport for ScriptedModel {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let body = self.check(&request);
        self.raw.lock().unwrap().push(serde_json::from_str(&request.body).unwrap());
        let index = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(body.clone());
            requests.len() - 1
        };
        let reply = match &self.responder {
            Some(f) => f(&body, index),
            None => self.replies.lock().unwrap().pop_front().expect("the script has a reply for every request"),
        };
        match reply {
            Reply::Json(v) => Ok(self.render_json(&v, request.stream)),
            Reply::Raw(status, body) => Ok(self.render(status, body)),
            Reply::Fail(e) => Err(e),
            Reply::Hang => {
                cancel.cancelled().await;
                Err(TransportError { kind: arkagent::llm::TransportErrorKind::Cancelled, message: "cancelled".into() })
            }
        }
    }
}

/// A chat.completion body with tool calls `(id, name, arguments)`.
pub fn tool_calls_reply(calls: &[(&str, &str, Value)], prompt_tokens: u64) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    Reply::Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7, "total_tokens": prompt_tokens + 7}
    }))
}

/// A chat.completion body with a final text.
pub fn text_reply(text: &str, prompt_tokens: u64) -> Reply {
    Reply::Json(json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 2, "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5}
    }))
}

/// A tool that records its calls and answers `weather in {city}: sunny`, optionally slowly.
#[derive(Default)]
pub struct WeatherTool {
    pub calls: Mutex<Vec<Value>>,
    pub delay: Option<Duration>,
    pub hang: bool,
}

#[async_trait]
impl ToolExecutor for WeatherTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        self.calls.lock().unwrap().push(call.arguments.clone());
        if self.hang {
            ctx.cancel.cancelled().await;
        }
        if let Some(d) = self.delay {
            tokio::time::sleep(d).await;
        }
        ToolResult::ok(format!("weather in {}: sunny", call.arguments["city"].as_str().unwrap_or("?")))
    }
}

/// Collects events.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<AgentEvent>>);

impl AgentObserver for Recorder {
    fn on_event(&self, event: &AgentEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Recorder {
    pub fn types(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|e| e.kind.type_name().to_owned()).collect()
    }
}

/// True when the request is a summarizer call: a chunked transcript's
/// ([`is_transcript_summary_request`]) or the conversation's own request followed by the
/// compression instruction ([`is_prefix_summary_request`], COST-3).
pub fn is_summary_request(body: &Value) -> bool {
    is_transcript_summary_request(body) || is_prefix_summary_request(body)
}

/// True for a chunked transcript's summarizer call (CMP-10): its system prompt is the
/// summary prompt, its user message the `<conversation>`.
pub fn is_transcript_summary_request(body: &Value) -> bool {
    body["messages"][0]["content"].as_str().is_some_and(|s| s.contains("<state_snapshot>"))
        && body["messages"][1]["content"].as_str().is_some_and(|s| s.contains("<conversation>"))
}

/// The first line of the instruction a summarizer request on the conversation's own
/// bytes ends with (COST-3).
pub fn compression_instruction_mark() -> &'static str {
    const INSTRUCTION: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/compress/prefix_instruction.md"));
    INSTRUCTION.lines().next().unwrap()
}

/// True for a summarizer call that reuses the conversation's request (COST-3): its last
/// message is the user instruction that starts with [`compression_instruction_mark`].
pub fn is_prefix_summary_request(body: &Value) -> bool {
    let last = body["messages"].as_array().and_then(|m| m.last());
    last.is_some_and(|m| m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.starts_with(compression_instruction_mark())))
}

/// A well-formed snapshot reply.
pub fn snapshot_text(goal: &str, actions: &str) -> String {
    format!(
        "<state_snapshot><overall_goal>{goal}</overall_goal><key_knowledge>k</key_knowledge>\
         <file_system_state>none</file_system_state><recent_actions>{actions}</recent_actions>\
         <current_plan>continue</current_plan></state_snapshot>"
    )
}

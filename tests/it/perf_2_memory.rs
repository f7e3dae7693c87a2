//! PERF-2 (issue 21): the request body is the runtime's encoding cache, lent to the
//! transport and taken back afterwards. A host that keeps every body it was given
//! (the copy path) and one that lets go at once (the reuse path) are sent the same
//! bytes, and a kept body never changes afterwards. `AgentRuntime::memory_report`
//! names where the bytes live; the cache carries little slack.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arkagent::{
    AgentRuntime, AgentRuntimeConfig, CancellationToken, HttpRequest, HttpResponse, HttpTransport, ModelConfig, RunStatus,
    ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolResult, TransportError,
};
use async_trait::async_trait;
use serde_json::json;

/// Asks for one `lookup` call per request until the `calls`-th, which it answers. Keeps
/// each body as the shared `Arc` it was lent (`keep`) or as a copy taken at once.
struct Host {
    calls: usize,
    seen: AtomicUsize,
    keep: bool,
    kept: Mutex<Vec<Arc<String>>>,
    copies: Mutex<Vec<String>>,
}

impl Host {
    fn new(calls: usize, keep: bool) -> Arc<Self> {
        Arc::new(Self { calls, seen: AtomicUsize::new(0), keep, kept: Mutex::new(Vec::new()), copies: Mutex::new(Vec::new()) })
    }
}

#[async_trait]
impl HttpTransport for Host {
    async fn send(&self, r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        let k = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        self.copies.lock().unwrap().push(r.body.as_str().to_owned());
        if self.keep {
            self.kept.lock().unwrap().push(Arc::clone(&r.body));
        }
        let body = if k < self.calls {
            json!({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":format!("call_{k}"),"type":"function","function":{"name":"lookup","arguments":format!("{{\"key\":\"k{k}\"}}")}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}})
        } else {
            json!({"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}})
        };
        Ok(HttpResponse::full(200, body.to_string()))
    }
}

struct Lookup;

#[async_trait]
impl ToolExecutor for Lookup {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        ToolResult::ok(format!("北京 {} — the quick brown fox, \"quoted\"\n", call.arguments).repeat(8))
    }
}

fn runtime(host: Arc<Host>) -> AgentRuntime {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "sk-perf-2", "m"));
    config.system_prompt = "You look things up.".into();
    config.max_iterations = 200;
    let schema = json!({"type": "object", "properties": {"key": {"type": "string"}}});
    config.tools.register(ToolDefinition::new("lookup", "Looks a fact up.", schema), Arc::new(Lookup)).unwrap();
    AgentRuntime::new(config, host).unwrap()
}

#[tokio::test]
async fn perf_2_a_host_that_keeps_every_body_is_sent_the_same_bytes_as_one_that_lets_go() {
    let (keeping, dropping) = (Host::new(60, true), Host::new(60, false));
    let (a, b) = (runtime(Arc::clone(&keeping)), runtime(Arc::clone(&dropping)));
    for rt in [&a, &b] {
        let outcome = rt.run("look up sixty facts").await.unwrap();
        assert_eq!((outcome.status, outcome.iterations), (RunStatus::Completed, 60));
        // A second run appends to the same cache (after the lent body came back or not).
        let outcome = rt.run("and once more").await.unwrap();
        assert_eq!(outcome.status, RunStatus::Completed);
    }
    let kept_copies = keeping.copies.lock().unwrap().clone();
    assert_eq!(kept_copies, *dropping.copies.lock().unwrap(), "both hosts were sent the same bodies");
    assert_eq!(kept_copies.len(), 61);
    // A body the host kept is what it was when it was sent: the runtime never writes into
    // a buffer the host still holds.
    let kept = keeping.kept.lock().unwrap();
    for (held, copy) in kept.iter().zip(&kept_copies) {
        assert_eq!(held.as_str(), copy.as_str());
    }
    // Each body is the previous one's messages plus what came since: two consecutive
    // bodies share everything before the earlier one's `]` + tail, the same tail each time.
    let tails: Vec<usize> = kept_copies
        .windows(2)
        .take(59)
        .map(|pair| pair[0].len() - pair[0].bytes().zip(pair[1].bytes()).take_while(|(x, y)| x == y).count())
        .collect();
    assert!(tails.iter().all(|&t| t == tails[0] && t > 1), "{tails:?}");
    assert_eq!(a.request_body_from_scratch(), b.request_body_from_scratch());
}

#[tokio::test]
async fn perf_2_memory_report_names_the_history_and_a_cache_of_one_body_with_little_slack() {
    let host = Host::new(120, false);
    let rt = runtime(Arc::clone(&host));
    let empty = rt.memory_report();
    assert_eq!(empty.history, 0);
    rt.run("look up facts").await.unwrap();
    let report = rt.memory_report();
    let body = host.copies.lock().unwrap().last().unwrap().len();
    let history_text: usize = rt
        .messages()
        .iter()
        .map(|m| serde_json::to_string(m).unwrap().len())
        .sum();
    // The history holds the messages' text once (within its JSON's size plus slots).
    assert!(report.history > body / 2 && report.history < 2 * history_text, "{report}, body {body}");
    // The cache is one body (the last one, lent and taken back) with ≤ 12.5 % + 4 KiB slack.
    assert!(report.encoding_cache >= body, "{report}, body {body}");
    assert!(report.encoding_cache <= body + body / 8 + 4096 + 8192, "{report}, body {body}");
    assert!(report.usages > 0);
    assert_eq!(report.total(), report.history + report.episodes + report.usages + report.encoding_cache + report.fixed_encodings);
    assert!(report.to_string().contains("encoding cache"));
}

/// Heap bytes of `m`'s own strings and tool call slots (exact: the runtime's strings
/// carry no slack).
fn owned_bytes(m: &arkagent::Message) -> usize {
    use arkagent::Message;
    match m {
        Message::Assistant { content, tool_calls, reasoning, thinking } => {
            content.as_ref().map_or(0, String::len)
                + reasoning.as_ref().map_or(0, |r| r.len())
                + thinking.heap_bytes()
                + tool_calls.len() * std::mem::size_of::<arkagent::ToolCall>()
                + tool_calls.iter().map(|c| c.id.len() + c.name.len() + c.arguments.len()).sum::<usize>()
        }
        Message::Tool { tool_call_id, content, .. } => tool_call_id.len() + content.text().len(),
        Message::User { content } => content.text().len(),
        Message::System { content } => content.len(),
    }
}

#[tokio::test]
async fn perf_2_history_and_usage_slots_carry_at_most_an_eighth_of_slack() {
    // 70 calls: 140 messages and 70 usages, just past 128 and 64, where a doubling vector
    // holds 256 and 128 slots.
    let host = Host::new(70, false);
    let rt = runtime(Arc::clone(&host));
    let outcome = rt.run("look up facts").await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    let report = rt.memory_report();
    let messages = rt.messages();
    let slot = std::mem::size_of::<arkagent::Message>();
    let strings: usize = messages.iter().map(owned_bytes).sum();
    let allowed = |len: usize| len + len / 8 + 16;
    assert_eq!(messages.len(), 140);
    assert!(report.history >= strings + messages.len() * slot, "{report}");
    assert!(report.history <= strings + allowed(messages.len()) * slot, "{report}: {} slots' worth over the strings", (report.history - strings) / slot);
    let usages = rt.usages();
    assert_eq!(usages.len(), 70);
    let usage_slot = std::mem::size_of::<arkagent::ModelUsage>();
    assert!(report.usages >= usages.len() * usage_slot && report.usages <= allowed(usages.len()) * usage_slot, "{report}: {} usage slots", report.usages / usage_slot);
}

#[tokio::test]
async fn perf_2_a_resumed_session_holds_exactly_its_messages_and_usages() {
    let path = crate::store::temp_dir("perf-2-resume").join("sessions.db");
    let rt = runtime(Host::new(70, false));
    rt.attach_store(Arc::new(arkagent::SqliteStore::open(&path).unwrap()), Some("long")).unwrap();
    rt.run("look up facts").await.unwrap();
    drop(rt);
    let resumed = runtime(Host::new(1, false));
    resumed.attach_store(Arc::new(arkagent::SqliteStore::open(&path).unwrap()), Some("long")).unwrap();
    let report = resumed.memory_report();
    let messages = resumed.messages();
    assert_eq!(messages.len(), 140);
    let strings: usize = messages.iter().map(owned_bytes).sum();
    assert_eq!(report.history, strings + messages.len() * std::mem::size_of::<arkagent::Message>(), "{report}");
    assert_eq!(report.usages, 70 * std::mem::size_of::<arkagent::ModelUsage>(), "{report}");
    // So does an imported one (its JSON arrays are read by doubling).
    let imported = runtime(Host::new(1, false));
    imported.import_state(&resumed.export_state().unwrap()).unwrap();
    let again = imported.memory_report();
    assert_eq!((again.history, again.usages), (report.history, report.usages), "{again}");
}

/// The capacities `message` carries beyond its lengths: (its tool call slots, the bytes of
/// its texts, ids, names and arguments).
fn spare_capacity(message: &arkagent::Message) -> (usize, usize) {
    let arkagent::Message::Assistant { content, tool_calls, reasoning, thinking } = message else { panic!("not an answer: {message:?}") };
    let text = |s: &String| s.capacity() - s.len();
    let blocks = thinking.iter().map(|b| match b {
        arkagent::history::ThinkingBlock::Thinking { thinking, signature } => text(thinking) + text(signature),
        arkagent::history::ThinkingBlock::RedactedThinking { data } => text(data),
    });
    // `reasoning` is a `Box<str>`: exact by its type.
    let _ = reasoning;
    let texts = content.iter().map(text).sum::<usize>()
        + blocks.sum::<usize>()
        + tool_calls.iter().map(|c| text(&c.id) + text(&c.name) + text(&c.arguments)).sum::<usize>();
    (tool_calls.capacity() - tool_calls.len(), texts)
}

/// PERF-2, PERF-9: an answer is kept for the session's life, so what the parsers built it
/// in must not keep spare room: before, the Anthropic parser's call vector (grown by
/// `push`) held 4 slots for 1–2 calls, and every text assembled from stream deltas up to
/// twice its length. Whole and streamed, on both wires, with text, reasoning and calls.
#[tokio::test]
async fn perf_2_an_answer_is_kept_without_spare_capacity_whole_or_streamed_on_either_wire() {
    use crate::llm_fake::{config, delta_event, each_wire, finish_events, parse_stream_wire, FakeProvider, Step};
    let call = |k: usize| json!({"id": format!("call_{k}"), "type": "function", "function": {"name": "lookup", "arguments": format!("{{\"key\":\"北京 k{k}\"}}")}});
    each_wire(|| async move {
        // Whole.
        let body = json!({"choices": [{"message": {"role": "assistant", "content": "Let me check both.", "reasoning_content": "Two lookups.", "tool_calls": [call(1), call(2)]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        let mut whole = config();
        whole.stream = false;
        let client = arkagent::ChatClient::new(FakeProvider::new(vec![Step::ok(body.to_string())]), whole);
        let request = arkagent::ChatRequest { system_prompt: Some("sys"), context_messages: &[], messages: &[], tools: &[], tool_choice: None };
        let answer = client.send(client.build_http_request(&request), &CancellationToken::new()).await.unwrap();
        assert_eq!(answer.message.tool_calls().len(), 2);
        assert_eq!(spare_capacity(&answer.message), (0, 0), "whole: {:?}", answer.message);
        // Streamed: every text and the arguments one character per delta.
        let mut sse = String::new();
        for piece in "Thinking it over, 慢慢地.".chars() {
            sse += &delta_event(&json!({"reasoning_content": piece.to_string()}).to_string());
        }
        for piece in "The weather in 北京 and 深圳, one moment.".chars() {
            sse += &delta_event(&json!({"content": piece.to_string()}).to_string());
        }
        for k in 0..2 {
            sse += &delta_event(&json!({"tool_calls": [{"index": k, "id": format!("call_{k}"), "type": "function", "function": {"name": "lookup", "arguments": ""}}]}).to_string());
            for piece in format!("{{\"key\":\"深圳 k{k}\"}}").chars() {
                sse += &delta_event(&json!({"tool_calls": [{"index": k, "function": {"arguments": piece.to_string()}}]}).to_string());
            }
        }
        sse += &finish_events("tool_calls");
        let answer = parse_stream_wire(&crate::llm_fake::wire_body(sse.as_bytes())).unwrap();
        assert_eq!(answer.message.tool_calls().len(), 2);
        assert!(answer.message.text().is_some_and(|t| t.contains("深圳")));
        assert_eq!(spare_capacity(&answer.message), (0, 0), "streamed: {:?}", answer.message);
    })
    .await;
}

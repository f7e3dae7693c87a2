//! THINK-1..THINK-5 through the public Rust API, against the strict thinking providers of
//! `thinking_fake` (DeepSeek, Kimi, Qwen and Claude rules, whole and streamed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::compress::ContextCompressorConfig;
use arkagent::history::ThinkingBlock;
use arkagent::llm::{Effort, ReasoningReplay, Thinking, ToolChoice};
use arkagent::runtime::DelegationConfig;
use arkagent::{
    AgentEvent, AgentObserver, AgentRuntime, AgentRuntimeConfig, Compression, ErrorCode, EventKind, HistoryInvariants, Message, RunStatus,
    SequentialIdGenerator, SqliteStore, ToolDefinition, ToolRegistry,
};
use serde_json::{json, Value};

use crate::prefix::{check_sequence, ChatCompletions, WireView};
use crate::store::temp_dir;
use crate::support::{model_config, text_reply, ScriptedModel, WeatherTool, API_KEY};
use crate::thinking_fake::{Flavor, ThinkingProvider};

/// Every provider that requires its reasoning back, on each wire format.
const STRICT: [Flavor; 3] = [Flavor::DeepSeek, Flavor::Kimi, Flavor::Anthropic];

fn config(flavor: Flavor, stream: bool) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(flavor.config(API_KEY, stream));
    let mut tools = ToolRegistry::new();
    tools.register(ToolDefinition::new("weather", "Weather for a city", json!({"type": "object"})), Arc::new(WeatherTool::default())).unwrap();
    c.tools = tools;
    c.system_prompt = "You are a weather assistant.".into();
    c.session_id = Some(format!("think-{flavor:?}-{stream}"));
    c.id_generator = Arc::new(SequentialIdGenerator::new("t"));
    c
}

/// Collects events.
#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl AgentObserver for Events {
    fn on_event(&self, event: &AgentEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Events {
    fn reasoning(&self) -> (String, usize) {
        let mut text = String::new();
        let mut redacted = 0;
        for e in self.0.lock().unwrap().iter() {
            if let EventKind::ReasoningDelta { delta, redacted: r, .. } = &e.kind {
                text.push_str(delta);
                redacted += usize::from(*r);
            }
        }
        (text, redacted)
    }
}

fn each_mode() -> impl Iterator<Item = (Flavor, bool)> {
    STRICT.into_iter().flat_map(|f| [(f, false), (f, true)])
}

/// The reasoning every answer of `rt`'s history carries (Chat Completions text or the
/// Anthropic blocks' text).
fn answers_with_reasoning(rt: &AgentRuntime) -> usize {
    rt.messages().iter().filter(|m| m.reasoning_text().is_some()).count()
}

#[tokio::test]
async fn think_2_think_5_tool_loops_complete_against_each_strict_provider_whole_and_streamed() {
    for (flavor, stream) in each_mode() {
        let provider = ThinkingProvider::new(flavor, API_KEY, 3);
        let rt = AgentRuntime::new(config(flavor, stream), provider.clone()).unwrap();
        let events = Arc::new(Events::default());
        let _sub = rt.subscribe(events.clone());
        for run in 0..3 {
            let out = rt.run(format!("run {run}: the weather in Paris?")).await.unwrap_or_else(|e| panic!("{flavor:?} stream={stream}: {e} {:?}", provider.refusals()));
            assert_eq!(out.status, RunStatus::Completed, "{flavor:?} stream={stream}");
            assert!(out.final_text.unwrap().starts_with("done"));
            assert_eq!(out.iterations, 4, "three tool rounds and the answer");
        }
        assert!(provider.refusals().is_empty(), "{:?}", provider.refusals());
        assert_eq!(provider.bodies().len(), 12);
        // THINK-1: every answer kept its reasoning; the history stays paired.
        assert_eq!(answers_with_reasoning(&rt), 12, "{flavor:?}");
        assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
        // THINK-5: reasoning tokens in every usage and the totals; reasoning deltas on both wires.
        let usages = rt.usages();
        assert!(usages.iter().all(|u| u.reasoning_tokens.is_some()), "{flavor:?}: {usages:?}");
        let sum: u64 = usages.iter().filter_map(|u| u.reasoning_tokens).sum();
        assert!(sum > 0);
        assert_eq!(rt.total_usage().total.reasoning_tokens, sum);
        let (text, redacted) = events.reasoning();
        assert!(text.contains("the user wants the weather"), "{flavor:?} stream={stream}");
        if flavor == Flavor::Anthropic {
            assert!(redacted > 0, "redacted blocks are marked in the events");
        }
    }
}

#[tokio::test]
async fn think_2_a_loop_that_drops_the_reasoning_is_refused_by_each_strict_provider() {
    for (flavor, stream) in each_mode() {
        let provider = ThinkingProvider::new(flavor, API_KEY, 2);
        let mut c = config(flavor, stream);
        c.model.reasoning_replay = ReasoningReplay::None;
        let rt = AgentRuntime::new(c, provider.clone()).unwrap();
        let err = rt.run("the weather?").await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::LlmBadRequest, "{flavor:?}");
        let refusal = provider.refusals().pop().unwrap();
        let expected = match flavor {
            Flavor::DeepSeek => "The reasoning_content in the thinking mode must be passed back to the API.",
            Flavor::Kimi => "reasoning_content is missing in assistant tool call message at index 2",
            _ => "Expected `thinking` or `redacted_thinking`, but found `tool_use`",
        };
        assert!(refusal.contains(expected), "{refusal}");
    }
}

/// A thinking model's answer can be blank: all its tokens spent on reasoning (Chat
/// Completions: `content: null`, no calls, `finish_reason: "length"`), or Claude's `"\n\n"`
/// text before a tool call. Stored as received, it is sent back in a shape the provider
/// accepts (`"content": ""`; no whitespace-only text block), so neither the run that got it
/// nor any later run of the session is refused.
#[tokio::test]
async fn think_2_a_blank_answer_is_sent_back_in_a_shape_the_provider_accepts() {
    for (flavor, stream) in each_mode() {
        let provider = ThinkingProvider::new(flavor, API_KEY, 1);
        // Chat Completions: the run's final answer (number 1) is reasoning only. Anthropic:
        // the tool call (number 0) comes after a blank text, inside the run's tool cycle.
        provider.blank_answer_at(if flavor == Flavor::Anthropic { 0 } else { 1 });
        let rt = AgentRuntime::new(config(flavor, stream), provider.clone()).unwrap();
        let context = |e: arkagent::ArkAgentError| format!("{flavor:?} stream={stream}: {e} {:?}", provider.refusals());
        let first = rt.run("the weather?").await.unwrap_or_else(|e| panic!("{}", context(e)));
        assert_eq!(first.status, RunStatus::Completed);
        let second = rt.run("and tomorrow?").await.unwrap_or_else(|e| panic!("{}", context(e)));
        assert_eq!(second.status, RunStatus::Completed);
        assert!(second.final_text.unwrap().starts_with("done"));
        assert!(provider.refusals().is_empty(), "{:?}", provider.refusals());
        assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
        let last: Value = serde_json::from_str(provider.bodies().last().unwrap()).unwrap();
        if flavor == Flavor::Anthropic {
            // The blank text stays in the history, as received, and off the wire.
            assert_eq!(rt.messages()[1].text(), Some("\n\n"), "{flavor:?}");
            assert!(!last.to_string().contains(r#""text":"\n\n""#), "{last}");
        } else {
            let blank = &last["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").nth(1).unwrap();
            assert_eq!(blank["content"], json!(""), "{flavor:?}: {blank}");
            assert!(blank.get("tool_calls").is_none());
        }
    }
}

#[tokio::test]
async fn think_2_a_changed_reasoning_or_signature_is_refused() {
    for flavor in STRICT {
        let provider = ThinkingProvider::new(flavor, API_KEY, 1);
        let rt = AgentRuntime::new(config(flavor, false), provider.clone()).unwrap();
        rt.run("first").await.unwrap();
        // An import of the same history with one byte of the first answer's reasoning changed.
        let mut state: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
        let answer = &mut state["history"]["messages"][1];
        match flavor {
            Flavor::Anthropic => {
                let sig = answer["thinking"][0]["signature"].as_str().unwrap().replace("sig", "SIG");
                answer["thinking"][0]["signature"] = json!(sig);
            }
            _ => answer["reasoning"] = json!(format!("{} ", answer["reasoning"].as_str().unwrap())),
        }
        // The tool cycle stays open so that its reasoning is required: cut the final answer.
        let messages = state["history"]["messages"].as_array_mut().unwrap();
        messages.truncate(3);
        let tampered = AgentRuntime::new(config(flavor, false), provider.clone()).unwrap();
        tampered.import_state(&state.to_string()).unwrap();
        let err = tampered.run("again").await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::LlmBadRequest, "{flavor:?}");
    }
}

#[tokio::test]
async fn think_2_no_request_carries_reasoning_the_provider_never_sent_and_thinking_switches_off() {
    for flavor in Flavor::ALL {
        for stream in [false, true] {
            let provider = ThinkingProvider::new(flavor, API_KEY, 2);
            let mut c = config(flavor, stream);
            c.model.thinking = Some(Thinking::Off);
            let rt = AgentRuntime::new(c, provider.clone()).unwrap();
            let out = rt.run("the weather?").await.unwrap_or_else(|e| panic!("{flavor:?}: {e} {:?}", provider.refusals()));
            assert_eq!(out.status, RunStatus::Completed);
            for body in provider.bodies() {
                let v: Value = serde_json::from_str(&body).unwrap();
                match flavor {
                    Flavor::Qwen => assert_eq!(v["enable_thinking"], json!(false), "{body}"),
                    _ => assert_eq!(v["thinking"], json!({"type": "disabled"}), "{body}"),
                }
                assert!(!body.contains("reasoning_content") && !body.contains(r#""type":"thinking""#), "{flavor:?}: {body}");
            }
            assert_eq!(answers_with_reasoning(&rt), 0);
        }
    }
}

/// README, "Sent back": DeepSeek and Kimi, thinking, refuse any tool-call message without
/// `reasoning_content` — also one whose answer never had reasoning (a session kept from
/// `deepseek-chat`, before thinking). Such an answer goes back with `""`; thinking off, or
/// another provider, it goes back without the field.
#[tokio::test]
async fn think_2_a_tool_call_answer_kept_from_before_thinking_goes_back_with_an_empty_field() {
    let mut state = arkagent::AgentState::new("from-deepseek-chat");
    state.history.messages = vec![
        Message::user("the weather?"),
        Message::Assistant {
            content: None,
            tool_calls: vec![arkagent::ToolCall { id: "old_1".into(), name: "weather".into(), arguments: r#"{"city":"Oslo"}"#.into() }],
            reasoning: None,
            thinking: Default::default(),
        },
        Message::tool_result("old_1", "sunny", false),
        Message::Assistant { content: Some("Sunny.".into()), tool_calls: vec![], reasoning: None, thinking: Default::default() },
    ];
    let state = serde_json::to_string(&state).unwrap();
    for flavor in [Flavor::DeepSeek, Flavor::Kimi] {
        for (stream, thinking) in [(false, None), (true, None), (true, Some(Thinking::On)), (false, Some(Thinking::Off))] {
            let provider = ThinkingProvider::new(flavor, API_KEY, 1);
            let mut c = config(flavor, stream);
            c.model.thinking = thinking;
            let rt = AgentRuntime::new(c, provider.clone()).unwrap();
            rt.import_state(&state).unwrap();
            let out = rt.run("and tomorrow?").await.unwrap_or_else(|e| panic!("{flavor:?} {thinking:?}: {e} {:?}", provider.refusals()));
            assert_eq!(out.status, RunStatus::Completed);
            let bodies = provider.bodies();
            assert_eq!(bodies.len(), 2, "{flavor:?} {thinking:?}: one tool round, then the answer");
            for body in &bodies {
                let v: Value = serde_json::from_str(body).unwrap();
                let old = v["messages"].as_array().unwrap().iter().find(|m| m["tool_calls"][0]["id"] == "old_1").unwrap();
                let want = if thinking == Some(Thinking::Off) { None } else { Some(&json!("")) };
                assert_eq!(old.get("reasoning_content"), want, "{flavor:?} {thinking:?}: {old}");
                let text = v["messages"].as_array().unwrap().iter().find(|m| m["content"] == "Sunny.").unwrap();
                assert!(text.get("reasoning_content").is_none(), "an answer without calls needs none: {text}");
            }
            // The new tool-call answer's reasoning goes back as received.
            let last: Value = serde_json::from_str(&bodies[1]).unwrap();
            let fresh = last["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "assistant").unwrap();
            assert_eq!(fresh["reasoning_content"].is_string(), thinking != Some(Thinking::Off), "{fresh}");
        }
    }
    // A server that is neither sees nothing new.
    let scripted = ScriptedModel::new(vec![text_reply("ok", 10)]);
    let rt = AgentRuntime::new(AgentRuntimeConfig::new(model_config("http://127.0.0.1:8080/v1", API_KEY, "llama3.3")), scripted.clone()).unwrap();
    rt.import_state(&state).unwrap();
    rt.run("and tomorrow?").await.unwrap();
    assert!(!scripted.requests.lock().unwrap()[0].to_string().contains("reasoning_content"));
}

/// README's table, `glm`: "every answer's with `clear_thinking: false` in `extraBody`, at its
/// top level or in its `thinking` (preserved thinking)"; without it, tool-call answers' only.
#[tokio::test]
async fn think_2_glm_preserved_thinking_gets_every_answers_reasoning_back() {
    let mut state = arkagent::AgentState::new("glm");
    state.history.messages = vec![
        Message::user("hi"),
        Message::Assistant { content: Some("Hello.".into()), tool_calls: vec![], reasoning: Some("a greeting".into()), thinking: Default::default() },
    ];
    let state = serde_json::to_string(&state).unwrap();
    for (extra, sent) in [
        (None, false),
        (Some(("clear_thinking", json!(false))), true),
        (Some(("thinking", json!({"type": "enabled", "clear_thinking": false}))), true),
        (Some(("clear_thinking", json!(true))), false),
    ] {
        let scripted = ScriptedModel::new(vec![text_reply("ok", 10)]);
        let mut model = model_config("https://open.bigmodel.cn/api/paas/v4", API_KEY, "glm-5");
        if let Some((k, v)) = &extra {
            model.extra_body.insert((*k).into(), v.clone());
        }
        let rt = AgentRuntime::new(AgentRuntimeConfig::new(model), scripted.clone()).unwrap();
        rt.import_state(&state).unwrap();
        rt.run("and now?").await.unwrap();
        let body: Value = scripted.requests.lock().unwrap()[0].clone();
        let hello = body["messages"].as_array().unwrap().iter().find(|m| m["content"] == "Hello.").unwrap().clone();
        assert_eq!(hello.get("reasoning_content") == Some(&json!("a greeting")), sent, "{extra:?}: {hello}");
    }
}

/// README's table: OpenAI's `auto` replay sends back "nothing" — also reasoning another
/// provider left in the history (a session moved from DeepSeek to gpt-5, a worker seeded
/// with such a parent's messages).
#[tokio::test]
async fn think_2_openai_gets_no_reasoning_another_provider_left_in_the_history() {
    let answer = Message::Assistant {
        content: None,
        tool_calls: vec![arkagent::ToolCall { id: "c1".into(), name: "weather".into(), arguments: "{}".into() }],
        reasoning: Some("DeepSeek thought about it".into()),
        thinking: Default::default(),
    };
    let mut state = arkagent::AgentState::new("moved");
    state.history.messages = vec![Message::user("the weather?"), answer, Message::tool_result("c1", "sunny", false), Message::Assistant {
        content: Some("Sunny.".into()),
        tool_calls: vec![],
        reasoning: Some("and about the answer".into()),
        thinking: Default::default(),
    }];
    for (model, replayed) in [("gpt-5.1", false), ("deepseek-v4", true)] {
        let scripted = ScriptedModel::new(vec![text_reply("ok", 10)]);
        let rt = AgentRuntime::new(AgentRuntimeConfig::new(model_config("https://api.example.com/v1", API_KEY, model)), scripted.clone()).unwrap();
        rt.import_state(&serde_json::to_string(&state).unwrap()).unwrap();
        rt.run("and tomorrow?").await.unwrap();
        let body = scripted.requests.lock().unwrap()[0].to_string();
        assert_eq!(body.contains("DeepSeek thought about it"), replayed, "{model}: {body}");
        assert!(!body.contains("and about the answer"), "{model}: a final answer's reasoning never goes back");
    }
}

#[tokio::test]
async fn think_4_qwen_without_streaming_is_sent_thinking_off_and_completes() {
    let provider = ThinkingProvider::new(Flavor::Qwen, API_KEY, 2);
    let rt = AgentRuntime::new(config(Flavor::Qwen, false), provider.clone()).unwrap();
    rt.run("the weather?").await.unwrap();
    assert!(provider.bodies().iter().all(|b| b.contains(r#""enable_thinking":false"#)));
    // Streamed, Qwen thinks by default and its reasoning is not sent back (auto: none).
    let provider = ThinkingProvider::new(Flavor::Qwen, API_KEY, 2);
    let rt = AgentRuntime::new(config(Flavor::Qwen, true), provider.clone()).unwrap();
    rt.run("the weather?").await.unwrap();
    assert_eq!(answers_with_reasoning(&rt), 3);
    assert!(provider.bodies().iter().all(|b| !b.contains("enable_thinking") && !b.contains("reasoning_content")));
}

/// A run that stops after its first tool round, the cycle left open in the history.
fn stop_mid_cycle(c: &mut AgentRuntimeConfig) {
    c.max_iterations = 1;
}

#[tokio::test]
async fn think_1_sqlite_resume_and_import_continue_an_open_tool_cycle() {
    for (flavor, stream) in each_mode() {
        let dir = temp_dir("think-store");
        let path = dir.join("s.db");
        let provider = ThinkingProvider::new(flavor, API_KEY, 2);
        let mut c = config(flavor, stream);
        c.store = Some(Arc::new(SqliteStore::open(&path).unwrap()));
        stop_mid_cycle(&mut c);
        let rt = AgentRuntime::new(c, provider.clone()).unwrap();
        let out = rt.run("the weather?").await.unwrap();
        assert_eq!(out.status, RunStatus::MaxIterations);
        let exported = rt.export_state().unwrap();
        let before = rt.messages();
        drop(rt);
        // Resumed from SQLite by a new runtime: the reasoning is read back exactly.
        let mut c = config(flavor, stream);
        c.store = Some(Arc::new(SqliteStore::open(&path).unwrap()));
        let resumed = AgentRuntime::new(c, provider.clone()).unwrap();
        assert_eq!(resumed.messages(), before, "{flavor:?}: the store keeps the reasoning as received");
        let out = resumed.run("go on").await.unwrap_or_else(|e| panic!("{flavor:?}: {e} {:?}", provider.refusals()));
        assert_eq!(out.status, RunStatus::Completed);
        // Imported into a runtime without a store.
        let imported = AgentRuntime::new(config(flavor, stream), provider.clone()).unwrap();
        imported.import_state(&exported).unwrap();
        assert_eq!(imported.messages(), before);
        imported.run("go on").await.unwrap_or_else(|e| panic!("{flavor:?}: {e} {:?}", provider.refusals()));
        assert!(provider.refusals().is_empty());
    }
}

/// Claude's interleaved thinking (README, "Kept as received" … "`block_order`"): answers
/// whose reasoning follows their text go back with every block in place — through tool
/// loops, a SQLite resume and an import in the middle of a cycle, whole and streamed. The
/// provider refuses a reordered answer as Anthropic does.
#[tokio::test]
async fn think_2_interleaved_blocks_go_back_in_place_through_loops_a_resume_and_an_import() {
    for stream in [false, true] {
        let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 3);
        provider.interleave();
        let rt = AgentRuntime::new(config(Flavor::Anthropic, stream), provider.clone()).unwrap();
        for run in 0..2 {
            let out = rt.run(format!("run {run}: the weather?")).await.unwrap_or_else(|e| panic!("stream={stream}: {e} {:?}", provider.refusals()));
            assert_eq!(out.status, RunStatus::Completed);
        }
        let orders: Vec<String> = rt
            .messages()
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { thinking, .. } => thinking.order().map(str::to_owned),
                _ => None,
            })
            .collect();
        assert_eq!(orders.len(), 6, "every answer with a call was interleaved: {orders:?}");
        assert!(orders.iter().all(|o| o.starts_with('x') || o.starts_with("tx")), "{orders:?}");
        let json = serde_json::to_string(&rt.messages()).unwrap();
        assert!(json.contains(r#""block_order":"x17tu""#) && json.contains(r#""block_order":"tx17tu""#), "{json}");

        // Stopped in the middle of an interleaved cycle, then resumed from SQLite and imported.
        let dir = temp_dir("think-interleaved");
        let path = dir.join("s.db");
        let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 2);
        provider.interleave();
        let mut c = config(Flavor::Anthropic, stream);
        c.store = Some(Arc::new(SqliteStore::open(&path).unwrap()));
        stop_mid_cycle(&mut c);
        let first = AgentRuntime::new(c, provider.clone()).unwrap();
        assert_eq!(first.run("the weather?").await.unwrap().status, RunStatus::MaxIterations);
        let exported = first.export_state().unwrap();
        let before = first.messages();
        assert!(matches!(&before[1], Message::Assistant { thinking, .. } if thinking.order().is_some()), "{before:?}");
        drop(first);
        let mut c = config(Flavor::Anthropic, stream);
        c.store = Some(Arc::new(SqliteStore::open(&path).unwrap()));
        let resumed = AgentRuntime::new(c, provider.clone()).unwrap();
        assert_eq!(resumed.messages(), before, "the store keeps the order");
        resumed.run("go on").await.unwrap_or_else(|e| panic!("stream={stream}: {e} {:?}", provider.refusals()));
        let imported = AgentRuntime::new(config(Flavor::Anthropic, stream), provider.clone()).unwrap();
        imported.import_state(&exported).unwrap();
        assert_eq!(imported.messages(), before, "the export keeps the order");
        imported.run("go on").await.unwrap_or_else(|e| panic!("stream={stream}: {e} {:?}", provider.refusals()));
        assert!(provider.refusals().is_empty(), "{:?}", provider.refusals());
    }
}

/// LLM-4 and THINK-2 together: an interleaved answer whose text carries the API key is
/// kept redacted, its `block_order` recounted over the redacted text — imported, and
/// received from the provider — so its blocks still go back in place.
#[tokio::test]
async fn think_2_llm_4_a_redacted_interleaved_answer_keeps_a_block_order_that_fits() {
    let tail = format!("Key: {API_KEY}.");
    let answer = json!({"role": "assistant", "content": format!("Let me check.{tail}"),
        "tool_calls": [{"id": "toolu_a", "name": "weather", "arguments": "{}"}],
        "thinking": [{"type": "thinking", "thinking": "hm", "signature": "EqQB/s=="}],
        "block_order": format!("x13tux{}", tail.len())});
    let mut state = arkagent::AgentState::new("redacted-interleaved");
    state.history.messages = vec![Message::user("weather?"), serde_json::from_value(answer).unwrap(), Message::tool_result("toolu_a", "sunny", false)];
    let rt = AgentRuntime::new(config(Flavor::Anthropic, false), ThinkingProvider::new(Flavor::Anthropic, API_KEY, 1)).unwrap();
    rt.import_state(&serde_json::to_string(&state).unwrap()).unwrap();
    let Message::Assistant { content, thinking, .. } = &rt.messages()[1] else { panic!() };
    let content = content.clone().unwrap();
    assert!(!content.contains(API_KEY), "{content}");
    let order = thinking.order().unwrap().to_owned();
    assert_eq!(order, format!("x13tux{}", content.len() - 13), "the order counts the redacted text");
    assert!(!serde_json::to_string(&rt.messages()).unwrap().contains(API_KEY));
    // The key written plainly and once more with a JSON escape (which the redaction of the
    // JSON text misses): the text is redacted all the same, the order still fits.
    let tail = format!("Key: {API_KEY}, again {API_KEY}.");
    let mut twice = state.clone();
    twice.history.messages[1] = serde_json::from_value(json!({"role": "assistant", "content": format!("Let me check.{tail}"),
        "tool_calls": [{"id": "toolu_a", "name": "weather", "arguments": "{}"}],
        "thinking": [{"type": "thinking", "thinking": "hm", "signature": "EqQB/s=="}],
        "block_order": format!("x13tux{}", tail.len())}))
    .unwrap();
    let json = serde_json::to_string(&twice).unwrap();
    let second = json.rfind(API_KEY).unwrap();
    let escaped = format!("{}\\u0073{}", &json[..second], &json[second + 1..]);
    let rt = AgentRuntime::new(config(Flavor::Anthropic, false), ThinkingProvider::new(Flavor::Anthropic, API_KEY, 1)).unwrap();
    rt.import_state(&escaped).unwrap();
    let Message::Assistant { content, thinking, .. } = &rt.messages()[1] else { panic!() };
    let content = content.clone().unwrap();
    assert!(!content.contains(API_KEY) && !content.contains(&API_KEY[1..]), "{content}");
    assert_eq!(thinking.order().map(str::to_owned), Some(format!("x13tux{}", content.len() - 13)));
}

fn compressing(c: &mut AgentRuntimeConfig, summarizer: Option<arkagent::ModelConfig>) {
    let config = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(300) };
    c.compression = Some(Compression::Default { config, summarizer });
}

#[tokio::test]
async fn think_3_both_summarizer_paths_carry_the_reasoning_and_the_loop_goes_on() {
    for (flavor, stream) in each_mode() {
        for chunked in [false, true] {
            let provider = ThinkingProvider::new(flavor, API_KEY, 3);
            let mut c = config(flavor, stream);
            // The chunked path: a summarizer on another model of the same provider.
            let summarizer = chunked.then(|| {
                let mut s = flavor.config(API_KEY, stream);
                s.model.push_str("-summarizer");
                s
            });
            compressing(&mut c, summarizer);
            let rt = AgentRuntime::new(c, provider.clone()).unwrap();
            for run in 0..2 {
                rt.run(format!("run {run}: the weather?")).await.unwrap_or_else(|e| panic!("{flavor:?} chunked={chunked}: {e} {:?}", provider.refusals()));
            }
            assert!(!rt.episodic_memories().is_empty(), "{flavor:?} chunked={chunked}: a compression was committed");
            let bodies = provider.bodies();
            let summaries: Vec<&String> = bodies.iter().filter(|b| crate::thinking_fake::is_summary(&serde_json::from_str(b).unwrap(), flavor)).collect();
            assert!(!summaries.is_empty());
            for s in summaries {
                if chunked {
                    assert!(s.contains("[assistant reasoning] Step"), "THINK-3: the transcript carries the reasoning: {s}");
                } else {
                    // The conversation's bytes: the reasoning goes back as the provider requires.
                    let carried = if flavor == Flavor::Anthropic { r#""type":"thinking""# } else { "reasoning_content" };
                    assert!(s.contains(carried), "THINK-3: {s}");
                }
            }
            assert!(provider.refusals().is_empty(), "{:?}", provider.refusals());
            assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
        }
    }
}

#[tokio::test]
async fn think_1_a_child_sub_agent_on_a_thinking_model_completes_its_tool_loop() {
    for (flavor, stream) in each_mode() {
        let provider = ThinkingProvider::new(flavor, API_KEY, 2);
        let mut c = config(flavor, stream);
        c.delegation = Some(DelegationConfig { allow_clone: true, ..Default::default() });
        let rt = AgentRuntime::new(c, provider.clone()).unwrap();
        let out = rt.run("ask a helper for the weather").await.unwrap_or_else(|e| panic!("{flavor:?}: {e} {:?}", provider.refusals()));
        assert_eq!(out.status, RunStatus::Completed);
        let result = rt.messages().into_iter().find_map(|m| match m {
            Message::Tool { content, .. } if content.text().contains("done") => Some(content.text().into_owned()),
            _ => None,
        });
        assert!(result.is_some(), "{flavor:?}: the child's answer reached the parent");
        assert!(rt.total_usage().children.reasoning_tokens > 0, "the child's reasoning tokens are counted");
        assert!(provider.refusals().is_empty());
    }
}

#[tokio::test]
async fn think_5_cancel_mid_reasoning_leaves_a_paired_history_and_the_next_run_completes() {
    for flavor in STRICT {
        let provider = ThinkingProvider::new(flavor, API_KEY, 2);
        provider.hang_at(1); // the second call: after a tool round, mid-reasoning
        let rt = Arc::new(AgentRuntime::new(config(flavor, true), provider.clone()).unwrap());
        let events = Arc::new(Events::default());
        let _sub = rt.subscribe(events.clone());
        let run = tokio::spawn({
            let rt = rt.clone();
            async move { rt.run("the weather?").await }
        });
        for _ in 0..500 {
            if events.0.lock().unwrap().iter().any(|e| matches!(e.kind, EventKind::ReasoningDelta { iteration: 2, .. })) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(rt.cancel());
        let out = run.await.unwrap().unwrap();
        assert_eq!(out.status, RunStatus::Cancelled, "{flavor:?}");
        assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
        let next = rt.run("again").await.unwrap_or_else(|e| panic!("{flavor:?}: {e} {:?}", provider.refusals()));
        assert_eq!(next.status, RunStatus::Completed);
    }
}

#[tokio::test]
async fn think_2_cost_4_requests_extend_each_other_with_the_reasoning_replayed() {
    for (flavor, stream) in each_mode() {
        let provider = ThinkingProvider::new(flavor, API_KEY, 3);
        let rt = AgentRuntime::new(config(flavor, stream), provider.clone()).unwrap();
        for run in 0..3 {
            rt.run(format!("run {run}")).await.unwrap();
        }
        let bodies = provider.bodies();
        let view: &dyn WireView = if flavor == Flavor::Anthropic { &crate::prefix::AnthropicMessages } else { &ChatCompletions };
        let (extended, _) = check_sequence(view, &bodies, &vec![false; bodies.len()]);
        assert_eq!(extended, bodies.len() - 1);
        // The replayed reasoning is in the bytes the cache has seen.
        let last = bodies.last().unwrap();
        let replayed = last.matches(if flavor == Flavor::Anthropic { r#""signature""# } else { "reasoning_content" }).count();
        assert!(replayed >= 6, "{flavor:?}: {replayed}");
    }
}

#[test]
fn think_4_settings_a_provider_refuses_are_refused_before_any_request() {
    let new = |c: AgentRuntimeConfig| AgentRuntime::new(c, ThinkingProvider::new(Flavor::DeepSeek, API_KEY, 1)).err().map(|e| e.code());
    let with = |flavor: Flavor, stream: bool, f: &dyn Fn(&mut AgentRuntimeConfig)| {
        let mut c = config(flavor, stream);
        f(&mut c);
        new(c)
    };
    // thinking_unsupported: a setting with no switch at that provider.
    assert_eq!(with(Flavor::DeepSeek, true, &|c| c.model.thinking = Some(Thinking::Budget(2048))), Some(ErrorCode::ThinkingUnsupported));
    assert_eq!(with(Flavor::Kimi, true, &|c| c.model.thinking = Some(Thinking::Effort(Effort::High))), Some(ErrorCode::ThinkingUnsupported));
    // Claude models by name: no "minimal" effort, no budget where thinking is adaptive only,
    // no "off" and no temperature on Fable (it always thinks); a gateway's prefix is passed over.
    let claude = |model: &'static str, thinking: Option<Thinking>, temperature: Option<f32>| {
        move |c: &mut AgentRuntimeConfig| {
            c.model.model = model.into();
            c.model.thinking = thinking;
            c.model.temperature = temperature;
        }
    };
    for (model, thinking, temperature, code) in [
        ("claude-opus-4-8", Some(Thinking::Effort(Effort::Minimal)), None, Some(ErrorCode::ThinkingUnsupported)),
        ("claude-opus-4-8", Some(Thinking::Budget(2048)), None, Some(ErrorCode::ThinkingUnsupported)),
        ("claude-opus-4-8", Some(Thinking::Effort(Effort::Xhigh)), None, None),
        ("claude-opus-4-6", Some(Thinking::Effort(Effort::Xhigh)), None, Some(ErrorCode::ThinkingUnsupported)),
        ("claude-opus-4-6", Some(Thinking::Budget(2048)), None, None),
        ("anthropic/claude-fable-5", Some(Thinking::Off), None, Some(ErrorCode::ThinkingUnsupported)),
        ("claude-fable-5", None, Some(1.0), Some(ErrorCode::ThinkingConflict)),
        ("claude-fable-5", Some(Thinking::Effort(Effort::Low)), None, None),
    ] {
        assert_eq!(with(Flavor::Anthropic, true, &claude(model, thinking, temperature)), code, "{model} {thinking:?} {temperature:?}");
    }
    // thinking_conflict: what the thinking model refuses.
    let anthropic_forced = |c: &mut AgentRuntimeConfig| {
        c.model.thinking = Some(Thinking::On);
        c.tool_choice = Some(ToolChoice::Required);
    };
    assert_eq!(with(Flavor::Anthropic, true, &anthropic_forced), Some(ErrorCode::ThinkingConflict));
    assert_eq!(with(Flavor::Qwen, false, &|c| c.model.thinking = Some(Thinking::On)), Some(ErrorCode::ThinkingConflict));
    let openai = |c: &mut AgentRuntimeConfig| {
        c.model = arkagent::ModelConfig::new("https://api.openai.com/v1", API_KEY, "o3");
        c.model.temperature = Some(0.3);
    };
    assert_eq!(with(Flavor::DeepSeek, true, &openai), Some(ErrorCode::ThinkingConflict));
    // DeepSeek's thinking mode (on, or unset: its default) refuses logprobs; off takes them.
    for (thinking, key, refused) in [(Some(Thinking::On), "logprobs", true), (None, "top_logprobs", true), (Some(Thinking::Off), "logprobs", false)] {
        let logprobs = |c: &mut AgentRuntimeConfig| {
            c.model.thinking = thinking;
            c.model.extra_body.insert(key.into(), json!(true));
        };
        assert_eq!(with(Flavor::DeepSeek, true, &logprobs), refused.then_some(ErrorCode::ThinkingConflict), "{thinking:?} {key}");
    }
    // extra_body_conflict: a field the library writes.
    assert_eq!(with(Flavor::DeepSeek, true, &|c| { c.model.extra_body.insert("model".into(), json!("x")); }), Some(ErrorCode::ExtraBodyConflict));
    let both = |c: &mut AgentRuntimeConfig| {
        c.model.thinking = Some(Thinking::Off);
        c.model.extra_body.insert("thinking".into(), json!({"type": "enabled"}));
    };
    assert_eq!(with(Flavor::DeepSeek, true, &both), Some(ErrorCode::ExtraBodyConflict));
    // The summarizer is checked too.
    let summarizer = |c: &mut AgentRuntimeConfig| {
        let mut s = Flavor::Qwen.config(API_KEY, false);
        s.thinking = Some(Thinking::On);
        compressing(c, Some(s));
    };
    assert_eq!(with(Flavor::DeepSeek, true, &summarizer), Some(ErrorCode::ThinkingConflict));
    // Allowed: extra_body without thinking set, a conflict switched off.
    assert_eq!(with(Flavor::DeepSeek, true, &|c| { c.model.extra_body.insert("thinking".into(), json!({"type": "enabled"})); }), None);
    let off = |c: &mut AgentRuntimeConfig| {
        c.model.thinking = Some(Thinking::Off);
        c.tool_choice = Some(ToolChoice::Required);
    };
    assert_eq!(with(Flavor::Anthropic, true, &off), None);
}

#[tokio::test]
async fn think_4_extra_body_and_thinking_fields_reach_every_request() {
    let provider = ThinkingProvider::new(Flavor::DeepSeek, API_KEY, 1);
    let mut c = config(Flavor::DeepSeek, true);
    c.model.thinking = Some(Thinking::Effort(Effort::High));
    c.model.extra_body.insert("user_id".into(), json!("u-42"));
    c.model.max_tokens = Some(900);
    let rt = AgentRuntime::new(c, provider.clone()).unwrap();
    rt.run("the weather?").await.unwrap();
    for body in provider.bodies() {
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!((&v["thinking"], &v["reasoning_effort"], &v["user_id"], &v["max_tokens"]), (&json!({"type": "enabled"}), &json!("high"), &json!("u-42"), &json!(900)));
    }
    // OpenAI takes max_completion_tokens, never max_tokens.
    let mut c = AgentRuntimeConfig::new(arkagent::ModelConfig::new("https://api.openai.com/v1", API_KEY, "gpt-5.1"));
    c.model.max_tokens = Some(900);
    let rt = AgentRuntime::new(c, ThinkingProvider::new(Flavor::DeepSeek, API_KEY, 0)).unwrap();
    let body: Value = serde_json::from_str(&rt.request_body_from_scratch()).unwrap();
    assert_eq!((body.get("max_tokens"), &body["max_completion_tokens"]), (None, &json!(900)));
}

#[tokio::test]
async fn think_2_a_secret_in_a_signed_block_is_dropped_never_altered() {
    let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 1);
    let rt = AgentRuntime::new(config(Flavor::Anthropic, false), provider).unwrap();
    rt.run("first").await.unwrap();
    let mut state: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    let blocks = state["history"]["messages"][1]["thinking"].clone();
    assert!(!blocks.as_array().unwrap().is_empty(), "a signed thinking block");
    // An imported history whose second answer's block holds the key.
    let mut leaked = blocks.clone();
    leaked[0]["thinking"] = json!(format!("the key is {API_KEY}"));
    state["history"]["messages"][1]["thinking"] = leaked;
    let other = AgentRuntime::new(config(Flavor::Anthropic, false), ThinkingProvider::new(Flavor::Anthropic, API_KEY, 1)).unwrap();
    other.import_state(&state.to_string()).unwrap();
    let export = other.export_state().unwrap();
    assert!(!export.contains(API_KEY), "the secret is not kept");
    let Message::Assistant { thinking, .. } = &other.messages()[1] else { panic!() };
    assert!(thinking.is_empty(), "the answer's blocks are dropped whole, not rewritten");
    // A block without a secret is kept byte for byte.
    let Message::Assistant { thinking, .. } = &rt.messages()[1] else { panic!() };
    assert_eq!(serde_json::to_value(thinking).unwrap(), blocks);
}

#[tokio::test]
async fn think_2_a_compression_keeps_only_the_open_cycles_blocks() {
    let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 3);
    let mut c = config(Flavor::Anthropic, false);
    compressing(&mut c, None);
    let rt = AgentRuntime::new(c, provider.clone()).unwrap();
    rt.run("run 0").await.unwrap();
    rt.run("run 1").await.unwrap();
    assert!(!rt.episodic_memories().is_empty());
    let messages = rt.messages();
    let with_blocks: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::Assistant { thinking, .. } if !thinking.is_empty()))
        .map(|(i, _)| i)
        .collect();
    // Blocks made after the last compression are kept; none made before it survive in the
    // kept messages unless they belong to a cycle that was open at that compression.
    let archived: usize = rt.episodic_memories().iter().map(|e| e.archived_messages.iter().filter(|m| matches!(m, Message::Assistant { thinking, .. } if !thinking.is_empty())).count()).sum();
    assert!(archived > 0, "the episodes keep the archived answers' blocks as they were");
    assert!(!with_blocks.is_empty());
    assert!(provider.refusals().is_empty());
    // The blocks that remain are byte-exact copies of what the provider gave.
    for i in with_blocks {
        let Message::Assistant { thinking, .. } = &messages[i] else { unreachable!() };
        assert!(thinking.iter().all(|b| match b {
            ThinkingBlock::Thinking { signature, .. } => signature.starts_with("EqQB"),
            ThinkingBlock::RedactedThinking { data } => data.starts_with("EmwK"),
        }));
    }
}

/// THINK-2, STORE-2: the blocks a compression clears from the kept answers are cleared in
/// the store too: a session resumed from SQLite holds what the runtime held, so its next
/// request is the one the uninterrupted session would have sent.
#[tokio::test]
async fn think_2_store_2_blocks_a_compression_clears_stay_cleared_after_a_resume() {
    let dir = temp_dir("think-compress-store");
    let path = dir.join("s.db");
    let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 3);
    let stored = |max_iterations: u32, ids: &str| {
        let mut c = config(Flavor::Anthropic, false);
        c.id_generator = Arc::new(SequentialIdGenerator::new(ids));
        // Every turn over the threshold; the last four messages always kept.
        let compressor = ContextCompressorConfig { keep_recent_message_count: 4, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(20) };
        c.compression = Some(Compression::Default { config: compressor, summarizer: None });
        c.store = Some(Arc::new(SqliteStore::open(&path).unwrap()));
        c.max_iterations = max_iterations;
        AgentRuntime::new(c, provider.clone()).unwrap()
    };
    let rt = stored(10, "a");
    rt.run("run 0").await.unwrap();
    rt.run("run 1").await.unwrap();
    drop(rt);
    // The next run's first compression keeps run 1's final answer (stored with its blocks)
    // and clears them; the run stops after one tool round, the answer still kept.
    let rt = stored(1, "b");
    rt.run("run 2").await.unwrap();
    let cleared = |m: &Message| matches!(m, Message::Assistant { content: Some(t), thinking, .. } if t.starts_with("done") && thinking.is_empty());
    assert!(rt.messages().iter().any(cleared), "{:?}", rt.messages());
    let (messages, episodes) = (rt.messages(), rt.episodic_memories());
    drop(rt);
    let resumed = stored(10, "c");
    assert_eq!(resumed.messages(), messages, "the kept answers as the runtime had them");
    assert_eq!(resumed.episodic_memories(), episodes);
    resumed.run("run 3").await.unwrap_or_else(|e| panic!("{e} {:?}", provider.refusals()));
    assert!(provider.refusals().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// THINK-2, CHAT-1: a regenerate whose run compressed (for a context overflow) and then
/// failed before an answer puts the dropped run back — its answers' reasoning blocks
/// cleared, as the compression cleared the kept ones': their signatures were bound to a
/// prefix that has just changed. The next run completes.
#[tokio::test]
async fn think_2_chat_1_a_run_put_back_after_a_compression_loses_its_blocks() {
    let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 1);
    let mut c = config(Flavor::Anthropic, false);
    // Never by the threshold: only the overflow compresses.
    let compressor = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(10_000_000) };
    c.compression = Some(Compression::Default { config: compressor, summarizer: None });
    let rt = AgentRuntime::new(c, provider.clone()).unwrap();
    let mut runs = Vec::new();
    for run in 0..3 {
        runs.push(rt.run(format!("run {run}: the weather?")).await.unwrap().run_id);
    }
    let before = rt.messages();
    let signed = |messages: &[Message]| messages.iter().filter(|m| matches!(m, Message::Assistant { thinking, .. } if !thinking.is_empty())).count();
    assert_eq!(signed(&before), 6, "every answer keeps its blocks");
    provider.overflow_then_overload();
    let e = rt.regenerate(&runs[2]).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::LlmServer, "{e}");
    let episodes = rt.episodic_memories();
    assert_eq!(episodes.len(), 1, "the regenerate's run compressed first");
    let after = rt.messages();
    let unsigned = |messages: &[Message]| -> Vec<Message> {
        let mut messages = messages.to_vec();
        for m in &mut messages {
            if let Message::Assistant { thinking, .. } = m {
                *thinking = Default::default();
            }
        }
        messages
    };
    assert_eq!(after, unsigned(&before[episodes[0].message_count..]), "run 2 is back, after what was archived, but for its blocks");
    assert_eq!(signed(&after), 0, "no answer put back keeps a block signed over the old prefix");
    rt.run("run 3: the weather?").await.unwrap_or_else(|e| panic!("{e} {:?}", provider.refusals()));
    assert!(provider.refusals().is_empty(), "{:?}", provider.refusals());
}

#[test]
fn think_5_docs_and_examples_default_to_a_model_that_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    for file in ["README.md", "src/lib.rs", "ohos/arkagent/README.md", "ohos/arkagent/Index.ets", "ohos/example/src/main/ets/pages/Index.ets", "examples/demo/src/config.rs", "examples/demo/src/repl.rs"] {
        for line in read(file).lines().filter(|l| l.contains("deepseek-chat") || l.contains("deepseek-reasoner")) {
            assert!(line.contains("retired"), "{file} names a retired model: {line}");
        }
    }
    let readme = read("README.md");
    // The ArkTS, C and Rust quickstarts and the cost example.
    assert!(readme.matches("deepseek-v4-flash").count() >= 5);
    assert!(read("ohos/example/src/main/ets/pages/Index.ets").contains("const DEFAULT_MODEL: string = 'deepseek-v4-flash';"));
    assert!(read("examples/demo/src/config.rs").contains(r#"pub const DEFAULT_MODEL: &str = "deepseek-v4-flash";"#));
    // THINK-4: the provider table names every provider and how to switch thinking off.
    let section = readme.split("## Thinking models").nth(1).unwrap().split("\n## ").next().unwrap();
    for provider in arkagent::llm::Provider::ALL {
        assert!(section.contains(&format!("| `{}`", provider.as_str())), "the table has a row for {}", provider.as_str());
    }
    for code in [ErrorCode::ThinkingUnsupported, ErrorCode::ThinkingConflict, ErrorCode::ExtraBodyConflict] {
        assert!(section.contains(code.as_str()), "{code:?}");
    }
    assert!(section.contains("model.thinking = 'off'") && section.contains("Thinking::Off"));
    // The C config snippet is a config arkagent_runtime_new takes, thinking off.
    let json = section.split("```json\n").nth(1).unwrap().split("\n```").next().unwrap();
    let config = AgentRuntimeConfig::from_json(json, ToolRegistry::new()).unwrap();
    assert_eq!(config.model.thinking, Some(Thinking::Off));
}

#[test]
fn think_2_apply_compression_drops_the_kept_answers_blocks_but_the_open_cycles() {
    use arkagent::compress::{apply_compression, StagedCompression};
    use arkagent::history::ThinkingBlocks;
    use arkagent::{AgentState, ToolCall};
    let blocks = |n: u32| -> ThinkingBlocks {
        vec![ThinkingBlock::Thinking { thinking: format!("t{n}"), signature: format!("s{n}") }, ThinkingBlock::RedactedThinking { data: format!("d{n}") }].into()
    };
    let answer = |n: u32, calls: Vec<ToolCall>| Message::Assistant { content: None, tool_calls: calls, reasoning: None, thinking: blocks(n) };
    let call = |id: &str| ToolCall { id: id.into(), name: "weather".into(), arguments: "{}".into() };
    let mut state = AgentState::new("s");
    state.history.messages = vec![
        Message::user("q1"),
        answer(1, vec![call("a")]),
        Message::tool_result("a", "r", false),
        Message::Assistant { content: Some("ok".into()), tool_calls: vec![], reasoning: None, thinking: blocks(2) },
        Message::user("q2"),
        answer(3, vec![call("b")]),
        Message::tool_result("b", "r", false),
        answer(4, vec![call("c")]),
        Message::tool_result("c", "r", false),
    ];
    let before = state.history.messages.clone();
    let staged = StagedCompression { split_index: 3, summary: "<state_snapshot>s</state_snapshot>".into(), episode_id: "e1".into(), created_at_ms: 1 };
    apply_compression(&mut state, staged).unwrap();
    let kept = &state.history.messages;
    let thinking = |m: &Message| match m {
        Message::Assistant { thinking, .. } => thinking.clone(),
        _ => ThinkingBlocks::new(),
    };
    // Kept: the final answer 2 and the closed cycle 3 lose their blocks; the open cycle 4 keeps them.
    assert!(thinking(&kept[0]).is_empty() && thinking(&kept[2]).is_empty());
    assert_eq!(thinking(&kept[4]), blocks(4));
    // The episode keeps the archived answer's blocks as they were.
    assert_eq!(state.history.episodic_memories[0].archived_messages[1], before[1]);
    // After a final answer there is no open cycle: every kept block goes.
    let mut closed = AgentState::new("s");
    closed.history.messages = before[..4].to_vec();
    closed.history.messages.push(Message::user("q2"));
    closed.history.messages.push(Message::Assistant { content: Some("fine".into()), tool_calls: vec![], reasoning: None, thinking: blocks(5) });
    apply_compression(&mut closed, StagedCompression { split_index: 3, summary: "<state_snapshot>s</state_snapshot>".into(), episode_id: "e2".into(), created_at_ms: 1 }).unwrap();
    assert!(closed.history.messages.iter().all(|m| thinking(m).is_empty()));
    // The user's next text after the cycle's results (a run stopped mid-cycle, then "go
    // on"): the cycle is still the lastmost, and its answer keeps its blocks.
    let mut went_on = AgentState::new("s");
    went_on.history.messages = before.clone();
    went_on.history.messages.push(Message::user("go on"));
    apply_compression(&mut went_on, StagedCompression { split_index: 3, summary: "<state_snapshot>s</state_snapshot>".into(), episode_id: "e3".into(), created_at_ms: 1 }).unwrap();
    assert!(thinking(&went_on.history.messages[2]).is_empty(), "the closed cycle's go");
    assert_eq!(thinking(&went_on.history.messages[4]), blocks(4), "the stopped cycle's stay");
}

/// THINK-2: a run that stopped mid-cycle, then the user's next message compressed before
/// it is sent: the stopped cycle's answer keeps its blocks (Anthropic wants them before the
/// lastmost tool results, also when the user's text shares their turn) and the loop goes on.
#[tokio::test]
async fn think_2_a_compression_after_a_stopped_cycle_keeps_its_blocks() {
    for stream in [false, true] {
        let provider = ThinkingProvider::new(Flavor::Anthropic, API_KEY, 2);
        let mut c = config(Flavor::Anthropic, stream);
        stop_mid_cycle(&mut c);
        let rt = AgentRuntime::new(c, provider.clone()).unwrap();
        // A long first input, so that its summary is smaller than it.
        let input = format!("the weather? {}", "Some context about the trip. ".repeat(80));
        assert_eq!(rt.run(input.as_str()).await.unwrap().status, RunStatus::MaxIterations);
        // The session goes on under a compressing config: the next input is compressed
        // before it is sent, the stopped cycle kept.
        let mut c = config(Flavor::Anthropic, stream);
        stop_mid_cycle(&mut c);
        let config = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 1, ..ContextCompressorConfig::with_threshold(1) };
        c.compression = Some(Compression::Default { config, summarizer: None });
        let compressing = AgentRuntime::new(c, provider.clone()).unwrap();
        compressing.import_state(&rt.export_state().unwrap()).unwrap();
        compressing.run("go on").await.unwrap_or_else(|e| panic!("stream {stream}: {e} {:?}", provider.refusals()));
        assert!(!compressing.episodic_memories().is_empty(), "stream {stream}: the input was compressed before it was sent");
        assert!(provider.refusals().is_empty(), "{:?}", provider.refusals());
    }
}

#[tokio::test]
async fn think_1_a_store_and_an_export_written_before_thinking_load_and_replay() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/thinking");
    let dir = temp_dir("think-fixture");
    std::fs::copy(fixtures.join("main-ecc9bc6.db"), dir.join("s.db")).unwrap();
    let exported = std::fs::read_to_string(fixtures.join("main-ecc9bc6-state.json")).unwrap();
    let fixture_config = |store: Option<Arc<dyn arkagent::SessionStore>>| {
        let mut c = config(Flavor::DeepSeek, false);
        c.model.base_url = "https://api.deepseek.com".into();
        c.session_id = Some("base-ecc9bc6".into());
        c.system_prompt = String::new();
        c.store = store;
        c
    };
    let from_store = ThinkingProvider::new(Flavor::DeepSeek, API_KEY, 1);
    let store: Arc<dyn arkagent::SessionStore> = Arc::new(SqliteStore::open(dir.join("s.db")).unwrap());
    let resumed = AgentRuntime::new(fixture_config(Some(store)), from_store.clone()).unwrap();
    let from_import = ThinkingProvider::new(Flavor::DeepSeek, API_KEY, 1);
    let imported = AgentRuntime::new(fixture_config(None), from_import.clone()).unwrap();
    imported.import_state(&exported).unwrap();
    assert_eq!(resumed.messages(), imported.messages());
    assert_eq!(resumed.messages().len(), 7);
    for rt in [&resumed, &imported] {
        rt.run("go on").await.unwrap();
    }
    let (a, b) = (from_store.bodies()[0].clone(), from_import.bodies()[0].clone());
    assert_eq!(a, b, "the resumed and the imported session send the same request");
    let v: Value = serde_json::from_str(&a).unwrap();
    let replayed: Vec<(Value, Value)> = v["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").map(|m| (m["content"].clone(), m["reasoning_content"].clone())).collect();
    assert_eq!(replayed, vec![(Value::Null, json!("old reasoning 1")), (json!("answer 2"), Value::Null), (Value::Null, json!("old reasoning 11"))]);
    drop(resumed);
    let db = rusqlite::Connection::open(dir.join("s.db")).unwrap();
    let version: i64 = db.query_row("SELECT max(version) FROM arkagent_schema", [], |r| r.get(0)).unwrap();
    assert_eq!(version, arkagent::store::SCHEMA_VERSION);
}

#[test]
fn think_2_the_estimate_counts_the_reasoning_that_goes_back_and_only_that() {
    use arkagent::compress::{count_message_tokens_for, Counting};
    use arkagent::history::ImageTokenRule;
    use arkagent::ToolCall;
    let reasoning = "a long chain of thought about the weather ".repeat(20);
    let answer = |calls: Vec<ToolCall>| Message::Assistant { content: Some("ok".into()), tool_calls: calls, reasoning: Some(reasoning.clone().into()), thinking: Default::default() };
    let with_call = answer(vec![ToolCall { id: "c".into(), name: "weather".into(), arguments: "{}".into() }]);
    let counted = |m: &Message, replay| count_message_tokens_for(m, Counting { image_rule: ImageTokenRule::OpenAiTiles, replay }).total();
    assert!(counted(&with_call, ReasoningReplay::ToolCalls) > counted(&with_call, ReasoningReplay::None) + 100);
    assert_eq!(counted(&answer(vec![]), ReasoningReplay::ToolCalls), counted(&answer(vec![]), ReasoningReplay::None), "a final answer's reasoning is not sent");
    assert!(counted(&answer(vec![]), ReasoningReplay::All) > counted(&answer(vec![]), ReasoningReplay::None) + 100);
    // A Qwen model (auto: none) does not count what it does not send.
    let qwen = Counting::of(&Flavor::Qwen.config(API_KEY, true));
    assert_eq!(qwen.replay, ReasoningReplay::None);
    assert_eq!(count_message_tokens_for(&with_call, qwen).total(), counted(&with_call, ReasoningReplay::None));
}

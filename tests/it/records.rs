//! CORE-1 and CORE-3 (issue 28 item 13): the conversation's records as SPEC states them —
//! the four message kinds with their stable serde JSON, and `AgentState` with its
//! history, usages and session id — through the public API and a runtime's export.

use arkagent::{AgentRuntime, AgentRuntimeConfig, AgentState, Message, ModelUsage, ToolCall};
use serde_json::{json, Value};

use crate::support::{model_config, Reply, ScriptedModel, API_KEY};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

/// Every kind SPEC names, each with the JSON it serializes to.
fn kinds() -> Vec<(Message, Value)> {
    vec![
        (Message::system("Be brief."), json!({"role": "system", "content": "Be brief."})),
        (Message::user("Weather in Beijing?"), json!({"role": "user", "content": "Weather in Beijing?"})),
        (Message::assistant("Sunny."), json!({"role": "assistant", "content": "Sunny."})),
        (
            Message::assistant_tool_calls(vec![call("c1", "weather", r#"{"city":"Beijing"}"#), call("c2", "time", "{}")]),
            json!({"role": "assistant", "tool_calls": [
                {"id": "c1", "name": "weather", "arguments": "{\"city\":\"Beijing\"}"},
                {"id": "c2", "name": "time", "arguments": "{}"}]}),
        ),
        (
            Message::Assistant { content: Some("Let me look.".into()), tool_calls: vec![call("c3", "weather", "{}")], reasoning: None, thinking: Default::default() },
            json!({"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "c3", "name": "weather", "arguments": "{}"}]}),
        ),
        (Message::tool_result("c1", "31 C", false), json!({"role": "tool", "tool_call_id": "c1", "content": "31 C", "is_error": false})),
        (Message::tool_result("c2", "clock broken", true), json!({"role": "tool", "tool_call_id": "c2", "content": "clock broken", "is_error": true})),
    ]
}

/// CORE-1: system, user, assistant (text and/or tool calls: id, name, arguments JSON) and
/// tool result (tool call id, content, is_error), each serialized under its `role` with
/// exactly these fields and read back equal; a result without `is_error` is no error; an
/// unknown role is refused.
#[test]
fn core_1_every_message_kind_has_its_stable_json_and_round_trips() {
    for (message, expected) in kinds() {
        let text = serde_json::to_string(&message).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected, "{message:?}");
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), message);
        assert_eq!(serde_json::from_value::<Message>(expected).unwrap(), message);
    }
    let bare: Message = serde_json::from_value(json!({"role": "tool", "tool_call_id": "c9", "content": "ok"})).unwrap();
    assert_eq!(bare, Message::tool_result("c9", "ok", false));
    assert!(serde_json::from_value::<Message>(json!({"role": "developer", "content": "x"})).is_err());
    assert!(serde_json::from_value::<Message>(json!({"role": "tool", "content": "no call id"})).is_err());
    let assistant = Message::assistant_tool_calls(vec![call("c1", "weather", "{}")]);
    assert_eq!((assistant.text(), assistant.tool_calls().len()), (None, 1));
}

/// CORE-1 through a runtime: a history of every kind (the system prompt is the config's,
/// never a history message, so the history's own kinds are user, assistant and tool)
/// imports and exports with each message's JSON unchanged.
#[test]
fn core_1_a_runtime_exports_every_message_kind_as_it_was_imported() {
    let model = ScriptedModel::new(vec![]);
    let runtime = AgentRuntime::new(AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m")), model).unwrap();
    // A paired history: user, text, two calls and their results, text with a call, its
    // error result, the final text.
    let kinds = kinds();
    let order = [1, 2, 3, 5, 6, 4];
    let mut history: Vec<(Message, Value)> = order.iter().map(|&i| kinds[i].clone()).collect();
    history.push((Message::tool_result("c3", "no data", true), json!({"role": "tool", "tool_call_id": "c3", "content": "no data", "is_error": true})));
    history.push(kinds[2].clone());
    let messages: Vec<Value> = history.iter().map(|(_, json)| json.clone()).collect();
    let state = json!({"version": 1, "session_id": "core-1", "history": {"messages": messages, "episodic_memories": []}, "usages": []});
    runtime.import_state(&state.to_string()).unwrap();
    let exported: Value = serde_json::from_str(&runtime.export_state().unwrap()).unwrap();
    assert_eq!(exported["history"]["messages"], state["history"]["messages"]);
    let back: Vec<Message> = history.into_iter().map(|(m, _)| m).collect();
    assert_eq!(runtime.messages(), back);
}

/// CORE-3: `AgentState` holds history { messages, episodic_memories }, usages and the
/// session id. A run's usage has prompt, completion and total tokens, cached and
/// reasoning tokens only when the provider reported them (absent, never 0, otherwise),
/// and a `raw` map that may carry `source`; the state exports, imports and round-trips
/// through serde with all of it.
#[tokio::test]
async fn core_3_agent_state_holds_history_usages_and_session_id() {
    let usage_with_details = json!({"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47,
        "prompt_tokens_details": {"cached_tokens": 32}, "completion_tokens_details": {"reasoning_tokens": 5}});
    let answer = |text: &str, usage: Value| Reply::Json(json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}], "usage": usage}));
    let model = ScriptedModel::new(vec![
        answer("first", usage_with_details),
        answer("second", json!({"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53})),
    ]);
    let mut config = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m"));
    config.session_id = Some("core-3-session".into());
    let runtime = AgentRuntime::new(config, model).unwrap();
    runtime.run("one").await.unwrap();
    runtime.run("two").await.unwrap();

    let state: AgentState = runtime.state();
    assert_eq!(state.session_id, "core-3-session");
    assert_eq!(state.history.messages, [Message::user("one"), Message::assistant("first"), Message::user("two"), Message::assistant("second")]);
    assert!(state.history.episodic_memories.is_empty());
    let [first, second] = &state.usages[..] else { panic!("two usages: {:?}", state.usages) };
    assert_eq!((first.prompt_tokens, first.completion_tokens, first.total_tokens), (40, 7, 47));
    assert_eq!((first.cached_tokens, first.reasoning_tokens), (Some(32), Some(5)));
    assert_eq!((second.prompt_tokens, second.cached_tokens, second.reasoning_tokens), (50, None, None));

    let exported: Value = serde_json::from_str(&runtime.export_state().unwrap()).unwrap();
    assert_eq!(exported["session_id"], "core-3-session");
    assert_eq!(exported["history"]["messages"].as_array().unwrap().len(), 4);
    assert_eq!(exported["history"]["episodic_memories"], json!([]));
    assert_eq!(exported["usages"][0]["cached_tokens"], 32);
    assert_eq!(exported["usages"][0]["reasoning_tokens"], 5);
    let second = exported["usages"][1].as_object().unwrap();
    assert!(!second.contains_key("cached_tokens") && !second.contains_key("reasoning_tokens"), "not reported, so absent: {second:?}");

    // BND-1: an export written before the typed usage (a `raw` map with `source` and
    // `calls`, and whatever else) imports into the typed fields and exports in today's spelling.
    let mut with_source = exported.clone();
    with_source["usages"][1]["raw"] = json!({"source": "context_compression", "calls": 2, "provider_field": [1, 2]});
    let copy = AgentRuntime::new(AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m")), ScriptedModel::new(vec![])).unwrap();
    copy.import_state(&with_source.to_string()).unwrap();
    let usages: Vec<ModelUsage> = copy.usages();
    assert_eq!((usages[1].source_name(), usages[1].call_count), (Some("context_compression"), 2));
    let again: Value = serde_json::from_str(&copy.export_state().unwrap()).unwrap();
    let mut today = with_source["usages"].clone();
    today[1].as_object_mut().unwrap().remove("raw");
    today[1]["source"] = json!("context_compression");
    today[1]["call_count"] = json!(2);
    assert_eq!(again["usages"], today);
    assert_eq!(again["history"], with_source["history"]);

    // The record itself, through serde.
    let text = serde_json::to_string(&copy.state()).unwrap();
    let read: AgentState = serde_json::from_str(&text).unwrap();
    assert_eq!(read, copy.state());
    let fresh = AgentState::new("s");
    assert_eq!((fresh.session_id.as_str(), fresh.history.messages.len(), fresh.usages.len()), ("s", 0, 0));
}

#[test]
fn bnd_1_a_store_and_an_export_written_before_the_typed_usage_load() {
    use arkagent::history::UsageSource;
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/usage");
    let dir = crate::store::temp_dir("bnd-1");
    std::fs::copy(fixtures.join("main-697113c.db"), dir.join("s.db")).unwrap();
    let exported = std::fs::read_to_string(fixtures.join("main-697113c-state.json")).unwrap();
    let mut model = model_config("https://api.anthropic.com/v1", API_KEY, "claude-sonnet-4-5");
    model.wire_format = arkagent::llm::WireFormat::ANTHROPIC;
    let config = |store: Option<std::sync::Arc<dyn arkagent::SessionStore>>| {
        let mut c = AgentRuntimeConfig::new(model.clone());
        c.session_id = Some("base-697113c".into());
        c.store = store;
        c
    };
    let store: std::sync::Arc<dyn arkagent::SessionStore> = std::sync::Arc::new(arkagent::SqliteStore::open(dir.join("s.db")).unwrap());
    let resumed = AgentRuntime::new(config(Some(store)), ScriptedModel::new(vec![])).unwrap();
    let imported = AgentRuntime::new(config(None), ScriptedModel::new(vec![])).unwrap();
    imported.import_state(&exported).unwrap();
    for usages in [resumed.usages(), imported.usages()] {
        assert_eq!(usages.len(), 5);
        let plain: Vec<&ModelUsage> = usages.iter().filter(|u| u.source.is_none()).collect();
        assert_eq!(plain.len(), 4);
        assert!(plain.iter().all(|u| u.cache_write_tokens == Some(50) && u.call_count == 1), "{plain:?}");
        let compression = usages.iter().find(|u| u.source == Some(UsageSource::ContextCompression)).unwrap();
        assert_eq!((compression.call_count, compression.cache_write_tokens), (1, None));
        // The costs those versions priced stay what they were: the cache writes at 3.75.
        let price = arkagent::ModelPrice::new("USD", 3.0, 0.3, 15.0).with_cache_write(3.75);
        assert!(plain.iter().all(|u| u.cost.as_ref().unwrap().nanos == price.cost_of(u).nanos));
    }
    assert_eq!(resumed.usages(), imported.usages());
    let again = imported.export_state().unwrap();
    assert!(!again.contains("\"raw\"") && again.contains("\"cache_write_tokens\":50") && again.contains("\"source\":\"context_compression\""));
}

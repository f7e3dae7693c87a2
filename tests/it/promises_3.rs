//! Issue 40 (promises round 3): the seams where newer features meet older ones, each
//! driven through the public API and named after the SPEC id it proves.

use arkagent::{AgentRuntimeConfig, ErrorCode, ToolRegistry};

/// Item 6: a typo in the summarizer model's `wire_format` is refused (`invalid_config`),
/// never silently spoken as Chat Completions — in a config built in Rust and in the JSON
/// config C passes.
#[test]
fn wire_1_a_summarizer_wire_format_typo_is_refused_on_rust_and_c() {
    let json = |wire: &str| {
        format!(
            r#"{{"model":{{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"}},
               "compression":{{"summarizer_model":{{"base_url":"http://127.0.0.1:9","api_key":"k","model":"s","wire_format":"{wire}"}}}}}}"#
        )
    };
    let e = AgentRuntimeConfig::from_json(&json("antropic"), ToolRegistry::new()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidConfig);
    assert!(e.to_string().contains("antropic"), "{e}");
    assert!(AgentRuntimeConfig::from_json(&json("anthropic"), ToolRegistry::new()).is_ok());
    // Rust: the same check at construction.
    let mut config = AgentRuntimeConfig::from_json(&json("anthropic"), ToolRegistry::new()).unwrap();
    if let Some(arkagent::runtime::Compression::Default { summarizer: Some(s), .. }) = &mut config.compression {
        s.wire_format = serde_json::from_str("\"openia\"").unwrap();
    }
    assert_eq!(config.validate().unwrap_err().code(), ErrorCode::InvalidConfig);
}

/// Item 11: a threshold of 0 is one rule on every surface — every automatic attempt
/// compresses (but the one right after a compression) — for the default compressor as for
/// a custom one; the JSON config C passes takes it too.
#[tokio::test]
async fn cmp_3_a_default_compressor_threshold_of_0_compresses_at_every_automatic_attempt() {
    use crate::support::*;
    let model = ScriptedModel::with(|body: &serde_json::Value, _| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text("weather", "looked it up"), 10);
        }
        text_reply(&"It is sunny and warm, with a light wind from the west. ".repeat(6), body.to_string().len() as u64 / 4)
    });
    let json = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"sk-test-SECRET-0123456789","model":"test-model"},
        "compression":{"total_token_threshold":0,"keep_recent_message_count":2,"min_messages_to_summarize":2}}"#;
    let mut config = AgentRuntimeConfig::from_json(json, ToolRegistry::new()).unwrap();
    config.model = speak(config.model.clone());
    let rt = arkagent::AgentRuntime::new(config, model).unwrap();
    for i in 0..3 {
        rt.run(&format!("question {i}: {}", "what is the weather like today? ".repeat(6))).await.unwrap();
    }
    assert!(!rt.episodic_memories().is_empty(), "threshold 0 compressed without being asked");
}

/// Item 4: a stored session moved between wires both ways: tool call ids an
/// OpenAI-compatible provider made (Moonshot's `get_weather:0`) go to Anthropic in its
/// pattern, the same id each time (the prefix holds), and the history keeps them as made.
#[tokio::test]
async fn wire_1_a_session_moves_between_wires_with_ids_anthropic_refuses() {
    use crate::prefix::{assert_extends, ChatCompletions, Recording};
    use crate::support::*;
    use crate::wire_fake::{in_wire, Wire};
    use std::sync::Arc;
    let config = || {
        let mut c = AgentRuntimeConfig::new(speak(arkagent::ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "m")));
        let mut tools = ToolRegistry::new();
        tools.register(arkagent::ToolDefinition::new("get_weather", "Weather", serde_json::json!({"type": "object"})), Arc::new(WeatherTool::default())).unwrap();
        c.tools = tools;
        c
    };
    let turn = |n: usize| {
        ScriptedModel::with(move |body: &serde_json::Value, _| {
            let last = body["messages"].as_array().unwrap().last().unwrap().clone();
            if last["role"] == "user" {
                tool_calls_reply(&[(&format!("get_weather:{n}"), "get_weather", serde_json::json!({"city": "Beijing"}))], 40)
            } else {
                text_reply("sunny", 40)
            }
        })
    };
    // Two turns on an OpenAI-compatible provider whose ids Anthropic refuses.
    let exported = in_wire(Wire::OpenAi, async {
        let rt = arkagent::AgentRuntime::new(config(), turn(0)).unwrap();
        rt.run("weather?").await.unwrap();
        rt.export_state().unwrap()
    })
    .await;
    assert!(exported.contains("get_weather:0"));
    // On Anthropic: the strict fake takes every request; the ids are mapped alike each time.
    let (exported, bodies) = in_wire(Wire::Anthropic, async {
        let transport = Arc::new(Recording::new(turn(1)));
        let rt = arkagent::AgentRuntime::new(config(), transport.clone()).unwrap();
        rt.import_state(&exported).unwrap();
        rt.run("and tomorrow?").await.unwrap();
        (rt.export_state().unwrap(), transport.bodies())
    })
    .await;
    assert!(exported.contains("get_weather:0") && exported.contains("get_weather:1"), "the history keeps the ids as made");
    let mapped = |body: &str| body.matches("get_weather_").count();
    assert_eq!(mapped(&bodies[0]), 2, "call and result of turn 0 mapped");
    assert!(bodies[1].starts_with(&bodies[0][..bodies[0].find("get_weather_").unwrap() + 30]), "the same mapping each time");
    // And back: the OpenAI-compatible wire sends the ids as made.
    in_wire(Wire::OpenAi, async {
        let transport = Arc::new(Recording::new(turn(2)));
        let rt = arkagent::AgentRuntime::new(config(), transport.clone()).unwrap();
        rt.import_state(&exported).unwrap();
        rt.run("and the day after?").await.unwrap();
        let bodies = transport.bodies();
        assert!(bodies[0].contains(r#""id":"get_weather:0""#) && bodies[0].contains(r#""tool_call_id":"get_weather:1""#));
        assert_extends(&ChatCompletions, &bodies[0], &bodies[1]);
    })
    .await;
}

/// Item 12: an Anthropic stream that breaks after `message_start` keeps the input tokens
/// it reported (priced): the provider billed them, so the cut-off call does not cost 0.
#[tokio::test]
async fn cost_1_a_broken_anthropic_stream_keeps_the_input_usage_it_reported() {
    struct Breaking;
    #[async_trait::async_trait]
    impl arkagent::HttpTransport for Breaking {
        async fn send(&self, _r: arkagent::HttpRequest, _c: arkagent::CancellationToken) -> Result<arkagent::HttpResponse, arkagent::TransportError> {
            let (tx, rx) = arkagent::BodyStream::channel();
            let start = r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":900,"cache_read_input_tokens":100,"output_tokens":1}}}"#;
            tx.send(format!("event: message_start\ndata: {start}\n\n").into_bytes());
            tx.send(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n".to_vec());
            tx.send(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n".to_vec());
            tx.fail(arkagent::TransportError::network("connection reset"));
            Ok(arkagent::HttpResponse { status: 200, headers: vec![], body: arkagent::HttpBody::Stream(rx) })
        }
    }
    let mut model = arkagent::ModelConfig::new("https://api.anthropic.example.test/v1", "sk-test-SECRET-0123456789", "claude-test");
    model.wire_format = serde_json::from_str("\"anthropic\"").unwrap();
    model.stream = true;
    model.retry = arkagent::llm::RetryPolicy::none();
    model.price = Some(serde_json::from_value(serde_json::json!({"currency": "USD", "input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0})).unwrap());
    let rt = arkagent::AgentRuntime::new(AgentRuntimeConfig::new(model), std::sync::Arc::new(Breaking)).unwrap();
    let e = rt.run("hello").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::LlmTransport);
    let usages = rt.usages();
    assert_eq!(usages.len(), 1, "the call was made");
    let u = &usages[0];
    assert_eq!((u.prompt_tokens, u.cached_tokens, u.source), (1000, Some(100), None), "the input the stream reported, not 0");
    assert!(u.cost.as_ref().is_some_and(|c| c.nanos > 0), "priced: {u:?}");
    assert_eq!(rt.total_usage().total.prompt_tokens, 1000);
}

/// Item 7: what a worker's `"model"` override gives, on C's JSON as on ArkTS's
/// `WorkerConfig.model`: a name keeps the provider and drops a price set for another
/// model (COST-2); a whole model config is the worker's own — base URL, key, wire format,
/// image bounds and its price (none when it gives none).
#[test]
fn cost_2_a_worker_model_override_is_a_name_or_a_whole_model_config() {
    let parent = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m",
        "price":{"currency":"USD","input_per_million":1,"cached_input_per_million":0.1,"output_per_million":2}}}"#;
    let mut by_name = AgentRuntimeConfig::from_json(parent, ToolRegistry::new()).unwrap();
    by_name.apply_overrides_json(r#"{"model":"small"}"#).unwrap();
    assert_eq!((by_name.model.model.as_str(), by_name.model.price.is_none()), ("small", true));
    let mut whole = AgentRuntimeConfig::from_json(parent, ToolRegistry::new()).unwrap();
    whole
        .apply_overrides_json(r#"{"model":{"base_url":"https://api.anthropic.example.test/v1","api_key":"k2","model":"claude","wire_format":"anthropic","max_images_per_request":3}}"#)
        .unwrap();
    assert_eq!(whole.model.base_url, "https://api.anthropic.example.test/v1");
    assert_eq!(whole.model.wire_format.as_str(), "anthropic");
    assert_eq!(whole.model.max_images_per_request, 3);
    assert!(whole.model.price.is_none());
    let e = whole.apply_overrides_json(r#"{"model":{"base_url":"x","api_key":"k","model":"m","wire_format":"antropic"}}"#).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidConfig);
}

/// Item 2: what a child sees of the parent's photos — each as its line (type, size, bytes,
/// id), never the pixels: a worker whose model takes no images is not sent one (the strict
/// fake refuses nothing), and the photo does not spend the child's budget.
#[tokio::test]
async fn sub_5_img_4_a_child_sees_the_parents_photos_as_their_lines() {
    use crate::delegation::{delegate_calls, last_role, offers_delegation, parent_config};
    use crate::photos::{input, small_png};
    use crate::support::*;
    each_wire(|| async {
        let child_bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
        let seen = child_bodies.clone();
        let model = ScriptedModel::with(move |body: &serde_json::Value, _| {
            if offers_delegation(body) {
                return if last_role(body) == "user" { delegate_calls(&[("d1", "clone", "describe the photo")]) } else { text_reply("done", 30) };
            }
            seen.lock().unwrap().push(body.clone());
            text_reply("a small square", 30)
        });
        let rt = arkagent::AgentRuntime::new(parent_config(arkagent::subagent::SubAgentPolicy::default(), vec![]), model).unwrap();
        rt.run(input("what is in this picture? ask a helper", &[&small_png(7)])).await.unwrap();
        let bodies = child_bodies.lock().unwrap().clone();
        assert_eq!(bodies.len(), 1, "the child made one call");
        let text = bodies[0].to_string();
        assert!(!text.contains("data:image") && !text.contains("\"image_url\"") && !text.contains("\"type\":\"image\""), "no pixels: {text}");
        assert!(text.contains("[image image/png"), "the photo's line: {text}");
        // The parent's own history keeps the photo.
        assert!(rt.messages()[0].images().next().is_some());
    })
    .await;
}

/// Item 2: an imported history's photos pass the importing model's bounds, as photos
/// entering by any other door do; refused with the image's code, nothing changed.
#[tokio::test]
async fn img_5_an_import_checks_its_photos_against_the_models_bounds() {
    use crate::photos::{input, small_png};
    use crate::support::*;
    let model = ScriptedModel::new(vec![text_reply("a square", 10)]);
    let rt = arkagent::AgentRuntime::new(AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m")), model).unwrap();
    rt.run(input("what is this?", &[&small_png(3), &small_png(4)])).await.unwrap();
    let exported = rt.export_state().unwrap();
    for (bound, code) in [
        (Box::new(|m: &mut arkagent::ModelConfig| m.max_image_bytes = 10) as Box<dyn Fn(&mut arkagent::ModelConfig)>, ErrorCode::ImageTooLarge),
        (Box::new(|m: &mut arkagent::ModelConfig| m.max_images_per_request = 1), ErrorCode::TooManyImages),
    ] {
        let mut config = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m"));
        bound(&mut config.model);
        let other = arkagent::AgentRuntime::new(config, ScriptedModel::new(vec![])).unwrap();
        let before = other.export_state().unwrap();
        assert_eq!(other.import_state(&exported).unwrap_err().code(), code);
        assert_eq!(other.export_state().unwrap(), before, "nothing changed");
    }
    let same = arkagent::AgentRuntime::new(AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m")), ScriptedModel::new(vec![])).unwrap();
    same.import_state(&exported).unwrap();
}

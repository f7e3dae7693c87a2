//! PAR-1 (issue 17, items 10–14): what the seeds give an app is reachable from every
//! surface. The Rust side of the behaviour changes; the C and JS sides are in
//! tests/c/parity.c and tests/js/par_1_parity.test.js.

use std::sync::{Arc, Mutex};

use arkagent::compress::{foreign_compressor_state_json, CompressOutcome, ForeignCompressor, ForeignCompressorCall};
use arkagent::runtime::Compression;
use arkagent::{AgentRuntime, AgentRuntimeConfig, ModelConfig, SequentialIdGenerator, ToolRegistry};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::*;

type Answer = Box<dyn Fn(usize, &Value) -> String + Send + Sync>;

/// A host compressor that records each call's state and context JSON and answers with
/// `answer(call_index, state)`.
struct Host {
    seen: Mutex<Vec<(String, String)>>,
    answer: Answer,
}

struct HostRef(Arc<Host>);

#[async_trait]
impl ForeignCompressorCall for HostRef {
    async fn compress_json(&self, state: String, context: String, _cancel: arkagent::CancellationToken) -> Result<String, String> {
        let parsed: Value = serde_json::from_str(&state).unwrap();
        let mut seen = self.0.seen.lock().unwrap();
        let index = seen.len();
        seen.push((state, context));
        Ok((self.0.answer)(index, &parsed))
    }
}

fn config(host: &Arc<Host>, threshold: Option<u64>) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.session_id = Some("par".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.model.retry = arkagent::llm::RetryPolicy::none();
    c.tools = ToolRegistry::new();
    c.compression = Some(Compression::Custom(Arc::new(ForeignCompressor::new(HostRef(host.clone()), threshold))));
    c
}

/// Issue 17 item 12: before every model call and after every turn a custom compressor used
/// to get the whole state, archived originals included, only to answer "skipped". Now the
/// runtime asks it only when its own threshold policy says a compression is due, and the
/// state it sends leaves the archive out.
#[tokio::test]
async fn perf_3_a_custom_compressor_is_asked_only_when_due_and_never_gets_the_archive() {
    const MARKER: &str = "ARCHIVED-ORIGINAL";
    let big = format!("{MARKER} {}", "lorem ipsum dolor sit amet ".repeat(600)); // ~16 KB, > 2000 tokens
    let host = Arc::new(Host {
        seen: Mutex::default(),
        answer: Box::new(|index, state| {
            let n = state["history"]["messages"].as_array().unwrap().len();
            match index {
                // Pre-flight of the big turn: only the input is there yet.
                0 => json!({"outcome": "skipped", "reason": "history_too_short"}).to_string(),
                // After the big turn: archive the whole exchange.
                1 => json!({"outcome": "compressed", "split_index": n, "summary": "a long text was discussed"}).to_string(),
                _ => json!({"outcome": "skipped", "reason": "below_threshold"}).to_string(),
            }
        }),
    });
    let model = ScriptedModel::with(|_, _| text_reply("ok", 40));
    let rt = AgentRuntime::new(config(&host, Some(2_000)), model.clone()).unwrap();
    rt.run(&big).await.unwrap();
    assert_eq!(host.seen.lock().unwrap().len(), 2, "asked before and after the turn that reached the threshold");
    assert_eq!(rt.episodic_memories().len(), 1);
    assert!(rt.messages().is_empty());
    // A long chat under the threshold: the host is never asked (it was asked 2× a turn).
    for i in 0..20 {
        rt.run(&format!("short question {i}")).await.unwrap();
    }
    assert_eq!(host.seen.lock().unwrap().len(), 2, "20 turns below the threshold ask nothing");
    // A manual attempt always asks; the state it gets has no archived originals.
    let result = rt.compress_now().await.unwrap();
    assert_eq!(result.outcome, CompressOutcome::Skipped);
    let seen = host.seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let (state_json, context_json) = &seen[2];
    let export = rt.export_state().unwrap();
    assert!(export.contains(MARKER), "the archive is in the state");
    assert!(!state_json.contains(MARKER) && !state_json.contains("archived_messages"), "but not in what the compressor gets");
    assert!(export.len() - state_json.len() >= big.len(), "{} vs {} bytes", state_json.len(), export.len());
    let sent: Value = serde_json::from_str(state_json).unwrap();
    let exported: Value = serde_json::from_str(&export).unwrap();
    assert_eq!(sent["history"]["messages"], exported["history"]["messages"]);
    assert_eq!(sent["usages"], exported["usages"]);
    let episode = &sent["history"]["episodic_memories"][0];
    assert_eq!(episode["summary"], "a long text was discussed");
    assert_eq!(episode["message_count"], 2);
    assert_eq!(serde_json::from_str::<Value>(context_json).unwrap(), json!({"estimated_prompt_tokens": null, "force": false}));
    assert_eq!(*state_json, foreign_compressor_state_json(&rt.state()).unwrap());
    assert_eq!(model.request_count(), 21);
}

/// Item 12: right after a compression (the last usage is the compression's own) the
/// runtime does not ask again, even above the threshold (CMP-7's loop guard applied by
/// the runtime).
#[tokio::test]
async fn cmp_7_a_custom_compressor_is_not_asked_right_after_its_own_compression() {
    let host = Arc::new(Host {
        seen: Mutex::default(),
        answer: Box::new(|_, state| {
            let n = state["history"]["messages"].as_array().unwrap().len();
            json!({"outcome": "compressed", "split_index": n, "summary": "s",
                   "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
            .to_string()
        }),
    });
    // The provider reports a prompt above the threshold on every call.
    let model = ScriptedModel::with(|_, _| text_reply("ok", 5_000));
    let rt = AgentRuntime::new(config(&host, Some(1_000)), model).unwrap();
    rt.run("hello").await.unwrap();
    // Pre-flight: no usage yet but the estimate is under 1000 → not asked. After the turn
    // the provider's 5000 count → asked, compressed; nothing else in this run.
    assert_eq!(host.seen.lock().unwrap().len(), 1);
    assert_eq!(rt.usages().last().unwrap().source_name(), Some(arkagent::compress::COMPRESSION_USAGE_SOURCE));
    // The next run's pre-flight: the last usage is the compression's → not asked.
    rt.run("again").await.unwrap();
    let seen = host.seen.lock().unwrap().len();
    assert_eq!(seen, 2, "asked once more, after the second turn only");
}

/// Item 14: README's seed mapping names, on each surface, only what exists there.
#[test]
fn par_1_readme_seed_mapping_names_exist_on_each_surface() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme.split("\n## Seed mapping\n").nth(1).expect("README has a Seed mapping section");
    let section = section.split("\n## ").next().unwrap();
    let mut rust_src = String::new();
    let mut dirs = vec![root.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                rust_src.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let header = std::fs::read_to_string(root.join("include/arkagent.h")).unwrap();
    let dts = std::fs::read_to_string(root.join("ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts")).unwrap();
    let surfaces = [("Rust", &rust_src), ("C", &header), ("ArkTS", &dts)];
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    assert!(rows.len() >= 15, "{rows:?}");
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 6, "{row}");
        for (cell, (surface, text)) in cells[2..5].iter().zip(surfaces) {
            let names: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
            assert!(!names.is_empty(), "{surface} cell of {row}");
            for name in names {
                for ident in name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|s| !s.is_empty()) {
                    let declared = match surface {
                        "Rust" => ["fn ", "struct ", "trait ", "enum ", "const ", "type "].iter().any(|k| text.contains(&format!("{k}{ident}"))),
                        "C" => text.contains(&format!("{ident}(")) || text.contains(&format!("#define {ident} ")) || text.contains(&format!("(*{ident})")),
                        _ => ["function ", "class ", "const ", "type ", "interface "].iter().any(|k| text.contains(&format!("{k}{ident}")))
                            || text.contains(&format!("  {ident}(")) || text.contains(&format!("  static {ident}(")) || text.contains(&format!("readonly {ident}:")),
                    };
                    assert!(declared, "README's seed mapping names `{name}` for {surface}, which does not declare {ident}");
                }
            }
        }
    }
}

/// Item 14: `spawn_sub_agent` is folded into `delegate_task` (README, seed mapping): the
/// model is offered `delegate_task` with seed 000's required arguments and seed 003's
/// optional `role` and `context`, never a `spawn_sub_agent` tool.
#[test]
fn sub_1_spawn_sub_agent_is_folded_into_delegate_task() {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.delegation = Some(arkagent::runtime::DelegationConfig { allow_clone: true, ..Default::default() });
    let rt = AgentRuntime::new(c, ScriptedModel::new(vec![])).unwrap();
    let definitions = rt.tool_definitions();
    let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
    assert!(names.contains(&arkagent::subagent::DELEGATE_TASK_TOOL_NAME) && !names.contains(&"spawn_sub_agent"), "{names:?}");
    let delegate = definitions.iter().find(|d| d.name == "delegate_task").unwrap();
    assert_eq!(delegate.parameters["required"], json!(["assignee", "task_description"]));
    for optional in ["role", "context"] {
        assert!(delegate.parameters["properties"][optional].is_object(), "{optional}");
    }
}

/// Item 10 (new core API behind `validateEpisodicMemoryIds` / `EpisodeIdValidation`):
/// the first blank or repeated id, the one `validate_episodic_memory_ids` reports.
#[test]
fn mem_3_first_invalid_episode_id_names_the_offending_id() {
    use arkagent::memory::{first_invalid_episode_id, validate_episodic_memory_ids};
    use arkagent::EpisodicMemory;
    let episode = |id: &str| EpisodicMemory {
        id: id.into(),
        summary: "s".into(),
        created_at_ms: 1,
        message_count: 0,
        archived_messages: Arc::default(),
    };
    assert_eq!(first_invalid_episode_id(&[episode("a"), episode("b")]), None);
    assert!(validate_episodic_memory_ids(&[episode("a"), episode("b")]).is_ok());
    for (episodes, bad) in [(vec![episode("a"), episode("b"), episode("a")], "a"), (vec![episode("a"), episode(" ")], " ")] {
        assert_eq!(first_invalid_episode_id(&episodes), Some(bad));
        let e = validate_episodic_memory_ids(&episodes).unwrap_err();
        assert_eq!(e.code(), "invalid_state");
        assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
    }
}

fn skipped(_: usize, _: &Value) -> String {
    json!({"outcome": "skipped", "reason": "below_threshold"}).to_string()
}

fn host() -> Arc<Host> {
    Arc::new(Host { seen: Mutex::default(), answer: Box::new(skipped) })
}

/// Issue 28 item 5: a custom compressor's threshold means one thing on every surface —
/// absent: the default compressor's 64000 (a short turn asks nothing); an explicit 0:
/// nothing is below it, so the host is asked before the first model call and after the
/// turn (the C ABI used to read 0 as 64000: tests/c/parity.c, tests/js/par_1_parity.test.js).
#[tokio::test]
async fn cmp_1_a_custom_compressors_threshold_0_asks_on_every_automatic_attempt() {
    for (threshold, asked) in [(Some(0), 2), (None, 0), (Some(arkagent::compress::DEFAULT_TOTAL_TOKEN_THRESHOLD), 0)] {
        let host = host();
        let model = ScriptedModel::with(|_, _| text_reply("ok", 40));
        let rt = AgentRuntime::new(config(&host, threshold), model).unwrap();
        rt.run("hello").await.unwrap();
        assert_eq!(host.seen.lock().unwrap().len(), asked, "threshold {threshold:?}");
    }
}

/// Issue 28 item 5, CMP-7: a threshold of 0 asks on every automatic attempt but one —
/// right after a compression (its usage is the last) the loop guard answers itself: the
/// pre-flight of the next run is not asked, the attempt after its turn is.
#[tokio::test]
async fn cmp_7_threshold_0_still_skips_right_after_a_compression() {
    let host = Arc::new(Host {
        seen: Mutex::default(),
        answer: Box::new(|index, state| match index {
            0 => json!({"outcome": "compressed", "split_index": state["history"]["messages"].as_array().unwrap().len(), "summary": "s",
                        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
            .to_string(),
            _ => skipped(index, state),
        }),
    });
    let rt = AgentRuntime::new(config(&host, Some(0)), ScriptedModel::with(|_, _| text_reply("ok", 40))).unwrap();
    let state = json!({"version": 1, "session_id": "par", "usages": [{"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}],
                       "history": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}});
    rt.import_state(&state.to_string()).unwrap();
    assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
    rt.run("next").await.unwrap();
    let seen = host.seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "compress_now, then only the attempt after the turn");
    assert!(seen[1].0.contains("\"content\":\"next\""), "{}", seen[1].0);
}

/// Issue 28 item 6: a named worker's factory starts from the parent's config without its
/// custom compressor; the default compressor's settings stay.
#[test]
fn sub_1_a_named_worker_starts_without_the_parents_custom_compressor_only() {
    use arkagent::runtime::named_worker_start;
    let host = host();
    let custom = config(&host, Some(0));
    assert!(named_worker_start(&custom).compression.is_none());
    let mut default = config(&host, Some(0));
    default.compression = Some(Compression::default_compressor());
    assert!(matches!(named_worker_start(&default).compression, Some(Compression::Default { .. })));
}

/// Issue 28 item 9: the state a custom compressor gets is `export_state()` with each
/// episode's `archived_messages` left out — nothing else missing (the token calibration
/// was).
#[tokio::test]
async fn cmp_1_a_custom_compressors_state_is_the_export_without_the_archive() {
    let host = host();
    let rt = AgentRuntime::new(config(&host, None), ScriptedModel::new(vec![])).unwrap();
    rt.import_state(&FULL_STATE.to_string()).unwrap();
    rt.compress_now().await.unwrap();
    let mut export: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    assert!(export["token_calibration"]["m"].is_object(), "{export}");
    assert!(export["history"]["episodic_memories"][0].as_object_mut().unwrap().remove("archived_messages").is_some());
    let seen = host.seen.lock().unwrap();
    let sent: Value = serde_json::from_str(&seen[0].0).unwrap();
    assert_eq!(sent, export);
}

static FULL_STATE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    json!({
        "version": 1, "session_id": "par",
        "usages": [{"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}],
        "history": {
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            "episodic_memories": [{"id": "ep1", "summary": "earlier", "created_at_ms": 7, "message_count": 1,
                                   "archived_messages": [{"role": "user", "content": "ARCHIVED"}]}]
        },
        "child_usages": [{"call_id": "d1", "child_session_id": "par_w_1", "assignee": "clone",
                          "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4, "call_count": 1}}],
        "token_calibration": {"m": {"ascii": 0.5, "cjk": 1.0, "other": 1.0, "observations": 1}}
    })
});

/// Issue 28 item 6: one rule for a custom compressor and the workers — a named worker has
/// one only when its definition gives it one; a `clone` child inherits the parent's. The
/// root delegates in turn to "plain" (its factory keeps what it is handed), "own" (its
/// factory sets its own compressor) and "clone"; every compressor asks on every attempt
/// (threshold 0). (Rust named workers used to inherit the parent's; tests/c/
/// worker_compressor.c and tests/js/sub_delegation.test.js for the other surfaces.)
#[tokio::test]
async fn sub_1_a_named_worker_has_a_custom_compressor_only_when_its_definition_gives_one() {
    use crate::delegation::{delegate_calls, last_role, offers_delegation};
    use arkagent::runtime::{DelegationConfig, SubAgentDefinition};
    let (root, own) = (host(), host());
    let plain = SubAgentDefinition::create("plain", "keeps what it is handed", Arc::new(|p: &AgentRuntimeConfig| Ok(p.clone()))).unwrap();
    let own_compressor = Arc::new(ForeignCompressor::new(HostRef(own.clone()), Some(0)));
    let own_worker = SubAgentDefinition::create(
        "own",
        "brings its own compressor",
        Arc::new(move |p: &AgentRuntimeConfig| {
            let mut c = p.clone();
            c.compression = Some(Compression::Custom(own_compressor.clone()));
            Ok(c)
        }),
    )
    .unwrap();
    let mut c = config(&root, Some(0));
    let mut delegation = DelegationConfig { allow_clone: true, ..Default::default() };
    delegation.register(plain).unwrap();
    delegation.register(own_worker).unwrap();
    c.delegation = Some(delegation);
    let model = ScriptedModel::with(|body, _| {
        if !offers_delegation(body) {
            return text_reply("child done", 10);
        }
        let results = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").count();
        match (last_role(body).as_str(), results) {
            ("user", _) | ("tool", 0) => delegate_calls(&[("d1", "plain", "task of plain")]),
            ("tool", 1) => delegate_calls(&[("d2", "own", "task of own")]),
            ("tool", 2) => delegate_calls(&[("d3", "clone", "task of the clone")]),
            _ => text_reply("root done", 10),
        }
    });
    let rt = AgentRuntime::new(c, model).unwrap();
    let outcome = rt.run("start").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("root done"));
    let asked_with = |host: &Host, task: &str| host.seen.lock().unwrap().iter().filter(|(s, _)| s.contains(&format!("\"content\":\"{task}\""))).count();
    assert_eq!(asked_with(&root, "task of plain"), 0, "a named worker does not inherit the parent's compressor");
    assert!(asked_with(&own, "task of own") > 0, "a named worker's own compressor is asked with its state");
    assert!(asked_with(&root, "task of the clone") > 0, "a clone inherits the parent's compressor");
    assert_eq!(asked_with(&own, "task of plain") + asked_with(&own, "task of the clone"), 0);
}

/// Issue 28 item 12: the seed's `modelConfig` of the compressor in the config JSON (the
/// C ABI's): `"compression": {"summarizer_model": {…}}` is the default compressor's own
/// model; an unusable one is refused.
#[test]
fn par_1_the_config_json_names_the_compressors_own_model() {
    let json = r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m"},
                   "compression":{"summarizer_model":{"base_url":"http://s/v2","api_key":"sk-s","model":"summary-model"}}}"#;
    let c = AgentRuntimeConfig::from_json(json, ToolRegistry::new()).unwrap();
    let Some(Compression::Default { summarizer: Some(model), .. }) = &c.compression else { panic!("a summarizer model") };
    assert_eq!((model.base_url.as_str(), model.model.as_str()), ("http://s/v2", "summary-model"));
    let without = AgentRuntimeConfig::from_json(r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m"},"compression":{}}"#, ToolRegistry::new()).unwrap();
    assert!(matches!(without.compression, Some(Compression::Default { summarizer: None, .. })));
    let bad = r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m"},"compression":{"summarizer_model":{"model":"m"}}}"#;
    assert_eq!(AgentRuntimeConfig::from_json(bad, ToolRegistry::new()).unwrap_err().code(), "invalid_json");
}

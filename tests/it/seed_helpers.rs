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
    assert_eq!(rt.usages().last().unwrap().source(), Some(arkagent::compress::COMPRESSION_USAGE_SOURCE));
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
    let names: Vec<&str> = rt.tool_definitions().iter().map(|d| d.name.as_str()).collect();
    assert!(names.contains(&arkagent::subagent::DELEGATE_TASK_TOOL_NAME) && !names.contains(&"spawn_sub_agent"), "{names:?}");
    let delegate = rt.tool_definitions().iter().find(|d| d.name == "delegate_task").unwrap();
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

//! Issue 17 delegation items through the public Rust API: a worker that cannot be built
//! consumes no delegation (SUB-3), the delegation prompt states the budget's real scope
//! (SUB-3/ISO-8), nested trees under the documented defaults, token budgets and totals
//! over a whole subtree (ISO-4/ISO-5/SUB-6).

use std::sync::Arc;

use arkagent::subagent::{DelegationConfig, SubAgentDefinition, SubAgentPolicy, DELEGATE_TASK_TOOL_NAME};
use arkagent::{AgentRuntime, AgentRuntimeConfig, ArkAgentError, Message, ModelConfig, SequentialIdGenerator, ToolDefinition};
use serde_json::{json, Value};

use crate::support::*;

fn offers_delegation(body: &Value) -> bool {
    body["tools"].as_array().into_iter().flatten().any(|t| t["function"]["name"] == DELEGATE_TASK_TOOL_NAME)
}

fn last_user(body: &Value) -> String {
    body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

fn last_role(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap()["role"].as_str().unwrap().to_owned()
}

fn system(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

fn delegate(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<(&str, &str, Value)> =
        calls.iter().map(|(id, who, task)| (*id, DELEGATE_TASK_TOOL_NAME, json!({"assignee": who, "task_description": task}))).collect();
    tool_calls_reply(&calls, 100)
}

fn root_config(policy: SubAgentPolicy, workers: Vec<SubAgentDefinition>) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.session_id = Some("root".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.max_parallel_tools = 8;
    let mut d = DelegationConfig { policy, allow_clone: true, ..Default::default() };
    for w in workers {
        d.register(w).unwrap();
    }
    c.delegation = Some(d);
    c
}

fn tool_contents(messages: &[Message]) -> Vec<String> {
    messages.iter().filter_map(|m| if let Message::Tool { content, .. } = m { Some(content.clone()) } else { None }).collect()
}

/// SUB-3: a worker whose factory succeeded but whose config cannot be built (it registers
/// `retrieve_memory` while compression is on: `tool_name_duplicate`) consumes none of the
/// run's delegations and is never registered.
#[tokio::test]
async fn sub_3_a_worker_rejected_after_its_factory_consumes_no_delegation() {
    let clashing = SubAgentDefinition::create(
        "clashing",
        "registers retrieve_memory itself",
        Arc::new(|parent: &AgentRuntimeConfig| -> Result<AgentRuntimeConfig, ArkAgentError> {
            let mut c = parent.clone();
            c.compression = Some(arkagent::Compression::default_compressor());
            c.tools.register(ToolDefinition::new("retrieve_memory", "mine", json!({"type": "object"})), Arc::new(WeatherTool::default()))?;
            Ok(c)
        }),
    )
    .unwrap();
    let model = ScriptedModel::with(|body, _| {
        if !offers_delegation(body) {
            return text_reply(&format!("result of {}", last_user(body)), 10);
        }
        let done = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").count();
        match done {
            0 => delegate(&[("d1", "clashing", "t")]),
            1 => delegate(&[("d2", "clone", "real work")]),
            _ => text_reply("done", 1),
        }
    });
    let policy = SubAgentPolicy { max_delegations_per_run: 1, ..Default::default() };
    let rt = AgentRuntime::new(root_config(policy, vec![clashing]), model).unwrap();
    rt.run("go").await.unwrap();
    let results = tool_contents(&rt.messages());
    assert_eq!(results.len(), 2);
    assert!(results[0].contains("tool_name_duplicate"), "{results:?}");
    assert_eq!(results[1], "result of real work", "the one delegation of the run was still available");
    let registry = rt.sub_agent_registry().unwrap();
    assert_eq!((registry.stats().active, registry.stats().history), (0, 1), "the rejected worker was never registered");
}

/// SUB-3/ISO-8: the delegation section of the system prompt names the budget's scope as
/// it is enforced: per user request (run of the root), across the tree — not "per turn".
#[tokio::test]
async fn sub_3_iso_8_the_delegation_prompt_states_the_budget_per_request_across_the_tree() {
    let model = ScriptedModel::with(|_, _| text_reply("fine", 10));
    let rt = AgentRuntime::new(root_config(SubAgentPolicy::default(), vec![]), model.clone()).unwrap();
    rt.run("hello").await.unwrap();
    let body = model.requests.lock().unwrap()[0].clone();
    let prompt = system(&body);
    assert!(prompt.contains("## Delegating to sub-agents"), "{prompt}");
    assert!(!prompt.contains("per turn"), "{prompt}");
    assert!(prompt.contains("the delegations of one user request"), "{prompt}");
    assert!(prompt.contains("sub-agents delegating further included"), "{prompt}");
}

/// CMP-1/SUB-1 through the C ABI: the C custom compressor is inherited by a `clone` child
/// only, never by a named worker: tests/c/worker_compressor.c.
#[test]
fn cmp_1_sub_1_c_named_workers_do_not_inherit_the_c_compressor() {
    let stdout = crate::c_abi::compile_and_run("worker_compressor");
    assert!(stdout.contains("worker_compressor: ") && stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// SUB-3: the concurrency cap counts each depth of the tree, so the documented defaults
/// (`max_concurrent_children` 2) reach any `max_depth`: with `max_depth` 3 a chain root →
/// child → grandchild → great-grandchild runs to the end (over the whole tree the cap
/// would refuse the grandchild's delegation: three running at once).
#[tokio::test]
async fn sub_3_default_concurrency_reaches_max_depth_three() {
    let model = ScriptedModel::with(|body, _| {
        let task = last_user(body);
        let first = last_role(body) == "user";
        let (next, done) = match task.split('\n').next().unwrap_or_default() {
            "level three" => {
                assert!(!offers_delegation(body), "a worker at max_depth was offered delegate_task");
                return text_reply("three done", 5);
            }
            "level two" => ("level three", "two done"),
            "level one" => ("level two", "one done"),
            _ => ("level one", "root done"),
        };
        assert!(offers_delegation(body), "below max_depth a runtime may delegate ({task})");
        if first { delegate(&[("d", "clone", next)]) } else { text_reply(done, 5) }
    });
    let policy = SubAgentPolicy { max_depth: 3, ..Default::default() };
    assert_eq!(policy.max_concurrent_children, 2, "the documented default");
    let rt = AgentRuntime::new(root_config(policy, vec![]), model).unwrap();
    let outcome = rt.run("go").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("root done"));
    let history = rt.sub_agent_registry().unwrap().history();
    let mut results: Vec<(String, Option<String>)> =
        history.iter().map(|c| (c.task.split('\n').next().unwrap().to_owned(), c.result.as_ref().and_then(|r| r.error_code.clone()))).collect();
    results.sort();
    assert_eq!(results, vec![("level one".into(), None), ("level three".into(), None), ("level two".into(), None)]);
    let two = history.iter().find(|c| c.task.starts_with("level two")).unwrap();
    assert_eq!(tool_contents(&two.messages), vec!["three done".to_owned()]);
}

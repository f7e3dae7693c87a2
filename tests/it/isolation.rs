//! ISO-1..ISO-8 and MEM-4 (seed 003), through the one delegation mechanism.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::memory::{MemoryTier, NamespacedMemoryStore, GLOBAL_NAMESPACE};
use arkagent::runtime::DelegationConfig;
use arkagent::subagent::{condense_parent_context, summarize_result, DecomposedTask, SubAgentContext, SubAgentPolicy, SubAgentRegistry, SubAgentResult, SubAgentStatus, DELEGATE_TASK_TOOL_NAME, REGISTRY_HISTORY_CAPACITY, TOKEN_BUDGET_EXCEEDED};
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, CancellationToken, Message, ModelConfig, SequentialIdGenerator, ToolContext, ToolDefinition,
    ToolExecutor, ToolInvocation, ToolRegistry, ToolResult,
};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::*;

fn offers_delegation(body: &Value) -> bool {
    body["tools"].as_array().into_iter().flatten().any(|t| t["function"]["name"] == DELEGATE_TASK_TOOL_NAME)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().into_iter().flatten().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

fn last_role(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap()["role"].as_str().unwrap().to_owned()
}

fn user_text(body: &Value) -> String {
    body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

#[derive(Default)]
struct Counting(AtomicUsize);
#[async_trait]
impl ToolExecutor for Counting {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        self.0.fetch_add(1, Ordering::SeqCst);
        // Each runtime writes to its own namespace (MEM-4).
        ctx.memory.store(MemoryTier::Working, "last_tool", json!(call.name));
        ToolResult::ok(format!("{} done", call.name))
    }
}

fn file_tools(counter: Arc<Counting>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    for name in ["read_file", "write_file", "run_shell"] {
        r.register(ToolDefinition::new(name, name, json!({"type": "object"})), counter.clone()).unwrap();
    }
    r
}

fn config(delegation: DelegationConfig, tools: ToolRegistry) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "m"));
    c.session_id = Some("parent".into());
    c.system_prompt = "Base prompt.".into();
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.tools = tools;
    c.max_parallel_tools = 8;
    c.delegation = Some(delegation);
    c
}

fn clone_delegation() -> DelegationConfig {
    DelegationConfig { allow_clone: true, ..Default::default() }
}

fn delegate(calls: &[(&str, Value)]) -> Reply {
    let calls: Vec<(&str, &str, Value)> = calls.iter().map(|(id, args)| (*id, DELEGATE_TASK_TOOL_NAME, args.clone())).collect();
    tool_calls_reply(&calls, 10)
}

#[tokio::test]
async fn iso_2_whitelist_hides_and_blocks_tools_outside_the_role() {
    let counter = Arc::new(Counting::default());
    let child_tools = Arc::new(Mutex::new(Vec::new()));
    let seen = child_tools.clone();
    let model = ScriptedModel::with(move |body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" {
                delegate(&[("d1", json!({"assignee": "clone", "task_description": "review it", "role": "code-review"}))])
            } else {
                text_reply("parent done", 1)
            };
        }
        seen.lock().unwrap().push(tool_names(body));
        if last_role(body) == "user" {
            // The model calls a tool it was not shown anyway.
            return tool_calls_reply(&[("w1", "write_file", json!({"path": "x"})), ("r1", "read_file", json!({"path": "x"}))], 1);
        }
        text_reply("reviewed", 1)
    });
    let rt = AgentRuntime::new(config(clone_delegation(), file_tools(counter.clone())), model).unwrap();
    rt.run("review the code").await.unwrap();
    assert_eq!(child_tools.lock().unwrap()[0], vec!["read_file".to_owned()], "only whitelisted tools are shown");
    assert_eq!(counter.0.load(Ordering::SeqCst), 1, "read_file ran; write_file never did");
    let registry = rt.sub_agent_registry().unwrap();
    let child = &registry.history()[0];
    assert_eq!(child.role, "code-review");
    assert_eq!(child.allowed_tools.as_deref(), Some(&["read_file".to_owned(), "search_files".to_owned(), "list_dir".to_owned()][..]));
    let denied = child.messages.iter().find_map(|m| match m {
        Message::Tool { tool_call_id, content, .. } if tool_call_id == "w1" => Some(content.to_string()),
        _ => None,
    });
    assert!(denied.unwrap().contains("tool_not_allowed"));
    assert_eq!(child.result.as_ref().unwrap().tools_used, vec!["write_file".to_owned(), "read_file".to_owned()]);
}

#[tokio::test]
async fn iso_2_whitelists_are_configurable_and_unknown_roles_rejected() {
    let counter = Arc::new(Counting::default());
    let mut delegation = clone_delegation();
    delegation.role_whitelists.insert("shell-only".into(), Some(vec!["run_shell".into()]));
    let model = ScriptedModel::with(|body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" {
                delegate(&[
                    ("d1", json!({"assignee": "clone", "task_description": "t", "role": "shell-only"})),
                    ("d2", json!({"assignee": "clone", "task_description": "t", "role": "astronaut"})),
                ])
            } else {
                text_reply("done", 1)
            };
        }
        assert_eq!(tool_names(body), vec!["run_shell".to_owned()]);
        text_reply("ok", 1)
    });
    let rt = AgentRuntime::new(config(delegation, file_tools(counter)), model).unwrap();
    rt.run("go").await.unwrap();
    let results: Vec<String> = rt.messages().iter().filter_map(|m| if let Message::Tool { content, .. } = m { Some(content.to_string()) } else { None }).collect();
    assert_eq!(results[0], "ok");
    assert!(results[1].contains("subagent_unknown_role"));
}

#[test]
fn iso_3_summary_levels_at_500_501_and_1000_characters_with_chinese_and_emoji() {
    let exactly_500: String = "法🍞".repeat(250);
    assert_eq!(exactly_500.chars().count(), 500);
    assert_eq!(summarize_result(&exactly_500), exactly_500, "≤ 500: as is");

    let s501: String = format!("{exactly_500}x");
    let out = summarize_result(&s501);
    assert_eq!(out, format!("{exactly_500}[truncated, 501 chars]"), "> 500 without a section: head + marker");

    let section_body: String = "结".repeat(1000 - "## Summary\n".chars().count());
    let doc = format!("{}\n## Summary\n{section_body}\n## Details\nmore", "前".repeat(600));
    let out = summarize_result(&doc);
    assert_eq!(out.chars().count(), 1000);
    assert!(out.starts_with("## Summary\n") && out.ends_with('结'));

    let too_long = format!("{}\n## Result\n{}xx", "前".repeat(600), section_body); // 1001 chars
    let out = summarize_result(&too_long);
    assert!(out.ends_with(&format!("[truncated, {} chars]", too_long.chars().count())));
    assert_eq!(out.chars().count(), 500 + format!("[truncated, {} chars]", too_long.chars().count()).chars().count());

    let result_only = format!("{}\n## Result\n42 😀", "x".repeat(700));
    assert_eq!(summarize_result(&result_only), "## Result\n42 😀");

    // A heading right after `## Summary` ends it: the section is empty, not the next one.
    let empty = format!("{}\n## Summary\n## Details\n{}", "x".repeat(600), "d".repeat(50));
    assert_eq!(summarize_result(&empty), "## Summary");
}

fn context(id: &str, parent: &str, started: u64) -> SubAgentContext {
    SubAgentContext {
        id: id.into(),
        parent_id: Some(parent.into()),
        role: "general".into(),
        assignee: "clone".into(),
        task: "t".into(),
        messages: vec![],
        allowed_tools: None,
        max_iterations: 4,
        status: SubAgentStatus::Active,
        result: None,
        started_at_ms: started,
        ended_at_ms: None,
    }
}

#[test]
fn iso_4_registry_lifecycle_ring_buffer_force_complete_and_cleanup() {
    let registry = SubAgentRegistry::new();
    for i in 0..130 {
        registry.register(context(&format!("c{i}"), "s1", i), CancellationToken::new());
        registry.complete(&format!("c{i}"), SubAgentResult { token_count: 10, ..Default::default() }, vec![], 1000 + i);
    }
    let history = registry.history();
    assert_eq!(history.len(), REGISTRY_HISTORY_CAPACITY);
    assert_eq!(history.first().unwrap().id, "c30", "exactly the last 100 are kept");
    assert_eq!(history.last().unwrap().id, "c129");
    let stats = registry.stats();
    assert_eq!((stats.active, stats.history, stats.completed_count, stats.total_tokens), (0, 100, 130, 1300));

    // Force-complete when a session closes: only that session's children, each cancelled.
    let (a, b, other) = (CancellationToken::new(), CancellationToken::new(), CancellationToken::new());
    registry.register(context("a", "s2", 5000), a.clone());
    registry.register(context("b", "s2", 5001), b.clone());
    registry.register(context("o", "s3", 5002), other.clone());
    assert_eq!(registry.active().iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ["a", "b", "o"]);
    assert_eq!(registry.force_complete_all("s2", 6000), 2);
    assert!(a.is_cancelled() && b.is_cancelled() && !other.is_cancelled());
    let forced = registry.history().into_iter().find(|c| c.id == "a").unwrap();
    assert_eq!(forced.status, SubAgentStatus::Completed);
    assert_eq!(forced.result.unwrap().forced_reason.as_deref(), Some("session-closed"));
    // A late complete() of a forced child is ignored.
    registry.complete("a", SubAgentResult::default(), vec![], 6001);
    assert_eq!(registry.stats().completed_count, 132);

    // cleanup(max_age): drops old history, force-completes stuck active ones.
    let removed = registry.cleanup(500, 6400);
    assert_eq!(removed, 98, "one stale active child ended, 97 old history entries dropped");
    assert_eq!(registry.history().iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ["a", "b", "o"]);
    assert!(registry.history().iter().all(|c| 6400 - c.ended_at_ms.unwrap() <= 500));
    assert!(registry.active().is_empty(), "o (started at 5002) is stale at 6400 with max_age 500");
    let json = forced_json(&registry);
    assert!(json.contains("\"status\":\"completed\""));
}

fn forced_json(registry: &SubAgentRegistry) -> String {
    registry.history().last().map(|c| c.to_json()).unwrap_or_default()
}

#[tokio::test]
async fn iso_4_registry_sees_active_children_and_force_complete_stops_them() {
    let model = ScriptedModel::with(|body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" { delegate(&[("d1", json!({"assignee": "clone", "task_description": "wait"}))]) } else { text_reply("done", 1) };
        }
        Reply::Hang
    });
    let registry = Arc::new(SubAgentRegistry::new());
    let delegation = DelegationConfig { registry: registry.clone(), ..clone_delegation() };
    let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), model).unwrap();
    let r2 = rt.clone();
    let handle = tokio::spawn(async move { r2.run("go").await });
    for _ in 0..500 {
        if registry.stats().active == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let active = registry.active();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].parent_id.as_deref(), Some("parent"));
    assert_eq!(registry.force_complete_all("parent", 99), 1);
    let outcome = handle.await.unwrap().unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("done"), "the parent goes on after a forced child");
    let tool = rt.messages().iter().find_map(|m| if let Message::Tool { content, .. } = m { Some(content.to_string()) } else { None }).unwrap();
    assert!(tool.contains("\"code\":\"session-closed\""), "the answer names the record's ending: {tool}");
    assert_eq!(registry.stats().active, 0);
}

#[tokio::test]
async fn iso_5_token_budget_with_real_usage_cancels_the_in_flight_call() {
    let child_calls = Arc::new(AtomicUsize::new(0));
    let calls = child_calls.clone();
    let model = ScriptedModel::with(move |body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" { delegate(&[("d1", json!({"assignee": "clone", "task_description": "dig"}))]) } else { text_reply("done", 1) };
        }
        calls.fetch_add(1, Ordering::SeqCst);
        // The first child call reports 900 tokens and asks for a tool.
        tool_calls_reply(&[("t1", "read_file", json!({}))], 893)
    });
    let mut delegation = clone_delegation();
    // 900 used by the first call; the second request's estimate (tens of tokens) crosses 920.
    delegation.child_token_budget = Some(920);
    let rt = AgentRuntime::new(config(delegation, file_tools(Arc::new(Counting::default()))), model).unwrap();
    rt.run("go").await.unwrap();
    assert_eq!(child_calls.load(Ordering::SeqCst), 1, "the second call was cancelled before it went out");
    let registry = rt.sub_agent_registry().unwrap();
    let child = &registry.history()[0];
    let result = child.result.clone().unwrap();
    assert_eq!(result.forced_reason.as_deref(), Some(TOKEN_BUDGET_EXCEEDED));
    assert_eq!(child.status, SubAgentStatus::Completed);
    assert!(result.token_count >= 900);
    let tool = rt.messages().iter().find_map(|m| if let Message::Tool { content, .. } = m { Some(content.to_string()) } else { None }).unwrap();
    assert!(tool.contains(TOKEN_BUDGET_EXCEEDED));
}

#[tokio::test]
async fn iso_5_token_budget_uses_the_estimate_when_usage_is_missing() {
    let model = ScriptedModel::with(|body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" {
                delegate(&[("d1", json!({"assignee": "clone", "task_description": "x".repeat(4000)}))])
            } else {
                text_reply("done", 1)
            };
        }
        Reply::Json(json!({"choices": [{"message": {"role": "assistant", "content": "no usage reported"}}]}))
    });
    let mut delegation = clone_delegation();
    delegation.child_token_budget = Some(500); // the task alone estimates at ~1000 tokens
    let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), model.clone()).unwrap();
    rt.run("go").await.unwrap();
    let child = rt.sub_agent_registry().unwrap().history()[0].clone();
    assert_eq!(child.result.unwrap().forced_reason.as_deref(), Some(TOKEN_BUDGET_EXCEEDED));
    assert_eq!(model.requests.lock().unwrap().iter().filter(|b| !offers_delegation(b)).count(), 0, "cancelled before sending");
}

#[test]
fn iso_6_condensation_takes_200_chars_of_the_last_three_assistant_messages() {
    let messages = vec![
        Message::assistant("first"),
        Message::user("u"),
        Message::assistant("二".repeat(300)),
        Message::assistant_tool_calls(vec![]),
        Message::assistant("third"),
        Message::assistant("fourth"),
    ];
    let condensed = condense_parent_context(&messages);
    assert_eq!(condensed, format!("{}\nthird\nfourth", "二".repeat(200)));
    assert_eq!(condense_parent_context(&[Message::user("only user")]), "");
}

#[tokio::test]
async fn iso_6_explicit_context_wins_over_condensation() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let model = ScriptedModel::with(move |body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" {
                delegate(&[
                    ("d1", json!({"assignee": "clone", "task_description": "with", "context": "EXPLICIT"})),
                    ("d2", json!({"assignee": "clone", "task_description": "without"})),
                ])
            } else {
                text_reply("done", 1)
            };
        }
        s.lock().unwrap().push(user_text(body));
        text_reply("ok", 1)
    });
    let rt = AgentRuntime::new(config(clone_delegation(), ToolRegistry::new()), model).unwrap();
    let mut state = arkagent::AgentState::new("parent");
    state.history.messages = vec![Message::user("q"), Message::assistant("PARENT SAID THIS")];
    rt.import_state(&state.to_json().unwrap()).unwrap();
    rt.run("go").await.unwrap();
    let tasks = seen.lock().unwrap().clone();
    assert!(tasks.contains(&"with\n\n## Inherited context\nEXPLICIT".to_owned()), "{tasks:?}");
    assert!(tasks.contains(&"without\n\n## Inherited context\nPARENT SAID THIS".to_owned()), "{tasks:?}");
}

#[tokio::test]
async fn iso_1_a_child_never_sees_another_childs_or_the_parents_later_messages() {
    let model = ScriptedModel::with(|body, _| {
        if offers_delegation(body) {
            let tools_done = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").count();
            return match (last_role(body).as_str(), tools_done) {
                ("user", _) => delegate(&[("d1", json!({"assignee": "clone", "task_description": "first child"}))]),
                ("tool", 1) => delegate(&[("d2", json!({"assignee": "clone", "task_description": "second child"}))]),
                _ => text_reply("PARENT FINAL", 1),
            };
        }
        if user_text(body).starts_with("first child") {
            if last_role(body) == "user" {
                return tool_calls_reply(&[("s1", "read_file", json!({"path": "CHILD-ONE-PRIVATE"}))], 1);
            }
            return text_reply("one", 1);
        }
        // The second child sees the parent's slice (with child one's summary) but never
        // child one's own messages.
        assert!(!body.to_string().contains("CHILD-ONE-PRIVATE"), "child two saw child one's messages");
        text_reply("two", 1)
    });
    let rt = AgentRuntime::new(config(clone_delegation(), file_tools(Arc::new(Counting::default()))), model).unwrap();
    rt.run("go").await.unwrap();
    let history = rt.sub_agent_registry().unwrap().history();
    assert_eq!(history.len(), 2);
    for child in &history {
        let text = serde_json::to_string(&child.messages).unwrap();
        assert!(!text.contains("PARENT FINAL"), "a child saw the parent's later messages");
        assert_eq!(child.status, SubAgentStatus::Completed);
        assert!(child.ended_at_ms.is_some());
    }
    assert!(!serde_json::to_string(&rt.messages()).unwrap().contains("CHILD-ONE-PRIVATE"), "child history never merged");
}

#[tokio::test]
async fn iso_7_decomposed_tasks_keep_input_order_with_one_failing_sibling() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    struct Slow {
        running: Arc<AtomicUsize>,
        peak: Arc<AtomicUsize>,
    }
    #[async_trait]
    impl arkagent::HttpTransport for Slow {
        async fn send(&self, r: arkagent::HttpRequest, _c: CancellationToken) -> Result<arkagent::HttpResponse, arkagent::TransportError> {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            let body: Value = serde_json::from_str(&r.body).unwrap();
            let task = user_text(&body);
            if task.starts_with("task 2") {
                return Ok(arkagent::HttpResponse::full(500, "{}"));
            }
            Ok(arkagent::HttpResponse::full(200, json!({"choices": [{"message": {"role": "assistant", "content": format!("answer to {}", &task[..6])}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}).to_string()))
        }
    }
    let mut delegation = clone_delegation();
    delegation.policy = SubAgentPolicy { max_concurrent_children: 2, max_delegations_per_run: 10, ..Default::default() };
    let transport = Arc::new(Slow { running: running.clone(), peak: peak.clone() });
    let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), transport).unwrap();
    let tasks: Vec<DecomposedTask> =
        (0..5).map(|i| DecomposedTask { assignee: "clone".into(), task_description: format!("task {i}"), role: None, context: None }).collect();
    let results = rt.run_decomposed(&tasks, 3).await.unwrap();
    assert_eq!(results.len(), 5);
    for (i, r) in results.iter().enumerate() {
        if i == 2 {
            assert!(r.is_error && r.error_code.as_deref() == Some("llm_server"), "{r:?}");
        } else {
            assert_eq!(r.content, format!("answer to task {i}"), "input order");
        }
    }
    assert_eq!(peak.load(Ordering::SeqCst), 2, "batches within the policy's concurrency cap");
    assert_eq!(rt.total_usage().children.call_count, 4 + 1 - 1, "four children answered; the failed one made no counted call");
    assert!(!rt.is_running());
}

#[tokio::test]
async fn iso_8_system_prompt_has_a_delegation_section_only_when_delegation_is_on() {
    let model = ScriptedModel::new(vec![text_reply("a", 1), text_reply("b", 1)]);
    let rt = AgentRuntime::new(config(clone_delegation(), ToolRegistry::new()), model.clone()).unwrap();
    rt.run("x").await.unwrap();
    let mut plain = config(clone_delegation(), ToolRegistry::new());
    plain.delegation = None;
    let rt2 = AgentRuntime::new(plain, model.clone()).unwrap();
    rt2.run("y").await.unwrap();
    let requests = model.requests.lock().unwrap();
    let with = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(with.starts_with("Base prompt.") && with.contains("## Delegating to sub-agents") && with.contains("Do not delegate when"));
    assert_eq!(requests[1]["messages"][0]["content"], "Base prompt.");
}

#[tokio::test]
async fn mem_4_namespaces_never_see_each_others_entries() {
    let store = NamespacedMemoryStore::new();
    let global = store.scope("");
    assert_eq!(global.namespace(), GLOBAL_NAMESPACE);
    let child = store.scope("parent_w_1");
    global.store(MemoryTier::Working, "k", json!("parent value"));
    child.store(MemoryTier::Working, "k", json!("child value"));
    child.store(MemoryTier::ShortTerm, "fact", json!(1));
    assert_eq!(global.recall(MemoryTier::Working, "k"), Some(json!("parent value")));
    assert_eq!(child.recall(MemoryTier::Working, "k"), Some(json!("child value")));
    assert_eq!(global.recall(MemoryTier::ShortTerm, "fact"), None);
    assert_eq!(global.stats().short_term, 0);
    assert_eq!(child.stats().short_term, 1);
    child.clear();
    assert_eq!(global.recall(MemoryTier::Working, "k"), Some(json!("parent value")));
    assert!(child.ids(MemoryTier::Working).is_empty());

    // Through the runtime: the parent's tool and the child's tool write to different namespaces.
    let model = ScriptedModel::with(|body, _| {
        if offers_delegation(body) {
            return match last_role(body).as_str() {
                "user" => tool_calls_reply(&[("p1", "read_file", json!({}))], 1),
                "tool" if body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").count() == 1 => {
                    delegate(&[("d1", json!({"assignee": "clone", "task_description": "use a tool"}))])
                }
                _ => text_reply("done", 1),
            };
        }
        if last_role(body) == "user" {
            return tool_calls_reply(&[("c1", "run_shell", json!({}))], 1);
        }
        text_reply("child done", 1)
    });
    let rt = AgentRuntime::new(config(clone_delegation(), file_tools(Arc::new(Counting::default()))), model).unwrap();
    rt.run("go").await.unwrap();
    let parent_memory = rt.working_memory();
    assert_eq!(parent_memory.recall(MemoryTier::Working, "last_tool"), Some(json!("read_file")));
    // The child wrote to its own namespace (never the parent's), freed when it ended.
    assert_eq!(rt.config().memory_store.namespaces(), vec![GLOBAL_NAMESPACE.to_owned()]);
}

/// A root barred from `write_file` (its `allowed_tools`) delegates to a `general` clone
/// and to a worker whose factory tries to lift the restriction: neither child is shown
/// `write_file`, and neither can execute it (privilege escalation, ISO-2).
#[tokio::test]
async fn iso_2_general_role_clone_cannot_widen_the_parents_tools() {
    let counter = Arc::new(Counting::default());
    let child_tools = Arc::new(Mutex::new(Vec::new()));
    let seen = child_tools.clone();
    let model = ScriptedModel::with(move |body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" {
                delegate(&[
                    ("d1", json!({"assignee": "clone", "task_description": "escalate", "role": "general"})),
                    ("d2", json!({"assignee": "clone", "task_description": "escalate by default"})),
                    ("d3", json!({"assignee": "wide", "task_description": "escalate through a factory", "role": "code-generation"})),
                ])
            } else {
                text_reply("parent done", 1)
            };
        }
        seen.lock().unwrap().push(tool_names(body));
        if last_role(body) == "user" {
            return tool_calls_reply(&[("w1", "write_file", json!({"path": "/etc/passwd"})), ("r1", "read_file", json!({"path": "x"}))], 1);
        }
        text_reply("child done", 1)
    });
    let mut delegation = clone_delegation();
    delegation
        .register(
            arkagent::runtime::SubAgentDefinition::create(
                "wide",
                "asks for every tool",
                Arc::new(|parent: &AgentRuntimeConfig| -> Result<AgentRuntimeConfig, arkagent::ArkAgentError> {
                    let mut c = parent.clone();
                    c.allowed_tools = None;
                    Ok(c)
                }),
            )
            .unwrap(),
        )
        .unwrap();
    let mut root = config(delegation, file_tools(counter.clone()));
    root.allowed_tools = Some(vec!["read_file".into(), DELEGATE_TASK_TOOL_NAME.into()]);
    let rt = AgentRuntime::new(root, model).unwrap();
    rt.run("try to escalate").await.unwrap();

    let shown = child_tools.lock().unwrap().clone();
    assert_eq!(shown.len(), 6, "three children, two calls each");
    assert!(shown.iter().all(|tools| tools == &["read_file".to_owned()]), "a child was shown more than its parent may use: {shown:?}");
    assert_eq!(counter.0.load(Ordering::SeqCst), 3, "read_file ran once per child; write_file never ran");
    let history = rt.sub_agent_registry().unwrap().history();
    assert_eq!(history.len(), 3);
    for child in &history {
        let allowed = child.allowed_tools.clone().expect("restricted like its parent");
        assert!(allowed.contains(&"read_file".to_owned()) && !allowed.contains(&"write_file".to_owned()), "{allowed:?}");
        let denied = child.messages.iter().find_map(|m| match m {
            Message::Tool { tool_call_id, content, .. } if tool_call_id == "w1" => Some(content.to_string()),
            _ => None,
        });
        assert!(denied.unwrap().contains("tool_not_allowed"), "{}", child.id);
    }
}

/// Polls (yielding) until `f` holds; panics after 30 s (a loaded machine is slow, never
/// that slow).
async fn until(mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(std::time::Instant::now() < deadline, "condition never held");
        tokio::task::yield_now().await;
    }
}

fn hanging_children() -> Arc<ScriptedModel> {
    ScriptedModel::with(|body, _| {
        if offers_delegation(body) {
            return if last_role(body) == "user" { delegate(&[("d1", json!({"assignee": "clone", "task_description": "wait"}))]) } else { text_reply("done", 1) };
        }
        Reply::Hang
    })
}

/// Cancelling the parent while a child runs: the child leaves the registry's active set,
/// ends with `forced_reason: "cancelled"`, and `active_children()` agrees. In a loop.
#[tokio::test]
async fn iso_4_cancelled_child_leaves_the_active_set() {
    for i in 0..300 {
        let registry = Arc::new(SubAgentRegistry::new());
        let delegation = DelegationConfig { registry: registry.clone(), ..clone_delegation() };
        let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), hanging_children()).unwrap();
        let r2 = rt.clone();
        let handle = tokio::spawn(async move { r2.run("go").await });
        until(|| registry.stats().active == 1).await;
        assert_eq!(rt.active_children(), registry.active_ids_of("parent"));
        rt.cancel();
        let outcome = handle.await.unwrap().unwrap();
        assert_eq!(outcome.status, arkagent::RunStatus::Cancelled, "iteration {i}");
        assert!(registry.active().is_empty(), "iteration {i}: the cancelled child is still active");
        assert!(rt.active_children().is_empty());
        let ended = registry.history();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].status, SubAgentStatus::Completed);
        assert_eq!(ended[0].result.as_ref().unwrap().forced_reason.as_deref(), Some("cancelled"), "iteration {i}");
    }
}

/// A factory that takes a few polls to build its worker: the window in which a child
/// has "just started".
struct SlowFactory(Arc<AtomicUsize>);
#[async_trait]
impl arkagent::runtime::SubAgentFactory for SlowFactory {
    async fn create(&self, parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, arkagent::ArkAgentError> {
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(parent.clone())
    }
}

/// `closeSubAgents()` (`force_complete_all`) ends every child `active_children()` lists,
/// the moment it is listed — however fresh — and the two views agree at every poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iso_4_close_sub_agents_catches_a_child_that_just_started() {
    for i in 0..300 {
        let registry = Arc::new(SubAgentRegistry::new());
        let built = Arc::new(AtomicUsize::new(0));
        let mut delegation = DelegationConfig { registry: registry.clone(), ..Default::default() };
        delegation.register(arkagent::runtime::SubAgentDefinition::create("slow", "slow to build", Arc::new(SlowFactory(built.clone()))).unwrap()).unwrap();
        let model = ScriptedModel::with(|body, _| {
            if offers_delegation(body) {
                return if last_role(body) == "user" { delegate(&[("d1", json!({"assignee": "slow", "task_description": "wait"}))]) } else { text_reply("done", 1) };
            }
            Reply::Hang
        });
        let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), model).unwrap();
        let r2 = rt.clone();
        let handle = tokio::spawn(async move { r2.run("go").await });
        let mut listed = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            listed = rt.active_children();
            let in_registry: Vec<String> = registry.active().into_iter().filter(|c| c.parent_id.as_deref() == Some("parent")).map(|c| c.id).collect();
            let again = rt.active_children();
            if listed == again {
                assert_eq!(listed, in_registry, "iteration {i}: active_children() and the registry disagree");
            }
            if !listed.is_empty() {
                break;
            }
            std::hint::spin_loop();
        }
        assert_eq!(listed.len(), 1, "iteration {i}");
        assert_eq!(registry.force_complete_all("parent", 7), 1, "iteration {i}: close missed a listed child");
        let outcome = handle.await.unwrap().unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("done"), "the parent goes on");
        assert!(registry.active().is_empty() && rt.active_children().is_empty());
        let ended = registry.history();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].result.as_ref().unwrap().forced_reason.as_deref(), Some("session-closed"));
        let tool = rt.messages().iter().find_map(|m| if let Message::Tool { content, .. } = m { Some(content.to_string()) } else { None }).unwrap();
        assert!(tool.contains("\"code\":\"session-closed\""), "iteration {i}: {tool}");
        assert_eq!(built.load(Ordering::SeqCst), 1);
    }
}

/// ISO-7 with cancel(): the running batch is cancelled and no later batch builds a worker.
#[tokio::test]
async fn iso_7_run_decomposed_builds_no_worker_after_cancel() {
    for i in 0..200 {
        let built = Arc::new(AtomicUsize::new(0));
        let b = built.clone();
        let mut delegation = DelegationConfig {
            policy: SubAgentPolicy { max_concurrent_children: 2, max_delegations_per_run: 10, ..Default::default() },
            ..Default::default()
        };
        delegation
            .register(
                arkagent::runtime::SubAgentDefinition::create(
                    "counted",
                    "counts builds",
                    Arc::new(move |parent: &AgentRuntimeConfig| -> Result<AgentRuntimeConfig, arkagent::ArkAgentError> {
                        b.fetch_add(1, Ordering::SeqCst);
                        Ok(parent.clone())
                    }),
                )
                .unwrap(),
            )
            .unwrap();
        let registry = delegation.registry.clone();
        let model = ScriptedModel::with(|_, _| Reply::Hang);
        let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), model).unwrap();
        let tasks: Vec<DecomposedTask> =
            (0..6).map(|t| DecomposedTask { assignee: "counted".into(), task_description: format!("task {t}"), role: None, context: None }).collect();
        let handle = tokio::spawn(rt.start_run_decomposed(tasks, 2).unwrap());
        until(|| registry.stats().active == 2).await;
        rt.cancel();
        let results = handle.await.unwrap().unwrap();
        assert_eq!(results.len(), 6);
        assert!(results.iter().all(|r| r.is_error && r.error_code.as_deref() == Some("cancelled")), "iteration {i}: {results:?}");
        assert_eq!(built.load(Ordering::SeqCst), 2, "iteration {i}: a worker was built after cancel()");
        assert_eq!((registry.stats().active, registry.stats().history), (0, 2));
        assert!(!rt.is_running());
    }
}

/// A host transport that streams a long answer chunk by chunk, a few milliseconds apart,
/// and notes the chunk at which it was told to stop.
struct Streamer {
    chunks: usize,
    stopped_at: Arc<Mutex<Option<usize>>>,
    finished: Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait]
impl arkagent::HttpTransport for Streamer {
    async fn send(&self, r: arkagent::HttpRequest, cancel: CancellationToken) -> Result<arkagent::HttpResponse, arkagent::TransportError> {
        let body: Value = serde_json::from_str(&r.body).unwrap();
        if offers_delegation(&body) {
            let reply = if last_role(&body) == "user" {
                delegate(&[("d1", json!({"assignee": "streamer", "task_description": "write a lot"}))])
            } else {
                text_reply("done", 1)
            };
            let Reply::Json(v) = reply else { unreachable!() };
            return Ok(arkagent::HttpResponse::full(200, v.to_string()));
        }
        assert_eq!(body["stream"], true, "the child streams");
        let (tx, rx) = arkagent::BodyStream::channel();
        let (chunks, stopped_at, finished) = (self.chunks, self.stopped_at.clone(), self.finished.clone());
        tokio::spawn(async move {
            for i in 0..chunks {
                tokio::time::sleep(Duration::from_millis(3)).await;
                // ~100 tokens per chunk by the library's estimate.
                let delta = json!({"content": "lorem ipsum dolor sit amet, ".repeat(14)}).to_string();
                if cancel.is_cancelled() || !tx.send(crate::llm_fake::delta_event(&delta).into_bytes()) {
                    *stopped_at.lock().unwrap() = Some(i);
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(3)).await;
            if cancel.is_cancelled() || !tx.send(crate::llm_fake::finish_events("stop").into_bytes()) {
                *stopped_at.lock().unwrap() = Some(chunks);
                return;
            }
            finished.store(true, Ordering::SeqCst);
        });
        Ok(arkagent::HttpResponse { status: 200, headers: Vec::new(), body: arkagent::HttpBody::Stream(rx) })
    }
}

/// ISO-5: streamed deltas count against the child's token budget as they arrive; the
/// budget trips mid-answer and cancels that very call — the host is told to stop before
/// it sends its last chunk.
#[tokio::test]
async fn iso_5_token_budget_trips_mid_stream() {
    const CHUNKS: usize = 20;
    let stopped_at = Arc::new(Mutex::new(None));
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The prompt is well under 100 tokens; each chunk about 100.
    let mut delegation = DelegationConfig { child_token_budget: Some(450), ..Default::default() };
    delegation
        .register(
            arkagent::runtime::SubAgentDefinition::create(
                "streamer",
                "streams its answers",
                Arc::new(|parent: &AgentRuntimeConfig| -> Result<AgentRuntimeConfig, arkagent::ArkAgentError> {
                    let mut c = parent.clone();
                    c.model.stream = true;
                    Ok(c)
                }),
            )
            .unwrap(),
        )
        .unwrap();
    let transport = Arc::new(Streamer { chunks: CHUNKS, stopped_at: stopped_at.clone(), finished: finished.clone() });
    let rt = AgentRuntime::new(config(delegation, ToolRegistry::new()), transport).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let outcome = rt.run("go").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("done"));
    tokio::time::sleep(Duration::from_millis(20)).await; // let the host task notice

    assert!(!finished.load(Ordering::SeqCst), "the streamed call ran to its end");
    let stopped = stopped_at.lock().unwrap().expect("the host was told to stop");
    let deltas = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(&e.kind, arkagent::EventKind::SubAgent(c) if c.event.kind.type_name() == "text_delta"))
        .count();
    assert!(deltas >= 1 && stopped >= 1, "some of the answer streamed before the budget tripped ({deltas} deltas)");
    assert!(stopped < CHUNKS, "cancelled before the last chunk (stopped at {stopped})");
    assert!(deltas < CHUNKS);
    let child = rt.sub_agent_registry().unwrap().history()[0].clone();
    assert_eq!(child.result.as_ref().unwrap().forced_reason.as_deref(), Some(TOKEN_BUDGET_EXCEEDED));
    let tokens = child.result.unwrap().token_count;
    assert!((450..450 + 2 * 100).contains(&tokens), "the cut call's streamed tokens count, and stop soon after the budget ({tokens})");
    let tool = rt.messages().iter().find_map(|m| if let Message::Tool { content, .. } = m { Some(content.to_string()) } else { None }).unwrap();
    assert!(tool.contains(TOKEN_BUDGET_EXCEEDED));
    // SUB-6: the call cut off mid-answer was a model call made, though no usage came.
    assert_eq!(rt.total_usage().children.call_count, 1, "the cut-off call counts");
}

/// A tool that writes a note to the caller's namespace and records which namespaces
/// the store holds at that moment.
struct Note {
    store: Arc<NamespacedMemoryStore>,
    seen: Mutex<Vec<(String, Vec<String>)>>,
}
#[async_trait]
impl ToolExecutor for Note {
    async fn execute(&self, _call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        ctx.memory.store(MemoryTier::ShortTerm, "note", json!("kept while running"));
        self.seen.lock().unwrap().push((ctx.memory.namespace().to_owned(), self.store.namespaces()));
        ToolResult::ok("noted")
    }
}

/// MEM-4: reads never create a namespace; a sub-agent's namespace exists while it runs
/// and is freed when it ends — normally or cancelled.
#[tokio::test]
async fn mem_4_child_namespace_freed_and_reads_do_not_create_namespaces() {
    let store = NamespacedMemoryStore::new();
    let ghost = store.scope("ghost");
    assert_eq!(ghost.recall(MemoryTier::Working, "k"), None);
    assert!(ghost.ids(MemoryTier::ShortTerm).is_empty());
    assert_eq!(ghost.stats().working, 0);
    assert!(!ghost.forget(MemoryTier::Working, "k"));
    assert!(!ghost.clear());
    assert!(store.namespaces().is_empty(), "reads created a namespace: {:?}", store.namespaces());
    ghost.store(MemoryTier::Working, "k", json!(1));
    assert_eq!(store.namespaces(), vec!["ghost".to_owned()]);
    assert!(ghost.forget(MemoryTier::Working, "k"));
    assert!(store.namespaces().is_empty(), "the last entry's removal frees the namespace");

    for cancel in [false, true] {
        let store = NamespacedMemoryStore::new();
        let note = Arc::new(Note { store: store.clone(), seen: Mutex::default() });
        let mut tools = ToolRegistry::new();
        tools.register(ToolDefinition::new("note", "n", json!({"type": "object"})), note.clone()).unwrap();
        let model = ScriptedModel::with(move |body, _| {
            if offers_delegation(body) {
                return if last_role(body) == "user" { delegate(&[("d1", json!({"assignee": "clone", "task_description": "take a note"}))]) } else { text_reply("done", 1) };
            }
            match last_role(body).as_str() {
                "user" => tool_calls_reply(&[("n1", "note", json!({}))], 1),
                _ if cancel => Reply::Hang,
                _ => text_reply("noted it", 1),
            }
        });
        let mut c = config(clone_delegation(), tools);
        c.memory_store = store.clone();
        let rt = AgentRuntime::new(c, model).unwrap();
        let r2 = rt.clone();
        let handle = tokio::spawn(async move { r2.run("go").await });
        if cancel {
            until(|| !note.seen.lock().unwrap().is_empty()).await;
            rt.cancel();
        }
        handle.await.unwrap().unwrap();
        let seen = note.seen.lock().unwrap().clone();
        let child_id = rt.sub_agent_registry().unwrap().history()[0].id.clone();
        assert_eq!(seen, vec![(child_id.clone(), vec![child_id.clone()])], "the child wrote to its own namespace");
        assert!(store.namespaces().is_empty(), "cancel={cancel}: the child's namespace outlived it: {:?}", store.namespaces());
        assert_eq!(store.scope(&child_id).recall(MemoryTier::ShortTerm, "note"), None);
        assert!(store.namespaces().is_empty());
    }
}

#[test]
fn iso_6_condensation_takes_last_three_assistant_messages_with_text() {
    let call = |id: &str| arkagent::ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() };
    let messages = vec![
        Message::assistant("alpha"),
        Message::assistant("beta"),
        Message::user("question"),
        Message::Assistant { content: Some("gamma, calling a tool".into()), tool_calls: vec![call("1")], reasoning: None, thinking: Default::default() },
        Message::tool_result("1", "tool output", false),
        Message::assistant("delta"),
        // The most recent ones have no text: they are skipped, not counted.
        Message::assistant_tool_calls(vec![call("2")]),
        Message::tool_result("2", "more output", false),
        Message::Assistant { content: Some("   ".into()), tool_calls: vec![], reasoning: None, thinking: Default::default() },
        Message::Assistant { content: None, tool_calls: vec![], reasoning: Some("thinking only".into()), thinking: Default::default() },
    ];
    assert_eq!(condense_parent_context(&messages), "beta\ngamma, calling a tool\ndelta");
}

/// ISO-4 with `max_depth` > 1: closing a session also ends its children's children.
#[test]
fn iso_4_force_complete_all_reaches_descendants() {
    let registry = SubAgentRegistry::new();
    let (child, grandchild, other) = (CancellationToken::new(), CancellationToken::new(), CancellationToken::new());
    registry.register(context("s_w_1", "s", 1), child.clone());
    registry.register(context("s_w_1_w_2", "s_w_1", 2), grandchild.clone());
    registry.register(context("t_w_3", "t", 3), other.clone());
    assert_eq!(registry.active_ids_of("s"), ["s_w_1"]);
    assert_eq!(registry.force_complete_all("s", 10), 1, "one direct child");
    assert!(child.is_cancelled() && grandchild.is_cancelled() && !other.is_cancelled());
    assert_eq!(registry.active_ids_of("t"), ["t_w_3"]);
    assert_eq!(registry.active().len(), 1);
    let reasons: Vec<Option<String>> = registry.history().into_iter().map(|c| c.result.unwrap().forced_reason).collect();
    assert_eq!(reasons, [Some("session-closed".to_owned()), Some("session-closed".to_owned())]);
}

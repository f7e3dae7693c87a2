//! ARCH-2 (issue 26 item 1): the `Session`'s typed doors, driven directly — whoever
//! calls them, nothing unredacted enters the state (LLM-4), the input is taken back once,
//! an answer's tool call ids come out unique (CORE-2), `next_request` hands over the
//! body, counts, prompt size and message count, and the readers (`StateView`, its memory
//! service) see what the doors did.

use std::sync::Arc;

use arkagent::compress::{PromptSizeSource, StagedCompression};
use arkagent::history::{ChildUsageRecord, ChildUsageSummary, EpisodicMemory, UNREPORTED_USAGE_SOURCE};
use arkagent::ids::{ManualClock, SequentialIdGenerator};
use arkagent::session::{RequestShape, Session, SessionState};
use arkagent::{AgentState, Message, ModelConfig, ModelUsage, ToolCall, ToolResult};

const KEY: &str = "sk-doors-SECRET-31415926";

fn model() -> ModelConfig {
    ModelConfig::new("https://api.example.test/v1", KEY, "door-model")
}

fn session(state: AgentState) -> Session {
    let model = model();
    let cell = SessionState::new(state, &model);
    let shape = RequestShape { model, system_prompt: "You help.".into(), tool_definitions: Vec::new(), tool_choice: None };
    Session::new(cell, shape, Arc::new(ManualClock::new(1)), Arc::new(SequentialIdGenerator::new("id")))
}

fn leaks(state: &AgentState) -> bool {
    serde_json::to_string(state).unwrap().contains(KEY)
}

fn call(id: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "lookup".into(), arguments: arguments.into() }
}

#[test]
fn arch_2_every_door_redacts_whoever_calls_it() {
    let session = session(AgentState::new("s"));
    let view = session.view();
    let input = session.push_input("r1", format!("my key is {KEY}")).unwrap();
    assert_eq!(input.text(), "my key is <redacted>");
    let answer = Message::Assistant {
        content: Some(format!("echo {KEY}")),
        tool_calls: vec![call("c1", &format!("{{\"q\":\"{KEY}\"}}"))],
        reasoning: Some(format!("thinking about {KEY}").into()),
        thinking: Default::default(),
    };
    let pushed = session.push_answer(answer, None, &Default::default());
    assert_eq!(pushed.text.as_deref(), Some("echo <redacted>"));
    assert!(!pushed.tool_calls[0].arguments.contains(KEY));
    session.push_tool_results(&pushed.tool_calls, vec![ToolResult::ok(format!("found {KEY}"))]);
    assert!(!leaks(&view.snapshot()), "input, answer and tool results are redacted");

    // A compression whose summary echoes the key.
    let snapshot = session.snapshot();
    let staged = StagedCompression { split_index: 1, summary: format!("summary with {KEY}"), episode_id: "e1".into(), created_at_ms: 1 };
    session.apply_compression(snapshot, staged, None).unwrap();
    assert_eq!(view.memory_service().list_episodes()[0].summary, "summary with <redacted>");

    // An imported state: messages, an episode's summary and its archived originals.
    let mut imported = AgentState::new("imported");
    imported.history.messages = vec![Message::user(format!("old {KEY}")), Message::Assistant { content: Some("ok".into()), tool_calls: vec![], reasoning: None, thinking: Default::default() }];
    imported.history.episodic_memories.push(EpisodicMemory {
        id: "old-1".into(),
        summary: format!("old summary {KEY}"),
        created_at_ms: 0,
        message_count: 1,
        archived_messages: Arc::new(vec![Message::user(format!("archived {KEY}"))]),
    });
    session.import(imported).unwrap();
    let state = view.snapshot();
    assert_eq!(state.history.messages[0], Message::user("old <redacted>"));
    assert_eq!(state.history.episodic_memories[0].archived_messages[0], Message::user("archived <redacted>"));
    assert!(!leaks(&state), "an import is redacted");

    // A child's seeded context.
    session.seed(vec![Message::user(format!("parent said {KEY}"))]);
    assert!(!leaks(&view.snapshot()), "a seeded history is redacted");
}

#[test]
#[allow(clippy::needless_update)] // other branches add fields to ChildUsageSummary
fn arch_2_the_child_usage_sink_redacts_and_appends_only_child_usages() {
    let model = model();
    let cell = SessionState::new(AgentState::new("s"), &model);
    let (sink, view) = (cell.child_usage_sink(), cell.view());
    sink.record(ChildUsageRecord {
        call_id: "d1".into(),
        child_session_id: "s_w_1".into(),
        assignee: format!("worker {KEY}"),
        usage: ChildUsageSummary { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, call_count: 1, ..Default::default() },
        discarded: false,
    });
    let state = view.snapshot();
    assert_eq!(state.child_usages.len(), 1);
    assert_eq!(state.child_usages[0].assignee, "worker <redacted>");
    assert!(state.history.messages.is_empty() && state.usages.is_empty());
    assert_eq!(state.total_usage().children.call_count, 1);
}

#[test]
fn arch_2_core_4_the_input_is_taken_back_only_while_it_is_the_last_message() {
    let session = session(AgentState::new("s"));
    let first = session.push_input("r2", "first").unwrap();
    assert!(session.take_back(&first));
    assert_eq!(session.message_count(), 0);
    assert!(!session.take_back(&first), "taken back once");
    let second = session.push_input("r3", "second").unwrap();
    session.push_answer(Message::Assistant { content: Some("answered".into()), tool_calls: vec![], reasoning: None, thinking: Default::default() }, None, &Default::default());
    assert!(!session.take_back(&second), "an answered input stays");
    assert_eq!(session.message_count(), 2);
}

#[test]
fn arch_2_core_2_answers_get_unique_call_ids_and_usages_every_call() {
    let session = session(AgentState::new("s"));
    session.push_input("r4", "go").unwrap();
    let answer = Message::Assistant { content: None, tool_calls: vec![call("dup", "{}"), call("dup", "{}"), call("", "{}")], reasoning: None, thinking: Default::default() };
    let usage = ModelUsage { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, ..Default::default() };
    let first = session.push_answer(answer, Some(&usage), &Default::default());
    let ids: Vec<&str> = first.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids[0], "dup");
    assert!(ids.iter().all(|id| !id.is_empty()) && ids[1] != "dup" && ids[2] != ids[1], "{ids:?}");
    session.push_tool_results(&first.tool_calls, vec![ToolResult::ok("a"), ToolResult::ok("b"), ToolResult::ok("c")]);
    // An id already in the history is replaced too.
    let again = session.push_answer(Message::Assistant { content: None, tool_calls: vec![call("dup", "{}")], reasoning: None, thinking: Default::default() }, None, &Default::default());
    assert_ne!(again.tool_calls[0].id, "dup");
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&session.snapshot().history.messages[..5]));
    session.record_unreported_usage(None);
    let usages = session.snapshot().usages.clone();
    assert_eq!(usages.len(), 3, "reported, unreported answer, cut-off call");
    assert!(usages[1..].iter().all(|u| u.source_name() == Some(UNREPORTED_USAGE_SOURCE)));
}

#[test]
fn arch_2_next_request_hands_over_body_counts_size_and_message_count() {
    let session = session(AgentState::new("s"));
    session.push_input("r5", "how is the weather in Hangzhou?").unwrap();
    let (size, source) = session.next_prompt_size();
    let request = session.next_request();
    assert!(request.body.contains("how is the weather in Hangzhou?") && request.body.contains("You help."));
    assert_eq!(request.message_count, 1);
    assert_eq!((request.prompt_size, request.prompt_size_source), (size, source));
    assert_eq!(source, PromptSizeSource::Estimate);
    assert!(request.counts.total() > 0 && size >= request.counts.total() / 2, "{size} vs {:?}", request.counts);
    assert_eq!(*request.body, session.body_from_scratch(&session.snapshot()), "the cached body is the from-scratch one");
    drop(request);
    // After a reported usage the provider's count decides (CMP-3).
    let usage = ModelUsage { prompt_tokens: 5000, completion_tokens: 2, total_tokens: 5002, ..Default::default() };
    session.push_answer(Message::Assistant { content: Some("sunny".into()), tool_calls: vec![], reasoning: None, thinking: Default::default() }, Some(&usage), &Default::default());
    session.push_input("r6", "and tomorrow?").unwrap();
    let request = session.next_request();
    assert_eq!(request.message_count, 3);
    assert_eq!(request.prompt_size_source, PromptSizeSource::Provider);
    assert!(request.prompt_size > 5000);
}

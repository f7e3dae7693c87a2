//! Issue 28 item 7 through the public Rust API: `run_decomposed` is a run like any other
//! for observers (CORE-5, ISO-7): `run_started` first (its input: the task descriptions,
//! one per line), every child's events in between, `run_finished` last with the status,
//! no model calls of its own and the job's usage (its children's).

use std::sync::Arc;
use std::time::Duration;

use arkagent::runtime::DelegationConfig;
use arkagent::subagent::DecomposedTask;
use arkagent::{AgentEvent, AgentRuntime, AgentRuntimeConfig, EventKind, RunStatus, SequentialIdGenerator};

use crate::support::*;

fn config() -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.session_id = Some("parent".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.delegation = Some(DelegationConfig { allow_clone: true, ..Default::default() });
    c
}

fn tasks(n: usize) -> Vec<DecomposedTask> {
    (0..n).map(|i| DecomposedTask { assignee: "clone".into(), task_description: format!("task {i}"), role: None, context: None }).collect()
}

/// The parent's own events (not its children's, which come wrapped as `sub_agent`).
fn own(events: &[AgentEvent]) -> Vec<AgentEvent> {
    events.iter().filter(|e| e.session_id == "parent").cloned().collect()
}

#[tokio::test]
async fn core_5_iso_7_run_decomposed_starts_with_run_started_and_ends_with_run_finished() {
    let rt = AgentRuntime::new(config(), ScriptedModel::with(|_, _| text_reply("child answer", 20))).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());
    let results = rt.run_decomposed(&tasks(3), 2).await.unwrap();
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");
    let events = own(&recorder.0.lock().unwrap());
    let (first, last) = (events.first().unwrap(), events.last().unwrap());
    assert_eq!(first.kind, EventKind::RunStarted { input: "task 0\ntask 1\ntask 2".into() });
    let children = rt.total_usage().children;
    assert_eq!(children.call_count, 3);
    assert_eq!(last.kind, EventKind::RunFinished { status: RunStatus::Completed, iterations: 0, error_code: None, usage: children });
    let types: Vec<&str> = events.iter().map(|e| e.kind.type_name()).collect();
    assert_eq!(types.iter().filter(|t| **t == "run_started" || **t == "run_finished").count(), 2, "{types:?}");
    assert!(types[1..types.len() - 1].iter().all(|t| *t == "sub_agent"), "every child event in between: {types:?}");
    for e in &events {
        assert_eq!(e.run_id, first.run_id, "one run id");
        if let EventKind::SubAgent(child) = &e.kind {
            assert_eq!(child.parent_run_id, first.run_id);
        }
    }
    // A second job is a second run.
    rt.run_decomposed(&tasks(1), 1).await.unwrap();
    let events = own(&recorder.0.lock().unwrap());
    let starts: Vec<&AgentEvent> = events.iter().filter(|e| e.kind.type_name() == "run_started").collect();
    assert_eq!(starts.len(), 2);
    assert_ne!(starts[0].run_id, starts[1].run_id);
    assert!(matches!(&events.last().unwrap().kind, EventKind::RunFinished { usage, .. } if usage.call_count == 1), "its own usage");
}

#[tokio::test]
async fn core_5_iso_7_a_cancelled_run_decomposed_ends_with_run_finished_cancelled() {
    let rt = AgentRuntime::new(config(), ScriptedModel::with(|_, _| Reply::Hang)).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());
    let registry = rt.sub_agent_registry().unwrap();
    let job = tokio::spawn(rt.start_run_decomposed(tasks(2), 2).unwrap());
    for _ in 0..1000 {
        if registry.stats().active == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(rt.cancel());
    let results = job.await.unwrap().unwrap();
    assert!(results.iter().all(|r| r.error_code.as_deref() == Some("cancelled")), "{results:?}");
    let events = own(&recorder.0.lock().unwrap());
    assert_eq!(events.first().unwrap().kind.type_name(), "run_started");
    let last = &events.last().unwrap().kind;
    assert!(matches!(last, EventKind::RunFinished { status: RunStatus::Cancelled, iterations: 0, error_code: None, .. }), "{last:?}");
}

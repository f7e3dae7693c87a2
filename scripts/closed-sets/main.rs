//! Prints what crosses to ArkTS, read from the Rust code itself — never from a second,
//! hand-kept list — as JSON:
//!
//! ```text
//! {"sets":[{"name":"ErrorCode","doc":"…","source":"…","values":["invalid_config",…]},…],
//!  "records":{"roots":[{"rust":"ModelUsage","ts":"ModelUsage"},…],"defs":{…JSON Schema…}}}
//! ```
//!
//! - `sets`: the closed sets of strings (STYLE rule 15, ARCH-2), from the Rust enums.
//! - `records` (BND-2): the records handed to the app (event payloads, usages, sums, run
//!   and compression results, sub-agent records, session summaries) as the JSON Schema of
//!   their Rust types (schemars, the core's `schema` feature), docs included; `roots`
//!   names each record's ArkTS interface.
//!
//! scripts/gen-dts.js runs it (`cargo run -q -p arkagent-closed-sets`) and writes each set
//! into index.d.ts as a string-literal union type and each record as an interface (and the
//! records' C document, include/JSON-SHAPES.md); tests/js/dts_closed_sets.test.js compares
//! the unions of the committed d.ts with this output both ways.
//!
//! Enums with serde derives are read through serde itself: a probe deserialization of a
//! string no variant has makes the derived code report every variant name it accepts
//! (`de::Error::unknown_variant`), i.e. exactly the strings it serializes. Other enums
//! give their `ALL` list and `as_str`.
//!
//! Adding a union (e.g. `ChildEnding`, `WireFormat`): one line in [`sets`]; then type the
//! member that carries it with the union's name in its ts block and in the `#[napi]`
//! attribute (`ts_type` / `ts_return_type`, so that scripts/dts-signatures.js sees the same
//! type) and run scripts/regen.sh (Index.ets's export list and the keep rules follow).
//! Adding a record: derive `schemars::JsonSchema` under the `schema` feature on the type
//! (and the types it holds), one line in [`records`], return it from the N-API crate
//! through `records::to_js`, run scripts/regen.sh.

use std::fmt;
use std::process::ExitCode;

use arkagent::compress::{CompressOutcome, CompressReason, PromptSizeSource};
use arkagent::{CompressionTrigger, ErrorCode, EventKind, RunStatus};
use serde::de::value::{MapDeserializer, StrDeserializer};
use serde::de::{self, DeserializeOwned};
use serde::Serialize;

// The N-API module's own codes: the file is plain Rust, compiled here as it is there.
#[allow(dead_code)] // `to_owned_code` serves the module only
#[path = "../../bindings/napi/src/codes.rs"]
mod codes;

use codes::ModuleCode;

/// One closed set: a union type of index.d.ts.
#[derive(Serialize)]
struct ClosedSet {
    /// The union's name in index.d.ts.
    name: &'static str,
    /// What the strings are (the union's doc comment).
    doc: &'static str,
    /// The Rust enum(s) the values come from (named in the doc comment).
    source: &'static str,
    /// The strings, in the enum's declaration order.
    values: Vec<&'static str>,
}

/// Every union of index.d.ts generated from a Rust enum, in d.ts order.
fn sets() -> Result<Vec<ClosedSet>, String> {
    Ok(vec![
        set(
            "ErrorCode",
            "A stable error code: the `code` of every Error the module throws or rejects with.",
            "enums `arkagent::ErrorCode` (src/error/code.rs: the library's codes) and `ModuleCode` \
             (bindings/napi/src/codes.rs: the module's own)",
            ErrorCode::ALL.iter().map(|c| c.as_str()).chain(ModuleCode::ALL.iter().map(|c| c.as_str())).collect(),
        ),
        set(
            "EventType",
            "The `type` of an AgentEvent, and of its payloadJson: one per kind of event, each with \
             its payload interface (RunStartedPayload, …; see AgentEvent).",
            "enum `arkagent::EventKind` (src/runtime/events.rs; the serde tag of each variant)",
            serde_variants::<EventKind>()?,
        ),
        set(
            "CompressOutcomeKind",
            "What a compression attempt did: CompressResult.outcome, CompressOutcome.outcome and \
             the \"compression\" event's outcome.",
            "enum `arkagent::compress::CompressOutcome` (src/compress/compressor.rs)",
            serde_variants::<CompressOutcome>()?,
        ),
        set(
            "CompressReason",
            "Why a compression attempt ended as it did (CMP-2): CompressResult.reason and the \
             \"compression\" event's reason.",
            "enum `arkagent::compress::CompressReason` (src/compress/compressor.rs; `code()`)",
            reason_codes()?,
        ),
        set(
            "CompressionTrigger",
            "What started a compression attempt: the \"compression\" event's trigger.",
            "enum `arkagent::CompressionTrigger` (src/runtime/outcome.rs)",
            serde_variants::<CompressionTrigger>()?,
        ),
        set(
            "PromptSizeSource",
            "Which figure decided a prompt's size (CMP-12): the \"model_request\" event's \
             prompt_size_source.",
            "enum `arkagent::compress::PromptSizeSource` (src/compress/calibration.rs)",
            serde_variants::<PromptSizeSource>()?,
        ),
        set(
            "RunStatus",
            "How a run ended: RunResult.status (\"completed\", \"cancelled\", \"max_iterations\") \
             and the \"run_finished\" event's status (also \"failed\").",
            "enum `arkagent::RunStatus` (src/runtime/outcome.rs)",
            serde_variants::<RunStatus>()?,
        ),
        set(
            "ImageTokenRule",
            "A model family's rule for an image's tokens (IMG-3): ModelConfig.imageTokens.",
            "enum `arkagent::history::ImageTokenRule` (src/history/image_rule.rs; `as_str`)",
            arkagent::history::ImageTokenRule::ALL.iter().map(|r| r.as_str()).collect(),
        ),
        set(
            "ImageMimeType",
            "An image's type (IMG-1): ContentPart.image()'s mimeType, ImageInfo.mimeType.",
            "enum `arkagent::history::ImageMime` (src/history/image.rs; `as_str`)",
            arkagent::history::ImageMime::ALL.iter().map(|m| m.as_str()).collect(),
        ),
        set(
            "ImageDetail",
            "How closely the model looks at an image (OpenAI's detail; other formats ignore it).",
            "enum `arkagent::history::ImageDetail` (src/history/image.rs)",
            serde_variants::<arkagent::history::ImageDetail>()?,
        ),
        set(
            "SubAgentStatus",
            "Where a sub-agent's record stands (ISO-4): SubAgentContext.status.",
            "enum `arkagent::subagent::SubAgentStatus` (src/subagent/context.rs)",
            serde_variants::<arkagent::subagent::SubAgentStatus>()?,
        ),
        set(
            "ChildStatus",
            "How a delegated child ended, in short (SUB-8): DecomposedResult.status and the \
             delegate_task result metadata's status.",
            "`arkagent::subagent::ChildEnding::STATUSES` (src/subagent/ending.rs; `status()`)",
            arkagent::subagent::ChildEnding::STATUSES.to_vec(),
        ),
        set(
            "ChildEnding",
            "How a delegated child ended (SUB-8, ISO-5): the library's forcedReason values (a host \
             may force-complete with a reason of its own), the delegate_task metadata's reason, \
             and the code of a forced child's tool error.",
            "enum `arkagent::subagent::ChildEnding` (src/subagent/ending.rs; `as_str`)",
            arkagent::subagent::ChildEnding::ALL.iter().map(|e| e.as_str()).collect(),
        ),
        set(
            "WireFormat",
            "A provider protocol (WIRE-1): ModelConfig.wireFormat — one name per protocol the \
             library registers.",
            "`arkagent::llm::wire_format_names()` (the protocols' names in `REGISTRY`, \
             src/llm/format/mod.rs)",
            arkagent::llm::wire_format_names().collect(),
        ),
        set(
            "UsageSource",
            "Where a usage came from when it is not a plain model call (BND-1): ModelUsage.source.",
            "enum `arkagent::history::UsageSource` (src/history/usage.rs; `as_str`)",
            arkagent::history::UsageSource::ALL.iter().map(|s| s.as_str()).collect(),
        ),
        set(
            "Provider",
            "A model's provider (THINK-4): ModelConfig.provider — how thinking is switched and what \
             a thinking model refuses (README, \"Thinking models\").",
            "enum `arkagent::llm::Provider` (src/llm/thinking.rs; `as_str`)",
            arkagent::llm::Provider::ALL.iter().map(|p| p.as_str()).collect(),
        ),
        set(
            "ThinkingEffort",
            "An effort level of a thinking model (THINK-4): ThinkingLevel.effort.",
            "enum `arkagent::llm::Effort` (src/llm/thinking.rs; `as_str`)",
            arkagent::llm::Effort::ALL.iter().map(|e| e.as_str()).collect(),
        ),
        set(
            "ReasoningReplay",
            "Which earlier reasoning goes back in later requests (THINK-2): \
             ModelConfig.reasoningReplay.",
            "enum `arkagent::llm::ReasoningReplay` (src/llm/thinking.rs; `as_str`)",
            arkagent::llm::ReasoningReplay::ALL.iter().map(|r| r.as_str()).collect(),
        ),
        set(
            "McpServerState",
            "What happened to an MCP server at a run's start (MCP-3): the \"mcp_server\" event's \
             state.",
            "enum `arkagent::mcp::McpServerState` (src/mcp/hub.rs)",
            serde_variants::<arkagent::mcp::McpServerState>()?,
        ),
        set(
            "McpErrorCode",
            "Why an MCP server failed (MCP-3): the \"mcp_server\" event's errorCode, and the code of \
             a tool error the model reads from one of its tools.",
            "enum `arkagent::mcp::McpErrorCode` (src/mcp/mod.rs; `as_str`)",
            arkagent::mcp::McpErrorCode::ALL.iter().map(|c| c.as_str()).collect(),
        ),
    ])
}

fn set(name: &'static str, doc: &'static str, source: &'static str, values: Vec<&'static str>) -> ClosedSet {
    ClosedSet { name, doc, source, values }
}

/// The reason codes as the module hands them to JS (`CompressReason::code`), checked
/// against the serde names, which the events carry.
fn reason_codes() -> Result<Vec<&'static str>, String> {
    let names = serde_variants::<CompressReason>()?;
    for name in &names {
        let reason: CompressReason =
            serde_json::from_value(serde_json::Value::String((*name).to_owned())).map_err(|e| e.to_string())?;
        if reason.code() != *name {
            return Err(format!("CompressReason {name:?} serializes differently from its code() {:?}", reason.code()));
        }
    }
    Ok(names)
}

/// How a probe deserialization ends: with the variant names serde's derive accepts, or
/// with another error.
#[derive(Debug)]
enum Probe {
    Variants(&'static [&'static str]),
    Other(String),
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Variants(v) => write!(f, "variants {v:?}"),
            Self::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Probe {}

impl de::Error for Probe {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::Other(msg.to_string())
    }

    fn unknown_variant(_variant: &str, expected: &'static [&'static str]) -> Self {
        Self::Variants(expected)
    }
}

/// A name no variant has.
const PROBE: &str = "\u{0}closed-sets probe";

/// Every variant name a serde-derived enum accepts (and serializes), in declaration
/// order: a unit-variant enum is probed as a string, an internally tagged one
/// (`#[serde(tag = "type")]`) as a map holding its tag.
fn serde_variants<T: DeserializeOwned>() -> Result<Vec<&'static str>, String> {
    let name = std::any::type_name::<T>();
    if let Err(Probe::Variants(v)) = T::deserialize(StrDeserializer::<Probe>::new(PROBE)) {
        return Ok(v.to_vec());
    }
    match T::deserialize(MapDeserializer::<_, Probe>::new([("type", PROBE)].into_iter())) {
        Err(Probe::Variants(v)) => Ok(v.to_vec()),
        Err(Probe::Other(message)) => Err(format!("{name}: the probe did not list the variants: {message}")),
        Ok(_) => Err(format!("{name}: accepted the probe {PROBE:?}")),
    }
}

/// One record that crosses to the app (BND-2): its Rust type's name in `defs` and the
/// name of its ArkTS interface.
#[derive(Serialize)]
struct Record {
    rust: String,
    ts: &'static str,
}

/// The crossing records and the JSON Schema of every type they use (`defs`, keyed by the
/// Rust type's name), as they are serialized (optional fields are the skipped ones).
fn records() -> Result<serde_json::Value, String> {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut roots = Vec::new();
    let mut root = |rust: schemars::Schema, ts: &'static str| -> Result<(), String> {
        let reference = rust.get("$ref").and_then(serde_json::Value::as_str).ok_or_else(|| format!("{ts}: not a named type"))?;
        roots.push(Record { rust: reference.trim_start_matches("#/$defs/").to_owned(), ts });
        Ok(())
    };
    root(generator.subschema_for::<arkagent::EventKind>(), "EventPayload")?;
    root(generator.subschema_for::<arkagent::ModelUsage>(), "ModelUsage")?;
    root(generator.subschema_for::<arkagent::Cost>(), "Cost")?;
    root(generator.subschema_for::<arkagent::history::ChildUsageSummary>(), "ChildUsageSummary")?;
    root(generator.subschema_for::<arkagent::history::UsageTotals>(), "UsageTotals")?;
    root(generator.subschema_for::<arkagent::RunOutcome>(), "RunResult")?;
    root(generator.subschema_for::<arkagent::compress::CompressResult>(), "CompressResult")?;
    root(generator.subschema_for::<arkagent::RewindResult>(), "RewindResult")?;
    root(generator.subschema_for::<arkagent::subagent::SubAgentContext>(), "SubAgentContext")?;
    root(generator.subschema_for::<arkagent::subagent::SubAgentStats>(), "SubAgentStats")?;
    root(generator.subschema_for::<arkagent::subagent::RegistrySnapshot>(), "SubAgentRegistryView")?;
    root(generator.subschema_for::<arkagent::store::SessionSummary>(), "SessionSummary")?;
    root(generator.subschema_for::<arkagent::compress::ImageEstimate>(), "ImageEstimate")?;
    let defs = generator.take_definitions(true);
    Ok(serde_json::json!({ "roots": roots, "defs": defs }))
}

fn main() -> ExitCode {
    let printed = sets().and_then(|sets| {
        for s in &sets {
            if s.values.is_empty() {
                return Err(format!("{}: no values", s.name));
            }
        }
        let records = records()?;
        serde_json::to_string_pretty(&serde_json::json!({ "sets": sets, "records": records })).map_err(|e| e.to_string())
    });
    match printed {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("closed-sets: {message}");
            ExitCode::FAILURE
        }
    }
}

//! # arkagent
//!
//! The native core of an agent runtime for HarmonyOS apps. It runs an LLM conversation
//! with tools ([`AgentRuntime`]), talks to OpenAI-compatible providers through an HTTP
//! transport the host app supplies ([`HttpTransport`]), and keeps the history in a shape
//! every provider accepts: each assistant tool call answered by exactly one tool result
//! ([`HistoryInvariants`]).
//!
//! Runs on Tokio: await the runtime's futures inside a Tokio runtime with the time driver
//! enabled (`#[tokio::main]`, or a builder with `enable_time()`/`enable_all()`); request
//! timeouts and retry backoff use Tokio timers. The C ABI and the N-API module bring
//! their own executor.
//!
//! The same core is exposed to C through the `arkagent-c` crate under `bindings/c`
//! (`include/arkagent.h`) and to ArkTS / Node.js through the `arkagent-napi` crate under
//! `bindings/napi`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use arkagent::{AgentRuntime, AgentRuntimeConfig, ModelConfig};
//! # async fn demo(transport: Arc<dyn arkagent::HttpTransport>) -> Result<(), arkagent::ArkAgentError> {
//! let model = ModelConfig::new("https://api.deepseek.com/v1", "sk-...", "deepseek-v4-flash");
//! let runtime = AgentRuntime::new(AgentRuntimeConfig::new(model), transport)?;
//! let outcome = runtime.run("What is 2 + 2?").await?;
//! println!("{:?}", outcome.final_text);
//! # Ok(()) }
//! ```

pub mod compress;
pub mod error;
/// REL-3's fuzz checks, behind the non-default `fuzzing` feature (the fuzz crate and the
/// tests enable it); not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod history;
pub mod hilog;
pub mod ids;
pub mod llm;
pub mod mcp;
pub mod memory;
pub mod runtime;
pub mod session;
pub mod store;
pub mod subagent;
pub mod tools;

pub use error::{ArkAgentError, ErrorCode};
pub use history::{AgentState, Content, ContentPart, Cost, History, HistoryInvariants, ImageData, ImagePart, Message, ModelPrice, ModelUsage, ToolCall};
pub use llm::{
    BodyStream, ChatClient, ChatRequest, ChatResponse, HttpBody, HttpRequest, HttpResponse,
    HttpTransport, LlmError, ModelConfig, TransportError,
};
pub use memory::EpisodicMemory;
pub use runtime::{
    AgentEvent, AgentObserver, AgentRuntime, AgentRuntimeConfig, Clock, Compression, CompressionTrigger, EventKind, IdGenerator,
    RewindResult, RunOutcome, RunStatus, SequentialIdGenerator, Subscription, SystemClock,
};
#[cfg(feature = "sqlite")]
pub use store::SqliteStore;
pub use store::{InMemorySessionStore, SessionStore, SessionSummary, StoreError};
pub use tools::{
    ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult,
};

/// The README's Rust quickstart, compiled as a doc test so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// Re-exported so hosts can build cancellation tokens for [`HttpTransport::send`].
pub use tokio_util::sync::CancellationToken;

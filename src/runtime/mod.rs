//! The agent runtime (layer L9): configuration, the run loop over a
//! [`Session`](crate::session::Session), the ways to start it, cancellation, events and
//! observers, tool execution, and delegation to child runtimes. The id generator and clock
//! live on the ground ([`crate::ids`]) and are re-exported here.

mod agent;
mod approval;
mod approval_hub;
mod run_loop;
mod build;
mod child_run;
mod compression_step;
mod config;
mod delegation;
mod events;
mod gestures;
mod image_codec;
mod import_export;
mod inspect;
mod mcp_point;
mod memory_report;
mod outcome;
mod run_usage;
mod start;
mod tool_exec;
mod worker_config;

pub use agent::{AgentRuntime, COMPRESSION_BACKOFF_MODEL_CALLS};
pub use outcome::{CompressionTrigger, PendingApproval, RunOutcome, RunStatus};
pub use start::RunSlot;
pub use image_codec::{codec_request, estimate_prepared_image_tokens, ImageCodec, ImageCodecRequest};
pub use crate::session::RewindResult;
pub use config::{
    AgentRuntimeConfig, Compression, DelegationConfig, SubAgentDefinition, SubAgentFactory, DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_PARALLEL_TOOLS,
};
pub use worker_config::{delegate_task_definition, force_worker_config, named_worker_start};
pub use events::{AgentEvent, AgentObserver, EventKind, SubAgentChildEvent, Subscription};
pub use memory_report::MemoryReport;
pub use crate::ids::{Clock, DefaultIdGenerator, IdGenerator, ManualClock, SequentialIdGenerator, SystemClock};

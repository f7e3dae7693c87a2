//! The agent runtime: configuration, the run loop, cancellation, events and observers,
//! and the injectable id generator and clock.

mod agent;
mod config;
mod events;
mod memory_report;
mod tool_exec;

pub use agent::{AgentRuntime, CompressionTrigger, RunOutcome, RunSlot, RunStatus, COMPRESSION_BACKOFF_MODEL_CALLS};
pub use config::{AgentRuntimeConfig, Compression, DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_PARALLEL_TOOLS};
pub use events::{AgentEvent, AgentObserver, EventKind, Subscription};
pub(crate) use agent::StateCell;
pub(crate) use events::Emitter;
pub use memory_report::MemoryReport;
pub use crate::ids::{Clock, DefaultIdGenerator, IdGenerator, ManualClock, SequentialIdGenerator, SystemClock};

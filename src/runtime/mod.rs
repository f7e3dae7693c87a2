//! The agent runtime: configuration, the run loop, cancellation, events and observers,
//! and the injectable id generator and clock.

mod agent;
mod build;
mod compression_step;
mod config;
mod delegation;
mod delegation_config;
mod events;
mod import_export;
mod inspect;
mod memory_report;
mod start;
mod tool_exec;

pub use agent::{AgentRuntime, CompressionTrigger, RunOutcome, RunStatus, COMPRESSION_BACKOFF_MODEL_CALLS};
pub use start::RunSlot;
pub use config::{AgentRuntimeConfig, Compression, DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_PARALLEL_TOOLS};
pub use delegation_config::{delegate_task_definition, force_worker_config, DelegationConfig, SubAgentDefinition, SubAgentFactory};
pub use events::{AgentEvent, AgentObserver, EventKind, SubAgentChildEvent, Subscription};
pub use memory_report::MemoryReport;
pub use crate::ids::{Clock, DefaultIdGenerator, IdGenerator, ManualClock, SequentialIdGenerator, SystemClock};

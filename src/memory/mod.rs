//! Transactional context compression into episodic memory, and reading it back
//! (seed 000 §2–3: CMP-*, MEM-1..MEM-3).

mod calibration;
mod compressor;
mod default_compressor;
mod episode;
mod estimate;
mod foreign;
mod namespaced;
mod retrieve;
mod service;
mod snapshot;
mod split;

pub use compressor::{
    apply_compression, CompressContext, CompressOutcome, CompressReason, CompressResult, ContextCompressor,
    StagedCompression, COMPRESSION_USAGE_SOURCE,
};
pub use default_compressor::{
    default_summarizer_window, ContextCompressorConfig, DefaultContextCompressor, DEFAULT_SUMMARY_PROMPT, MIN_DEFAULT_SUMMARIZER_WINDOW,
};
pub use calibration::{
    PromptSizeSource, TokenCalibration, TokenCalibrations, TokenCounts, MAX_CALIBRATION_FACTOR, MIN_CALIBRATION_FACTOR,
};
pub use episode::{first_invalid_episode_id, validate_episodic_memory_ids, EpisodicMemory};
pub use estimate::{
    count_message_tokens, count_request_tokens, count_tokens, estimate_message_tokens, estimate_request_tokens, estimate_tokens,
};
pub use foreign::{foreign_compressor_state_json, ForeignCompression, ForeignCompressor, ForeignCompressorCall};
pub use namespaced::{MemoryTier, NamespaceStats, NamespacedMemoryStore, ScopedMemory, GLOBAL_NAMESPACE};
pub use retrieve::{retrieve_memory_definition, RetrieveMemoryTool, DEFAULT_MEMORY_LIMIT, MAX_MEMORY_LIMIT, RETRIEVE_MEMORY_TOOL_NAME};
pub use service::{MemoryService, RuntimeMemoryService};
pub use snapshot::SNAPSHOT_SECTIONS;
pub use split::compute_safe_split_index;

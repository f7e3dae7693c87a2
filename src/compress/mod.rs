//! Transactional context compression into episodic memory (seed 000 §2: CMP-*): the
//! token estimate and its calibration, the safe split index, the [`ContextCompressor`]
//! interface with its staged result and atomic commit, the default compressor (whose
//! summarizer reuses the conversation's request bytes when it is the conversation's
//! model, COST-3, through [`ConversationPrefix`]) and a foreign (host) one.

mod calibration;
mod compressor;
mod conversation;
mod default_compressor;
mod estimate;
mod foreign;
mod prefix;
mod sizer;
mod image_tokens;
mod split;

pub(crate) use compressor::{archive, drop_unbound_thinking};
pub use compressor::{
    apply_compression, CompressContext, CompressOutcome, CompressReason, CompressResult, ContextCompressor,
    StagedCompression, COMPRESSION_USAGE_SOURCE,
};
pub use default_compressor::{
    default_summarizer_window, ContextCompressorConfig, DefaultContextCompressor, DEFAULT_SUMMARY_PROMPT, DEFAULT_TOTAL_TOKEN_THRESHOLD,
    MIN_DEFAULT_SUMMARIZER_WINDOW,
};
pub use calibration::{
    PromptSizeSource, TokenCalibration, TokenCalibrations, TokenCounts, MAX_CALIBRATION_FACTOR, MIN_CALIBRATION_FACTOR,
};
pub use estimate::{
    Counting,
    count_message_tokens, count_message_tokens_for, count_request_tokens, count_request_tokens_for, count_tokens, estimate_message_tokens,
    estimate_request_tokens, estimate_tokens,
};
pub use image_tokens::{estimate_image_tokens, image_part_tokens, image_plan, image_tokens, ImageEstimate};
pub use foreign::{foreign_compressor_state_json, ForeignCompression, ForeignCompressor, ForeignCompressorCall};
pub use conversation::ConversationPrefix;
pub use split::compute_safe_split_index;

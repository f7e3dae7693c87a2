//! Messages, the history with its invariants, token usage, episode and calibration
//! records, and the agent state.

pub(crate) mod calibration;
mod episode;
mod child_usage;
mod content;
mod cost;
mod image;
mod image_header;
mod image_mime;
mod image_rule;
mod invariants;
mod message;
mod pending;
mod price;
mod runs;
mod state;
mod thinking;
mod usage;

pub use calibration::{TokenCalibration, TokenCalibrations};
pub use episode::{first_invalid_episode_id, validate_episodic_memory_ids, EpisodicMemory, MemoryService};
pub use child_usage::{ChildUsageRecord, ChildUsageSummary, UsageTotals};
pub use cost::{add_cost, Cost, NANOS_PER_UNIT};
pub use price::{ModelPrice, MAX_CURRENCY_LEN, MAX_PRICE_PER_MILLION};
pub use invariants::HistoryInvariants;
pub use content::{Content, ContentPart};
pub use image::{content_id, tiny_png, ImageData, ImageDetail, ImageMime, ImagePart, ImageSource};
pub use image_rule::{ImageTokenRule, MAX_IMAGE_PIXELS};
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub use image_header::fixtures as image_fixtures;
pub use message::{Message, ToolCall};
pub use pending::{PendingCall, PendingCallState, PendingTurn};
pub use runs::RunMark;
pub use state::{AgentState, History, STATE_FORMAT_VERSION};
pub use thinking::{ThinkingBlock, ThinkingBlocks};
pub(crate) use thinking::{slots, OrderRecorder, Slot};
pub use usage::{ModelUsage, UsageSource, UNREPORTED_USAGE_SOURCE};

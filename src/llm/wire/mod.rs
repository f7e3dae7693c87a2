//! The Chat Completions wire shapes, shared by the codec (`openai`), the stream parser
//! (`stream`) and the runtime's encoding cache, so none of them imports another (STYLE
//! rule 12): the typed request structs and their encoders (PERF-1, PERF-7), and the typed
//! response and chunk shapes with their lenient JSON readers (LLM-2).
//!
//! Everything here sits below the codec: it depends only on the request types
//! ([`ChatRequest`](super::ChatRequest)), the model config and [`LlmError`](crate::error::LlmError).

mod chunk;
mod encode;
mod lenient;
mod parts;
mod response;
mod thinking;

pub(crate) use chunk::{ChunkWire, DeltaWire, ToolCallDeltaWire};
pub use encode::{append_message, encode_body, encode_message, encode_system, replay_of, BodyTemplate};
pub(crate) use encode::encode_in_turn;
pub(crate) use parts::ToolImageCarrier;
pub(crate) use lenient::{Args, Count, Fields, First, List, Obj, Skip, Text};
pub(crate) use response::{finish_message, json_error, CallWire, ChoiceWire, CompletionWire, UsageWire};
pub(crate) use thinking::{thinking_conflict, thinking_fields, OWNED_FIELDS};

//! What the protocols share, named after none of them (BND-3): the lenient JSON readers
//! their response shapes are made of (`lenient`), the assistant message their parsers
//! build and the JSON error they report (`answer`), and the classification of HTTP
//! errors, `Retry-After` and error bodies (`classify`). Sits below every protocol; imports
//! only `transport` (for a response's headers), the ground and `history`.

mod answer;
mod classify;
mod lenient;

pub(crate) use answer::{finish_message, json_error};
pub use classify::{classify_error_object, classify_http_error, classify_status, parse_retry_after, retry_after_ms};
pub(crate) use classify::MAX_ERROR_BODY_BYTES;
pub(crate) use lenient::{Args, Count, Fields, First, IsNull, List, Obj, Skip, Text};

//! Wire shapes of one `chat.completion.chunk` of a streamed answer (LLM-2), read by the
//! stream parser. Strings borrow from the event data when they have no escapes, so the
//! common text delta costs one allocation (the delta handed out) or none. The
//! structural fields are strict (a chunk whose `choices` is not an array fails); text,
//! usage and arguments are read like the whole-body parser reads them (`Text`,
//! `UsageWire`, `Args`): a text field of another type is ignored, not fatal.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::response::UsageWire;
use crate::llm::common::{Args, Obj, Text};

#[derive(Deserialize)]
pub(crate) struct ChunkWire<'a> {
    #[serde(default, borrow)]
    pub(crate) choices: Option<Vec<ChunkChoiceWire<'a>>>,
    /// Typed; a value that is not an object is checked as JSON and ignored.
    #[serde(default)]
    pub(crate) usage: Option<Obj<UsageWire>>,
    /// A cold path (an error in a 200 stream): kept as a tree for the classifier.
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

#[derive(Deserialize)]
pub(crate) struct ChunkChoiceWire<'a> {
    #[serde(default)]
    pub(crate) index: Option<u32>,
    #[serde(default, borrow)]
    pub(crate) delta: Option<DeltaWire<'a>>,
    #[serde(default, borrow)]
    pub(crate) finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(crate) usage: Option<Obj<UsageWire>>,
}

#[derive(Deserialize)]
pub(crate) struct DeltaWire<'a> {
    #[serde(default, borrow)]
    pub(crate) content: Text<'a>,
    #[serde(default, borrow)]
    pub(crate) reasoning_content: Text<'a>,
    #[serde(default, borrow)]
    pub(crate) reasoning: Text<'a>,
    #[serde(default, borrow)]
    pub(crate) tool_calls: Option<Vec<ToolCallDeltaWire<'a>>>,
}

#[derive(Deserialize)]
pub(crate) struct ToolCallDeltaWire<'a> {
    #[serde(default)]
    pub(crate) index: Option<u32>,
    #[serde(default, borrow)]
    pub(crate) id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(crate) function: Option<FunctionDeltaWire<'a>>,
}

#[derive(Deserialize)]
pub(crate) struct FunctionDeltaWire<'a> {
    #[serde(default, borrow)]
    pub(crate) name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(crate) arguments: Option<Args<'a>>,
}

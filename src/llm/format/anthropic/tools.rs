//! WIRE-1 on Anthropic Messages: the cache breakpoint marker, the tools array (its last
//! tool a breakpoint) and the tool choice (`required` is Anthropic's `any`).

use serde::ser::Serializer;
use serde::Serialize;
use serde_json::Value;

use crate::llm::request::ToolChoice;
use crate::tools::ToolDefinition;

/// A block's `cache_control`.
#[derive(Serialize, Clone, Copy)]
pub(super) struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// An automatic cache breakpoint (`{"type":"ephemeral"}`).
pub(super) const BREAKPOINT: Option<CacheControl> = Some(CacheControl { kind: "ephemeral" });

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The tools array; the last tool is a cache breakpoint.
pub(super) struct Tools<'a>(pub(super) &'a [ToolDefinition]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let last = self.0.len().saturating_sub(1);
        serializer.collect_seq(self.0.iter().enumerate().map(|(i, t)| Tool {
            name: &t.name,
            description: &t.description,
            input_schema: &t.parameters,
            cache_control: if i == last { BREAKPOINT } else { None },
        }))
    }
}

#[derive(Serialize)]
pub(super) struct WireToolChoice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

pub(super) fn tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    let (kind, name) = match choice {
        ToolChoice::Auto => ("auto", None),
        ToolChoice::None => ("none", None),
        ToolChoice::Required => ("any", None),
        ToolChoice::Function(name) => ("tool", Some(name.as_str())),
    };
    WireToolChoice { kind, name }
}

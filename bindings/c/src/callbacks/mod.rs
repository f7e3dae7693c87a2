//! Host callbacks (HTTP, tools, events) and the completion handles the host finishes
//! requests with (FFI-3): the C types ([`types`]), the HTTP transport and its
//! cancellation ([`transport`]), finishing HTTP requests ([`http_completion`]), host
//! tools ([`tools`]) and events ([`events`]).

mod types;
mod transport;
mod http_completion;
mod tools;
mod events;

pub(crate) use events::{in_host_callback, HostObserver};
pub use http_completion::{arkagent_http_complete, arkagent_http_fail, arkagent_http_stream_begin, arkagent_http_stream_chunk, arkagent_http_stream_end};
pub(crate) use tools::{register_host_tool, register_host_tool_with};
pub use tools::{arkagent_tool_abort_reason, arkagent_tool_complete, arkagent_tool_complete_parts, arkagent_tool_fail, arkagent_tool_on_abort};
pub(crate) use tools::ToolCompletionState;
pub use transport::arkagent_http_is_cancelled;
pub(crate) use transport::HostTransport;
pub(crate) use types::UserData;
pub use types::{
    ArkAgentEventCallback, ArkAgentHttp, ArkAgentHttpCancelCallback, ArkAgentHttpCompletion, ArkAgentHttpHeader, ArkAgentHttpRequest,
    ArkAgentHttpSendCallback, ArkAgentToolAbortCallback, ArkAgentToolCallback, ArkAgentToolCompletion,
};

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

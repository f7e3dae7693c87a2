use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::transport::{HttpBody, HttpRequest, HttpTransport, TransportErrorKind};
use super::{openai, LlmError, ModelConfig};
use crate::history::{Message, ModelUsage};
use crate::tools::ToolDefinition;

/// How the model may use tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This tool.
    Function(String),
}

/// One chat completion request, borrowing the history (no copy per turn).
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// System prompt, sent first when non-empty.
    pub system_prompt: Option<&'a str>,
    /// Extra context messages placed after the system prompt (e.g. memory context).
    pub context_messages: &'a [Message],
    /// The conversation.
    pub messages: &'a [Message],
    /// Tools offered to the model.
    pub tools: &'a [ToolDefinition],
    /// Tool choice; only sent when tools are offered.
    pub tool_choice: Option<&'a ToolChoice>,
}

/// A parsed completion.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The assistant message (text, tool calls, reasoning).
    pub message: Message,
    /// Usage, when the provider reported it.
    pub usage: Option<ModelUsage>,
    /// `finish_reason`, when present.
    pub finish_reason: Option<String>,
}

/// Talks to one model through the host transport.
#[derive(Clone)]
pub struct ChatClient {
    transport: Arc<dyn HttpTransport>,
    config: ModelConfig,
}

impl ChatClient {
    /// A client for `config` over `transport`.
    pub fn new(transport: Arc<dyn HttpTransport>, config: ModelConfig) -> Self {
        Self { transport, config }
    }

    /// The model config.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Builds the HTTP request for `request` (exposed for tests and benchmarks).
    pub fn build_http_request(&self, request: &ChatRequest<'_>) -> HttpRequest {
        let body = openai::build_request_body(&self.config, request).to_string();
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Authorization".to_owned(), format!("Bearer {}", self.config.api_key)),
        ];
        if self.config.stream {
            headers.push(("Accept".to_owned(), "text/event-stream".to_owned()));
        }
        headers.extend(self.config.extra_headers.iter().cloned());
        HttpRequest {
            method: "POST".to_owned(),
            url: self.config.chat_completions_url(),
            headers,
            body,
            stream: self.config.stream,
        }
    }

    /// Sends an already built request and parses the answer. Cancellation wins: once
    /// `cancel` fires the call returns [`LlmError::Cancelled`] without waiting for the host.
    pub async fn send(&self, http: HttpRequest, cancel: &CancellationToken) -> Result<ChatResponse, LlmError> {
        let exchange = async {
            let response = self.transport.send(http, cancel.clone()).await.map_err(|e| match e.kind {
                TransportErrorKind::Timeout => LlmError::Timeout,
                TransportErrorKind::Cancelled => LlmError::Cancelled,
                TransportErrorKind::Network => LlmError::Transport(self.config.redact(&e.message)),
            })?;
            let status = response.status;
            let retry_after = response.header("retry-after").map(str::to_owned);
            let body = match response.body {
                HttpBody::Full(bytes) => bytes,
                stream @ HttpBody::Stream(_) => stream
                    .collect()
                    .await
                    .map_err(|e| LlmError::Transport(self.config.redact(&e.message)))?,
            };
            if !(200..300).contains(&status) {
                return Err(openai::classify_http_error(status, &body, retry_after.as_deref()));
            }
            openai::parse_response(&body)
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(LlmError::Cancelled),
            result = exchange => result,
        }
    }
}

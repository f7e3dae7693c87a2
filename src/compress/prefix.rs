//! COST-3: a summarizer request the provider serves from its prefix cache. When the
//! summarizer is the conversation's own model, its request is the conversation's next
//! request — the bytes the provider has just cached, lent by the session's encoding
//! cache, not encoded again — followed by one instruction (`prefix_instruction.md`, with
//! the configured summary prompt) that asks for the `<state_snapshot>` of the messages
//! before the split and forbids tool calls. `tools`, `tool_choice`, the stream flag and
//! every other field stay as the conversation sends them: Anthropic drops its message
//! cache when `tool_choice` changes, and OpenAI-compatible servers may leave the tools out
//! of the prompt under `"none"`, either of which throws the prefix away. An answer that
//! calls a tool, or holds no valid snapshot, is an invalid summary: the request is sent
//! once more, then the chunked transcript (CMP-10) takes over.

use super::compressor::{CompressContext, CompressReason};
use crate::history::UsageSource;
use super::conversation::ConversationPrefix;
use crate::history::{AgentState, Message, ModelUsage};
use crate::llm::{ChatClient, LlmError, ModelConfig};
use crate::memory::validate_snapshot;

/// The instruction template: `{kept}`, `{first_kept}` and `{summary_prompt}` are filled in.
const INSTRUCTION: &str = include_str!("prefix_instruction.md");

/// Requests on the prefix path: the first, and one more after an invalid summary.
const ATTEMPTS: usize = 2;

/// Characters of the first kept message quoted in the instruction.
const QUOTE_CHARS: usize = 80;

/// True when `summarizer` is `conversation`'s model: the same wire format, endpoint,
/// model, key and stream setting, so its request can be the conversation's own bytes
/// (caches are per model and endpoint; the stream flag is in those bytes).
pub(super) fn same_model(summarizer: &ModelConfig, conversation: &ModelConfig) -> bool {
    summarizer.wire_format == conversation.wire_format
        && summarizer.base_url == conversation.base_url
        && summarizer.model == conversation.model
        && summarizer.api_key == conversation.api_key
        && summarizer.stream == conversation.stream
}

/// The instruction for a split of `messages` at `split` (the messages from `split` on
/// are kept): which messages to summarize, no tool calls, then `summary_prompt`.
pub(super) fn instruction(messages: &[Message], split: usize, summary_prompt: &str) -> Message {
    let kept = messages.len().saturating_sub(split);
    let first_kept = messages.get(split).map(describe).unwrap_or_default();
    Message::user(
        INSTRUCTION
            .trim_end()
            .replace("{kept}", &kept.to_string())
            .replace("{first_kept}", &first_kept)
            .replace("{summary_prompt}", summary_prompt.trim_end()),
    )
}

/// ` (from the user message that begins "…")`: where the kept messages start.
fn describe(message: &Message) -> String {
    let (role, text): (&str, std::borrow::Cow<'_, str>) = match message {
        Message::System { content } => ("system", content.as_str().into()),
        Message::User { content } => ("user", content.text()),
        Message::Tool { content, .. } => ("tool result", content.text()),
        Message::Assistant { content, tool_calls, .. } => match content.as_deref().filter(|t| !t.trim().is_empty()) {
            Some(text) => ("assistant", text.into()),
            None => return tool_calls.first().map(|c| format!(" (from your call of the tool {})", c.name)).unwrap_or_default(),
        },
    };
    let mut quote: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(QUOTE_CHARS).collect();
    if quote.chars().count() == QUOTE_CHARS {
        quote.push('…');
    }
    format!(" (from the {role} message that begins \"{quote}\")")
}

/// The summarizer calls an attempt made and their usage, summed.
#[derive(Debug, Default)]
pub(super) struct Spent {
    usage: ModelUsage,
    calls: u64,
}

impl Spent {
    /// One more call answered, with its usage if reported.
    pub(super) fn add(&mut self, usage: Option<&ModelUsage>) {
        self.calls += 1;
        if let Some(u) = usage {
            self.usage.accumulate(u);
        }
    }

    /// CMP-7: the calls' usage with source `context_compression` (and its `call_count`),
    /// or `None` when no call was answered.
    pub(super) fn tagged(self) -> Option<ModelUsage> {
        let Self { mut usage, calls } = self;
        (calls > 0).then(|| {
            usage.source = Some(UsageSource::ContextCompression);
            usage.call_count = u32::try_from(calls).unwrap_or(u32::MAX);
            usage
        })
    }
}

/// What the prefix path came to.
pub(super) enum PrefixAnswer {
    /// A valid snapshot.
    Snapshot(String),
    /// No snapshot from it (two invalid answers, the provider refused the request's size
    /// or shape, or the state moved on): the chunked transcript's turn.
    Fallback,
    /// The attempt fails as a whole (cancelled, or an error the chunked path would meet
    /// too), with the model error's code.
    Failed(CompressReason, Option<String>),
}

/// Asks `client` for the snapshot with `conversation`'s bytes as the prefix, at most
/// [`ATTEMPTS`] times; each answered call goes into `spent`.
pub(super) async fn summarize(
    client: &ChatClient,
    conversation: &dyn ConversationPrefix,
    state: &AgentState,
    instruction: &Message,
    ctx: &CompressContext,
    spent: &mut Spent,
) -> PrefixAnswer {
    for attempt in 1..=ATTEMPTS {
        let Some(body) = conversation.body_with(state, instruction) else {
            return PrefixAnswer::Fallback;
        };
        // ISO-5: a sub-agent's budget counts the call before it is made.
        if !ctx.summarizer_call_may_start(super::estimate_tokens(&body)) {
            return PrefixAnswer::Failed(CompressReason::Cancelled, None);
        }
        let response = match client.send(client.http_request_with_shared_body(body), &ctx.cancel).await {
            Ok(response) => response,
            Err(LlmError::Cancelled) => return PrefixAnswer::Failed(CompressReason::Cancelled, None),
            // Too big for the model after all, or a shape the server refuses: the chunked
            // transcript may still fit and pass.
            Err(LlmError::ContextOverflow | LlmError::BadRequest { .. }) => return PrefixAnswer::Fallback,
            Err(e) => return PrefixAnswer::Failed(CompressReason::LlmError, Some(e.code().as_str().to_owned())),
        };
        spent.add(response.usage.as_ref());
        let calls_tool = !response.message.tool_calls().is_empty();
        match validate_snapshot(response.message.text().unwrap_or_default()) {
            Ok(snapshot) if !calls_tool => return PrefixAnswer::Snapshot(snapshot),
            _ => tracing::debug!(attempt, calls_tool, "invalid summary on the prefix path"),
        }
    }
    PrefixAnswer::Fallback
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ToolCall;

    #[test]
    fn cost_3_the_instruction_names_the_kept_messages_and_carries_the_summary_prompt() {
        let messages = vec![
            Message::user("plan a trip"),
            Message::assistant("ok"),
            Message::user(format!("now   book\nthe {}", "hotel ".repeat(30))),
            Message::assistant_tool_calls(vec![ToolCall { id: "c".into(), name: "book".into(), arguments: "{}".into() }]),
        ];
        let text = instruction(&messages, 2, "PROMPT <state_snapshot>\n").text().unwrap_or_default().to_owned();
        assert!(text.contains("except the last 2 (from the user message that begins \"now book the hotel"), "{text}");
        assert!(text.contains("…\") are about"), "a long first message is cut: {text}");
        assert!(text.ends_with("PROMPT <state_snapshot>"), "{text}");
        assert!(text.contains("Do not call any tool"));
        assert!(!text.contains('{'), "every placeholder filled: {text}");
        let from_call = instruction(&messages, 3, "P").text().unwrap_or_default().to_owned();
        assert!(from_call.contains("except the last 1 (from your call of the tool book)"), "{from_call}");
        let all = instruction(&messages, 4, "P").text().unwrap_or_default().to_owned();
        assert!(all.contains("except the last 0 are about"), "{all}");
    }
}

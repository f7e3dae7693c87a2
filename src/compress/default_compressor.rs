//! CMP-3, CMP-7..CMP-10: the default compressor — seed trigger checks, pairing-safe split,
//! a structured `<state_snapshot>` summary that folds in the previous one, and chunked
//! summarization when the part to summarize exceeds the summarizer's window.

use async_trait::async_trait;
use serde_json::Value;

use super::compressor::{
    check_due, last_reported_usage, CompressContext, CompressReason, CompressResult, ContextCompressor, StagedCompression,
    COMPRESSION_USAGE_SOURCE,
};
use super::estimate::{estimate_message_tokens, estimate_tokens, is_cjk};
use super::split::compute_safe_split_index;
use crate::history::{AgentState, Message, ModelUsage};
use crate::llm::{ChatClient, ChatRequest, LlmError};
use crate::memory::{validate_snapshot, SnapshotError};

/// The seed's structured summary prompt (CMP-8).
pub const DEFAULT_SUMMARY_PROMPT: &str = include_str!("summary_prompt.md");

/// Tokens kept free around a chunk for the request's framing.
const FRAMING_TOKENS: u64 = 64;
/// The smallest chunk worth a call; below it the summarizer window is too small.
const MIN_CHUNK_TOKENS: u64 = 256;

/// Settings of [`DefaultContextCompressor`], with the seed's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextCompressorConfig {
    /// Compress when prompt tokens reach this (default 64000).
    pub total_token_threshold: u64,
    /// Messages kept verbatim at the end (default 10).
    pub keep_recent_message_count: usize,
    /// The summary instructions (default [`DEFAULT_SUMMARY_PROMPT`]).
    pub summary_prompt: String,
    /// Fewer messages than this before the split are not worth a summary (default 3).
    pub min_messages_to_summarize: usize,
    /// Input tokens one summarizer request may use; larger parts are summarized in
    /// chunks (CMP-10). Default: [`default_summarizer_window`] of the threshold — the
    /// threshold, but never less than [`MIN_DEFAULT_SUMMARIZER_WINDOW`], so a small
    /// threshold still leaves room for the summary prompt and a chunk. An explicit value
    /// below [`ContextCompressorConfig::min_summarizer_window`] is refused (`invalid_config`).
    pub summarizer_max_input_tokens: u64,
}

/// The smallest default summarizer window: the summary prompt (~300 tokens), a previous
/// snapshot and chunks of a useful size fit in it.
pub const MIN_DEFAULT_SUMMARIZER_WINDOW: u64 = 4096;

/// The summarizer window used when none is set: `max(threshold, 4096)`.
pub fn default_summarizer_window(total_token_threshold: u64) -> u64 {
    total_token_threshold.max(MIN_DEFAULT_SUMMARIZER_WINDOW)
}

impl Default for ContextCompressorConfig {
    fn default() -> Self {
        Self::with_threshold(64_000)
    }
}

impl ContextCompressorConfig {
    /// The seed's defaults with this threshold (and the default summarizer window for it).
    pub fn with_threshold(total_token_threshold: u64) -> Self {
        Self {
            total_token_threshold,
            keep_recent_message_count: 10,
            summary_prompt: DEFAULT_SUMMARY_PROMPT.to_owned(),
            min_messages_to_summarize: 3,
            summarizer_max_input_tokens: default_summarizer_window(total_token_threshold),
        }
    }

    /// The smallest summarizer window that can work: the summary prompt, the request
    /// framing and one minimal chunk.
    pub fn min_summarizer_window(&self) -> u64 {
        estimate_tokens(&self.summary_prompt) + FRAMING_TOKENS + MIN_CHUNK_TOKENS
    }

    /// Checks ranges; the message says what is wrong (the runtime reports it as
    /// `invalid_config`).
    pub fn validate(&self) -> Result<(), String> {
        if self.total_token_threshold == 0 {
            return Err("total_token_threshold must be at least 1".into());
        }
        let min = self.min_summarizer_window();
        if self.summarizer_max_input_tokens < min {
            return Err(format!(
                "summarizer_max_input_tokens {} cannot hold the summary prompt and a chunk: it must be at least {min}",
                self.summarizer_max_input_tokens
            ));
        }
        Ok(())
    }
}

/// The default [`ContextCompressor`].
#[derive(Clone)]
pub struct DefaultContextCompressor {
    client: ChatClient,
    config: ContextCompressorConfig,
}

impl DefaultContextCompressor {
    /// A compressor summarizing with `client` (normally the agent's own model).
    pub fn new(client: ChatClient, config: ContextCompressorConfig) -> Self {
        Self { client, config }
    }

    /// The settings.
    pub fn config(&self) -> &ContextCompressorConfig {
        &self.config
    }

    /// The seed's trigger checks, in the seed's order (CMP-3).
    fn check_trigger(&self, state: &AgentState, ctx: &CompressContext) -> Result<(), CompressReason> {
        if ctx.force {
            return if state.history.messages.len() <= self.config.keep_recent_message_count {
                Err(CompressReason::HistoryTooShort)
            } else {
                Ok(())
            };
        }
        let last = last_reported_usage(state);
        if last.is_none() && ctx.estimated_prompt_tokens.is_none() {
            return Err(CompressReason::NoUsage);
        }
        if state.history.messages.len() <= self.config.keep_recent_message_count {
            return Err(CompressReason::HistoryTooShort);
        }
        let prompt_tokens = ctx.estimated_prompt_tokens.or(last.map(|u| u.prompt_tokens)).unwrap_or(0);
        check_due(state, prompt_tokens, self.config.total_token_threshold)
    }

    /// One summarizer call: the previous snapshot (if any) plus one chunk of transcript.
    async fn summarize_chunk(
        &self,
        previous: Option<&str>,
        chunk: &str,
        ctx: &CompressContext,
    ) -> Result<(String, Option<ModelUsage>), (CompressReason, Option<String>)> {
        let mut user = String::with_capacity(chunk.len() + previous.map_or(0, str::len) + 96);
        if let Some(previous) = previous {
            user.push_str("<previous_snapshot>\n");
            user.push_str(previous);
            user.push_str("\n</previous_snapshot>\n\n");
        }
        user.push_str("<conversation>\n");
        user.push_str(chunk);
        user.push_str("</conversation>");
        let messages = [Message::user(user)];
        let request = ChatRequest {
            system_prompt: Some(&self.config.summary_prompt),
            context_messages: &[],
            messages: &messages,
            tools: &[],
            tool_choice: None,
        };
        let http = self.client.build_http_request(&request);
        match self.client.send(http, &ctx.cancel).await {
            Ok(response) => Ok((response.message.text().unwrap_or_default().to_owned(), response.usage)),
            Err(LlmError::Cancelled) => Err((CompressReason::Cancelled, None)),
            Err(e) => Err((CompressReason::LlmError, Some(e.code().as_str().to_owned()))),
        }
    }

    /// The budget for one chunk next to `previous`.
    fn chunk_budget(&self, previous: Option<&str>) -> u64 {
        self.config
            .summarizer_max_input_tokens
            .saturating_sub(estimate_tokens(&self.config.summary_prompt))
            .saturating_sub(previous.map_or(0, estimate_tokens))
            .saturating_sub(FRAMING_TOKENS)
    }
}

#[async_trait]
impl ContextCompressor for DefaultContextCompressor {
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult {
        if let Err(reason) = self.check_trigger(state, ctx) {
            return CompressResult::skipped(reason);
        }
        let messages = &state.history.messages;
        let Some(split) = compute_safe_split_index(messages, self.config.keep_recent_message_count) else {
            return CompressResult::skipped(CompressReason::NoSafeSplit);
        };
        if split < self.config.min_messages_to_summarize.max(1) {
            return CompressResult::skipped(CompressReason::HistoryTooShort);
        }
        let archived = &messages[..split];

        // Fold: each chunk is summarized together with the snapshot so far, starting from
        // the previous episode's snapshot, so the goal survives every compression (CMP-9).
        let mut summary: Option<String> = state.history.episodic_memories.last().map(|e| e.summary.clone());
        let mut transcript = Transcript::new(archived);
        let mut usage = ModelUsage::default();
        let mut calls = 0u64;
        while !transcript.is_done() {
            let budget = self.chunk_budget(summary.as_deref());
            if budget < MIN_CHUNK_TOKENS {
                return failed_with(CompressReason::SummarizerWindowTooSmall, calls, usage, None, split);
            }
            let chunk = transcript.next_chunk(budget);
            let (text, call_usage) = match self.summarize_chunk(summary.as_deref(), &chunk, ctx).await {
                Ok(answer) => answer,
                Err((reason, code)) => return failed_with(reason, calls, usage, code, split),
            };
            calls += 1;
            if let Some(u) = call_usage {
                add_usage(&mut usage, &u);
            }
            match validate_snapshot(&text) {
                Ok(snapshot) => summary = Some(snapshot),
                Err(SnapshotError::Empty) => return failed_with(CompressReason::EmptySummary, calls, usage, None, split),
                Err(SnapshotError::Malformed) => return failed_with(CompressReason::MalformedSummary, calls, usage, None, split),
            }
        }
        let Some(summary) = summary else {
            return failed_with(CompressReason::EmptySummary, calls, usage, None, split);
        };
        let archived_tokens: u64 = archived.iter().map(estimate_message_tokens).sum();
        if estimate_tokens(&summary) >= archived_tokens {
            return failed_with(CompressReason::SummaryNotSmaller, calls, usage, None, split);
        }
        let staged = StagedCompression {
            split_index: split,
            summary,
            episode_id: ctx.id_generator.next_id(),
            created_at_ms: ctx.clock.now_ms(),
        };
        CompressResult::compressed(staged, Some(tag_usage(usage, calls)))
    }

    fn threshold(&self) -> Option<u64> {
        Some(self.config.total_token_threshold)
    }
}

fn failed_with(reason: CompressReason, calls: u64, usage: ModelUsage, code: Option<String>, would_archive: usize) -> CompressResult {
    let usage = (calls > 0).then(|| tag_usage(usage, calls));
    let mut result = CompressResult::failed_archiving(reason, usage, would_archive);
    result.error_code = code;
    result
}

// Provider numbers: saturate, never overflow; COST-2: the calls' costs are summed.
fn add_usage(total: &mut ModelUsage, u: &ModelUsage) {
    total.accumulate(u);
}

/// CMP-7: the compression's usage is marked so the next trigger check skips.
fn tag_usage(mut usage: ModelUsage, calls: u64) -> ModelUsage {
    usage.raw.insert("source".into(), Value::String(COMPRESSION_USAGE_SOURCE.into()));
    usage.raw.insert("calls".into(), Value::from(calls));
    usage
}

/// One message as transcript text for the summarizer (tool pairs can't be cut in text).
fn render_message(message: &Message) -> String {
    let mut out = String::new();
    match message {
        Message::System { content } => out.push_str(&format!("[system] {content}\n")),
        // IMG-4: an image is its line (type, size, id) in the transcript.
        Message::User { content } => out.push_str(&format!("[user] {}\n", content.transcript())),
        Message::Assistant { content, tool_calls, .. } => {
            if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                out.push_str(&format!("[assistant] {text}\n"));
            }
            for call in tool_calls {
                out.push_str(&format!("[assistant called tool {} id={}] {}\n", call.name, call.id, call.arguments));
            }
        }
        Message::Tool { tool_call_id, content, is_error } => {
            let status = if *is_error { " (error)" } else { "" };
            out.push_str(&format!("[tool result id={tool_call_id}{status}] {}\n", content.transcript()));
        }
    }
    out
}

/// The part to summarize, rendered lazily chunk by chunk: at most one chunk of text
/// exists at a time, so an attempt never holds a rendered copy of the whole history.
struct Transcript<'a> {
    messages: std::slice::Iter<'a, Message>,
    pending: Option<String>,
}

impl<'a> Transcript<'a> {
    fn new(messages: &'a [Message]) -> Self {
        Self { messages: messages.iter(), pending: None }
    }

    fn is_done(&self) -> bool {
        self.pending.is_none() && self.messages.len() == 0
    }

    fn next_piece(&mut self) -> Option<String> {
        self.pending.take().or_else(|| self.messages.next().map(render_message))
    }

    /// Takes whole messages while they fit in `budget` tokens; a message larger than the
    /// budget on its own is cut at a character boundary and its rest comes next time.
    fn next_chunk(&mut self, budget: u64) -> String {
        let mut chunk = String::new();
        let mut used = 0u64;
        while let Some(piece) = self.next_piece() {
            let cost = estimate_tokens(&piece);
            if used + cost <= budget {
                used += cost;
                chunk.push_str(&piece);
                continue;
            }
            if !chunk.is_empty() {
                self.pending = Some(piece);
                break;
            }
            let cut = cut_index(&piece, budget);
            chunk.push_str(&piece[..cut]);
            chunk.push_str("\n[continued in the next part]\n");
            self.pending = Some(format!("[continued] {}", &piece[cut..]));
            break;
        }
        chunk
    }
}

/// The largest char boundary whose prefix estimates at most `budget` tokens, leaving
/// room for the continuation marker (at least one character, so progress is certain).
fn cut_index(text: &str, budget: u64) -> usize {
    let room_quarters = budget.saturating_sub(16).max(1) * 4;
    let mut quarters = 0u64;
    let mut last_ok = 0;
    for (i, c) in text.char_indices() {
        // Same weights as estimate_tokens, in quarter tokens (+8 covers its rounding).
        quarters += if c.is_ascii() { 1 } else if is_cjk(c) { 4 } else { 2 };
        if quarters + 8 > room_quarters {
            break;
        }
        last_ok = i + c.len_utf8();
    }
    last_ok.max(text.chars().next().map_or(0, char::len_utf8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmp_10_chunks_fit_the_budget_even_for_one_huge_message() {
        let huge = "x".repeat(40_000) + &"法".repeat(5_000);
        let messages = vec![Message::user("hi"), Message::user(huge), Message::user("bye")];
        let mut transcript = Transcript::new(&messages);
        let mut total = String::new();
        let mut n = 0;
        while !transcript.is_done() {
            let chunk = transcript.next_chunk(1000);
            assert!(estimate_tokens(&chunk) <= 1000, "chunk of {} tokens", estimate_tokens(&chunk));
            total.push_str(&chunk);
            n += 1;
        }
        assert!(n > 10);
        assert_eq!(total.matches('法').count(), 5_000, "no character lost or split");
        assert!(total.contains("[user] bye") && total.starts_with("[user] hi"));
    }
}

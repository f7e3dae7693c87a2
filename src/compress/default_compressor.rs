//! CMP-3, CMP-7..CMP-10, COST-3: the default compressor — seed trigger checks,
//! pairing-safe split, a structured `<state_snapshot>` summary that folds in the previous
//! one: asked for with the conversation's own request bytes as the prefix when the
//! summarizer is the conversation's model (COST-3, `prefix.rs`), else (or when that fails)
//! summarized from a transcript, in chunks sized for the summarizer's window (CMP-10).

use async_trait::async_trait;

use super::compressor::{check_due, last_reported_usage, unanswered_tail, CompressContext, CompressReason, CompressResult, ContextCompressor, StagedCompression};
use super::estimate::{estimate_message_tokens, estimate_tokens};
use super::conversation::ConversationPrefix;
use super::prefix::{self, PrefixAnswer, Spent};
use super::sizer::Sizer;
use super::split::compute_safe_split_index;
use crate::history::{AgentState, Message, ModelUsage};
use crate::llm::{ChatClient, ChatRequest, LlmError};
use crate::memory::{validate_snapshot, SnapshotError};

/// Why an attempt failed, with the model error's code when it is `llm_error`.
type Failure = (CompressReason, Option<String>);

/// The seed's structured summary prompt (CMP-8).
pub const DEFAULT_SUMMARY_PROMPT: &str = include_str!("summary_prompt.md");

/// Tokens kept free around a chunk for the request's framing.
const FRAMING_TOKENS: u64 = 64;
/// The smallest chunk worth a call; below it the summarizer window is too small.
const MIN_CHUNK_TOKENS: u64 = 256;

/// The seed's `totalTokenThreshold` default: prompt tokens from which a compression is due
/// (the default compressor's, and a custom compressor's when none is given).
pub const DEFAULT_TOTAL_TOKEN_THRESHOLD: u64 = 64_000;

/// Settings of [`DefaultContextCompressor`], with the seed's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextCompressorConfig {
    /// Compress when prompt tokens reach this (default [`DEFAULT_TOTAL_TOKEN_THRESHOLD`],
    /// 64000). 0, as for a custom compressor: every automatic attempt compresses (right
    /// after a compression excepted: CMP-7's loop guard).
    pub total_token_threshold: u64,
    /// Messages kept verbatim at the end (default 10); with 0, the message the model has
    /// yet to answer (the user's input or tool results ending the history) still stays.
    pub keep_recent_message_count: usize,
    /// The summary instructions (default [`DEFAULT_SUMMARY_PROMPT`]).
    pub summary_prompt: String,
    /// Fewer messages than this before the split are not worth a summary (default 3).
    pub min_messages_to_summarize: usize,
    /// Input tokens one summarizer request may use, as the calibrated estimate of the
    /// summarizer's model sizes them with a 15 % margin: larger parts are summarized in
    /// chunks (CMP-10), and a request that reuses the conversation's bytes (COST-3) is
    /// made only when the conversation plus the instruction fit. `None` (the default):
    /// chunks of [`default_summarizer_window`] of the threshold — the threshold, but never
    /// less than [`MIN_DEFAULT_SUMMARIZER_WINDOW`], so a small threshold still leaves room
    /// for the summary prompt and a chunk — and the conversation's own model is not
    /// limited here (it has just accepted the conversation; a context-overflow answer
    /// falls back to chunks). An explicit value below
    /// [`ContextCompressorConfig::min_summarizer_window`] is refused (`invalid_config`).
    pub summarizer_max_input_tokens: Option<u64>,
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
        Self::with_threshold(DEFAULT_TOTAL_TOKEN_THRESHOLD)
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
            summarizer_max_input_tokens: None,
        }
    }

    /// The window chunks are sized for (CMP-10): `summarizer_max_input_tokens`, or
    /// [`default_summarizer_window`] of the threshold when it is not set.
    ///
    /// ```
    /// use arkagent::compress::ContextCompressorConfig;
    /// assert_eq!(ContextCompressorConfig::with_threshold(32_000).summarizer_window(), 32_000);
    /// assert_eq!(ContextCompressorConfig::with_threshold(1_000).summarizer_window(), 4_096);
    /// ```
    pub fn summarizer_window(&self) -> u64 {
        self.summarizer_max_input_tokens.unwrap_or_else(|| default_summarizer_window(self.total_token_threshold))
    }

    /// The smallest summarizer window that can work: the summary prompt (with the sizing
    /// margin), the request framing and one minimal chunk.
    pub fn min_summarizer_window(&self) -> u64 {
        Sizer::uncalibrated().text(&self.summary_prompt) + FRAMING_TOKENS + MIN_CHUNK_TOKENS
    }

    /// Checks ranges; the message says what is wrong (the runtime reports it as
    /// `invalid_config`).
    pub fn validate(&self) -> Result<(), String> {
        let min = self.min_summarizer_window();
        let window = self.summarizer_window();
        if window < min {
            return Err(format!("summarizer_max_input_tokens {window} cannot hold the summary prompt and a chunk: it must be at least {min}"));
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

    /// How many of the latest messages stay: `keep_recent_message_count`, and at least the
    /// message the model has yet to answer (CMP-4, [`unanswered_tail`]).
    fn kept(&self, state: &AgentState) -> usize {
        self.config.keep_recent_message_count.max(unanswered_tail(&state.history.messages))
    }

    /// The seed's trigger checks, in the seed's order (CMP-3).
    fn check_trigger(&self, state: &AgentState, ctx: &CompressContext) -> Result<(), CompressReason> {
        if ctx.force {
            return if state.history.messages.len() <= self.kept(state) {
                Err(CompressReason::HistoryTooShort)
            } else {
                Ok(())
            };
        }
        let last = last_reported_usage(state);
        if last.is_none() && ctx.estimated_prompt_tokens.is_none() {
            return Err(CompressReason::NoUsage);
        }
        if state.history.messages.len() <= self.kept(state) {
            return Err(CompressReason::HistoryTooShort);
        }
        let prompt_tokens = ctx.estimated_prompt_tokens.or(last.map(|u| u.prompt_tokens)).unwrap_or(0);
        check_due(state, prompt_tokens, self.config.total_token_threshold, ctx.after_compression)
    }

    /// COST-3, then CMP-10: the snapshot of `messages[..split]`, from a request that
    /// reuses the conversation's bytes when it can, else (or when that gives no snapshot)
    /// from the chunked transcript. Every answered call goes into `spent`.
    async fn summarize(&self, state: &AgentState, split: usize, ctx: &CompressContext, spent: &mut Spent) -> Result<String, Failure> {
        if let Some(conversation) = self.prefix_route(state, ctx) {
            let instruction = prefix::instruction(&state.history.messages, split, &self.config.summary_prompt);
            if self.prefix_fits(state, ctx, &instruction) {
                match prefix::summarize(&self.client, conversation, state, &instruction, ctx, spent).await {
                    PrefixAnswer::Snapshot(snapshot) => return Ok(snapshot),
                    PrefixAnswer::Failed(reason, code) => return Err((reason, code)),
                    PrefixAnswer::Fallback => {}
                }
            }
        }
        self.summarize_chunks(state, &state.history.messages[..split], ctx, spent).await
    }

    /// COST-3: the conversation whose bytes the summarizer request can reuse — when the
    /// summarizer is its own model, it did not just overflow (a forced attempt) and its
    /// history does not end with tool calls still to answer.
    fn prefix_route<'c>(&self, state: &AgentState, ctx: &'c CompressContext) -> Option<&'c dyn ConversationPrefix> {
        let conversation = ctx.conversation.as_deref()?;
        let open_calls = state.history.messages.last().is_some_and(|m| !m.tool_calls().is_empty());
        let usable = !ctx.force && !open_calls && prefix::same_model(self.client.config(), conversation.model());
        usable.then_some(conversation)
    }

    /// The conversation's prompt plus the instruction fit an explicit
    /// `summarizer_max_input_tokens` (with the sizing margin); without one, the model that
    /// accepted the conversation is asked. The prompt's size is the trigger's (an automatic
    /// attempt's estimate, else the provider's last count): deciding encodes nothing.
    fn prefix_fits(&self, state: &AgentState, ctx: &CompressContext, instruction: &Message) -> bool {
        let Some(window) = self.config.summarizer_max_input_tokens else {
            return true;
        };
        let Some(prompt) = ctx.estimated_prompt_tokens.or(last_reported_usage(state).map(|u| u.prompt_tokens)) else {
            return false;
        };
        let sizer = Sizer::of(state, &self.client.config().model);
        let instruction = instruction.text().map_or(0, |t| sizer.text(t));
        sizer.with_margin(prompt).saturating_add(instruction).saturating_add(FRAMING_TOKENS) <= window
    }

    /// CMP-9, CMP-10: each chunk of the transcript of `archived` is summarized together
    /// with the snapshot so far, starting from the previous episode's, so the goal
    /// survives every compression; chunks are sized by the calibrated estimate of the
    /// summarizer's model with a margin (28.3).
    async fn summarize_chunks(&self, state: &AgentState, archived: &[Message], ctx: &CompressContext, spent: &mut Spent) -> Result<String, Failure> {
        let mut sizer = Sizer::of(state, &self.client.config().model);
        let mut summary: Option<String> = state.history.episodic_memories.last().map(|e| e.summary.clone());
        let mut transcript = Transcript::new(archived);
        let mut widened = 0;
        while !transcript.is_done() {
            let budget = self.chunk_budget(&sizer, summary.as_deref());
            if budget < MIN_CHUNK_TOKENS {
                return Err((CompressReason::SummarizerWindowTooSmall, None));
            }
            let before = transcript.clone();
            let chunk = transcript.next_chunk(budget, &sizer);
            // ISO-5: a sub-agent's budget counts each call before it is made.
            let estimate = sizer.text(&chunk) + self.config.summarizer_window().saturating_sub(budget);
            if !ctx.summarizer_call_may_start(estimate) {
                return Err((CompressReason::Cancelled, None));
            }
            let (text, usage) = match self.summarize_chunk(summary.as_deref(), &chunk, ctx).await {
                // CMP-10: the summarizer counted more than the estimate (an uncalibrated
                // model on dense JSON): the same text again in smaller chunks, never a
                // compression that can never fit.
                Err((CompressReason::LlmError, Some(code))) if code == "llm_context_overflow" && widened < MAX_WIDENINGS => {
                    transcript = before;
                    sizer = sizer.wider();
                    widened += 1;
                    continue;
                }
                other => other?,
            };
            spent.add(usage.as_ref());
            summary = Some(validate_snapshot(&text).map_err(|e| match e {
                SnapshotError::Empty => (CompressReason::EmptySummary, None),
                SnapshotError::Malformed => (CompressReason::MalformedSummary, None),
            })?);
        }
        summary.ok_or((CompressReason::EmptySummary, None))
    }

    /// One summarizer call: the previous snapshot (if any) plus one chunk of transcript.
    async fn summarize_chunk(&self, previous: Option<&str>, chunk: &str, ctx: &CompressContext) -> Result<(String, Option<ModelUsage>), Failure> {
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
        // COST-2: each chunk is new to the provider and never read again: no cache write.
        let http = self.client.build_one_off_http_request(&request);
        match self.client.send(http, &ctx.cancel).await {
            Ok(response) => Ok((response.message.text().unwrap_or_default().to_owned(), response.usage)),
            Err(LlmError::Cancelled) => Err((CompressReason::Cancelled, None)),
            Err(e) => Err((CompressReason::LlmError, Some(e.code().as_str().to_owned()))),
        }
    }

    /// The budget for one chunk next to the summary prompt and `previous`, in the
    /// summarizer's calibrated tokens with the margin (28.3).
    fn chunk_budget(&self, sizer: &Sizer, previous: Option<&str>) -> u64 {
        self.config
            .summarizer_window()
            .saturating_sub(sizer.text(&self.config.summary_prompt))
            .saturating_sub(previous.map_or(0, |p| sizer.text(p)))
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
        let Some(split) = compute_safe_split_index(messages, self.kept(state)) else {
            return CompressResult::skipped(CompressReason::NoSafeSplit);
        };
        if split < self.config.min_messages_to_summarize.max(1) {
            return CompressResult::skipped(CompressReason::HistoryTooShort);
        }
        let mut spent = Spent::default();
        let summary = match self.summarize(state, split, ctx, &mut spent).await {
            Ok(summary) => summary,
            Err((reason, code)) => return failed_with(reason, spent, code, split),
        };
        let archived_tokens: u64 = messages[..split].iter().map(estimate_message_tokens).sum();
        if estimate_tokens(&summary) >= archived_tokens {
            return failed_with(CompressReason::SummaryNotSmaller, spent, None, split);
        }
        let staged = StagedCompression {
            split_index: split,
            summary,
            episode_id: super::compressor::fresh_episode_id(state, || ctx.id_generator.next_id()),
            created_at_ms: ctx.clock.now_ms(),
        };
        CompressResult::compressed(staged, spent.tagged())
    }

    fn threshold(&self) -> Option<u64> {
        Some(self.config.total_token_threshold)
    }
}

/// A failed attempt, with the usage of the calls it made (reported, never recorded).
fn failed_with(reason: CompressReason, spent: Spent, code: Option<String>, would_archive: usize) -> CompressResult {
    let mut result = CompressResult::failed_archiving(reason, spent.tagged(), would_archive);
    result.error_code = code;
    result
}

/// One message as transcript text for the summarizer (tool pairs can't be cut in text).
fn render_message(message: &Message) -> String {
    let mut out = String::new();
    match message {
        Message::System { content } => out.push_str(&format!("[system] {content}\n")),
        // IMG-4: an image is its line (type, size, id) in the transcript.
        Message::User { content } => out.push_str(&format!("[user] {}\n", content.transcript())),
        Message::Assistant { content, tool_calls, .. } => {
            // THINK-3: the reasoning behind a tool call is part of what the provider keeps
            // in context, so the summarizer reads it too (a redacted block has no text).
            if let Some(reasoning) = message.reasoning_text().filter(|r| !tool_calls.is_empty() && !r.trim().is_empty()) {
                out.push_str(&format!("[assistant reasoning] {reasoning}\n"));
            }
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
#[derive(Clone)]
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

    /// Takes whole messages while they fit in `budget` tokens as `sizer` counts them; a
    /// message larger than the budget on its own is cut at a character boundary and its
    /// rest comes next time.
    fn next_chunk(&mut self, budget: u64, sizer: &Sizer) -> String {
        let mut chunk = String::new();
        let mut used = 0u64;
        while let Some(piece) = self.next_piece() {
            let cost = sizer.text(&piece);
            if used + cost <= budget {
                used += cost;
                chunk.push_str(&piece);
                continue;
            }
            if !chunk.is_empty() {
                self.pending = Some(piece);
                break;
            }
            let cut = sizer.cut_index(&piece, budget.saturating_sub(sizer.text(CONTINUED_MARK)));
            chunk.push_str(&piece[..cut]);
            chunk.push_str(CONTINUED_MARK);
            self.pending = Some(format!("[continued] {}", &piece[cut..]));
            break;
        }
        chunk
    }
}

/// How many times a chunk the summarizer refused as too long is cut smaller and sent again.
const MAX_WIDENINGS: u32 = 3;

/// Ends a chunk that cuts a message.
const CONTINUED_MARK: &str = "\n[continued in the next part]\n";

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
            let chunk = transcript.next_chunk(1000, &Sizer::exact_static());
            assert!(estimate_tokens(&chunk) <= 1000, "chunk of {} tokens", estimate_tokens(&chunk));
            total.push_str(&chunk);
            n += 1;
        }
        assert!(n > 10);
        assert_eq!(total.matches('法').count(), 5_000, "no character lost or split");
        assert!(total.contains("[user] bye") && total.starts_with("[user] hi"));
    }
}

//! Where the demo prints: a shared writer (stdout, or a buffer in tests) and the
//! [`Printer`] observer that renders runtime events as they arrive — streamed text inline,
//! tool calls, compressions and the bridged events of sub-agents, indented.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::compress::CompressOutcome;
use arkagent::runtime::SubAgentChildEvent;
use arkagent::{AgentEvent, AgentObserver, CompressionTrigger, EventKind, RunStatus};

struct Inner {
    out: Box<dyn Write + Send>,
    /// The label of the text line that is open (deltas are being appended to it).
    open_label: Option<String>,
    /// The agent's own text was printed since the last [`Console::take_text_printed`].
    text_printed: bool,
}

/// A cloneable handle on the demo's output.
#[derive(Clone)]
pub struct Console {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console").finish_non_exhaustive()
    }
}

/// The text a capturing [`Console`] has received.
#[derive(Clone, Default, Debug)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Everything printed so far.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut b) = self.0.lock() {
            b.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Console {
    /// Prints to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner {
                out,
                open_label: None,
                text_printed: false,
            })),
        }
    }

    /// Prints to stdout.
    pub fn stdout() -> Self {
        Self::new(Box::new(std::io::stdout()))
    }

    /// Prints into a buffer, for tests.
    pub fn capture() -> (Self, Captured) {
        let captured = Captured::default();
        (Self::new(Box::new(captured.clone())), captured)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Output is best effort: a poisoned lock still holds a usable writer.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Prints one line, closing an open text line first.
    pub fn line(&self, text: &str) {
        let mut inner = self.lock();
        close_text(&mut inner);
        let _ = writeln!(inner.out, "{text}");
        let _ = inner.out.flush();
    }

    /// Prints a prompt without a newline.
    pub fn prompt(&self, text: &str) {
        let mut inner = self.lock();
        close_text(&mut inner);
        let _ = write!(inner.out, "{text}");
        let _ = inner.out.flush();
    }

    /// Appends the agent's own answer text; a line starts with `label`. Flushed at once,
    /// so streamed pieces appear as they arrive.
    pub fn text(&self, label: &str, delta: &str) {
        self.write_text(label, delta, true);
    }

    /// Appends other streamed text (a sub-agent's, or reasoning) under its own `label`;
    /// it does not count as the agent's answer.
    pub fn side_text(&self, label: &str, delta: &str) {
        self.write_text(label, delta, false);
    }

    fn write_text(&self, label: &str, delta: &str, own: bool) {
        let mut inner = self.lock();
        if inner.open_label.as_deref() != Some(label) {
            close_text(&mut inner);
            let _ = write!(inner.out, "{label} ");
            inner.open_label = Some(label.to_owned());
        }
        if own || !delta.contains('\n') {
            let _ = write!(inner.out, "{delta}");
        } else {
            // Another agent's text keeps its indentation across lines.
            let indent = " ".repeat(label.chars().count() + 1);
            let _ = write!(inner.out, "{}", delta.replace('\n', &format!("\n{indent}")));
        }
        let _ = inner.out.flush();
        if own {
            inner.text_printed = true;
        }
    }

    /// Ends an open text line.
    pub fn end_text(&self) {
        close_text(&mut self.lock());
    }

    /// True when the agent's own text was printed since the last call.
    pub fn take_text_printed(&self) -> bool {
        std::mem::take(&mut self.lock().text_printed)
    }
}

fn close_text(inner: &mut Inner) {
    if inner.open_label.take().is_some() {
        let _ = writeln!(inner.out);
        let _ = inner.out.flush();
    }
}

/// How many streamed pieces the agent's own model calls delivered (a test hook and a
/// `/usage` footnote).
#[derive(Debug, Default)]
pub struct StreamCounts {
    text: AtomicU64,
    reasoning: AtomicU64,
    tool_call: AtomicU64,
}

/// A snapshot of [`StreamCounts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamTally {
    /// `text_delta` events.
    pub text_deltas: u64,
    /// `reasoning_delta` events.
    pub reasoning_deltas: u64,
    /// `tool_call_delta` events.
    pub tool_call_deltas: u64,
}

impl StreamCounts {
    /// The counts now.
    pub fn tally(&self) -> StreamTally {
        StreamTally {
            text_deltas: self.text.load(Ordering::Relaxed),
            reasoning_deltas: self.reasoning.load(Ordering::Relaxed),
            tool_call_deltas: self.tool_call.load(Ordering::Relaxed),
        }
    }
}

/// Renders events as they arrive: text deltas inline, one line per tool call start and
/// finish, compressions, and sub-agents' bridged events indented under their name.
pub struct Printer {
    console: Console,
    label: String,
    counts: Arc<StreamCounts>,
}

impl Printer {
    /// Prints through `console`, assistant text after `label` (e.g. `[simulated model]`).
    pub fn new(console: Console, label: impl Into<String>) -> Self {
        Self {
            console,
            label: label.into(),
            counts: Arc::default(),
        }
    }

    /// The streamed-piece counters this printer updates.
    pub fn counts(&self) -> Arc<StreamCounts> {
        Arc::clone(&self.counts)
    }

    fn child(&self, child: &SubAgentChildEvent, depth: usize) {
        let prefix = format!("{}[{}]", "  ".repeat(depth), child.assignee);
        match &child.event.kind {
            EventKind::RunStarted { .. } => self.console.line(&format!(
                "{prefix} started in its own context: {}",
                first_line(&child.task_description)
            )),
            EventKind::TextDelta { delta, .. } => self.console.side_text(&prefix, delta),
            EventKind::ReasoningDelta { delta, .. } => self
                .console
                .side_text(&format!("{prefix} (thinking)"), delta),
            EventKind::ToolCallStarted {
                name, arguments, ..
            } => self
                .console
                .line(&format!("{prefix} -> tool {name} {arguments}")),
            EventKind::ToolCallFinished {
                name,
                is_error,
                error_code,
                content,
                ..
            } => self.console.line(&format!(
                "{prefix} <- tool {name} {}: {}",
                outcome(*is_error, error_code.as_deref()),
                preview(content)
            )),
            EventKind::Compression { .. } => {
                if let Some(text) = compression_text(&child.event.kind) {
                    self.console.line(&format!("{prefix} {text}"));
                }
            }
            EventKind::SubAgent(grandchild) => self.child(grandchild, depth + 1),
            EventKind::RunFinished {
                status,
                iterations,
                error_code,
                ..
            } => {
                let calls = if *iterations == 1 { "call" } else { "calls" };
                let code = error_code
                    .map(|c| format!(" [{c}]"))
                    .unwrap_or_default();
                self.console.line(&format!(
                    "{prefix} finished: {}{code} after {iterations} model {calls}",
                    status_name(*status)
                ));
            }
            _ => {}
        }
    }
}

/// Tool output longer than this is cut in the transcript (the model sees all of it).
const PREVIEW_CHARS: usize = 160;

fn preview(text: &str) -> String {
    let mut out: String = text.chars().take(PREVIEW_CHARS).collect();
    if text.chars().count() > PREVIEW_CHARS {
        out.push('…');
    }
    out
}

/// The first line of `text`, at most 100 characters.
pub fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    let mut out: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        out.push('…');
    }
    out
}

fn outcome(is_error: bool, code: Option<&str>) -> String {
    match (is_error, code) {
        (false, _) => "ok".to_owned(),
        (true, Some(code)) => format!("error {code}"),
        (true, None) => "error".to_owned(),
    }
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "completed",
        RunStatus::Cancelled => "cancelled",
        RunStatus::MaxIterations => "stopped at max iterations",
        RunStatus::Failed => "failed",
        RunStatus::AwaitingApproval => "waiting for approval",
    }
}

fn trigger_name(trigger: CompressionTrigger) -> &'static str {
    match trigger {
        CompressionTrigger::Preflight => "before a model call",
        CompressionTrigger::PostTurn => "after a turn",
        CompressionTrigger::Overflow => "after a context overflow",
        CompressionTrigger::Manual => "on request",
    }
}

/// The transcript line for a compression event; `None` for routine skips (logged only).
fn compression_text(kind: &EventKind) -> Option<String> {
    let EventKind::Compression {
        trigger,
        outcome,
        reason,
        episode_id,
        error_code,
        messages_before,
        messages_after,
        usage,
        ..
    } = kind
    else {
        return None;
    };
    match outcome {
        CompressOutcome::Compressed => {
            let tokens = usage
                .as_ref()
                .map(|u| format!(", summary call {} tokens", u.total_tokens))
                .unwrap_or_default();
            Some(format!(
                "[memory] compressed {} messages into episode {} ({}; {messages_after} messages kept{tokens})",
                messages_before.saturating_sub(*messages_after),
                episode_id.as_deref().unwrap_or("?"),
                trigger_name(*trigger)
            ))
        }
        CompressOutcome::Failed => {
            let code = error_code
                .as_deref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            Some(format!(
                "[memory] compression failed: {reason}{code} ({}); the history is unchanged",
                trigger_name(*trigger)
            ))
        }
        CompressOutcome::Skipped => {
            tracing::info!(reason = %reason, "compression skipped");
            None
        }
    }
}

impl AgentObserver for Printer {
    fn on_event(&self, event: &AgentEvent) {
        match &event.kind {
            EventKind::TextDelta { delta, .. } => {
                self.counts.text.fetch_add(1, Ordering::Relaxed);
                self.console.text(&self.label, delta);
            }
            EventKind::ReasoningDelta { delta, .. } => {
                self.counts.reasoning.fetch_add(1, Ordering::Relaxed);
                self.console
                    .side_text(&format!("{} (thinking)", self.label), delta);
            }
            EventKind::ToolCallDelta {
                index,
                name,
                arguments_delta,
                ..
            } => {
                self.counts.tool_call.fetch_add(1, Ordering::Relaxed);
                tracing::trace!(index, name = ?name, arguments_delta = %arguments_delta, "tool call delta");
            }
            EventKind::ToolCallStarted {
                name, arguments, ..
            } => {
                self.console.line(&format!("  -> tool {name} {arguments}"));
            }
            EventKind::ToolCallFinished {
                name,
                is_error,
                error_code,
                content,
                ..
            } => {
                self.console.line(&format!(
                    "  <- tool {name} {}: {}",
                    outcome(*is_error, error_code.as_deref()),
                    preview(content)
                ));
            }
            EventKind::Compression { .. } => {
                if let Some(text) = compression_text(&event.kind) {
                    self.console.line(&text);
                }
            }
            EventKind::SubAgent(child) => self.child(child, 1),
            EventKind::ModelRequest {
                iteration,
                message_count,
                tool_count,
                estimated_prompt_tokens,
                ..
            } => {
                tracing::debug!(
                    iteration,
                    message_count,
                    tool_count,
                    estimated_prompt_tokens,
                    "model request"
                );
            }
            EventKind::McpServer(server) => self.console.line(&mcp_text(server)),
            EventKind::RunFinished { .. } => self.console.end_text(),
            _ => {}
        }
    }
}

/// One line for an `mcp_server` event (MCP-3).
fn mcp_text(e: &arkagent::mcp::McpServerEvent) -> String {
    match (&e.error_code, &e.message) {
        (Some(code), message) => format!("  [mcp] {} failed: {} {}", e.server, code.as_str(), message.as_deref().unwrap_or("")),
        (None, _) => format!(
            "  [mcp] {} {:?}: {} tools (MCP {})",
            e.server,
            e.state,
            e.tool_count,
            e.protocol_version.as_deref().unwrap_or("?")
        ),
    }
}

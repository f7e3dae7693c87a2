//! Where the demo prints: a shared writer (stdout, or a buffer in tests) and the
//! [`Printer`] observer that renders runtime events as they arrive.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::{AgentEvent, AgentObserver, EventKind};

struct Inner {
    out: Box<dyn Write + Send>,
    /// An assistant text line is open (deltas are being appended to it).
    text_open: bool,
    /// Text was printed since the last [`Console::take_text_printed`].
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
                text_open: false,
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

    /// Appends assistant text; the first piece of a line starts with `label`.
    pub fn text(&self, label: &str, delta: &str) {
        let mut inner = self.lock();
        if !inner.text_open {
            let _ = write!(inner.out, "{label} ");
            inner.text_open = true;
        }
        let _ = write!(inner.out, "{delta}");
        let _ = inner.out.flush();
        inner.text_printed = true;
    }

    /// Ends an open text line.
    pub fn end_text(&self) {
        close_text(&mut self.lock());
    }

    /// True when text was printed since the last call.
    pub fn take_text_printed(&self) -> bool {
        std::mem::take(&mut self.lock().text_printed)
    }
}

fn close_text(inner: &mut Inner) {
    if inner.text_open {
        let _ = writeln!(inner.out);
        let _ = inner.out.flush();
        inner.text_open = false;
    }
}

/// Renders events as they arrive: text deltas inline, one line per tool call start and
/// finish, failures with their code.
pub struct Printer {
    console: Console,
    label: String,
}

impl Printer {
    /// Prints through `console`, assistant text after `label` (e.g. `[simulated model]`).
    pub fn new(console: Console, label: impl Into<String>) -> Self {
        Self {
            console,
            label: label.into(),
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

impl AgentObserver for Printer {
    fn on_event(&self, event: &AgentEvent) {
        match &event.kind {
            EventKind::TextDelta { delta, .. } => self.console.text(&self.label, delta),
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
                let outcome = match (is_error, error_code) {
                    (false, _) => "ok".to_owned(),
                    (true, Some(code)) => format!("error {code}"),
                    (true, None) => "error".to_owned(),
                };
                self.console
                    .line(&format!("  <- tool {name} {outcome}: {}", preview(content)));
            }
            EventKind::ModelRequest {
                iteration,
                message_count,
                tool_count,
                ..
            } => {
                tracing::debug!(iteration, message_count, tool_count, "model request");
            }
            EventKind::RunFinished { .. } => self.console.end_text(),
            _ => {}
        }
    }
}

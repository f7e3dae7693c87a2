//! # arkagent-demo
//!
//! The desktop demo host for arkagent (DX-2, DX-3). It plugs a real HTTP client
//! ([`transport::UreqTransport`]) and three demo tools ([`tools`]) into an
//! [`arkagent::AgentRuntime`], and talks either to a real OpenAI-compatible endpoint or —
//! by default, offline — to a simulated one on loopback ([`server::SimulatedServer`]),
//! labelled `[simulated model]` wherever it speaks.
//!
//! The binary (`src/main.rs`) is a thin shell over [`repl`]; tests drive the same
//! functions.

pub mod config;
pub mod console;
pub mod cost;
pub mod photos;
pub mod repl;
pub mod server;
pub mod tools;
pub mod transport;

/// Targets never shown, whatever `RUST_LOG` says: the HTTP client's protocol crate dumps
/// every byte it sends as hex and ASCII at TRACE (`ureq_proto::util`) and prints whole
/// request heads at DEBUG, the `Authorization: Bearer …` line included (LLM-4). A hex dump
/// cannot be redacted after the fact, so it is never formatted at all.
pub const SILENCED_TARGETS: &[&str] = &["ureq_proto"];

/// Sends `tracing` output (and the `log` records of the HTTP client, bridged) to stderr,
/// filtered by `RUST_LOG` (default `warn`), with two guards no `RUST_LOG` can lift: the
/// [`SILENCED_TARGETS`] are dropped, and every line is written with each of `secrets`
/// replaced by `[REDACTED]`. Safe to call twice (the second call does nothing).
pub fn init_tracing(secrets: Vec<String>) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;

    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let silenced = tracing_subscriber::filter::filter_fn(|meta| !is_silenced(meta.target()));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(RedactingStderr::new(secrets))
        .with_ansi(ansi)
        .with_filter(filter)
        .with_filter(silenced);
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// Whether `target` is one of the [`SILENCED_TARGETS`] or a module below one.
pub fn is_silenced(target: &str) -> bool {
    SILENCED_TARGETS.iter().any(|silenced| {
        target == *silenced
            || target
                .strip_prefix(silenced)
                .is_some_and(|rest| rest.starts_with("::"))
    })
}

/// stderr, with every secret replaced by `[REDACTED]` in each formatted line (the fmt
/// layer writes one event with one `write_all`, so a secret is never split between two
/// writes).
pub struct RedactingStderr {
    secrets: std::sync::Arc<Vec<String>>,
}

impl RedactingStderr {
    /// Redacts each non-empty entry of `secrets`.
    pub fn new(secrets: Vec<String>) -> Self {
        let secrets = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        Self {
            secrets: std::sync::Arc::new(secrets),
        }
    }

    /// `text` with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in self.secrets.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[REDACTED]");
            }
        }
        out
    }
}

/// One formatted event on its way to stderr.
pub struct RedactingLine {
    secrets: std::sync::Arc<Vec<String>>,
}

impl std::io::Write for RedactingLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let redacted = RedactingStderr {
            secrets: std::sync::Arc::clone(&self.secrets),
        }
        .redact(&text);
        std::io::stderr().write_all(redacted.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingStderr {
    type Writer = RedactingLine;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingLine {
            secrets: std::sync::Arc::clone(&self.secrets),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llm_4_silenced_targets_cover_the_wire_dump_modules_only() {
        assert!(is_silenced("ureq_proto"));
        assert!(is_silenced("ureq_proto::util"));
        assert!(is_silenced("ureq_proto::client::amended"));
        assert!(!is_silenced("ureq"));
        assert!(!is_silenced("ureq_protocol"));
        assert!(!is_silenced("arkagent::llm::client"));
    }

    #[test]
    fn llm_4_redacting_stderr_replaces_every_secret() {
        let w = RedactingStderr::new(vec!["sk-one".into(), String::new(), "sk-two".into()]);
        assert_eq!(
            w.redact("a sk-one b sk-two c sk-one"),
            "a [REDACTED] b [REDACTED] c [REDACTED]"
        );
        assert_eq!(w.redact("nothing here"), "nothing here");
    }
}

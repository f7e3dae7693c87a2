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
pub mod repl;
pub mod server;
pub mod tools;
pub mod transport;

/// Sends `tracing` output to stderr, filtered by `RUST_LOG` (default `warn`). Safe to
/// call twice (the second call does nothing).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}

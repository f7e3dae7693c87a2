//! The demo session: starts the endpoint (the simulated server unless a real one is
//! configured), builds the runtime with the demo tools, and runs lines — messages or
//! `/commands` — from a script or an interactive prompt.

use std::io::BufRead;
use std::sync::Arc;

use arkagent::{
    AgentRuntime, AgentRuntimeConfig, ArkAgentError, ModelConfig, RunStatus, Subscription,
};
use tracing::Instrument;

use crate::config::{DemoConfig, Endpoint, SIMULATED_API_KEY};
use crate::console::{Console, Printer};
use crate::server::{ServerOptions, SimulatedServer, SIMULATED_LABEL, SIMULATED_MODEL};
use crate::tools::demo_tools;
use crate::transport::UreqTransport;

const SYSTEM_PROMPT: &str = include_str!("system_prompt.md");

/// A demo start-up failure, as a message for the user.
#[derive(Debug)]
pub struct DemoError(pub String);

impl std::fmt::Display for DemoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DemoError {}

impl From<ArkAgentError> for DemoError {
    fn from(e: ArkAgentError) -> Self {
        Self(format!("[{}] {e}", e.code()))
    }
}

/// After a line: go on or leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next line.
    Continue,
    /// `/quit`.
    Quit,
}

/// A running demo: the runtime, its printer and, offline, the simulated server.
pub struct Demo {
    runtime: AgentRuntime,
    console: Console,
    label: String,
    failures: u32,
    turns: u32,
    _subscription: Subscription,
    // Declared last so it stops after the runtime is gone.
    server: Option<SimulatedServer>,
}

impl std::fmt::Debug for Demo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demo")
            .field("label", &self.label)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Demo {
    /// Starts the endpoint and the runtime and prints which mode is used (never the key).
    pub fn start(config: &DemoConfig, console: Console) -> Result<Self, DemoError> {
        if let Some(notice) = &config.notice {
            console.line(&format!("note: {notice}"));
        }
        let (model, server, label, transport) = match &config.endpoint {
            Endpoint::Simulated => {
                let server = SimulatedServer::start(ServerOptions::new(SIMULATED_API_KEY))
                    .map_err(|e| DemoError(format!("could not start the simulated server: {e}")))?;
                console.line(&format!(
                    "{SIMULATED_LABEL} offline mode: simulated OpenAI-compatible server on {} (model {SIMULATED_MODEL}, port {})",
                    server.base_url(),
                    server.port()
                ));
                console.line("  set ARKAGENT_BASE_URL, ARKAGENT_API_KEY and ARKAGENT_MODEL to use a real endpoint");
                let model = ModelConfig::new(server.base_url(), SIMULATED_API_KEY, SIMULATED_MODEL);
                (
                    model,
                    Some(server),
                    SIMULATED_LABEL.to_owned(),
                    UreqTransport::loopback(),
                )
            }
            Endpoint::Real {
                base_url,
                api_key,
                model,
            } => {
                console.line(&format!("real endpoint: {base_url} (model {model}; API key from ARKAGENT_API_KEY, not shown)"));
                (
                    ModelConfig::new(base_url, api_key, model),
                    None,
                    format!("[{model}]"),
                    UreqTransport::new(),
                )
            }
        };
        Self::with_parts(config, console, model, server, label, Arc::new(transport))
    }

    /// Builds a demo over a given model config and transport (tests use this to point
    /// at a server with another key).
    pub fn with_parts(
        config: &DemoConfig,
        console: Console,
        mut model: ModelConfig,
        server: Option<SimulatedServer>,
        label: String,
        transport: Arc<dyn arkagent::HttpTransport>,
    ) -> Result<Self, DemoError> {
        model.stream = config.stream;
        let mut runtime_config = AgentRuntimeConfig::new(model);
        runtime_config.system_prompt = SYSTEM_PROMPT.trim().to_owned();
        runtime_config.tools = demo_tools()?;
        let tool_names = runtime_config.tools.names().join(", ");
        let runtime = AgentRuntime::new(runtime_config, transport)?;
        let subscription =
            runtime.subscribe(Arc::new(Printer::new(console.clone(), label.clone())));
        console.line(&format!(
            "streaming: {} (--stream / --no-stream); tools: {tool_names}",
            if config.stream { "on" } else { "off" }
        ));
        Ok(Self {
            runtime,
            console,
            label,
            failures: 0,
            turns: 0,
            _subscription: subscription,
            server,
        })
    }

    /// The runtime (for tests and embedding).
    pub fn runtime(&self) -> &AgentRuntime {
        &self.runtime
    }

    /// The simulated server, when offline.
    pub fn server(&self) -> Option<&SimulatedServer> {
        self.server.as_ref()
    }

    /// Turns that ended in an error.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Runs one line: a `/command` or a message to the agent.
    pub async fn handle_line(&mut self, line: &str) -> Flow {
        let line = line.trim();
        if line.is_empty() {
            return Flow::Continue;
        }
        if line.starts_with('/') {
            return self.command(line);
        }
        self.turns += 1;
        let span = tracing::info_span!("demo.turn", turn = self.turns);
        self.console.take_text_printed();
        let result = self.runtime.run(line).instrument(span).await;
        self.console.end_text();
        match result {
            Ok(outcome) => {
                let printed = self.console.take_text_printed();
                match outcome.status {
                    RunStatus::Completed if !printed => {
                        if let Some(text) = outcome.final_text.filter(|t| !t.is_empty()) {
                            self.console.text(&self.label, &text);
                            self.console.end_text();
                        }
                    }
                    RunStatus::Completed => {}
                    RunStatus::Cancelled => self.console.line("(cancelled)"),
                    RunStatus::MaxIterations => self.console.line(&format!(
                        "(stopped after {} model calls without a final answer)",
                        outcome.iterations
                    )),
                    RunStatus::Failed => self.console.line("(the run failed)"),
                }
            }
            Err(e) => {
                self.failures += 1;
                self.console.line(&format!("error [{}]: {e}", e.code()));
            }
        }
        Flow::Continue
    }

    fn command(&mut self, line: &str) -> Flow {
        let name = line.split_whitespace().next().unwrap_or_default();
        match name {
            "/quit" | "/exit" => return Flow::Quit,
            "/help" => {
                for l in HELP.lines() {
                    self.console.line(l);
                }
            }
            "/usage" => self.print_usage(),
            "/memory" => self.print_memory(),
            "/sub-agents" => self
                .console
                .line("sub-agents: not available yet (delegation is not in this build)"),
            other => self
                .console
                .line(&format!("unknown command {other}; try /help")),
        }
        Flow::Continue
    }

    fn print_usage(&self) {
        let usages = self.runtime.usages();
        if usages.is_empty() {
            self.console.line("usage: no model calls yet");
            return;
        }
        let (mut prompt, mut completion, mut total) = (0u64, 0u64, 0u64);
        for (i, u) in usages.iter().enumerate() {
            let mut extra = String::new();
            if let Some(c) = u.cached_tokens.filter(|c| *c > 0) {
                extra.push_str(&format!(", cached {c}"));
            }
            if let Some(r) = u.reasoning_tokens.filter(|r| *r > 0) {
                extra.push_str(&format!(", reasoning {r}"));
            }
            if let Some(source) = u.source() {
                extra.push_str(&format!(" ({source})"));
            }
            self.console.line(&format!(
                "usage: call {}: prompt {}, completion {}, total {}{extra}",
                i + 1,
                u.prompt_tokens,
                u.completion_tokens,
                u.total_tokens
            ));
            prompt += u.prompt_tokens;
            completion += u.completion_tokens;
            total += u.total_tokens;
        }
        let calls = usages.len();
        let plural = if calls == 1 { "call" } else { "calls" };
        self.console.line(&format!(
            "usage: total {calls} {plural}: prompt {prompt}, completion {completion}, total {total}"
        ));
    }

    fn print_memory(&self) {
        let state = self.runtime.state();
        let episodes = &state.history.episodic_memories;
        if episodes.is_empty() {
            self.console.line(&format!(
                "memory: no episodic memories ({} messages in the live history; compression is not wired into the demo yet)",
                state.history.messages.len()
            ));
            return;
        }
        for e in episodes {
            let summary: String = e.summary.chars().take(120).collect();
            self.console.line(&format!(
                "memory: {} covers {} messages: {summary}",
                e.id, e.message_count
            ));
        }
    }
}

const HELP: &str = "\
commands:
  /usage       token usage per model call and totals
  /memory      episodic memories (compressed history)
  /sub-agents  sub-agent statistics
  /help        this list
  /quit        leave
anything else is sent to the agent; try \"What is the weather in Beijing and Shenzhen?\"";

/// Runs `lines` in order, echoing each as `you> …`; stops early at `/quit`.
pub async fn run_script(demo: &mut Demo, lines: &[String]) {
    for line in lines {
        demo.console.line(&format!("you> {line}"));
        if demo.handle_line(line).await == Flow::Quit {
            break;
        }
    }
}

/// Reads stdin lines until EOF or `/quit`, blocking this thread between lines and
/// running each on `rt`.
pub fn run_interactive(rt: &tokio::runtime::Runtime, demo: &mut Demo) {
    demo.console
        .line("Type a message, /help for commands, /quit to leave.");
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        demo.console.prompt("you> ");
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => {
                demo.console.line("");
                break;
            }
            Ok(_) => {
                if rt.block_on(demo.handle_line(&line)) == Flow::Quit {
                    break;
                }
            }
            Err(e) => {
                demo.console.line(&format!("could not read input: {e}"));
                break;
            }
        }
    }
}

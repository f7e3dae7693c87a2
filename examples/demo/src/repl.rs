//! The demo session: starts the endpoint (the simulated server unless a real one is
//! configured), builds the runtime with the demo tools, and runs lines — messages or
//! `/commands` — from a script or an interactive prompt.

use std::io::BufRead;
use std::sync::Arc;

use arkagent::compress::ContextCompressorConfig;
use arkagent::runtime::{DelegationConfig, SubAgentDefinition};
use arkagent::subagent::{ChildUsageSummary, SubAgentContext, SubAgentStatus};
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, ArkAgentError, Compression, ModelConfig, RunStatus,
    Subscription,
};
use tracing::Instrument;

use crate::config::{DemoConfig, Endpoint, SIMULATED_API_KEY};
use crate::console::{first_line, Console, Printer, StreamCounts, StreamTally};
use crate::server::research::RESEARCHER;
use crate::server::{ServerOptions, SimulatedServer, SIMULATED_LABEL, SIMULATED_MODEL};
use crate::tools::demo_tools;
use crate::transport::UreqTransport;

const SYSTEM_PROMPT: &str = include_str!("system_prompt.md");

/// The researcher worker's system prompt.
const RESEARCHER_PROMPT: &str = "You are the researcher, a sub-agent. You get one task \
    and work on it in your own context. Report the key facts in a few sentences; say what \
    you are unsure about. Do not ask the user questions.";

/// What the researcher is good at (shown to the parent model in `delegate_task`).
const RESEARCHER_DESCRIPTION: &str =
    "looks into a topic on its own and reports the key facts in a few sentences";

/// Offline compression threshold (prompt tokens): small, so a few turns of the demo
/// trigger a compression. A real endpoint keeps the default (64000).
pub const OFFLINE_COMPRESSION_THRESHOLD: u64 = 1500;
/// Offline: messages kept verbatim after a compression (a real endpoint keeps 10).
pub const OFFLINE_KEEP_RECENT: usize = 6;

/// The compression settings: small offline, the library defaults for a real endpoint.
pub fn compression_config(offline: bool) -> ContextCompressorConfig {
    if offline {
        ContextCompressorConfig {
            keep_recent_message_count: OFFLINE_KEEP_RECENT,
            ..ContextCompressorConfig::with_threshold(OFFLINE_COMPRESSION_THRESHOLD)
        }
    } else {
        ContextCompressorConfig::default()
    }
}

/// The researcher's config: the parent's model and tools, its own prompt, no compression
/// (a worker's life is one short task), few iterations. The runtime strips delegation.
fn researcher_config(parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError> {
    let mut config = parent.clone();
    config.system_prompt = RESEARCHER_PROMPT.to_owned();
    config.compression = None;
    config.max_iterations = config.max_iterations.min(4);
    Ok(config)
}

/// Delegation: the `researcher` worker, and `clone`.
pub fn delegation_config() -> Result<DelegationConfig, ArkAgentError> {
    let mut delegation = DelegationConfig {
        allow_clone: true,
        ..DelegationConfig::default()
    };
    delegation.register(SubAgentDefinition::create(
        RESEARCHER,
        RESEARCHER_DESCRIPTION,
        Arc::new(researcher_config),
    )?)?;
    Ok(delegation)
}

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
    stream: bool,
    counts: Arc<StreamCounts>,
    /// `--image` photos waiting for the first message (IMG-1).
    photos: Vec<arkagent::ContentPart>,
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
                console.line("  set ARKAGENT_BASE_URL and ARKAGENT_API_KEY (and ARKAGENT_MODEL, default deepseek-v4-flash) to use a real endpoint");
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
        if config.price.is_some() {
            model.price = config.price.clone();
        }
        let offline = config.endpoint == Endpoint::Simulated;
        let compression = compression_config(offline);
        let (threshold, keep) = (
            compression.total_token_threshold,
            compression.keep_recent_message_count,
        );
        let mut runtime_config = AgentRuntimeConfig::new(model);
        runtime_config.system_prompt = SYSTEM_PROMPT.trim().to_owned();
        runtime_config.tools = demo_tools()?;
        runtime_config.compression = Some(Compression::Default {
            config: compression,
            summarizer: None,
        });
        runtime_config.delegation = Some(delegation_config()?);
        for (name, url) in &config.mcp {
            let mut server = arkagent::mcp::McpServerConfig::new(name, url);
            if let Some(token) = &config.mcp_token {
                server = server.with_header("Authorization", format!("Bearer {token}"));
            }
            runtime_config.mcp_servers.push(arkagent::mcp::McpServer::new(server)?);
            console.line(&format!("MCP server {name}: {url} (connected at the first message)"));
        }
        let runtime = AgentRuntime::new(runtime_config, transport)?;
        let tool_names: Vec<String> = runtime
            .tool_definitions()
            .into_iter()
            .map(|d| d.name)
            .collect();
        let printer = Printer::new(console.clone(), label.clone());
        let counts = printer.counts();
        let subscription = runtime.subscribe(Arc::new(printer));
        console.line(&format!(
            "streaming: {} (--stream / --no-stream); tools: {}",
            if config.stream { "on" } else { "off" },
            tool_names.join(", ")
        ));
        let setting = if offline {
            "small for the offline demo"
        } else {
            "the library defaults"
        };
        console.line(&format!(
            "memory: compression at {threshold} prompt tokens, keeping the last {keep} messages ({setting}); /memory lists episodes"
        ));
        console.line(&format!(
            "delegation: worker \"{RESEARCHER}\" and clone via delegate_task; try \"research the history of the baguette\", then /sub-agents"
        ));
        console.line(&match &runtime.config().model.price {
            Some(p) => format!("cost: {} (--price); /cost shows what the session cost", crate::cost::price_text(p)),
            None => "cost: no price set (--price CURRENCY:INPUT:CACHED:OUTPUT per 1M tokens); /cost shows cached tokens".to_owned(),
        });
        let mut photos = Vec::new();
        for path in &config.images {
            let (photo, line) = crate::photos::load(path).map_err(DemoError)?;
            console.line(&line);
            photos.push(photo);
        }
        Ok(Self {
            runtime,
            console,
            label,
            failures: 0,
            turns: 0,
            stream: config.stream,
            counts,
            photos,
            _subscription: subscription,
            server,
        })
    }

    /// How many streamed pieces (text, reasoning, tool-call deltas) the agent's own model
    /// calls have delivered so far.
    pub fn stream_tally(&self) -> StreamTally {
        self.counts.tally()
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
        let input = crate::photos::with_photos(line, std::mem::take(&mut self.photos));
        let result = self.runtime.run(input).instrument(span).await;
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
                    // The demo's tools never ask (TOOL-1); a library user's might.
                    RunStatus::AwaitingApproval => self.console.line(&format!(
                        "(waiting for approval of {} tool call(s))",
                        outcome.pending_approvals.len()
                    )),
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
            "/cost" => {
                for l in crate::cost::report(&self.runtime) {
                    self.console.line(&l);
                }
            }
            "/memory" => self.print_memory(),
            "/sub-agents" => self.print_sub_agents(),
            other => self
                .console
                .line(&format!("unknown command {other}; try /help")),
        }
        Flow::Continue
    }

    fn print_usage(&self) {
        let usages = self.runtime.usages();
        let state = self.runtime.state();
        if usages.is_empty() && state.child_usages.is_empty() {
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
            if let Some(source) = u.source_name() {
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
        for record in &state.child_usages {
            self.console.line(&format!(
                "usage: sub-agent {} ({}): {}",
                record.assignee,
                record.child_session_id,
                summary_text(&record.usage)
            ));
        }
        let totals = self.runtime.total_usage();
        self.console.line(&format!(
            "usage: sub-agents: {}",
            summary_text(&totals.children)
        ));
        self.console.line(&format!(
            "usage: session total (this agent + sub-agents, AgentRuntime::total_usage): {}",
            summary_text(&totals.total)
        ));
        if self.stream {
            let t = self.stream_tally();
            self.console.line(&format!(
                "stream: {} text deltas, {} tool-call deltas, {} reasoning deltas received",
                t.text_deltas, t.tool_call_deltas, t.reasoning_deltas
            ));
        }
    }

    fn print_memory(&self) {
        let state = self.runtime.state();
        let episodes = &state.history.episodic_memories;
        let live = state.history.messages.len();
        if episodes.is_empty() {
            let threshold = self
                .runtime
                .config()
                .compression
                .as_ref()
                .and_then(|c| match c {
                    Compression::Default { config, .. } => Some(config.total_token_threshold),
                    Compression::Custom(_) => None,
                })
                .map(|t| format!("; compression starts at {t} prompt tokens"))
                .unwrap_or_default();
            self.console.line(&format!(
                "memory: no episodic memories yet ({live} messages in the live history{threshold})"
            ));
            return;
        }
        self.console.line(&format!(
            "memory: {} episode(s); {live} messages in the live history",
            episodes.len()
        ));
        for e in episodes {
            let goal = between(&e.summary, "<overall_goal>", "</overall_goal>")
                .map(first_line)
                .unwrap_or_else(|| first_line(&e.summary));
            self.console.line(&format!(
                "memory: episode {}: {} messages; goal: {goal}",
                e.id, e.message_count
            ));
        }
    }

    fn print_sub_agents(&self) {
        let Some(registry) = self.runtime.sub_agent_registry() else {
            self.console.line("sub-agents: delegation is off");
            return;
        };
        let active = registry.active();
        if active.is_empty() {
            self.console.line("sub-agents: active: none");
        } else {
            self.console
                .line(&format!("sub-agents: active ({}):", active.len()));
            for c in &active {
                self.console.line(&format!(
                    "  {} {} (role {}): {}",
                    c.id,
                    c.assignee,
                    c.role,
                    first_line(&c.task)
                ));
            }
        }
        let history = registry.history();
        if history.is_empty() {
            self.console.line("sub-agents: history: none yet");
        } else {
            self.console
                .line(&format!("sub-agents: history ({}):", history.len()));
            for c in &history {
                self.console.line(&format!("  {}", history_line(c)));
            }
        }
        let stats = registry.stats();
        self.console.line(&format!(
            "sub-agents: stats: {} active, {} in history, {} completed, {} tokens",
            stats.active, stats.history, stats.completed_count, stats.total_tokens
        ));
    }
}

/// `prompt P, completion C, total T (N calls)`.
fn summary_text(u: &ChildUsageSummary) -> String {
    let calls = if u.call_count == 1 { "call" } else { "calls" };
    format!(
        "{} {calls}: prompt {}, completion {}, total {}",
        u.call_count, u.prompt_tokens, u.completion_tokens, u.total_tokens
    )
}

/// One ended sub-agent: id, assignee, role, status, tokens, summary's first line.
fn history_line(c: &SubAgentContext) -> String {
    let result = c.result.as_ref();
    let status = match c.status {
        SubAgentStatus::Active => "active".to_owned(),
        SubAgentStatus::Completed => match result.and_then(|r| r.forced_reason.as_deref()) {
            Some(reason) => format!("completed (forced: {reason})"),
            None => "completed".to_owned(),
        },
        SubAgentStatus::Failed => match result.and_then(|r| r.error_code.as_deref()) {
            Some(code) => format!("failed [{code}]"),
            None => "failed".to_owned(),
        },
    };
    let tokens = result.map_or(0, |r| r.token_count);
    let summary = result.map(|r| first_line(&r.summary)).unwrap_or_default();
    format!(
        "{} {} (role {}) {status}, {tokens} tokens: {summary}",
        c.id, c.assignee, c.role
    )
}

/// The text between the first `open` and the next `close`.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

const HELP: &str = "\
commands:
  /usage       token usage per model call, per sub-agent, and the session total
  /cost        what the session cost at the --price, and how much prompt was cached
  /memory      episodic memories (compressed history)
  /sub-agents  sub-agents: active, history and stats
  /help        this list
  /quit        leave
anything else is sent to the agent; try \"What is the weather in Beijing and Shenzhen?\"
or \"research the history of the baguette\" (delegated to the researcher sub-agent)";

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

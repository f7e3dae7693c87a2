//! Command line and environment: which endpoint (offline simulated server by default, a
//! real one when `ARKAGENT_BASE_URL` and `ARKAGENT_API_KEY` are set, with the model
//! `ARKAGENT_MODEL`, default [`DEFAULT_MODEL`]), streaming on or off, and the scripted
//! input.

use std::fmt;
use std::path::PathBuf;

use arkagent::ModelPrice;

/// Streaming default: text appears piece by piece as the model sends it (`--stream` /
/// `--no-stream` override it).
pub const DEFAULT_STREAM: bool = true;

/// The key the in-process simulated server accepts. Not a secret: it only opens a
/// loopback server that lives as long as the demo.
pub const SIMULATED_API_KEY: &str = "sk-arkagent-simulated";

/// Environment variables that select a real endpoint.
pub const ENV_BASE_URL: &str = "ARKAGENT_BASE_URL";
/// See [`ENV_BASE_URL`].
pub const ENV_API_KEY: &str = "ARKAGENT_API_KEY";
/// See [`ENV_BASE_URL`].
pub const ENV_MODEL: &str = "ARKAGENT_MODEL";

/// The model of a real endpoint when `ARKAGENT_MODEL` is not set: DeepSeek V4 Flash (a
/// thinking model; `deepseek-chat` was retired on 2026-07-24).
pub const DEFAULT_MODEL: &str = "deepseek-v4-flash";

/// Usage text for `--help`.
pub const USAGE: &str = "\
arkagent-demo — desktop demo host for the arkagent runtime

USAGE:
    arkagent-demo [OPTIONS]              interactive REPL
    arkagent-demo --say TEXT [--say …]   run these lines, print the transcript, exit
    arkagent-demo --script FILE          run FILE's lines (blank and # lines skipped), exit

OPTIONS:
    --say TEXT      a line to run (message or /command); repeatable
    --script FILE   a file of lines to run
    --stream        ask the model for an SSE stream (the default)
    --no-stream     ask for whole responses
    --offline       use the simulated server even if ARKAGENT_* is set
    --image PATH    attach this photo (JPEG, PNG, WebP, GIF) to the first message;
                    repeatable (several photos go with that message)
    --price CURRENCY:INPUT:CACHED:OUTPUT[:CACHE_WRITE]
                    what the model costs per 1M tokens (uncached input, cached input,
                    output, optionally cache writes), e.g. --price USD:0.27:0.07:1.10
                    (check your provider's current table); without it nothing is priced
    --mcp [NAME=]URL
                    offer the tools of the MCP server at URL (Streamable HTTP) as
                    NAME__tool (NAME defaults to mcp, mcp2, …); repeatable. The simulated
                    model calls one when a line names it, e.g. 'call mcp__echo {\"text\":\"hi\"}'
    -h, --help      this text

ENVIRONMENT:
    ARKAGENT_BASE_URL, ARKAGENT_API_KEY, ARKAGENT_MODEL
                    the first two set: use that OpenAI-compatible endpoint (the key is never
                    printed) with ARKAGENT_MODEL (default deepseek-v4-flash, e.g. with
                    ARKAGENT_BASE_URL=https://api.deepseek.com); otherwise a simulated model
                    on 127.0.0.1 answers offline
    ARKAGENT_MCP_TOKEN
                    sent to every --mcp server as \"Authorization: Bearer …\" (never printed)
    RUST_LOG        tracing filter for stderr (default: warn), e.g. RUST_LOG=info

COMMANDS (in the REPL or a script):
    /usage  per-call token usage, sub-agents' usage and the session total
    /cost   what the session cost at the --price, and how much of the prompt was cached
    /memory  episodic memories (compressed history)
    /sub-agents  sub-agents: active, history, stats
    /help   this list                           /quit    leave

OFFLINE, THE SIMULATED MODEL
    answers weather, time and arithmetic questions with tool calls (two cities: two
    parallel calls); hands \"research …\" / \"delegate …\" to the researcher sub-agent
    through delegate_task; summarizes the history into episodic memory once the prompt
    reaches 1500 tokens (a real endpoint: 64000).
";

/// Which model the demo talks to.
#[derive(Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// The in-process simulated server on loopback.
    Simulated,
    /// A real OpenAI-compatible endpoint.
    Real {
        /// Base URL, e.g. `https://api.deepseek.com/v1`.
        base_url: String,
        /// API key. Never printed.
        api_key: String,
        /// Model name.
        model: String,
    },
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Simulated => f.write_str("Simulated"),
            Self::Real {
                base_url, model, ..
            } => f
                .debug_struct("Real")
                .field("base_url", base_url)
                .field("api_key", &"<redacted>")
                .field("model", model)
                .finish(),
        }
    }
}

/// One scripted input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptItem {
    /// A line given with `--say`.
    Say(String),
    /// A file given with `--script`.
    File(PathBuf),
}

/// Everything the demo needs to start.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoConfig {
    /// The model endpoint.
    pub endpoint: Endpoint,
    /// Ask for SSE streams.
    pub stream: bool,
    /// Scripted input; empty means interactive.
    pub script: Vec<ScriptItem>,
    /// A note for the user about the environment (e.g. a half-set ARKAGENT_* group).
    pub notice: Option<String>,
    /// What the model costs (`--price`); `None`: nothing is priced (COST-2).
    pub price: Option<ModelPrice>,
    /// Photos attached to the first message (`--image`, IMG-1).
    pub images: Vec<PathBuf>,
    /// MCP servers (`--mcp [NAME=]URL`, MCP-3): name and URL.
    pub mcp: Vec<(String, String)>,
    /// `ARKAGENT_MCP_TOKEN`: the bearer token sent to every MCP server.
    pub mcp_token: Option<String>,
}

impl DemoConfig {
    /// The offline default: simulated server, default streaming, no script.
    pub fn offline() -> Self {
        Self {
            endpoint: Endpoint::Simulated,
            stream: DEFAULT_STREAM,
            script: Vec::new(),
            notice: None,
            price: None,
            images: Vec::new(),
            mcp: Vec::new(),
            mcp_token: None,
        }
    }

    /// True when lines are scripted (non-interactive).
    pub fn is_scripted(&self) -> bool {
        !self.script.is_empty()
    }

    /// The scripted lines in order, reading `--script` files. Blank lines and lines
    /// starting with `#` in files are skipped.
    pub fn script_lines(&self) -> std::io::Result<Vec<String>> {
        let mut lines = Vec::new();
        for item in &self.script {
            match item {
                ScriptItem::Say(text) => lines.push(text.clone()),
                ScriptItem::File(path) => {
                    let text = std::fs::read_to_string(path)?;
                    lines.extend(
                        text.lines()
                            .map(str::trim)
                            .filter(|l| !l.is_empty() && !l.starts_with('#'))
                            .map(str::to_owned),
                    );
                }
            }
        }
        Ok(lines)
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Print [`USAGE`].
    Help,
    /// Run the demo (boxed: the config is much larger than `Help`).
    Run(Box<DemoConfig>),
}

/// Parses the arguments (without the program name) and reads the endpoint from `env`.
/// Errors are one-line messages for the user.
pub fn parse_args(
    args: impl IntoIterator<Item = String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Command, String> {
    let mut config = DemoConfig::offline();
    let mut offline = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--stream" => config.stream = true,
            "--no-stream" => config.stream = false,
            "--offline" => offline = true,
            "--say" => config.script.push(ScriptItem::Say(
                args.next().ok_or("--say needs a TEXT argument")?,
            )),
            "--script" => config.script.push(ScriptItem::File(
                args.next().ok_or("--script needs a FILE argument")?.into(),
            )),
            "--image" => config.images.push(args.next().ok_or("--image needs a PATH argument")?.into()),
            "--mcp" => {
                let spec = args.next().ok_or("--mcp needs [NAME=]URL")?;
                let n = config.mcp.len() + 1;
                let (name, url) = match spec.split_once('=') {
                    Some((name, url)) if !name.contains(':') => (name.to_owned(), url.to_owned()),
                    _ => (if n == 1 { "mcp".to_owned() } else { format!("mcp{n}") }, spec),
                };
                config.mcp.push((name, url));
            }
            "--price" => {
                config.price = Some(parse_price(
                    &args.next().ok_or("--price needs CURRENCY:INPUT:CACHED:OUTPUT")?,
                )?)
            }
            other => return Err(format!("unknown argument {other:?}; see --help")),
        }
    }
    config.mcp_token = env("ARKAGENT_MCP_TOKEN").filter(|v| !v.trim().is_empty());
    if !offline {
        let values = [ENV_BASE_URL, ENV_API_KEY]
            .map(|name| (name, env(name).filter(|v| !v.trim().is_empty())));
        let model = env(ENV_MODEL).filter(|v| !v.trim().is_empty()).unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        match values {
            [(_, Some(base_url)), (_, Some(api_key))] => {
                config.endpoint = Endpoint::Real {
                    base_url: base_url.trim().to_owned(),
                    api_key: api_key.trim().to_owned(),
                    model: model.trim().to_owned(),
                };
            }
            _ if values.iter().any(|(_, v)| v.is_some()) => {
                let missing: Vec<&str> = values
                    .iter()
                    .filter(|(_, v)| v.is_none())
                    .map(|(n, _)| *n)
                    .collect();
                config.notice = Some(format!(
                    "{} not set, so the offline simulated model is used (a real endpoint needs both)",
                    missing.join(" and ")
                ));
            }
            _ => {}
        }
    }
    Ok(Command::Run(Box::new(config)))
}

/// `CURRENCY:INPUT:CACHED:OUTPUT[:CACHE_WRITE]` (per 1M tokens), checked as the library
/// checks a price.
pub fn parse_price(spec: &str) -> Result<ModelPrice, String> {
    let bad = |why: &str| format!("--price {spec:?}: {why}; expected CURRENCY:INPUT:CACHED:OUTPUT[:CACHE_WRITE], e.g. USD:0.27:0.07:1.10");
    let parts: Vec<&str> = spec.split(':').collect();
    let (currency, rates) = match parts.split_first() {
        Some((c, r)) if r.len() == 3 || r.len() == 4 => (*c, r),
        _ => return Err(bad("wrong number of fields")),
    };
    let rates: Vec<f64> = rates
        .iter()
        .map(|r| r.trim().parse::<f64>().map_err(|_| bad(&format!("{r:?} is not a number"))))
        .collect::<Result<_, _>>()?;
    let mut price = ModelPrice::new(currency.trim(), rates[0], rates[1], rates[2]);
    price.cache_write_per_million = rates.get(3).copied();
    price.validate().map_err(|e| bad(&e))?;
    Ok(price)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_2_price_flag_parses_and_refuses_what_the_library_refuses() {
        let Ok(Command::Run(c)) = parse_args(args(&["--price", "USD:0.27:0.07:1.10"]), |_| None) else {
            panic!("parse")
        };
        assert_eq!(c.price, Some(ModelPrice::new("USD", 0.27, 0.07, 1.10)));
        assert_eq!(
            parse_price("CNY:2:0.5:8:2.5"),
            Ok(ModelPrice::new("CNY", 2.0, 0.5, 8.0).with_cache_write(2.5))
        );
        assert_eq!(DemoConfig::offline().price, None, "no price unless asked");
        for bad in ["USD:1:1", "USD:a:1:1", ":1:1:1", "USD:-1:1:1", "USD:1:NaN:1", "USD:1:1:1:1:1"] {
            assert!(parse_args(args(&["--price", bad]), |_| None).is_err(), "{bad}");
        }
        assert!(parse_args(args(&["--price"]), |_| None).is_err());
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn dx_2_offline_by_default_and_real_with_the_url_and_key_variables() {
        let Ok(Command::Run(c)) = parse_args(args(&["--say", "hi"]), |_| None) else {
            panic!("parse")
        };
        assert_eq!(c.endpoint, Endpoint::Simulated);
        assert_eq!(c.stream, DEFAULT_STREAM);
        assert_eq!(c.script, [ScriptItem::Say("hi".into())]);

        let all = |n: &str| Some(format!("value-of-{n}"));
        let Ok(Command::Run(c)) = parse_args(args(&["--stream"]), all) else {
            panic!("parse")
        };
        assert!(
            matches!(&c.endpoint, Endpoint::Real { model, .. } if model == "value-of-ARKAGENT_MODEL")
        );
        assert!(c.stream);
        assert!(!format!("{c:?}").contains("value-of-ARKAGENT_API_KEY"));

        let Ok(Command::Run(c)) = parse_args(args(&["--offline"]), all) else {
            panic!("parse")
        };
        assert_eq!(c.endpoint, Endpoint::Simulated);

        let partial =
            |n: &str| (n == ENV_BASE_URL).then(|| "https://example.invalid/v1".to_owned());
        let Ok(Command::Run(c)) = parse_args(args(&[]), partial) else {
            panic!("parse")
        };
        assert_eq!(c.endpoint, Endpoint::Simulated);
        assert!(c.notice.as_deref().is_some_and(|n| n.contains(ENV_API_KEY)));
        // THINK-5: without ARKAGENT_MODEL, a model that exists.
        let no_model = |n: &str| (n != ENV_MODEL).then(|| format!("value-of-{n}"));
        let Ok(Command::Run(c)) = parse_args(args(&[]), no_model) else {
            panic!("parse")
        };
        assert!(matches!(&c.endpoint, Endpoint::Real { model, .. } if model == "deepseek-v4-flash"));

        assert!(parse_args(args(&["--say"]), |_| None).is_err());
        assert!(parse_args(args(&["--bogus"]), |_| None).is_err());
        assert_eq!(parse_args(args(&["--help"]), |_| None), Ok(Command::Help));
    }
}

//! THINK-2, THINK-4: the thinking controls of a model config — which provider it is (set,
//! or recognised from the base URL and the model name), how much the model thinks, and
//! how its reasoning is sent back. Values only: each wire format maps them onto its own
//! request fields (`format::openai`, `format::anthropic`).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// How hard a model thinks, where the provider takes an effort level (`reasoning_effort`,
/// Anthropic's `output_config.effort`). Sent as its name; the provider maps the levels it
/// does not have (DeepSeek, for one, takes `low`/`medium` as `high`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effort {
    /// `"minimal"`.
    Minimal,
    /// `"low"`.
    Low,
    /// `"medium"`.
    Medium,
    /// `"high"`.
    High,
    /// `"xhigh"`.
    Xhigh,
    /// `"max"`.
    Max,
}

impl Effort {
    /// Every level, weakest first.
    pub const ALL: [Effort; 6] = [Self::Minimal, Self::Low, Self::Medium, Self::High, Self::Xhigh, Self::Max];

    /// The level's name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    /// The level named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// THINK-4: how much a model thinks. JSON: `"off"`, `"on"`, `{"effort": "high"}` or
/// `{"budget_tokens": 2048}`; unset (the config's `None`) leaves the provider's default.
///
/// ```
/// use arkagent::llm::{Effort, Thinking};
/// let t: Thinking = serde_json::from_str(r#"{"effort":"low"}"#).unwrap();
/// assert_eq!(t, Thinking::Effort(Effort::Low));
/// assert_eq!(serde_json::to_string(&Thinking::Off).unwrap(), r#""off""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Thinking {
    /// No thinking: the provider's switch set to off.
    Off,
    /// Thinking on, at the provider's default depth.
    On,
    /// Thinking on at this effort level.
    Effort(Effort),
    /// Thinking on with this many tokens for it (Qwen `thinking_budget`, Anthropic
    /// `budget_tokens`).
    Budget(u32),
}

impl Thinking {
    /// True for every setting but [`Thinking::Off`].
    pub fn is_on(self) -> bool {
        self != Self::Off
    }
}

impl Serialize for Thinking {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Self::Off => serializer.serialize_str("off"),
            Self::On => serializer.serialize_str("on"),
            Self::Effort(e) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("effort", e.as_str())?;
                map.end()
            }
            Self::Budget(n) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("budget_tokens", n)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Thinking {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Thinking;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#""off", "on", {"effort": "minimal"|"low"|"medium"|"high"|"xhigh"|"max"} or {"budget_tokens": n}"#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Thinking, E> {
                match v {
                    "off" => Ok(Thinking::Off),
                    "on" => Ok(Thinking::On),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Thinking, A::Error> {
                let key: String = map.next_key()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let value = match key.as_str() {
                    "effort" => {
                        let name: String = map.next_value()?;
                        Thinking::Effort(Effort::from_name(&name).ok_or_else(|| de::Error::invalid_value(de::Unexpected::Str(&name), &self))?)
                    }
                    "budget_tokens" => Thinking::Budget(map.next_value()?),
                    other => return Err(de::Error::unknown_field(other, &["effort", "budget_tokens"])),
                };
                if map.next_key::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(2, &self));
                }
                Ok(value)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// THINK-2: which of a model's earlier reasoning goes back in later requests. JSON: its
/// name; default `auto`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningReplay {
    /// The provider's rule (the table in README, "Thinking models"): `tool_calls` on
    /// Chat Completions (`none` for Qwen, which does not need it, and OpenAI, which returns
    /// none; `all` for GLM with `clear_thinking: false` in `extra_body`), `all` on Anthropic
    /// Messages (earlier turns' blocks keep the prompt cache; the provider ignores them).
    #[default]
    Auto,
    /// The reasoning of every answer that called a tool, as received (the empty string
    /// included); never where the provider sent none, except `""` to DeepSeek and Kimi
    /// while they think (they refuse a tool-call message without the field).
    ToolCalls,
    /// The reasoning of every answer that has some (GLM's "preserved thinking").
    All,
    /// Never (a provider that refuses the field).
    None,
}

impl ReasoningReplay {
    /// The policy's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::ToolCalls => "tool_calls",
            Self::All => "all",
            Self::None => "none",
        }
    }

    /// Every policy.
    pub const ALL: [ReasoningReplay; 4] = [Self::Auto, Self::ToolCalls, Self::All, Self::None];

    /// Whether an answer's reasoning goes back: `has_calls` when it called a tool.
    /// [`ReasoningReplay::Auto`] must be resolved first (it sends nothing here).
    pub fn sends(self, has_calls: bool) -> bool {
        match self {
            Self::ToolCalls => has_calls,
            Self::All => true,
            Self::None | Self::Auto => false,
        }
    }
}

/// THINK-4: the provider behind a config, which decides how thinking is switched and
/// what its requests must not carry. Set explicitly (`provider`) or recognised from the
/// base URL, else from the model name ([`Provider::recognise`]). JSON: its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// DeepSeek (`api.deepseek.com`, `deepseek-*`).
    Deepseek,
    /// Moonshot Kimi (`api.moonshot.cn` / `.ai`, `kimi-*`, `moonshot-*`).
    Kimi,
    /// Zhipu GLM (`open.bigmodel.cn`, `api.z.ai`, `glm-*`).
    Glm,
    /// Qwen on DashScope (`dashscope*.aliyuncs.com`, `qwen*`, `qwq*`).
    Qwen,
    /// Doubao on Volcengine Ark (`*.volces.com`, `doubao-*`).
    Doubao,
    /// Anthropic (`api.anthropic.com`, `claude-*`).
    Anthropic,
    /// OpenAI (`api.openai.com`, `gpt-*`, `o1*`, `o3*`, `o4*`).
    Openai,
    /// Anything else: an OpenAI-compatible or Anthropic-compatible server with no
    /// thinking switch the library knows.
    Other,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Provider; 8] = [Self::Deepseek, Self::Kimi, Self::Glm, Self::Qwen, Self::Doubao, Self::Anthropic, Self::Openai, Self::Other];

    /// The provider's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Deepseek => "deepseek",
            Self::Kimi => "kimi",
            Self::Glm => "glm",
            Self::Qwen => "qwen",
            Self::Doubao => "doubao",
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::Other => "other",
        }
    }

    /// The provider named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The provider of a base URL's host, else of a model name (a gateway or a local
    /// server serves many models: the host decides when it is known), else `Other`.
    ///
    /// ```
    /// use arkagent::llm::Provider;
    /// assert_eq!(Provider::recognise("https://api.deepseek.com", "deepseek-v4-flash"), Provider::Deepseek);
    /// assert_eq!(Provider::recognise("https://dashscope.aliyuncs.com/compatible-mode/v1", "deepseek-v4"), Provider::Qwen);
    /// assert_eq!(Provider::recognise("http://127.0.0.1:8080/v1", "kimi-k2.6"), Provider::Kimi);
    /// assert_eq!(Provider::recognise("http://127.0.0.1:8080/v1", "llama3"), Provider::Other);
    /// ```
    pub fn recognise(base_url: &str, model: &str) -> Self {
        Self::of_host(&host_of(base_url)).or_else(|| Self::of_model(&model.to_ascii_lowercase())).unwrap_or(Self::Other)
    }

    fn of_host(host: &str) -> Option<Self> {
        let ends = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
        Some(match () {
            () if ends("deepseek.com") => Self::Deepseek,
            () if ends("moonshot.cn") || ends("moonshot.ai") => Self::Kimi,
            () if ends("bigmodel.cn") || ends("z.ai") => Self::Glm,
            () if host.starts_with("dashscope") && ends("aliyuncs.com") => Self::Qwen,
            () if ends("volces.com") || ends("volcengineapi.com") => Self::Doubao,
            () if ends("anthropic.com") => Self::Anthropic,
            () if ends("openai.com") => Self::Openai,
            () => return None,
        })
    }

    fn of_model(model: &str) -> Option<Self> {
        let model = model.rsplit('/').next().unwrap_or(model);
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| model.starts_with(p));
        Some(match () {
            () if starts(&["deepseek"]) => Self::Deepseek,
            () if starts(&["kimi", "moonshot"]) => Self::Kimi,
            () if starts(&["glm"]) => Self::Glm,
            () if starts(&["qwen", "qwq"]) => Self::Qwen,
            () if starts(&["doubao"]) => Self::Doubao,
            () if starts(&["claude"]) => Self::Anthropic,
            () if starts(&["gpt-", "o1", "o3", "o4", "chatgpt"]) => Self::Openai,
            () => return None,
        })
    }
}

/// The host of a URL, lowercased, without port or credentials ("" when there is none).
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    host.to_ascii_lowercase()
}

/// Whether an OpenAI model is a reasoning model (o-series, gpt-5 family): it reasons
/// always and refuses a non-default `temperature`.
pub(crate) fn is_openai_reasoning_model(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5"].iter().any(|p| model.starts_with(p))
}

/// Whether an Anthropic model thinks when the request says nothing: the models with
/// preserved thinking (Claude Fable and Mythos 5.x, the 5.5 family) default to adaptive
/// thinking (Anthropic's preserved-thinking docs, read 2026-12-06). A gateway's prefix
/// (`anthropic/claude-…`, `us.anthropic.claude-…`) is passed over.
pub(crate) fn anthropic_thinks_by_default(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    model.contains("claude-fable") || model.contains("claude-mythos") || (model.contains("claude") && model.contains("-5-5"))
}

/// What one of Anthropic's own models takes for thinking, by its name (Anthropic's
/// adaptive-thinking and effort pages as quoted by SDKs and guides, read 2026-12-07; a
/// name the table does not place takes everything and the API decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ClaudeThinking {
    /// Adaptive only: `enabled` with `budget_tokens` is a 400 (Opus 4.7 and later, the
    /// Claude 5 models, Fable, Mythos).
    pub(crate) no_budget: bool,
    /// Always thinking: `disabled` is a 400, and so is any sampling temperature (Fable).
    pub(crate) always: bool,
    /// A version before 4.7, which has no `xhigh` effort.
    pub(crate) before_xhigh: bool,
}

impl ClaudeThinking {
    /// The rules of `model` (any case, a gateway's prefix passed over).
    pub(crate) fn of(model: &str) -> Self {
        let model = model.to_ascii_lowercase();
        let Some(at) = model.find("claude-") else { return Self::default() };
        let name = model.get(at + "claude-".len()..).unwrap_or_default();
        if name.starts_with("fable") {
            return Self { no_budget: true, always: true, before_xhigh: false };
        }
        if name.starts_with("mythos") {
            return Self { no_budget: true, always: false, before_xhigh: false };
        }
        let Some(version) = claude_version(name) else { return Self::default() };
        Self { no_budget: version >= (4, 7), always: false, before_xhigh: version < (4, 7) }
    }
}

/// The (major, minor) version in a Claude model name after `claude-`: `opus-4-8`,
/// `sonnet-4-20250514` (4.0: a date is no minor), `3-7-sonnet`, `opus-5`.
fn claude_version(name: &str) -> Option<(u32, u32)> {
    let parts: Vec<&str> = name.split(['-', '@', ':', '.']).collect();
    let number = |i: usize| parts.get(i).filter(|p| (1..=2).contains(&p.len())).and_then(|p| p.parse::<u32>().ok());
    let first = usize::from(number(0).is_none());
    let major = number(first)?;
    Some((major, number(first + 1).unwrap_or(0)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn think_4_thinking_settings_read_and_write_their_json() {
        for (json, value) in [
            (r#""off""#, Thinking::Off),
            (r#""on""#, Thinking::On),
            (r#"{"effort":"xhigh"}"#, Thinking::Effort(Effort::Xhigh)),
            (r#"{"budget_tokens":2048}"#, Thinking::Budget(2048)),
        ] {
            assert_eq!(serde_json::from_str::<Thinking>(json).unwrap(), value);
            assert_eq!(serde_json::to_string(&value).unwrap(), json);
        }
        for bad in [r#""yes""#, r#"{"effort":"huge"}"#, r#"{"budget_tokens":-1}"#, r#"{"effort":"low","budget_tokens":3}"#, r#"{}"#, "3", "true"] {
            assert!(serde_json::from_str::<Thinking>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn think_4_providers_are_recognised_by_host_then_model() {
        for (url, model, provider) in [
            ("https://api.deepseek.com", "whatever", Provider::Deepseek),
            ("https://api.deepseek.com/anthropic", "deepseek-v4-pro", Provider::Deepseek),
            ("https://api.moonshot.cn/v1", "kimi-k2.6", Provider::Kimi),
            ("https://api.moonshot.ai/v1", "x", Provider::Kimi),
            ("https://open.bigmodel.cn/api/paas/v4", "glm-5", Provider::Glm),
            ("https://api.z.ai/api/paas/v4", "glm-4.7", Provider::Glm),
            ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.5-plus", Provider::Qwen),
            ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "kimi-k2.5", Provider::Qwen),
            ("https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6", Provider::Doubao),
            ("https://api.anthropic.com/v1", "claude-sonnet-4-5", Provider::Anthropic),
            ("https://api.openai.com/v1", "gpt-5", Provider::Openai),
            ("https://user:pw@API.OPENAI.COM:443/v1", "x", Provider::Openai),
            ("https://openrouter.ai/api/v1", "deepseek/deepseek-v4-flash", Provider::Deepseek),
            ("http://10.0.2.2:11434/v1", "qwq-32b", Provider::Qwen),
            ("http://localhost/v1", "llama3.3", Provider::Other),
            ("https://evil-deepseek.com.example/v1", "llama", Provider::Other),
        ] {
            assert_eq!(Provider::recognise(url, model), provider, "{url} {model}");
        }
        for (model, no_budget, always, before_xhigh) in [
            ("claude-fable-5", true, true, false),
            ("anthropic/claude-fable-5", true, true, false),
            ("claude-mythos-5-1", true, false, false),
            ("claude-opus-4-8", true, false, false),
            ("us.anthropic.claude-opus-4-7-v1:0", true, false, false),
            ("claude-sonnet-5", true, false, false),
            ("claude-opus-5-5", true, false, false),
            ("claude-opus-4-6", false, false, true),
            ("claude-sonnet-4-5-20250929", false, false, true),
            ("claude-sonnet-4-20250514", false, false, true),
            ("claude-3-7-sonnet-latest", false, false, true),
            ("claude-x", false, false, false),
            ("claude-next", false, false, false),
            ("llama3", false, false, false),
        ] {
            assert_eq!(ClaudeThinking::of(model), ClaudeThinking { no_budget, always, before_xhigh }, "{model}");
        }
        assert!(anthropic_thinks_by_default("anthropic/claude-fable-5") && anthropic_thinks_by_default("Claude-Opus-5-5"));
        assert!(!anthropic_thinks_by_default("claude-opus-4-8") && !anthropic_thinks_by_default("qwen-5-5"));
        assert!(is_openai_reasoning_model("o3-mini") && is_openai_reasoning_model("gpt-5.1") && !is_openai_reasoning_model("gpt-4o"));
    }
}

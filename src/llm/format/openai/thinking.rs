//! THINK-2, THINK-4 on Chat Completions: how each provider's thinking switch is written,
//! which reasoning goes back, and what a thinking model refuses. The table is README's
//! "Thinking models" (sources and dates in `shared/notes/thinking-models.md`).

use serde_json::{json, Map, Value};

use crate::error::ErrorCode;
use crate::llm::config::ModelConfig;
use crate::llm::request::ToolChoice;
use crate::llm::thinking::{is_openai_reasoning_model, Effort, Provider, ReasoningReplay, Thinking};

/// Top-level fields every Chat Completions body of the library may carry: `extra_body`
/// cannot set them.
pub(crate) const OWNED_FIELDS: &[&str] =
    &["model", "messages", "tools", "tool_choice", "temperature", "max_tokens", "max_completion_tokens", "stream", "stream_options"];

/// The replay policy of `config` on this wire: `auto` is `tool_calls`, except for Qwen,
/// which does not need its reasoning back, and OpenAI, which returns none (a history from
/// another provider — a seeded worker, a session moved to another model — keeps its
/// reasoning to itself): `none`; and GLM with `clear_thinking: false` in `extra_body`
/// (preserved thinking): `all`.
pub(crate) fn replay(config: &ModelConfig) -> ReasoningReplay {
    match config.reasoning_replay {
        ReasoningReplay::Auto if matches!(config.provider(), Provider::Qwen | Provider::Openai) => ReasoningReplay::None,
        // GLM's preserved thinking (`clear_thinking: false`) wants every answer's reasoning back.
        ReasoningReplay::Auto if config.provider() == Provider::Glm && preserves_thinking(&config.extra_body) => ReasoningReplay::All,
        ReasoningReplay::Auto => ReasoningReplay::ToolCalls,
        other => other,
    }
}

/// Whether a tool-call answer sent back without reasoning carries `reasoning_content: ""`:
/// DeepSeek and Kimi, thinking (set, or their default), refuse a tool-call message without
/// the field ("Missing `reasoning_content` field in the assistant message at message
/// index N"), also for an answer that never had reasoning (a session from `deepseek-chat`,
/// before thinking; another provider's history).
pub(crate) fn pads_missing_reasoning(config: &ModelConfig) -> bool {
    matches!(config.provider(), Provider::Deepseek | Provider::Kimi) && config.thinking.is_none_or(Thinking::is_on)
}

/// Whether `extra_body` asks GLM for preserved thinking: `clear_thinking: false` at the top
/// level or in its `thinking` object.
fn preserves_thinking(extra_body: &Map<String, Value>) -> bool {
    let off = Some(&Value::Bool(false));
    extra_body.get("clear_thinking") == off || extra_body.get("thinking").and_then(|t| t.get("clear_thinking")) == off
}

/// The `thinking: {"type": …}` switch of DeepSeek, Kimi, GLM and Doubao.
fn switch(on: bool) -> Value {
    json!({ "type": if on { "enabled" } else { "disabled" } })
}

/// The body fields that carry `config`'s thinking setting, or why its provider has no
/// such switch (`thinking_unsupported`). A Qwen call that does not stream and sets
/// nothing gets `enable_thinking: false` (Qwen3.5 thinks by default and refuses thinking
/// without streaming: the summarizer's calls and `stream = false` hosts).
pub(crate) fn thinking_fields(config: &ModelConfig) -> Result<Map<String, Value>, (ErrorCode, String)> {
    let provider = config.provider();
    let mut out = Map::new();
    let mut put = |k: &str, v: Value| {
        out.insert(k.to_owned(), v);
    };
    match (provider, config.thinking) {
        (Provider::Qwen, None) if !config.stream => put("enable_thinking", json!(false)),
        (_, None) => {}
        (Provider::Deepseek | Provider::Kimi | Provider::Glm | Provider::Doubao, Some(t @ (Thinking::Off | Thinking::On))) => {
            put("thinking", switch(t.is_on()));
        }
        // Doubao's levels go from minimal to high, OpenAI's from none to xhigh.
        (Provider::Doubao, Some(Thinking::Effort(e @ (Effort::Xhigh | Effort::Max)))) | (Provider::Openai, Some(Thinking::Effort(e @ Effort::Max))) => {
            let message = format!("provider {:?} has no reasoning_effort {:?} (README, \"Thinking models\")", provider.as_str(), e.as_str());
            return Err((ErrorCode::ThinkingUnsupported, message));
        }
        (Provider::Deepseek | Provider::Doubao, Some(Thinking::Effort(e))) => {
            put("thinking", switch(true));
            put("reasoning_effort", json!(e.as_str()));
        }
        (Provider::Qwen, Some(t @ (Thinking::Off | Thinking::On))) => put("enable_thinking", json!(t.is_on())),
        (Provider::Qwen, Some(Thinking::Budget(n))) => {
            put("enable_thinking", json!(true));
            put("thinking_budget", json!(n));
        }
        (Provider::Openai, Some(Thinking::Off)) => put("reasoning_effort", json!("none")),
        (Provider::Openai | Provider::Other, Some(Thinking::Effort(e))) => put("reasoning_effort", json!(e.as_str())),
        (provider, Some(t)) => {
            let message = format!(
                "provider {:?} has no thinking setting {} on the openai wire format (README, \"Thinking models\"; set provider, or use extra_body)",
                provider.as_str(),
                serde_json::to_string(&t).unwrap_or_default()
            );
            return Err((ErrorCode::ThinkingUnsupported, message));
        }
    }
    Ok(out)
}

/// What a thinking model on this wire refuses, said before any request: Qwen thinking on
/// a call that does not stream, a temperature with an OpenAI reasoning model.
pub(crate) fn thinking_conflict(config: &ModelConfig, _tool_choice: Option<&ToolChoice>) -> Option<String> {
    let provider = config.provider();
    if provider == Provider::Qwen && !config.stream && config.thinking.is_some_and(Thinking::is_on) {
        return Some("Qwen thinks only in streamed calls: set stream, or thinking \"off\"".into());
    }
    if provider == Provider::Openai && is_openai_reasoning_model(&config.model) && config.temperature.is_some_and(|t| t != 1.0) {
        return Some(format!("OpenAI reasoning model {:?} takes only the default temperature: unset temperature", config.model));
    }
    // DeepSeek's thinking mode (its default) answers `logprobs` and `top_logprobs` with an error.
    if provider == Provider::Deepseek && config.thinking.is_none_or(Thinking::is_on) {
        if let Some(key) = ["logprobs", "top_logprobs"].into_iter().find(|k| config.extra_body.contains_key(*k)) {
            return Some(format!("DeepSeek's thinking mode refuses {key:?}: remove it from extra_body, or set thinking \"off\""));
        }
    }
    None
}

/// The name `max_tokens` goes by: OpenAI's reasoning models refuse `max_tokens` and every
/// OpenAI model takes `max_completion_tokens`; other providers take `max_tokens`.
pub(crate) fn uses_max_completion_tokens(config: &ModelConfig) -> bool {
    config.provider() == Provider::Openai
}

/// The fields appended to every body: the thinking fields (nothing when the config was
/// never validated and they cannot be sent), then `extra_body`.
pub(crate) fn body_extras(config: &ModelConfig) -> Map<String, Value> {
    let mut extras = thinking_fields(config).unwrap_or_default();
    extras.extend(config.extra_body.iter().map(|(k, v)| (k.clone(), v.clone())));
    extras
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llm::thinking::Effort;

    fn config(url: &str, model: &str, thinking: Option<Thinking>) -> ModelConfig {
        let mut c = ModelConfig::new(url, "k", model);
        c.stream = true;
        c.thinking = thinking;
        c
    }

    #[test]
    fn think_4_each_chat_completions_provider_maps_its_switch() {
        let cases: Vec<(&str, &str, Thinking, Value)> = vec![
            ("https://api.deepseek.com", "deepseek-v4-flash", Thinking::Off, json!({"thinking": {"type": "disabled"}})),
            ("https://api.deepseek.com", "deepseek-v4-pro", Thinking::Effort(Effort::Max), json!({"thinking": {"type": "enabled"}, "reasoning_effort": "max"})),
            ("https://api.moonshot.cn/v1", "kimi-k2.6", Thinking::Off, json!({"thinking": {"type": "disabled"}})),
            ("https://open.bigmodel.cn/api/paas/v4", "glm-5", Thinking::On, json!({"thinking": {"type": "enabled"}})),
            ("https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6", Thinking::Effort(Effort::Minimal), json!({"thinking": {"type": "enabled"}, "reasoning_effort": "minimal"})),
            ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.5-plus", Thinking::Off, json!({"enable_thinking": false})),
            ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.5-plus", Thinking::Budget(500), json!({"enable_thinking": true, "thinking_budget": 500})),
            ("https://api.openai.com/v1", "gpt-5.1", Thinking::Off, json!({"reasoning_effort": "none"})),
            ("https://api.openai.com/v1", "o3", Thinking::Effort(Effort::High), json!({"reasoning_effort": "high"})),
            ("http://localhost:8080/v1", "llama", Thinking::Effort(Effort::Low), json!({"reasoning_effort": "low"})),
        ];
        for (url, model, thinking, want) in cases {
            let got = thinking_fields(&config(url, model, Some(thinking))).unwrap();
            assert_eq!(Value::Object(got), want, "{url} {model} {thinking:?}");
        }
        for (url, model, thinking) in [
            ("https://api.deepseek.com", "deepseek-v4-flash", Thinking::Budget(1024)),
            ("https://api.moonshot.cn/v1", "kimi-k2.6", Thinking::Effort(Effort::Low)),
            ("https://api.openai.com/v1", "gpt-5", Thinking::On),
            ("http://localhost:8080/v1", "llama", Thinking::Off),
            ("https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6", Thinking::Effort(Effort::Xhigh)),
            ("https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6", Thinking::Effort(Effort::Max)),
            ("https://api.openai.com/v1", "gpt-5.1", Thinking::Effort(Effort::Max)),
        ] {
            let (code, _) = thinking_fields(&config(url, model, Some(thinking))).unwrap_err();
            assert_eq!(code, ErrorCode::ThinkingUnsupported, "{url} {thinking:?}");
        }
    }

    #[test]
    fn think_4_qwen_without_streaming_is_switched_off_or_refused() {
        let mut c = config("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.5-plus", None);
        assert!(thinking_fields(&c).unwrap().is_empty(), "a streamed call keeps the provider's default");
        c.stream = false;
        assert_eq!(Value::Object(thinking_fields(&c).unwrap()), json!({"enable_thinking": false}));
        assert!(thinking_conflict(&c, None).is_none());
        c.thinking = Some(Thinking::On);
        assert!(thinking_conflict(&c, None).is_some());
    }

    #[test]
    fn think_2_auto_replay_is_tool_calls_except_for_qwen() {
        assert_eq!(replay(&config("https://api.deepseek.com", "deepseek-v4-flash", None)), ReasoningReplay::ToolCalls);
        assert_eq!(replay(&config("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.5", None)), ReasoningReplay::None);
        let mut c = config("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3.5", None);
        c.reasoning_replay = ReasoningReplay::All;
        assert_eq!(replay(&c), ReasoningReplay::All);
        let mut glm = config("https://open.bigmodel.cn/api/paas/v4", "glm-5", None);
        assert_eq!(replay(&glm), ReasoningReplay::ToolCalls);
        glm.extra_body.insert("clear_thinking".into(), json!(false));
        assert_eq!(replay(&glm), ReasoningReplay::All, "preserved thinking");
        glm.extra_body.insert("clear_thinking".into(), json!(true));
        assert_eq!(replay(&glm), ReasoningReplay::ToolCalls);
        glm.extra_body.clear();
        glm.extra_body.insert("thinking".into(), json!({"type": "enabled", "clear_thinking": false}));
        assert_eq!(replay(&glm), ReasoningReplay::All, "inside thinking");
    }
}

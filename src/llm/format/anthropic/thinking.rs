//! THINK-2, THINK-4 on Anthropic Messages: the `thinking` parameter (adaptive for
//! Anthropic's own models, `enabled` for the Anthropic-compatible endpoints of DeepSeek,
//! Kimi, GLM…), `output_config.effort`, a `budget_tokens` budget, and what Anthropic
//! refuses with thinking on.

use serde_json::{json, Map, Value};

use crate::error::ErrorCode;
use crate::llm::config::ModelConfig;
use crate::llm::request::ToolChoice;
use crate::llm::thinking::{anthropic_thinks_by_default, ClaudeThinking, Effort, Provider, ReasoningReplay, Thinking};

/// Top-level fields every Messages body of the library may carry.
pub(super) const OWNED_FIELDS: &[&str] = &["model", "max_tokens", "tools", "tool_choice", "temperature", "stream", "system", "messages"];

/// The smallest `budget_tokens` Anthropic takes.
const MIN_BUDGET_TOKENS: u32 = 1024;

/// `auto` is `all`: earlier turns' blocks stay in the append-only body (the provider
/// ignores them outside the current tool cycle; rewriting them would lose the prompt cache).
pub(super) fn replay(config: &ModelConfig) -> ReasoningReplay {
    match config.reasoning_replay {
        ReasoningReplay::Auto => ReasoningReplay::All,
        other => other,
    }
}

/// The `thinking` (and `output_config`) fields of `config`'s setting; `default_max` is
/// the `max_tokens` sent when the config sets none (a budget must stay below it).
pub(super) fn thinking_fields(config: &ModelConfig, default_max: u32) -> Result<Map<String, Value>, (ErrorCode, String)> {
    let claude = config.provider() == Provider::Anthropic;
    if claude {
        if let Some(message) = claude_refuses(&config.model, config.thinking) {
            return Err((ErrorCode::ThinkingUnsupported, message));
        }
    }
    let on = if claude { "adaptive" } else { "enabled" };
    let mut out = Map::new();
    match config.thinking {
        None => {}
        Some(Thinking::Off) => {
            out.insert("thinking".into(), json!({"type": "disabled"}));
        }
        Some(Thinking::On) => {
            out.insert("thinking".into(), json!({ "type": on }));
        }
        Some(Thinking::Effort(e)) => {
            out.insert("thinking".into(), json!({ "type": on }));
            out.insert("output_config".into(), json!({"effort": e.as_str()}));
        }
        Some(Thinking::Budget(n)) => {
            let max = config.max_tokens.unwrap_or(default_max);
            if n < MIN_BUDGET_TOKENS || n >= max {
                let message = format!("thinking budget_tokens {n} must be at least {MIN_BUDGET_TOKENS} and below max_tokens ({max})");
                return Err((ErrorCode::InvalidConfig, message));
            }
            out.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": n}));
        }
    }
    Ok(out)
}

/// Why one of Anthropic's own models has no such setting, if it has none: `effort`
/// `minimal` (not an Anthropic level), `xhigh` before Opus 4.7, a `budget_tokens` on an
/// adaptive-only model (Opus 4.7 and later, Claude 5, Fable, Mythos), `off` on Fable
/// (it always thinks).
fn claude_refuses(model: &str, thinking: Option<Thinking>) -> Option<String> {
    let rules = ClaudeThinking::of(model);
    let why = match thinking? {
        Thinking::Effort(Effort::Minimal) => "has no effort \"minimal\" (low, medium, high, xhigh, max)",
        Thinking::Effort(Effort::Xhigh) if rules.before_xhigh => "has no effort \"xhigh\" (it came with Opus 4.7): use high or max",
        Thinking::Budget(_) if rules.no_budget => "thinks adaptively only and refuses budget_tokens: use \"on\" or {\"effort\"}",
        Thinking::Off if rules.always => "always thinks and refuses thinking \"disabled\": leave thinking unset, or use {\"effort\":\"low\"}",
        _ => return None,
    };
    Some(format!("{model:?} {why} (README, \"Thinking models\")"))
}

/// Anthropic with thinking on (set, or the model's default) refuses a forced tool choice
/// and a temperature other than 1; Fable refuses any temperature.
pub(super) fn thinking_conflict(config: &ModelConfig, tool_choice: Option<&ToolChoice>) -> Option<String> {
    if config.provider() != Provider::Anthropic {
        return None;
    }
    if ClaudeThinking::of(&config.model).always && config.temperature.is_some() {
        return Some(format!("{:?} refuses every sampling temperature: unset temperature", config.model));
    }
    let on = match config.thinking {
        Some(t) => t.is_on(),
        None => anthropic_thinks_by_default(&config.model),
    };
    if !on {
        return None;
    }
    if matches!(tool_choice, Some(ToolChoice::Required | ToolChoice::Function(_))) {
        return Some(format!("{:?} thinks, and refuses a forced tool_choice: use auto or none, or thinking \"off\"", config.model));
    }
    if config.temperature.is_some_and(|t| t != 1.0) {
        return Some(format!("{:?} thinks, and takes only temperature 1: unset temperature, or thinking \"off\"", config.model));
    }
    None
}

/// The fields after the fixed head: the thinking fields, then `extra_body`.
pub(super) fn body_extras(config: &ModelConfig, default_max: u32) -> Map<String, Value> {
    let mut extras = thinking_fields(config, default_max).unwrap_or_default();
    extras.extend(config.extra_body.iter().map(|(k, v)| (k.clone(), v.clone())));
    extras
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llm::thinking::Effort;
    use crate::llm::WireFormat;

    fn config(url: &str, model: &str, thinking: Option<Thinking>) -> ModelConfig {
        let mut c = ModelConfig::new(url, "k", model);
        c.wire_format = WireFormat::ANTHROPIC;
        c.thinking = thinking;
        c
    }

    #[test]
    fn think_4_anthropic_wire_maps_adaptive_enabled_effort_and_budget() {
        let claude = "https://api.anthropic.com/v1";
        let deepseek = "https://api.deepseek.com/anthropic";
        for (url, thinking, want) in [
            (claude, Thinking::Off, json!({"thinking": {"type": "disabled"}})),
            (claude, Thinking::On, json!({"thinking": {"type": "adaptive"}})),
            (claude, Thinking::Effort(Effort::Low), json!({"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}})),
            (claude, Thinking::Budget(2048), json!({"thinking": {"type": "enabled", "budget_tokens": 2048}})),
            (deepseek, Thinking::On, json!({"thinking": {"type": "enabled"}})),
            (deepseek, Thinking::Effort(Effort::Max), json!({"thinking": {"type": "enabled"}, "output_config": {"effort": "max"}})),
        ] {
            assert_eq!(Value::Object(thinking_fields(&config(url, "claude-x", Some(thinking)), 4096).unwrap()), want, "{url} {thinking:?}");
        }
        for n in [1023, 4096, 5000] {
            let (code, _) = thinking_fields(&config(claude, "claude-x", Some(Thinking::Budget(n))), 4096).unwrap_err();
            assert_eq!(code, ErrorCode::InvalidConfig, "{n}");
        }
    }

    #[test]
    fn think_4_claude_models_refuse_the_settings_they_do_not_take() {
        let claude = "https://api.anthropic.com/v1";
        let refused = |model: &str, thinking: Thinking| thinking_fields(&config(claude, model, Some(thinking)), 8192).err().map(|(code, _)| code);
        let unsupported = Some(ErrorCode::ThinkingUnsupported);
        for model in ["claude-opus-4-8", "claude-opus-4-6", "claude-x", "anthropic/claude-fable-5"] {
            assert_eq!(refused(model, Thinking::Effort(Effort::Minimal)), unsupported, "{model}: minimal is no Anthropic level");
            assert_eq!(refused(model, Thinking::On), None, "{model}");
            assert_eq!(refused(model, Thinking::Effort(Effort::Max)), None, "{model}");
        }
        assert_eq!(refused("claude-opus-4-6", Thinking::Effort(Effort::Xhigh)), unsupported);
        assert_eq!(refused("claude-opus-4-7", Thinking::Effort(Effort::Xhigh)), None);
        for model in ["claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5", "claude-mythos-5", "claude-fable-5"] {
            assert_eq!(refused(model, Thinking::Budget(2048)), unsupported, "{model}: adaptive only");
        }
        for model in ["claude-opus-4-6", "claude-sonnet-4-5", "claude-x"] {
            assert_eq!(refused(model, Thinking::Budget(2048)), None, "{model}");
        }
        assert_eq!(refused("claude-fable-5", Thinking::Off), unsupported, "Fable always thinks");
        assert_eq!(refused("claude-opus-4-8", Thinking::Off), None);
        // The other providers' Anthropic-compatible endpoints pass: their models are not Claude.
        let deepseek = config("https://api.deepseek.com/anthropic", "claude-fable-5", Some(Thinking::Off));
        assert!(thinking_fields(&deepseek, 8192).is_ok());
        // Fable takes no temperature, 1 included.
        let mut fable = config(claude, "claude-fable-5", None);
        fable.temperature = Some(1.0);
        assert!(thinking_conflict(&fable, None).is_some());
    }

    #[test]
    fn think_4_anthropic_thinking_refuses_forced_tools_and_temperature() {
        let mut c = config("https://api.anthropic.com/v1", "claude-sonnet-4-5", Some(Thinking::On));
        assert!(thinking_conflict(&c, Some(&ToolChoice::Required)).is_some());
        assert!(thinking_conflict(&c, Some(&ToolChoice::Function("f".into()))).is_some());
        assert!(thinking_conflict(&c, Some(&ToolChoice::Auto)).is_none());
        c.temperature = Some(0.2);
        assert!(thinking_conflict(&c, None).is_some());
        c.temperature = Some(1.0);
        assert!(thinking_conflict(&c, None).is_none());
        c.thinking = None;
        assert!(thinking_conflict(&c, Some(&ToolChoice::Required)).is_none(), "claude-sonnet-4-5 thinks only when asked");
        c.model = "claude-opus-5-5".into();
        assert!(thinking_conflict(&c, Some(&ToolChoice::Required)).is_some(), "the 5.5 family thinks by default");
        c.thinking = Some(Thinking::Off);
        assert!(thinking_conflict(&c, Some(&ToolChoice::Required)).is_none());
    }
}

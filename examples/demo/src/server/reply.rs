//! What the simulated model answers: a pure function of the request, so runs are
//! reproducible. Weather / time / arithmetic questions become tool calls for the tools the
//! request offers (one call per city named, so two cities give parallel calls); "research
//! …" / "delegate …" becomes a `delegate_task` call, and a worker's task gets research
//! notes; a compression request gets a `<state_snapshot>`; tool results become a final
//! answer that quotes them; anything else gets a short reply.

use serde_json::{json, Value};

use super::research::{asks_for_research, delegate_arguments, research_notes};
use super::summary::{is_summary_request, snapshot_reply, summary_input};
use crate::tools::{City, CITIES};

/// One tool call the simulated model makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCall {
    /// Call id, unique within the conversation.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// The simulated model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Assistant text.
    Text(String),
    /// Tool calls (no text).
    ToolCalls(Vec<PlannedCall>),
}

impl Reply {
    /// `finish_reason` for this reply.
    pub fn finish_reason(&self) -> &'static str {
        match self {
            Self::Text(_) => "stop",
            Self::ToolCalls(_) => "tool_calls",
        }
    }
}

/// Decides the reply to a Chat Completions request body.
pub fn decide(request: &Value) -> Reply {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let Some(last) = messages.last() else {
        return Reply::Text(
            "Hello! I am a simulated model. Ask me about the weather, the time, or a calculation."
                .into(),
        );
    };
    if is_summary_request(request) {
        return Reply::Text(snapshot_reply(&summary_input(request)));
    }
    match last.get("role").and_then(Value::as_str) {
        Some("tool") => Reply::Text(answer_from_tool_results(messages)),
        Some("user") => {
            let text = content_text(last);
            let offered = offered_tools(request);
            if asks_for_research(&text) {
                if offered.iter().any(|t| t == "delegate_task") {
                    let tools = request
                        .get("tools")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default();
                    return Reply::ToolCalls(vec![PlannedCall {
                        id: format!("call_sim_{}_1", assistant_turn(messages)),
                        name: "delegate_task".to_owned(),
                        arguments: delegate_arguments(&text, tools),
                    }]);
                }
                // A worker (it never has delegate_task) working on its task.
                return Reply::Text(research_notes(&text));
            }
            let calls = plan_tool_calls(&text, &offered, messages);
            let photos = photo_types(last);
            if calls.is_empty() && !photos.is_empty() {
                Reply::Text(photo_reply(&photos))
            } else if calls.is_empty() {
                Reply::Text(small_talk(&text))
            } else {
                Reply::ToolCalls(calls)
            }
        }
        _ => Reply::Text("I am a simulated model; I answer the last user message.".into()),
    }
}

/// Names of the tools offered, unless `tool_choice` is `"none"`.
fn offered_tools(request: &Value) -> Vec<String> {
    if request.get("tool_choice").and_then(Value::as_str) == Some("none") {
        return Vec::new();
    }
    request
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| {
                    t.pointer("/function/name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A message's text: a string, or the text parts of a content array.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// IMG-1: the MIME types of the photos in a user message (`image_url` data URLs).
fn photo_types(message: &Value) -> Vec<String> {
    let Some(Value::Array(parts)) = message.get("content") else {
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|p| p.pointer("/image_url/url").and_then(Value::as_str))
        .map(|url| {
            url.strip_prefix("data:")
                .and_then(|u| u.split(';').next())
                .unwrap_or("an image URL")
                .to_owned()
        })
        .collect()
}

/// What the simulated model says to photos: it received them, it cannot see them.
fn photo_reply(types: &[String]) -> String {
    format!(
        "I received {} photo(s) ({}) as image parts of your message. I am a simulated model and \
         cannot look at them; a vision model (set ARKAGENT_BASE_URL/API_KEY/MODEL) would describe them.",
        types.len(),
        types.join(", ")
    )
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn plan_tool_calls(text: &str, offered: &[String], messages: &[Value]) -> Vec<PlannedCall> {
    let has = |tool: &str| offered.iter().any(|t| t == tool);
    let words = words(text);
    let mentions = |keys: &[&str], cjk: &[&str]| {
        keys.iter().any(|k| words.iter().any(|w| w == k)) || cjk.iter().any(|k| text.contains(k))
    };
    let mut planned: Vec<(&str, Value)> = Vec::new();
    if has("get_weather")
        && mentions(
            &["weather", "forecast", "temperature", "rain", "sunny"],
            &["天气", "气温"],
        )
    {
        for city in cities_in(text) {
            planned.push(("get_weather", json!({"city": city})));
        }
    }
    if has("get_time") && mentions(&["time", "clock"], &["时间", "几点"]) {
        for city in cities_in(text) {
            planned.push(("get_time", json!({"city": city})));
        }
    }
    if has("calculate") {
        let asked = mentions(
            &["calculate", "calc", "compute", "evaluate"],
            &["计算", "算"],
        );
        match expression_in(text) {
            Some(expression) => planned.push(("calculate", json!({"expression": expression}))),
            None if asked => {
                // Asked to calculate but nothing recognisable: let the tool say why.
                planned.push(("calculate", json!({"expression": text.trim()})));
            }
            None => {}
        }
    }
    // An MCP tool (`server__tool`) named in the line, with the JSON object after it.
    for tool in offered.iter().filter(|t| t.contains("__")) {
        if let Some(at) = text.find(tool.as_str()) {
            let rest = text[at + tool.len()..].trim_start();
            let args = serde_json::Deserializer::from_str(rest).into_iter::<Value>().next().and_then(Result::ok);
            planned.push((tool.as_str(), args.filter(Value::is_object).unwrap_or_else(|| json!({}))));
        }
    }
    let turn = assistant_turn(messages);
    planned
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| PlannedCall {
            id: format!("call_sim_{turn}_{}", i + 1),
            name: name.to_owned(),
            arguments: args.to_string(),
        })
        .collect()
}

/// Ids unique within the conversation: one number per assistant turn.
fn assistant_turn(messages: &[Value]) -> usize {
    messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .count()
        + 1
}

/// Cities named in `text`, in order of appearance; the word after "in" when none is
/// known; Beijing as a last resort.
fn cities_in(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut found: Vec<(usize, &City)> = Vec::new();
    for city in CITIES {
        let names = std::iter::once(city.name.to_lowercase())
            .chain(city.aliases.iter().map(|a| a.to_lowercase()));
        let first = names.filter_map(|n| lower.find(&n)).min();
        if let Some(pos) = first {
            found.push((pos, city));
        }
    }
    found.sort_by_key(|(pos, _)| *pos);
    if !found.is_empty() {
        return found.into_iter().map(|(_, c)| c.name.to_owned()).collect();
    }
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let after_in = tokens
        .windows(2)
        .find(|w| w[0].eq_ignore_ascii_case("in"))
        .map(|w| w[1].trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .filter(|c| !c.is_empty());
    vec![after_in.unwrap_or_else(|| "Beijing".to_owned())]
}

/// The longest run of arithmetic characters holding a digit and an operator.
fn expression_in(text: &str) -> Option<String> {
    let is_expr_char = |c: char| c.is_ascii_digit() || " .+-*/()×÷".contains(c);
    text.split(|c: char| !is_expr_char(c))
        .map(|s| s.trim().trim_end_matches(['.', ' ']).trim())
        .filter(|s| {
            let digits = s.chars().filter(char::is_ascii_digit).count();
            let has_op = s.chars().skip(1).any(|c| "+-*/×÷".contains(c));
            digits >= 2 && has_op
        })
        .max_by_key(|s| s.len())
        .map(str::to_owned)
}

fn small_talk(text: &str) -> String {
    let w = words(text);
    if w.iter()
        .any(|x| ["hi", "hello", "hey"].contains(&x.as_str()))
        || text.contains("你好")
    {
        return "Hello! I am a simulated model running on your machine. Ask me about the weather \
                (try two cities), the time somewhere, to calculate something, or to research a \
                topic (a sub-agent does that)."
            .into();
    }
    let trimmed = text.trim();
    let first = trimmed.lines().next().unwrap_or_default();
    let preview: String = first.chars().take(60).collect();
    let ellipsis = if trimmed.chars().count() > preview.chars().count() {
        "…"
    } else {
        ""
    };
    format!(
        "You said \"{preview}{ellipsis}\". I am a simulated model, so I only know a few tricks: \
         the weather, the time in a city, arithmetic, and research through a sub-agent."
    )
}

/// The final answer built from the tool results that close the conversation.
fn answer_from_tool_results(messages: &[Value]) -> String {
    let start = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) != Some("tool"))
        .map_or(0, |i| i + 1);
    let results = &messages[start..];
    // Map call ids to tool names through the assistant message that made the calls.
    let calls = start
        .checked_sub(1)
        .and_then(|i| messages[i].get("tool_calls"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let call_of = |id: &str| {
        calls
            .iter()
            .find(|c| c.get("id").and_then(Value::as_str) == Some(id))
    };
    let name_of = |id: &str| {
        call_of(id)
            .and_then(|c| c.pointer("/function/name").and_then(Value::as_str))
            .unwrap_or("tool")
            .to_owned()
    };
    let assignee_of = |id: &str| {
        call_of(id)
            .and_then(|c| c.pointer("/function/arguments").and_then(Value::as_str))
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .and_then(|a| a.get("assignee").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| "sub-agent".to_owned())
    };
    let mut delegated = Vec::new();
    let mut parts = Vec::new();
    let mut temperatures: Vec<(String, i64)> = Vec::new();
    for result in results {
        let id = result
            .get("tool_call_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = name_of(id);
        let content = content_text(result);
        let parsed: Value = serde_json::from_str(&content).unwrap_or(Value::Null);
        if let Some(message) = parsed.pointer("/error/message").and_then(Value::as_str) {
            parts.push(format!("{name} failed: {message}"));
            continue;
        }
        let s = |k: &str| {
            parsed
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        };
        match name.as_str() {
            "delegate_task" => delegated.push(format!(
                "I delegated this to the {} sub-agent, which worked in its own context. It reports: {}",
                assignee_of(id),
                content.trim()
            )),
            "get_weather" => {
                let t = parsed.get("temperature_c").and_then(Value::as_i64);
                let h = parsed.get("humidity_pct").and_then(Value::as_i64);
                if let Some(t) = t {
                    temperatures.push((s("city"), t));
                }
                parts.push(format!(
                    "{}: {}, {} °C, humidity {}%",
                    s("city"),
                    s("condition"),
                    t.map_or("?".into(), |t| t.to_string()),
                    h.map_or("?".into(), |h| h.to_string())
                ));
            }
            "get_time" => parts.push(format!(
                "it is {} in {} ({})",
                s("local_time"),
                s("city"),
                s("utc_offset")
            )),
            "calculate" => parts.push(format!("{} = {}", s("expression"), s("result"))),
            _ => parts.push(format!(
                "{name} returned {}",
                content.chars().take(120).collect::<String>()
            )),
        }
    }
    if parts.is_empty() {
        return if delegated.is_empty() {
            "The tools returned nothing I could use.".into()
        } else {
            delegated.join(" ")
        };
    }
    let mut answer = format!("Here is what I found: {}.", parts.join("; "));
    if let [(a, ta), (b, tb)] = temperatures.as_slice() {
        if ta != tb {
            let (warm, cool, diff) = if ta > tb {
                (a, b, ta - tb)
            } else {
                (b, a, tb - ta)
            };
            answer.push_str(&format!(" {warm} is {diff} °C warmer than {cool}."));
        }
    }
    for d in delegated {
        answer.push(' ');
        answer.push_str(&d);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Value {
        json!([
            {"type": "function", "function": {"name": "get_weather", "parameters": {}}},
            {"type": "function", "function": {"name": "get_time", "parameters": {}}},
            {"type": "function", "function": {"name": "calculate", "parameters": {}}}
        ])
    }

    #[test]
    fn dx_2_two_cities_give_two_parallel_weather_calls() {
        let req = json!({"messages": [{"role": "user", "content": "What is the weather in Beijing and Shenzhen?"}], "tools": tools()});
        let Reply::ToolCalls(calls) = decide(&req) else {
            panic!("expected tool calls")
        };
        let args: Vec<_> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            args,
            [
                ("get_weather", r#"{"city":"Beijing"}"#),
                ("get_weather", r#"{"city":"Shenzhen"}"#)
            ]
        );
        assert_ne!(calls[0].id, calls[1].id);
    }

    #[test]
    fn dx_2_without_tools_or_keywords_the_model_just_talks() {
        let req =
            json!({"messages": [{"role": "user", "content": "What is the weather in Beijing?"}]});
        assert!(matches!(decide(&req), Reply::Text(_)));
        let req = json!({"messages": [{"role": "user", "content": "hello"}], "tools": tools()});
        assert!(matches!(decide(&req), Reply::Text(t) if t.starts_with("Hello!")));
    }

    #[test]
    fn dx_2_arithmetic_becomes_a_calculate_call() {
        let req = json!({"messages": [{"role": "user", "content": "Please calculate (12 + 30) * 2."}], "tools": tools()});
        let Reply::ToolCalls(calls) = decide(&req) else {
            panic!("expected tool calls")
        };
        assert_eq!(calls[0].arguments, r#"{"expression":"(12 + 30) * 2"}"#);
    }

    #[test]
    fn dx_2_tool_results_become_a_final_answer_that_uses_them() {
        let req = json!({"messages": [
            {"role": "user", "content": "weather in Beijing and Shenzhen"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": r#"{"city":"Beijing","condition":"sunny","temperature_c":22,"humidity_pct":35}"#},
            {"role": "tool", "tool_call_id": "b", "content": r#"{"city":"Shenzhen","condition":"light rain","temperature_c":27,"humidity_pct":82}"#}
        ]});
        let Reply::Text(text) = decide(&req) else {
            panic!("expected text")
        };
        assert!(
            text.contains("Beijing: sunny, 22 °C, humidity 35%"),
            "{text}"
        );
        assert!(
            text.contains("Shenzhen is 5 °C warmer than Beijing"),
            "{text}"
        );
    }
}

//! Delegation in the simulated model (SUB-1): a parent asked to "research …" or
//! "delegate …" calls `delegate_task` (the `researcher` worker when the tool lists it,
//! `clone` otherwise); a worker — a request without `delegate_task` whose last user
//! message starts with such a task — answers with short canned research notes.

use serde_json::{json, Value};

/// The worker the demo registers.
pub const RESEARCHER: &str = "researcher";

const VERBS: [&str; 4] = ["research", "investigate", "delegate", "look into"];
const CJK_VERBS: [&str; 3] = ["研究", "调研", "委派"];

/// True when `text`'s first line asks for research or a delegation.
pub fn asks_for_research(text: &str) -> bool {
    let first = text.lines().next().unwrap_or_default();
    let lower = first.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    VERBS.iter().any(|v| {
        if v.contains(' ') {
            lower.contains(v)
        } else {
            words.contains(v)
        }
    }) || CJK_VERBS.iter().any(|v| first.contains(v))
}

/// The `delegate_task` arguments for the user's `text`: the researcher when the offered
/// `delegate_task` tool lists it, `clone` otherwise.
pub fn delegate_arguments(text: &str, tools: &[Value]) -> String {
    let lists_researcher = tools.iter().any(|t| {
        t.pointer("/function/name").and_then(Value::as_str) == Some("delegate_task")
            && t.pointer("/function/description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.contains(&format!("\"{RESEARCHER}\"")))
    });
    let assignee = if lists_researcher {
        RESEARCHER
    } else {
        "clone"
    };
    let topic = topic_of(text);
    json!({
        "assignee": assignee,
        "task_description": format!("Research {topic} and report the key facts in a few sentences.")
    })
    .to_string()
}

/// What the research is about: the text after the verb, without filler words.
fn topic_of(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default().trim();
    let lower = first.to_lowercase();
    let after = VERBS
        .iter()
        .filter_map(|v| lower.find(v).map(|i| i + v.len()))
        .min()
        .and_then(|i| first.get(i..))
        .unwrap_or(first);
    let mut topic = after
        .trim()
        .trim_start_matches([':', ','])
        .trim()
        .trim_end_matches(['.', '?', '!', '。', '？'])
        .to_owned();
    for filler in [
        "to the researcher:",
        "to the researcher",
        "this:",
        "into ",
        "on ",
        "about ",
    ] {
        if topic.to_lowercase().starts_with(filler) {
            if let Some(rest) = topic.get(filler.len()..) {
                topic = rest.trim().to_owned();
            }
        }
    }
    if topic.is_empty() {
        first.to_owned()
    } else {
        topic
    }
}

/// The worker's answer to a task (the first line of its last user message).
pub fn research_notes(task: &str) -> String {
    let first = task.lines().next().unwrap_or_default().trim();
    let lower = first.to_lowercase();
    if lower.contains("baguette") || first.contains("法棍") {
        return "Research notes (simulated worker, canned facts): long, thin French loaves \
                were baked well before the name existed; \"baguette\" (\"wand\") is recorded \
                for bread from about 1920. A 1919 law barring bakers from working before \
                4 a.m. is often credited with favouring this quick-baking shape, and in 2022 UNESCO listed the \
                artisanal know-how and culture of baguette bread as intangible cultural \
                heritage."
            .to_owned();
    }
    let topic = first
        .strip_prefix("Research ")
        .and_then(|t| t.split(" and report").next())
        .unwrap_or(first);
    format!(
        "Research notes (simulated worker, no web access): I would look into {topic} by \
         collecting primary sources, checking dates and names, and summarizing the three \
         most important facts. A real model would fill these in."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_1_research_requests_become_a_task_for_the_researcher() {
        assert!(asks_for_research("research the history of the baguette"));
        assert!(asks_for_research(
            "Please delegate: count the moons of Jupiter"
        ));
        assert!(asks_for_research("帮我调研一下法棍的历史"));
        assert!(!asks_for_research("What is the weather in Beijing?"));
        assert!(!asks_for_research("researchers say hi")); // whole words only

        let tools = [json!({"type": "function", "function": {
            "name": "delegate_task",
            "description": "Delegate … Assignees: \"researcher\": looks into a topic."}})];
        let args: Value = serde_json::from_str(&delegate_arguments(
            "research the history of the baguette",
            &tools,
        ))
        .unwrap_or_default();
        assert_eq!(args["assignee"], "researcher");
        assert_eq!(
            args["task_description"],
            "Research the history of the baguette and report the key facts in a few sentences."
        );
        let args: Value =
            serde_json::from_str(&delegate_arguments("delegate: the moons of Jupiter", &[]))
                .unwrap_or_default();
        assert_eq!(args["assignee"], "clone");
        assert_eq!(
            args["task_description"],
            "Research the moons of Jupiter and report the key facts in a few sentences."
        );
    }

    #[test]
    fn sub_5_the_worker_answers_from_the_first_line_of_its_task() {
        let notes = research_notes(
            "Research the history of the baguette and report the key facts.\n\n## Inherited context\nweather",
        );
        assert!(notes.contains("UNESCO"), "{notes}");
        let other = research_notes("Research the moons of Jupiter and report the key facts.");
        assert!(other.contains("the moons of Jupiter"), "{other}");
    }
}

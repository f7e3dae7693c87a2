//! How the simulated model answers a context-compression request (CMP-8, CMP-9): a
//! well-formed `<state_snapshot>` with all five sections that keeps the first user goal it
//! can find — the `<previous_snapshot>`'s goal when there is one, otherwise the first user
//! line of the `<conversation>` — and folds in the previous snapshot's knowledge. The
//! snapshot stays small (each part capped) so it is always shorter than what it replaces.
//! A request on the conversation's own bytes (COST-3: the conversation, then the
//! compression instruction) is read as the same transcript ([`summary_input`]).

use serde_json::Value;

/// How much detail a snapshot keeps: goal characters, list items, characters per item.
#[derive(Clone, Copy)]
struct Detail {
    goal_chars: usize,
    items: usize,
    item_chars: usize,
}

/// From most to least detailed; the first that fits the budget is used.
const DETAIL_LEVELS: [Detail; 4] = [
    Detail {
        goal_chars: 200,
        items: 4,
        item_chars: 120,
    },
    Detail {
        goal_chars: 160,
        items: 2,
        item_chars: 80,
    },
    Detail {
        goal_chars: 120,
        items: 1,
        item_chars: 60,
    },
    Detail {
        goal_chars: 100,
        items: 0,
        item_chars: 0,
    },
];

/// The core's compression instruction, whose first line opens the last message of a
/// summary request on the conversation's own bytes.
const INSTRUCTION: &str = include_str!("../../../../src/compress/prefix_instruction.md");

/// True for a summary request: the conversation followed by the compression instruction
/// (COST-3), or a transcript's — a system message holding the `<state_snapshot>`
/// instructions and a last user message holding the `<conversation>` to summarize, with
/// no tools offered. (A normal turn after a compression also carries the snapshot in a
/// system message, but its last user message is the user's own text, and it offers tools.)
pub fn is_summary_request(request: &Value) -> bool {
    instruction_of(request).is_some() || is_transcript_request(request)
}

/// The compression instruction when the request's last message is one.
fn instruction_of(request: &Value) -> Option<&str> {
    let mark = INSTRUCTION.lines().next().unwrap_or_default();
    let last = request.get("messages")?.as_array()?.last()?;
    let text = last.get("content")?.as_str()?;
    (last.get("role").and_then(Value::as_str) == Some("user") && text.starts_with(mark)).then_some(text)
}

/// What a summary request asks to summarize, as a transcript request's user message:
/// `<previous_snapshot>` (if any) and the `<conversation>`. For a request on the
/// conversation's bytes: the messages before the last few the instruction keeps, as
/// transcript lines, and the snapshot from the memory context.
pub fn summary_input(request: &Value) -> String {
    let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let Some(instruction) = instruction_of(request) else {
        return messages.last().and_then(|m| m.get("content")).and_then(Value::as_str).unwrap_or_default().to_owned();
    };
    let kept: usize = between(instruction, "except the last ", " ").and_then(|n| n.parse().ok()).unwrap_or(0);
    let text = |m: &Value| m.get("content").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut input = String::new();
    // The memory context (a system message), never the instruction's own template.
    let system = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("system");
    if let Some(previous) = messages.iter().filter(system).rev().find_map(|m| between(m.get("content")?.as_str()?, "<state_snapshot>", "</state_snapshot>")) {
        input.push_str(&format!("<previous_snapshot>\n<state_snapshot>{previous}</state_snapshot>\n</previous_snapshot>\n\n"));
    }
    let conversation: Vec<&Value> = messages.iter().filter(|m| m.get("role").and_then(Value::as_str) != Some("system")).collect();
    let archived = conversation.len().saturating_sub(1 + kept);
    input.push_str("<conversation>\n");
    for m in &conversation[..archived] {
        match m.get("role").and_then(Value::as_str) {
            Some("user") => input.push_str(&format!("[user] {}\n", text(m))),
            Some("tool") => input.push_str(&format!("[tool result id={}] {}\n", m.get("tool_call_id").and_then(Value::as_str).unwrap_or_default(), text(m))),
            _ => {
                if !text(m).is_empty() {
                    input.push_str(&format!("[assistant] {}\n", text(m)));
                }
                for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default();
                    let args = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default();
                    input.push_str(&format!("[assistant called tool {name} id={}] {args}\n", call.get("id").and_then(Value::as_str).unwrap_or_default()));
                }
            }
        }
    }
    input + "</conversation>"
}

fn is_transcript_request(request: &Value) -> bool {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let role_is = |m: &Value, role: &str| m.get("role").and_then(Value::as_str) == Some(role);
    let text = |m: &Value| {
        m.get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let has_tools = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let instructions = messages
        .iter()
        .any(|m| role_is(m, "system") && text(m).contains("<state_snapshot>"));
    let conversation = messages
        .last()
        .is_some_and(|m| role_is(m, "user") && text(m).contains("<conversation>"));
    instructions && conversation && !has_tools
}

/// The snapshot for the summary request whose user message is `user_text`. Like a good
/// summarizer it is shorter than what it replaces: at most three quarters of the
/// conversation's length, dropping detail (never the goal) to get there.
pub fn snapshot_reply(user_text: &str) -> String {
    let previous = between(user_text, "<previous_snapshot>", "</previous_snapshot>");
    let conversation = between(user_text, "<conversation>", "</conversation>").unwrap_or_default();
    let budget = conversation.chars().count() * 3 / 4;
    let mut smallest = String::new();
    for detail in DETAIL_LEVELS {
        smallest = render(previous, conversation, detail);
        if smallest.chars().count() <= budget {
            break;
        }
    }
    smallest
}

fn render(previous: Option<&str>, conversation: &str, detail: Detail) -> String {
    let lines = Transcript::parse(conversation);
    let goal = previous
        .and_then(|p| between(p, "<overall_goal>", "</overall_goal>"))
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(|g| clip(g, detail.goal_chars))
        .or_else(|| lines.users.first().map(|u| clip(u, detail.goal_chars)))
        .unwrap_or_else(|| "(no user goal stated yet)".to_owned());
    if detail.items == 0 {
        return format!(
            "<state_snapshot><overall_goal>{goal}</overall_goal><key_knowledge>see memory</key_knowledge>\
             <file_system_state>none</file_system_state><recent_actions>{} request(s)</recent_actions>\
             <current_plan>go on</current_plan></state_snapshot>",
            lines.users.len()
        );
    }

    let mut knowledge = previous
        .and_then(|p| between(p, "<key_knowledge>", "</key_knowledge>"))
        .map(items)
        .unwrap_or_default();
    knowledge.extend(lines.answers.iter().map(|a| clip(a, detail.item_chars)));
    let mut knowledge = last_unique(knowledge, detail.items);
    if knowledge.is_empty() {
        knowledge.push("nothing yet".to_owned());
    }
    let mut actions: Vec<String> = lines
        .events
        .iter()
        .map(|e| clip(e, detail.item_chars))
        .collect();
    if actions.is_empty() {
        actions.push("none".to_owned());
    }
    let actions = last_unique(actions, detail.items);
    format!(
        "<state_snapshot>\n<overall_goal>{goal}</overall_goal>\n<key_knowledge>\n{}\n</key_knowledge>\n\
         <file_system_state>none</file_system_state>\n<recent_actions>\n{}\n</recent_actions>\n\
         <current_plan>\n- [done] {} request(s) answered; originals via retrieve_memory\n\
         - [next] the user's next request, towards the goal\n</current_plan>\n</state_snapshot>",
        bullets(&knowledge),
        bullets(&actions),
        lines.users.len()
    )
}

/// The conversation transcript the compressor renders, line by line: `[user] …`,
/// `[assistant] …`, `[assistant called tool NAME id=…] ARGS`, `[tool result id=…] …`.
#[derive(Default)]
struct Transcript {
    /// First lines of user messages, in order.
    users: Vec<String>,
    /// First lines of assistant answers.
    answers: Vec<String>,
    /// What happened: requests and tool calls.
    events: Vec<String>,
}

impl Transcript {
    fn parse(text: &str) -> Self {
        let mut t = Self::default();
        for line in text.lines() {
            if let Some(user) = line.strip_prefix("[user] ") {
                let user = user.trim();
                if !user.is_empty() {
                    t.users.push(user.to_owned());
                    t.events.push(format!("user asked: {user}"));
                }
            } else if let Some(answer) = line.strip_prefix("[assistant] ") {
                if !answer.trim().is_empty() {
                    t.answers.push(answer.trim().to_owned());
                }
            } else if let Some(call) = line.strip_prefix("[assistant called tool ") {
                let name = call.split_whitespace().next().unwrap_or("tool");
                let args = call.split_once("] ").map_or("", |(_, a)| a);
                t.events.push(format!("called {name} {args}"));
            }
        }
        t
    }
}

/// The text between the first `open` and the next `close`.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// `- item` lines of a list section.
fn items(section: &str) -> Vec<String> {
    section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(str::to_owned)
        .collect()
}

/// The last `max` distinct items, in order.
fn last_unique(list: Vec<String>, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.into_iter().rev() {
        if !out.contains(&item) {
            out.push(item);
        }
        if out.len() == max {
            break;
        }
    }
    out.reverse();
    out
}

fn bullets(list: &[String]) -> String {
    list.iter()
        .map(|i| format!("- {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first line of `text`, at most `max` characters, with angle brackets replaced so
/// user text can never open or close a snapshot section.
fn clip(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let mut out: String = line
        .chars()
        .take(max)
        .map(|c| match c {
            '<' => '‹',
            '>' => '›',
            c => c,
        })
        .collect();
    if line.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECTIONS: [&str; 5] = [
        "overall_goal",
        "key_knowledge",
        "file_system_state",
        "recent_actions",
        "current_plan",
    ];

    fn well_formed(s: &str) -> bool {
        s.matches("<state_snapshot>").count() == 1
            && s.matches("</state_snapshot>").count() == 1
            && SECTIONS.iter().all(|n| {
                s.matches(&format!("<{n}>")).count() == 1
                    && s.matches(&format!("</{n}>")).count() == 1
            })
    }

    #[test]
    fn cmp_8_simulated_summary_has_all_five_sections_and_the_first_goal() {
        let convo = format!(
            "<conversation>\n[user] Plan my trip to Beijing <in May>\nmore detail\n\
             [assistant called tool get_weather id=c1] {{\"city\":\"Beijing\"}}\n\
             [tool result id=c1] {{\"city\":\"Beijing\", \"notes\": \"{}\"}}\n\
             [assistant] Beijing: sunny, 22 °C.\n[user] and Shenzhen?\n</conversation>",
            "long ".repeat(200)
        );
        let s = snapshot_reply(&convo);
        assert!(well_formed(&s), "{s}");
        assert!(
            s.contains("<overall_goal>Plan my trip to Beijing ‹in May›</overall_goal>"),
            "{s}"
        );
        assert!(
            s.contains("called get_weather {\"city\":\"Beijing\"}"),
            "{s}"
        );
        assert!(s.contains("- Beijing: sunny, 22 °C."), "{s}");

        // Folding: the previous goal wins over the new chunk's first user line.
        let folded = snapshot_reply(&format!(
            "<previous_snapshot>\n{s}\n</previous_snapshot>\n\n<conversation>\n[user] something else\n\
             [tool result id=c9] {}\n</conversation>",
            "long ".repeat(200)
        ));
        assert!(well_formed(&folded), "{folded}");
        assert!(
            folded.contains("<overall_goal>Plan my trip to Beijing ‹in May›</overall_goal>"),
            "{folded}"
        );
        assert!(folded.contains("- Beijing: sunny, 22 °C."), "{folded}");
    }

    #[test]
    fn cmp_8_a_short_conversation_gets_a_shorter_snapshot_that_keeps_the_goal() {
        let convo = "<conversation>\n[user] What is the weather in Beijing and Shenzhen?\n\
                     [assistant called tool get_weather id=c1] {\"city\":\"Beijing\"}\n\
                     [assistant called tool get_weather id=c2] {\"city\":\"Shenzhen\"}\n\
                     [tool result id=c1] {\"city\":\"Beijing\",\"condition\":\"sunny\",\"temperature_c\":22}\n\
                     [tool result id=c2] {\"city\":\"Shenzhen\",\"condition\":\"light rain\",\"temperature_c\":27}\n\
                     [assistant] Here is what I found: Beijing: sunny, 22 °C; Shenzhen: light rain, 27 °C.\n\
                     </conversation>";
        let s = snapshot_reply(convo);
        assert!(well_formed(&s), "{s}");
        assert!(s.chars().count() < convo.chars().count() * 3 / 4, "{s}");
        assert!(
            s.contains("<overall_goal>What is the weather in Beijing and Shenzhen?</overall_goal>"),
            "{s}"
        );
    }

    #[test]
    fn cmp_8_summary_requests_are_recognised_and_normal_turns_are_not() {
        let summary = json!({"messages": [
            {"role": "system", "content": "Reply with <state_snapshot> …"},
            {"role": "user", "content": "<conversation>\n[user] hi\n</conversation>"}
        ]});
        assert!(is_summary_request(&summary));
        let turn = json!({"messages": [
            {"role": "system", "content": "Latest state snapshot: <state_snapshot>…</state_snapshot>"},
            {"role": "user", "content": "hello"}
        ], "tools": [{"type": "function", "function": {"name": "get_time"}}]});
        assert!(!is_summary_request(&turn));
    }

    #[test]
    fn cost_3_a_request_on_the_conversations_bytes_is_read_as_its_transcript() {
        let mark = INSTRUCTION.lines().next().unwrap();
        let request = json!({"messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "system", "content": "Latest state snapshot: <state_snapshot><overall_goal>Trip to Beijing</overall_goal></state_snapshot>"},
            {"role": "user", "content": "Weather in Shenzhen?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Shenzhen\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "rain"},
            {"role": "assistant", "content": "Rain in Shenzhen."},
            {"role": "user", "content": "KEPT question"},
            {"role": "user", "content": format!("{mark}\nAll messages above except the last 1 (from …) are about to be removed")}
        ], "tools": [{"type": "function", "function": {"name": "get_weather"}}]});
        assert!(is_summary_request(&request));
        let input = summary_input(&request);
        assert!(input.starts_with("<previous_snapshot>\n<state_snapshot><overall_goal>Trip to Beijing"), "{input}");
        assert!(input.contains("[user] Weather in Shenzhen?\n[assistant called tool get_weather id=c1] {\"city\":\"Shenzhen\"}\n[tool result id=c1] rain\n[assistant] Rain in Shenzhen.\n</conversation>"), "{input}");
        assert!(!input.contains("KEPT"), "{input}");
        let s = snapshot_reply(&input);
        assert!(well_formed(&s) && s.contains("<overall_goal>Trip to Beijing</overall_goal>"), "{s}");
    }
}

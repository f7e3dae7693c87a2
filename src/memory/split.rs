//! CMP-4: the pairing-safe split point, in O(n).

use std::collections::HashMap;

use crate::history::Message;

/// The largest `s` with `1 ≤ s ≤ len − keep_recent` such that both `messages[..s]` and
/// `messages[s..]` satisfy [`HistoryInvariants::tool_calls_paired`]; `None` when
/// `len ≤ keep_recent` or no such index exists. Same result as the seed's loop, which
/// re-checks both halves for every candidate (O(n²)); this is O(n).
///
/// How: per tool-call id, the positions of its calls and results decide which split
/// points keep that id paired on each side (an interval or two); every other split point
/// is marked bad in a difference array. The answer is the largest unmarked candidate.
///
/// ```
/// use arkagent::{Message, ToolCall};
/// use arkagent::memory::compute_safe_split_index;
/// let call = |id: &str| ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() };
/// let h = vec![
///     Message::user("a"),
///     Message::assistant_tool_calls(vec![call("1")]),
///     Message::tool_result("1", "ok", false),
///     Message::assistant("done"),
/// ];
/// assert_eq!(compute_safe_split_index(&h, 2), Some(1)); // 2 would cut the pair
/// assert_eq!(compute_safe_split_index(&h, 4), None);
/// ```
///
/// [`HistoryInvariants::tool_calls_paired`]: crate::HistoryInvariants::tool_calls_paired
pub fn compute_safe_split_index(messages: &[Message], keep_recent: usize) -> Option<usize> {
    let n = messages.len();
    if n <= keep_recent {
        return None;
    }
    // Events per id in message order: (position, is_call).
    let mut events: HashMap<&str, Vec<(usize, bool)>> = HashMap::new();
    for (pos, message) in messages.iter().enumerate() {
        match message {
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    events.entry(call.id.as_str()).or_default().push((pos, true));
                }
            }
            Message::Tool { tool_call_id, .. } => events.entry(tool_call_id.as_str()).or_default().push((pos, false)),
            Message::System { .. } | Message::User { .. } => {}
        }
    }
    // bad[s] > 0 marks split point s (0..=n) as unsafe; marks are ranges via a diff array.
    let mut diff = vec![0i64; n + 2];
    let mut mark = |from: usize, to: usize| {
        // Marks s in [from, to] (inclusive); empty when from > to.
        if from <= to && from <= n {
            diff[from] += 1;
            diff[to.min(n) + 1] -= 1;
        }
    };
    for ev in events.values() {
        let k = ev.len();
        // Prefix messages[..s] holds the events at positions < s.
        // Valid: no event (s ≤ first) or exactly the first call then its result.
        let first = ev[0].0;
        if k >= 2 && ev[0].1 && !ev[1].1 && ev[0].0 < ev[1].0 {
            let third = if k >= 3 { ev[2].0 } else { n };
            mark(first + 1, ev[1].0); // holds the call but not yet the result
            mark(third + 1, n); // holds a third event
        } else {
            mark(first + 1, n);
        }
        // Suffix messages[s..] holds the events at positions ≥ s.
        // Valid: no event (s > last) or exactly the last call then its result.
        let last = ev[k - 1].0;
        if k >= 2 && ev[k - 2].1 && !ev[k - 1].1 && ev[k - 2].0 < ev[k - 1].0 {
            let call = ev[k - 2].0;
            if k >= 3 {
                mark(0, ev[k - 3].0); // holds a third-to-last event
            }
            mark(call + 1, last); // holds the result but not its call
        } else {
            mark(0, last);
        }
    }
    let mut bad = 0i64;
    let mut best = None;
    for (s, d) in diff.iter().enumerate().take(n - keep_recent + 1) {
        bad += d;
        if s >= 1 && bad == 0 {
            best = Some(s);
        }
    }
    best
}

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
/// Memory: one fixed-size record per tool-call id plus one counter per message — an
/// index, never a copy of the messages.
///
/// ```
/// use arkagent::{Message, ToolCall};
/// use arkagent::compress::compute_safe_split_index;
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
/// [`HistoryInvariants::tool_calls_paired`]: crate::history::HistoryInvariants::tool_calls_paired
pub fn compute_safe_split_index(messages: &[Message], keep_recent: usize) -> Option<usize> {
    let n = messages.len();
    if n <= keep_recent {
        return None;
    }
    // Per id, only the first three and last three events matter: (position, is_call).
    let calls = messages.iter().map(|m| m.tool_calls().len()).sum::<usize>();
    let mut events: HashMap<&str, IdEvents> = HashMap::with_capacity(calls);
    for (pos, message) in messages.iter().enumerate() {
        match message {
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    events.entry(call.id.as_str()).or_default().push(pos, true);
                }
            }
            Message::Tool { tool_call_id, .. } => events.entry(tool_call_id.as_str()).or_default().push(pos, false),
            Message::System { .. } | Message::User { .. } => {}
        }
    }
    // diff marks unsafe split points s (0..=n) as ranges: a difference array.
    let mut diff = vec![0i32; n + 2];
    let mut mark = |from: usize, to: usize| {
        // Marks s in [from, to] (inclusive); empty when from > to.
        if from <= to && from <= n {
            diff[from] += 1;
            diff[to.min(n) + 1] -= 1;
        }
    };
    for ev in events.values() {
        let k = ev.count;
        let head = |i: usize| unpack(ev.head[i]);
        let tail = |i: usize| unpack(ev.tail[3 - i]); // tail(1) is the last event
        // Prefix messages[..s] holds the events at positions < s.
        // Valid: no event (s ≤ first) or exactly the first call then its result.
        let first = head(0).0;
        if k >= 2 && head(0).1 && !head(1).1 && head(0).0 < head(1).0 {
            let third = if k >= 3 { head(2).0 } else { n };
            mark(first + 1, head(1).0); // holds the call but not yet the result
            mark(third + 1, n); // holds a third event
        } else {
            mark(first + 1, n);
        }
        // Suffix messages[s..] holds the events at positions ≥ s.
        // Valid: no event (s > last) or exactly the last call then its result.
        let last = tail(1).0;
        if k >= 2 && tail(2).1 && !tail(1).1 && tail(2).0 < tail(1).0 {
            let call = tail(2).0;
            if k >= 3 {
                mark(0, tail(3).0); // holds a third-to-last event
            }
            mark(call + 1, last); // holds the result but not its call
        } else {
            mark(0, last);
        }
    }
    let mut bad = 0i32;
    let mut best = None;
    for (s, d) in diff.iter().enumerate().take(n - keep_recent + 1) {
        bad += d;
        if s >= 1 && bad == 0 {
            best = Some(s);
        }
    }
    best
}

/// The first three and the last three events of one tool-call id, packed as
/// `position << 1 | is_call` (28 bytes: no allocation per id).
#[derive(Default, Clone, Copy)]
struct IdEvents {
    count: u32,
    head: [u32; 3],
    /// `tail[2]` is the last event, `tail[0]` the third-to-last.
    tail: [u32; 3],
}

impl IdEvents {
    fn push(&mut self, pos: usize, is_call: bool) {
        // Histories beyond 2³¹ messages are not representable on a phone anyway.
        let packed = (pos as u32) << 1 | u32::from(is_call);
        if self.count < 3 {
            self.head[self.count as usize] = packed;
        }
        self.tail = [self.tail[1], self.tail[2], packed];
        self.count += 1;
    }
}

fn unpack(packed: u32) -> (usize, bool) {
    ((packed >> 1) as usize, packed & 1 == 1)
}

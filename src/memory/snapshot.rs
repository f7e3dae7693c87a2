//! CMP-8: validation of the `<state_snapshot>` summary.

/// The five sections a snapshot must contain, in this order in the prompt.
pub const SNAPSHOT_SECTIONS: [&str; 5] = ["overall_goal", "key_knowledge", "file_system_state", "recent_actions", "current_plan"];

/// Why a summary was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SnapshotError {
    /// Nothing but white space.
    Empty,
    /// Not one well-formed `<state_snapshot>` with all five sections.
    Malformed,
}

/// Extracts and checks the snapshot: exactly one `<state_snapshot>…</state_snapshot>`,
/// and inside it each section exactly once as `<name>…</name>` (open before close, not
/// overlapping another section). Text around the snapshot (a model's preamble) is
/// dropped. The content itself is free text: models rarely escape `<` or `&`, so no
/// strict XML parser is used.
pub(crate) fn validate_snapshot(reply: &str) -> Result<String, SnapshotError> {
    if reply.trim().is_empty() {
        return Err(SnapshotError::Empty);
    }
    let open = "<state_snapshot>";
    let close = "</state_snapshot>";
    if reply.matches(open).count() != 1 || reply.matches(close).count() != 1 {
        return Err(SnapshotError::Malformed);
    }
    let start = reply.find(open).ok_or(SnapshotError::Malformed)?;
    let end = reply.find(close).ok_or(SnapshotError::Malformed)?;
    if end < start {
        return Err(SnapshotError::Malformed);
    }
    let inner = &reply[start + open.len()..end];
    let mut spans = Vec::with_capacity(SNAPSHOT_SECTIONS.len());
    for name in SNAPSHOT_SECTIONS {
        let (o, c) = (format!("<{name}>"), format!("</{name}>"));
        if inner.matches(&o).count() != 1 || inner.matches(&c).count() != 1 {
            return Err(SnapshotError::Malformed);
        }
        let (Some(a), Some(b)) = (inner.find(&o), inner.find(&c)) else {
            return Err(SnapshotError::Malformed);
        };
        if b < a {
            return Err(SnapshotError::Malformed);
        }
        spans.push((a, b + c.len()));
    }
    spans.sort_unstable();
    if spans.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err(SnapshotError::Malformed);
    }
    Ok(reply[start..end + close.len()].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(goal: &str) -> String {
        format!(
            "<state_snapshot><overall_goal>{goal}</overall_goal><key_knowledge>k</key_knowledge>\
             <file_system_state>f</file_system_state><recent_actions>r</recent_actions>\
             <current_plan>p</current_plan></state_snapshot>"
        )
    }

    #[test]
    fn cmp_8_accepts_all_five_sections_and_drops_preamble() {
        let s = snapshot("法棍的失重率 a < b & c");
        assert_eq!(validate_snapshot(&format!("Sure!\n{s}\n")).unwrap(), s);
    }

    #[test]
    fn cmp_8_rejects_empty_missing_duplicated_or_crossed_sections() {
        assert_eq!(validate_snapshot("  \n"), Err(SnapshotError::Empty));
        assert_eq!(validate_snapshot("just prose"), Err(SnapshotError::Malformed));
        let missing = snapshot("g").replace("<current_plan>p</current_plan>", "");
        assert_eq!(validate_snapshot(&missing), Err(SnapshotError::Malformed));
        let doubled = snapshot("g").replace("<key_knowledge>k</key_knowledge>", "<key_knowledge>k</key_knowledge><key_knowledge>x</key_knowledge>");
        assert_eq!(validate_snapshot(&doubled), Err(SnapshotError::Malformed));
        let crossed = snapshot("g").replace("<overall_goal>g</overall_goal><key_knowledge>k</key_knowledge>", "<overall_goal>g<key_knowledge></overall_goal>k</key_knowledge>");
        assert_eq!(validate_snapshot(&crossed), Err(SnapshotError::Malformed));
        let unclosed = snapshot("g").replace("</state_snapshot>", "");
        assert_eq!(validate_snapshot(&unclosed), Err(SnapshotError::Malformed));
    }
}

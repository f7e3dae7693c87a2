//! ISO-3: the three-level result summary a parent receives instead of a child's full
//! output. Lengths are in Unicode scalar values, so Chinese text and emoji are never cut
//! inside a character.

/// Content up to this many characters is returned as is.
pub const SUMMARY_DIRECT_LIMIT: usize = 500;
/// A `## Summary` / `## Result` section up to this many characters is returned alone.
pub const SUMMARY_SECTION_LIMIT: usize = 1000;

/// ≤ 500 characters: as is. Otherwise the `## Summary` (or else `## Result`) section when
/// it has at most 1000 characters. Otherwise the first 500 characters followed by
/// `[truncated, N chars]`, N being the full length.
///
/// ```
/// use arkagent::subagent::summarize_result;
/// assert_eq!(summarize_result("short"), "short");
/// let long = format!("{}\n## Summary\n结论：可行。\n## Details\n…", "x".repeat(600));
/// assert_eq!(summarize_result(&long), "## Summary\n结论：可行。");
/// ```
pub fn summarize_result(content: &str) -> String {
    let total = content.chars().count();
    if total <= SUMMARY_DIRECT_LIMIT {
        return content.to_owned();
    }
    for heading in ["## Summary", "## Result"] {
        if let Some(section) = section(content, heading) {
            if section.chars().count() <= SUMMARY_SECTION_LIMIT {
                return section.to_owned();
            }
        }
    }
    let head: String = content.chars().take(SUMMARY_DIRECT_LIMIT).collect();
    format!("{head}[truncated, {total} chars]")
}

/// The section starting at a line `heading` (case-sensitive, at a line start) up to the
/// next `## ` heading, trimmed at the end.
fn section<'a>(content: &'a str, heading: &str) -> Option<&'a str> {
    let mut offset = 0;
    for line in content.split_inclusive('\n') {
        if line.trim_end() == heading || line.starts_with(&format!("{heading} ")) {
            let rest = &content[offset..];
            // From the heading line's own newline, so that a heading right after it ends
            // the (empty) section too.
            let from = line.len() - usize::from(line.ends_with('\n'));
            let end = rest[from..].match_indices("\n## ").next().map_or(rest.len(), |(i, _)| from + i);
            return Some(rest[..end].trim_end());
        }
        offset += line.len();
    }
    None
}

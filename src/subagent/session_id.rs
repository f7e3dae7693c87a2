use std::collections::HashSet;

/// SUB-9, exactly as the seed: use the trimmed request when it is non-empty, not the
/// parent's id and not active; otherwise `{parent}_w_{next_id()}`, drawing again while
/// the candidate is empty, the parent's id or active — at most 16 more times (the guard
/// against a generator that keeps colliding; the last candidate is then returned as is).
///
/// ```
/// use arkagent::subagent::allocate_isolated_session_id;
/// let mut n = 0;
/// let id = allocate_isolated_session_id("p", "p", &["p_w_1".to_owned()], &mut || { n += 1; n.to_string() });
/// assert_eq!(id, "p_w_2");
/// ```
pub fn allocate_isolated_session_id(parent_session_id: &str, requested: &str, active_ids: &[String], next_id: &mut dyn FnMut() -> String) -> String {
    let parent_id = parent_session_id.trim();
    let trimmed = requested.trim();
    let active: HashSet<&str> = active_ids.iter().map(String::as_str).collect();
    if !trimmed.is_empty() && trimmed != parent_id && !active.contains(trimmed) {
        return trimmed.to_owned();
    }
    let mut candidate = format!("{parent_id}_w_{}", next_id());
    let mut guard = 0;
    while (candidate.is_empty() || candidate == parent_id || active.contains(candidate.as_str())) && guard < 16 {
        candidate = format!("{parent_id}_w_{}", next_id());
        guard += 1;
    }
    candidate
}

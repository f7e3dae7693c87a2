//! How a delegated child ended (SUB-8, ISO-5): one closed set, written as fixed strings
//! into the registry's records (`forced_reason`), the `delegate_task` result's metadata
//! (`status`, `reason`) and its tool error code.

/// How a delegated child ended. [`as_str`](Self::as_str) is the wire string: the
/// `forced_reason` of a force-completed child (and the code of the tool error its parent
/// sees), `"completed"` or `"failed"` otherwise; [`status`](Self::status) is the
/// `delegate_task` metadata's `status`. A host's own reason given to
/// `SubAgentRegistry::force_complete` is kept as it is, outside this set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChildEnding {
    /// It gave a final answer.
    Completed,
    /// Its run failed with an error (whose code is the reason).
    Failed,
    /// Forced: it spent its token budget (ISO-5).
    TokenBudgetExceeded,
    /// Forced: it reached its `max_iterations`.
    MaxIterations,
    /// Forced by the registry (`force_complete`) while its parent's run went on.
    ForceCompleted,
    /// Forced: its parent's run was cancelled (or the delegation dropped).
    Cancelled,
    /// Forced: its parent session closed (`force_complete_all`).
    SessionClosed,
    /// Forced: stale cleanup (`cleanup`) found it running too long.
    Stale,
}

impl ChildEnding {
    /// Every ending, in declaration order (for generated unions).
    pub const ALL: [Self; 8] = [
        Self::Completed,
        Self::Failed,
        Self::TokenBudgetExceeded,
        Self::MaxIterations,
        Self::ForceCompleted,
        Self::Cancelled,
        Self::SessionClosed,
        Self::Stale,
    ];

    /// The `delegate_task` metadata's `status` values, in order.
    pub const STATUSES: [&'static str; 3] = ["completed", "forced", "failed"];

    /// The wire string: `"completed"`, `"failed"`, or the forced reason
    /// (`"token-budget-exceeded"`, `"max-iterations"`, `"force-completed"`, `"cancelled"`,
    /// `"session-closed"`, `"stale"`).
    ///
    /// ```
    /// use arkagent::subagent::ChildEnding;
    /// assert_eq!(ChildEnding::TokenBudgetExceeded.as_str(), "token-budget-exceeded");
    /// assert_eq!(ChildEnding::TokenBudgetExceeded.status(), "forced");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::TokenBudgetExceeded => "token-budget-exceeded",
            Self::MaxIterations => "max-iterations",
            Self::ForceCompleted => "force-completed",
            Self::Cancelled => "cancelled",
            Self::SessionClosed => "session-closed",
            Self::Stale => "stale",
        }
    }

    /// `"completed"`, `"failed"` or `"forced"` (every other ending).
    pub const fn status(self) -> &'static str {
        match self {
            Self::Completed => Self::STATUSES[0],
            Self::Failed => Self::STATUSES[2],
            _ => Self::STATUSES[1],
        }
    }

    /// True for the forced endings (a `forced_reason` is recorded).
    pub const fn is_forced(self) -> bool {
        !matches!(self, Self::Completed | Self::Failed)
    }

    /// The ending whose wire string is `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == text)
    }
}

impl std::fmt::Display for ChildEnding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ChildEnding;

    #[test]
    fn sub_8_child_endings_round_trip_their_fixed_wire_strings() {
        let strings: Vec<&str> = ChildEnding::ALL.iter().map(|e| e.as_str()).collect();
        assert_eq!(
            strings,
            ["completed", "failed", "token-budget-exceeded", "max-iterations", "force-completed", "cancelled", "session-closed", "stale"]
        );
        for ending in ChildEnding::ALL {
            assert_eq!(ChildEnding::parse(ending.as_str()), Some(ending));
            assert!(ChildEnding::STATUSES.contains(&ending.status()));
            assert_eq!(ending.is_forced(), ending.status() == "forced");
        }
        assert_eq!(ChildEnding::parse("forced"), None);
    }
}

//! `/cost` (COST-2): what the session cost at the `--price`, per part (this agent, its
//! sub-agents, the total), and how much of the prompt the provider served from its cache.
//! The amounts are the library's own exact sums (`AgentRuntime::total_usage`); the demo
//! only formats them.

use arkagent::subagent::ChildUsageSummary;
use arkagent::{AgentRuntime, ModelPrice};

/// The `/cost` lines for `runtime`.
pub fn report(runtime: &AgentRuntime) -> Vec<String> {
    let mut lines = vec![match &runtime.config().model.price {
        Some(p) => format!("cost: price {}", price_text(p)),
        None => "cost: no price set — start with --price CURRENCY:INPUT:CACHED:OUTPUT (per 1M tokens, e.g. \
                 --price USD:0.27:0.07:1.10); the library never guesses one"
            .to_owned(),
    }];
    let totals = runtime.total_usage();
    for (label, part) in [("this agent", &totals.parent), ("sub-agents", &totals.children), ("session total", &totals.total)] {
        lines.push(format!("cost: {label}: {}", part_text(part)));
    }
    lines
}

/// `USD 0.27 input, 0.07 cached input, 1.1 output per 1M tokens`.
pub fn price_text(p: &ModelPrice) -> String {
    let write = p.cache_write_per_million.map(|w| format!(", {w} cache write")).unwrap_or_default();
    format!(
        "{} {} input, {} cached input, {} output{write} per 1M tokens",
        p.currency, p.input_per_million, p.cached_input_per_million, p.output_per_million
    )
}

/// `0.000732 USD (3 of 3 calls priced); prompt 2500 tokens, 1700 cached (68.0 %)`.
fn part_text(u: &ChildUsageSummary) -> String {
    let money = if u.costs.is_empty() {
        "no cost".to_owned()
    } else {
        u.costs.iter().map(ToString::to_string).collect::<Vec<_>>().join(" + ")
    };
    let share = if u.prompt_tokens == 0 { 0.0 } else { u.cached_tokens as f64 * 100.0 / u.prompt_tokens as f64 };
    format!(
        "{money} ({} of {} calls priced); prompt {} tokens, {} cached ({share:.1} %)",
        u.priced_call_count, u.call_count, u.prompt_tokens, u.cached_tokens
    )
}

//! Money (COST-2): an amount in one currency and per-currency sums.
//!
//! Money is an integer count of billionths of the currency unit ("nanos"), so that a
//! total is exactly the sum of its parts on every surface (f64 sums depend on the order
//! of summation; integers do not). What a call cost is decided once, by
//! [`ModelPrice`](super::ModelPrice), and totals add those amounts.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Nanos in one currency unit (1 USD = 1,000,000,000 nanos).
pub const NANOS_PER_UNIT: u64 = 1_000_000_000;

/// An amount of money in one currency, exact: `nanos` billionths of the currency unit.
///
/// ```
/// use arkagent::history::Cost;
/// let c = Cost { currency: "USD".into(), nanos: 394_000_000 };
/// assert_eq!(c.to_string(), "0.394 USD");
/// assert_eq!(c.amount(), 0.394);
/// ```
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cost {
    /// The currency code as the host set it on the price (e.g. `"USD"`, `"CNY"`);
    /// compared as written.
    pub currency: String,
    /// The amount in billionths of the currency unit.
    pub nanos: u64,
}

impl Cost {
    /// The amount in currency units as a float, for display (sums use [`nanos`](Self::nanos)).
    pub fn amount(&self) -> f64 {
        self.nanos as f64 / NANOS_PER_UNIT as f64
    }
}

impl fmt::Display for Cost {
    /// The exact decimal amount (at least two decimals, no trailing zeros beyond) and the
    /// currency: `0.394 USD`, `12.00 CNY`, `0.000000007 USD`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fraction = format!("{:09}", self.nanos % NANOS_PER_UNIT);
        let trimmed = fraction.trim_end_matches('0');
        let shown = if trimmed.len() < 2 { &fraction[..2] } else { trimmed };
        write!(f, "{}.{shown} {}", self.nanos / NANOS_PER_UNIT, self.currency)
    }
}

/// Adds `cost` to per-currency `sums` (kept sorted by currency, one entry per currency),
/// saturating at `u64::MAX` nanos.
pub fn add_cost(sums: &mut Vec<Cost>, cost: &Cost) {
    match sums.binary_search_by(|c| c.currency.as_str().cmp(&cost.currency)) {
        Ok(i) => sums[i].nanos = sums[i].nanos.saturating_add(cost.nanos),
        Err(i) => sums.insert(i, cost.clone()),
    }
}

/// `sums - part` per currency, saturating at 0 (a currency left at 0 that `part` held is
/// dropped). Used to take a subtree's descendants out of its total.
pub fn subtract_costs(sums: &mut Vec<Cost>, part: &[Cost]) {
    for cost in part {
        if let Ok(i) = sums.binary_search_by(|c| c.currency.as_str().cmp(&cost.currency)) {
            sums[i].nanos = sums[i].nanos.saturating_sub(cost.nanos);
            if sums[i].nanos == 0 {
                sums.remove(i);
            }
        }
    }
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;

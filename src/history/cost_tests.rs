#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn cost_2_per_currency_sums_are_exact_and_sorted() {
    let mut sums = Vec::new();
    for (currency, nanos) in [("USD", 1), ("CNY", 7), ("USD", 2), ("CNY", u64::MAX)] {
        add_cost(&mut sums, &Cost { currency: currency.into(), nanos });
    }
    assert_eq!(sums, vec![Cost { currency: "CNY".into(), nanos: u64::MAX }, Cost { currency: "USD".into(), nanos: 3 }]);
    subtract_costs(&mut sums, &[Cost { currency: "USD".into(), nanos: 3 }, Cost { currency: "EUR".into(), nanos: 1 }]);
    assert_eq!(sums, vec![Cost { currency: "CNY".into(), nanos: u64::MAX }]);
}

#[test]
fn cost_2_display_is_the_exact_decimal() {
    let c = |nanos| Cost { currency: "USD".into(), nanos }.to_string();
    assert_eq!(c(0), "0.00 USD");
    assert_eq!(c(500_000_000), "0.50 USD");
    assert_eq!(c(12_000_000_000), "12.00 USD");
    assert_eq!(c(7), "0.000000007 USD");
    assert_eq!(c(1_234_567_891), "1.234567891 USD");
}

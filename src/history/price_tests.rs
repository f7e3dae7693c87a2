#![allow(clippy::unwrap_used)]

use super::*;

fn usage(prompt: u64, cached: Option<u64>, completion: u64) -> ModelUsage {
    ModelUsage { prompt_tokens: prompt, cached_tokens: cached, completion_tokens: completion, total_tokens: prompt + completion, ..Default::default() }
}

#[test]
fn cost_2_a_call_is_priced_by_cache_hit_miss_and_output() {
    let price = ModelPrice::new("USD", 0.27, 0.07, 1.10);
    // 1,000,000 prompt tokens, 600,000 cached, 1,000,000 out: 0.4×0.27 + 0.6×0.07 + 1.10.
    let cost = price.cost_of(&usage(1_000_000, Some(600_000), 1_000_000));
    assert_eq!(cost, Cost { currency: "USD".into(), nanos: 108_000_000 + 42_000_000 + 1_100_000_000 });
    // No cached count reported: the whole prompt at the input rate (1,000 × 270 nanos).
    assert_eq!(price.cost_of(&usage(1_000, None, 0)).nanos, 270_000);
    // A call's cost is rounded once, half up, to the nearest nano.
    let tiny = ModelPrice::new("USD", 0.0004, 0.0, 0.0005);
    assert_eq!(tiny.cost_of(&usage(1, None, 0)).nanos, 0, "0.4 nano");
    assert_eq!(tiny.cost_of(&usage(0, None, 1)).nanos, 1, "0.5 nano");
    assert_eq!(tiny.cost_of(&usage(2, None, 0)).nanos, 1, "0.8 nano");
}

#[test]
fn cost_2_cached_beyond_prompt_is_clamped_and_huge_counts_saturate() {
    let price = ModelPrice::new("USD", 1.0, 0.5, 2.0);
    assert_eq!(price.cost_of(&usage(100, Some(1_000), 0)).nanos, 50_000, "cached counted at most as the prompt");
    let huge = ModelUsage { prompt_tokens: u64::MAX, completion_tokens: u64::MAX, ..Default::default() };
    assert_eq!(ModelPrice::new("USD", 1e9, 1e9, 1e9).cost_of(&huge).nanos, u64::MAX);
}

#[test]
fn cost_2_cache_writes_use_their_rate_only_when_set() {
    let mut u = usage(1_000_000, Some(200_000), 0);
    u.cache_write_tokens = Some(300_000);
    let plain = ModelPrice::new("USD", 3.0, 0.3, 15.0);
    // Without a write rate the written tokens are uncached input: 0.8 × 3 + 0.2 × 0.3.
    assert_eq!(plain.cost_of(&u).nanos, 2_400_000_000 + 60_000_000);
    let with_write = plain.clone().with_cache_write(3.75);
    // 0.5 × 3 + 0.2 × 0.3 + 0.3 × 3.75.
    assert_eq!(with_write.cost_of(&u).nanos, 1_500_000_000 + 60_000_000 + 1_125_000_000);
    // A written count beyond the uncached rest is clamped.
    u.cache_write_tokens = Some(5_000_000);
    assert_eq!(with_write.cost_of(&u).nanos, 60_000_000 + 3_000_000_000);
}

#[test]
fn cost_2_invalid_prices_are_refused() {
    let ok = ModelPrice::new("CNY", 2.0, 0.5, 8.0);
    assert!(ok.validate().is_ok());
    assert!(ModelPrice::new("USD", 0.0, 0.0, 0.0).validate().is_ok(), "a free model is a price");
    for bad in [
        ModelPrice::new("", 1.0, 1.0, 1.0),
        ModelPrice::new(" ", 1.0, 1.0, 1.0),
        ModelPrice::new("U SD", 1.0, 1.0, 1.0),
        ModelPrice::new("X".repeat(17), 1.0, 1.0, 1.0),
        ModelPrice::new("USD", -0.01, 1.0, 1.0),
        ModelPrice::new("USD", 1.0, f64::NAN, 1.0),
        ModelPrice::new("USD", 1.0, 1.0, f64::INFINITY),
        ModelPrice::new("USD", 1.0, 1.0, 2e9),
        ModelPrice::new("USD", 1.0, 1.0, 1.0).with_cache_write(-1.0),
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
}

#[test]
fn cost_2_price_json_round_trips_and_rejects_unknown_keys() {
    let p: ModelPrice = serde_json::from_str(r#"{"currency":"USD","input_per_million":0.27,"cached_input_per_million":0.07,"output_per_million":1.1}"#).unwrap();
    assert_eq!(p, ModelPrice::new("USD", 0.27, 0.07, 1.1));
    assert!(serde_json::from_str::<ModelPrice>(r#"{"currency":"USD","input_per_million":1,"cached_input_per_million":1,"output_per_million":1,"input":1}"#).is_err());
}

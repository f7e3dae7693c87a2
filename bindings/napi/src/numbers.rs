//! JS numbers to Rust integers: a negative, fractional, non-finite or too large value is
//! refused with `invalid_config` rather than wrapped or truncated (JS numbers are exact up
//! to 2^53).

use crate::error::Thrown;

fn invalid(name: &str, detail: String) -> Thrown {
    napi_ohos::Error::new("invalid_config".to_owned(), format!("{name} {detail}"))
}

/// A non-negative integer.
pub fn count(value: f64, name: &str) -> Result<u64, Thrown> {
    const MAX_EXACT: f64 = 9_007_199_254_740_991.0;
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_EXACT {
        Ok(value as u64)
    } else {
        Err(invalid(
            name,
            format!("must be a non-negative integer, got {value}"),
        ))
    }
}

/// A non-negative integer that fits `usize`.
pub fn message_count(value: f64, name: &str) -> Result<usize, Thrown> {
    let n = count(value, name)?;
    usize::try_from(n).map_err(|_| invalid(name, "is too large".to_owned()))
}

/// A non-negative integer that fits `u32`.
pub fn count_u32(value: f64, name: &str) -> Result<u32, Thrown> {
    let n = count(value, name)?;
    u32::try_from(n).map_err(|_| invalid(name, "is too large".to_owned()))
}

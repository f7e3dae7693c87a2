//! JS numbers to Rust numbers. A count must be a safe integer (`Number.isSafeInteger`)
//! that is not negative and fits the target type: `-1`, `1.5`, `NaN`, `±Infinity` and
//! `2 ** 53` are refused rather than wrapped, truncated or saturated. Settings are refused
//! with `invalid_config`, method arguments with `invalid_argument` (see [`crate::args`]).

use crate::args::{ArgumentRefusal, Refusal, SettingRefusal};
use crate::error::Thrown;

/// `Number.MAX_SAFE_INTEGER`: larger JS numbers are not exact.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn refuse<R: Refusal>(name: &str, detail: String) -> Thrown {
    napi_ohos::Error::new(R::CODE.to_owned(), format!("{name} {detail}"))
}

fn integer<T: TryFrom<u64>, R: Refusal>(value: f64, name: &str) -> Result<T, Thrown> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE_INTEGER {
        // Exact: a non-negative integer below 2^53.
        T::try_from(value as u64)
            .map_err(|_| refuse::<R>(name, format!("is out of range, got {value}")))
    } else {
        Err(refuse::<R>(
            name,
            format!("must be a non-negative safe integer, got {value}"),
        ))
    }
}

/// A count setting (`u64`, `u32` or `usize`); throws `invalid_config`.
pub fn setting<T: TryFrom<u64>>(value: f64, name: &str) -> Result<T, Thrown> {
    integer::<T, SettingRefusal>(value, name)
}

/// A count argument of a method; throws `invalid_argument`.
pub fn argument<T: TryFrom<u64>>(value: f64, name: &str) -> Result<T, Thrown> {
    integer::<T, ArgumentRefusal>(value, name)
}

/// A finite setting that fits `f32` (e.g. a temperature); throws `invalid_config`.
pub fn finite_setting_f32(value: f64, name: &str) -> Result<f32, Thrown> {
    if value.is_finite() && value.abs() <= f64::from(f32::MAX) {
        Ok(value as f32)
    } else {
        Err(refuse::<SettingRefusal>(
            name,
            format!("must be a finite number, got {value}"),
        ))
    }
}

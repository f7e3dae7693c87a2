//! Conversions shared by the classes: optional values as JS `undefined` and the core's
//! serde names of unit enum values. Below every class module; imports nothing of this crate.

use napi_ohos::bindgen_prelude::{Either, Undefined};

/// An optional property reads as `undefined` when unset (napi-ohos would give `null`,
/// which the `?: number` declaration does not allow).
pub type Optional<T> = Either<T, Undefined>;

pub fn optional<T>(value: Option<T>) -> Optional<T> {
    value.map_or(Either::B(()), Either::A)
}

/// The core's serde name of a unit enum value ("completed", "max_iterations", …), given
/// `serde_json::to_value(value)`, so JS sees the same strings as exported state and
/// event payloads.
pub fn serde_name(value: serde_json::Result<serde_json::Value>) -> String {
    match value {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

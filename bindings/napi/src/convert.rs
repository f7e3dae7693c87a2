//! Conversions shared by the classes: optional values as JS `undefined`. Below every class
//! module; imports nothing of this crate.

use napi_ohos::bindgen_prelude::{Either, Undefined};

/// An optional property reads as `undefined` when unset (napi-ohos would give `null`,
/// which the `?: number` declaration does not allow).
pub type Optional<T> = Either<T, Undefined>;

pub fn optional<T>(value: Option<T>) -> Optional<T> {
    value.map_or(Either::B(()), Either::A)
}

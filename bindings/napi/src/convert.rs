//! Conversions shared by the classes: optional values as JS `undefined`. Below every class
//! module; imports nothing of this crate.

use napi_ohos::bindgen_prelude::{Either, Undefined};

/// An optional property reads as `undefined` when unset (napi-ohos would give `null`,
/// which the `?: number` declaration does not allow).
pub type Optional<T> = Either<T, Undefined>;

pub fn optional<T>(value: Option<T>) -> Optional<T> {
    value.map_or(Either::B(()), Either::A)
}

/// A plain JS object as JSON (`ModelConfig.extraBody`, an `McpServerOptions`): one copy of
/// napi-ohos's recursive conversion in the library, not one inlined per caller (PERF-9).
/// Errors with napi-ohos's reason (a value that is not JSON: a function, a symbol, …),
/// and for an array.
#[inline(never)]
pub fn json_object(env: &napi_ohos::Env, object: &napi_ohos::bindgen_prelude::Object<'_>) -> napi_ohos::Result<serde_json::Map<String, serde_json::Value>> {
    use napi_ohos::bindgen_prelude::{FromNapiValue, JsValue};
    let mut is_array = false;
    // SAFETY: `object` is a live value of the current call's scope, on `env`; an out bool.
    unsafe { napi_ohos::sys::napi_is_array(env.raw(), object.raw(), &mut is_array) };
    if is_array {
        return Err(napi_ohos::Error::new(napi_ohos::Status::InvalidArg, "an array is not a plain object"));
    }
    // SAFETY: `object` is a live object of the current call's scope, on `env`.
    unsafe { serde_json::Map::<String, serde_json::Value>::from_napi_value(env.raw(), object.raw()) }
}

//! Values coming in from JS: method arguments and property assignments, checked before
//! any `#[napi]` body runs, so that a wrong type or a missing argument throws an `Error`
//! with one of this crate's stable codes instead of napi-ohos's status names
//! (`StringExpected`, `InvalidArg`, …), and so that an object of the wrong class is
//! refused before it is unwrapped.
//!
//! - [`Arg<T>`]: a method (or function) argument; refused with `invalid_argument`.
//! - [`Setting<T>`]: a property assignment or a constructor argument of a settings class
//!   (`ModelConfig`, `AgentRuntimeConfig`, `ContextCompressor`, `SubAgentPolicy`,
//!   `WorkerConfig`); refused with `invalid_config`.
//!
//! Numbers come in as `f64` and are range-checked by the `numbers` module with the same
//! two codes. Public constructors also check they were called with `new`
//! ([`constructing`]).

use std::marker::PhantomData;

use napi_ohos::bindgen_prelude::{
    FromNapiValue, JavaScriptClassExt, JsValue, This, TypeName, Unknown, ValidateNapiValue,
};
use napi_ohos::{sys, Env, JsError, ValueType};

use crate::codes::ModuleCode;
use crate::error::Thrown;

/// The code a refused value is thrown with.
pub trait Refusal {
    /// The stable code, e.g. `"invalid_argument"`.
    const CODE: &'static str;
}

/// Method arguments: `invalid_argument`.
pub enum ArgumentRefusal {}

impl Refusal for ArgumentRefusal {
    const CODE: &'static str = ModuleCode::InvalidArgument.as_str();
}

/// Settings (property assignments, settings-class constructors): `invalid_config`.
pub enum SettingRefusal {}

impl Refusal for SettingRefusal {
    const CODE: &'static str = arkagent::ErrorCode::InvalidConfig.as_str();
}

/// A JS value checked with `T`'s own validation (type, class instance via `instanceof`,
/// array, object fields) and converted to `T`; any failure throws `R::CODE`.
pub struct Checked<T, R: Refusal>(pub T, PhantomData<R>);

/// A method argument (see the module docs).
pub type Arg<T> = Checked<T, ArgumentRefusal>;

/// A settings value (see the module docs).
pub type Setting<T> = Checked<T, SettingRefusal>;

impl<T: TypeName, R: Refusal> TypeName for Checked<T, R> {
    fn type_name() -> &'static str {
        T::type_name()
    }

    fn value_type() -> ValueType {
        T::value_type()
    }
}

impl<T: ValidateNapiValue + FromNapiValue, R: Refusal> FromNapiValue for Checked<T, R> {
    unsafe fn from_napi_value(
        env: sys::napi_env,
        value: sys::napi_value,
    ) -> napi_ohos::Result<Self> {
        // SAFETY: `env` and `value` come straight from the napi callback that converts
        // this argument; `validate` runs first, so `from_napi_value` never unwraps an
        // object of another class.
        let converted =
            unsafe { T::validate(env, value).and_then(|_| T::from_napi_value(env, value)) };
        converted
            .map(|v| Checked(v, PhantomData))
            .map_err(|e| coded(env, R::CODE, e))
    }
}

/// Replaces a napi-ohos conversion error by a JS `Error` carrying `code` (thrown as that
/// very object). When a JS exception is already pending (a getter of the argument threw),
/// the error is kept: napi-ohos rethrows the pending exception, the caller's own error.
fn coded(env: sys::napi_env, code: &str, error: napi_ohos::Error) -> napi_ohos::Error {
    let mut pending = false;
    // SAFETY: `env` is the live env of the current callback.
    let status = unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if status != sys::Status::napi_ok || pending {
        return error;
    }
    let env = Env::from_raw(env);
    let thrown = napi_ohos::Error::new(code.to_owned(), error.reason.clone());
    let js_error: Unknown<'_> = JsError::from(thrown).into_unknown(env);
    napi_ohos::Error::from(js_error)
}

/// Refuses a constructor call that would not build a new object: the class called
/// without `new` (its `this` is then the receiver, e.g. the module's exports, which
/// napi-ohos would wrap) or called on an existing instance (`Class.call(instance)`).
/// A subclass's `super(…)` passes. Throws `invalid_call`.
pub fn constructing<T: JavaScriptClassExt>(
    env: &Env,
    this: &This<'_>,
    class: &str,
) -> Result<(), Thrown> {
    let this = &this.object;
    let mut wrapped = std::ptr::null_mut();
    // SAFETY: `env` and `this` are the live values of the current constructor call;
    // napi_unwrap only reports whether a native object is attached (it is not read).
    let already_wrapped =
        unsafe { sys::napi_unwrap(env.raw(), this.raw(), &mut wrapped) } == sys::Status::napi_ok;
    if T::instance_of(env, this).unwrap_or(false) && !already_wrapped {
        Ok(())
    } else {
        Err(napi_ohos::Error::new(
            ModuleCode::InvalidCall.to_owned_code(),
            format!("{class} is a class: call it with `new`"),
        ))
    }
}

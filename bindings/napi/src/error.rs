//! Errors as JS sees them: an `Error` whose `code` property is a stable code, thrown by
//! sync methods and used to reject Promises. The codes: the core's
//! (`ArkAgentError::code`); `invalid_argument` / `invalid_config` for a refused JS value
//! (the `args` and `numbers` modules); `private_constructor` for `new` on a class
//! whose instances only the module creates; `invalid_call` for a public constructor
//! called without `new` (`args::constructing`); `internal` for a napi failure
//! that is not the caller's fault.

use arkagent::ArkAgentError;
use napi_ohos::{Env, JsError};

use crate::codes::ModuleCode;

/// The error of a sync method, thrown with `code` set. (`#[napi]` recognises a `Result`
/// return type by its name, so methods spell out `Result<T, Thrown>`.)
pub type Thrown = napi_ohos::Error<String>;

/// A core error reduced to owned strings so it can cross from a worker thread back to JS.
#[derive(Debug)]
pub struct CodedError {
    code: String,
    message: String,
}

impl From<ArkAgentError> for CodedError {
    fn from(error: ArkAgentError) -> Self {
        Self {
            code: error.code().as_str().to_owned(),
            message: error.to_string(),
        }
    }
}

impl CodedError {
    /// An `internal` error: the module failed, not the caller.
    pub fn internal(message: &str) -> Self {
        Self { code: ModuleCode::Internal.to_owned_code(), message: message.to_owned() }
    }
}

impl From<CodedError> for napi_ohos::Error<String> {
    fn from(error: CodedError) -> Self {
        napi_ohos::Error::new(error.code, error.message)
    }
}

/// Converts a core error for a sync method.
pub fn thrown(error: ArkAgentError) -> Thrown {
    CodedError::from(error).into()
}

/// Builds the JS error for a Promise rejection on the JS thread. napi-ohos rejects async
/// results with the `GenericFailure` status as `code`, so the JS error object is created
/// here with the real code and handed over as an already-built JS value.
pub fn rejection(env: &Env, error: CodedError) -> napi_ohos::Error {
    let js_error = JsError::from(napi_ohos::Error::from(error)).into_unknown(*env);
    napi_ohos::Error::from(js_error)
}

/// A napi-ohos failure past argument conversion (creating a threadsafe function or a
/// Promise): `internal`, with napi's status in the message.
pub fn internal(error: napi_ohos::Error) -> Thrown {
    napi_ohos::Error::new(
        ModuleCode::Internal.to_owned_code(),
        format!("{}: {}", error.status.as_ref(), error.reason),
    )
}

/// What `new` throws on a class whose instances only the module creates (declared
/// `private constructor()` in index.d.ts).
pub fn private_constructor(class: &str) -> Thrown {
    napi_ohos::Error::new(
        ModuleCode::PrivateConstructor.to_owned_code(),
        format!("{class} instances are created by the module; it has no public constructor"),
    )
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
/**
 * An Error thrown or rejected by the module, typed: its `code` is one of ErrorCode (see
 * the header; an exception of the caller's own code propagates unchanged). In ArkTS,
 * `(e as NativeError).code`.
 */
export interface NativeError extends Error {
  /** The stable code. */
  code: ErrorCode;
  /** What went wrong, for people (its wording may change). */
  message: string;
  stack?: string;
}
*/

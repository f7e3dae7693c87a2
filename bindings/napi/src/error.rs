//! Errors as JS sees them: an `Error` whose `code` property is the core's stable code
//! (`ArkAgentError::code`), thrown by sync methods and used to reject Promises.

use arkagent::ArkAgentError;
use napi_ohos::{Env, JsError};

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
            code: error.code().to_owned(),
            message: error.to_string(),
        }
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

/// Keeps a napi-ohos failure (e.g. a wrong argument type) as it is, code included.
pub fn passthrough(error: napi_ohos::Error) -> Thrown {
    napi_ohos::Error::new(error.status.as_ref().to_owned(), error.reason.clone())
}

//! The one type for JS callbacks: JS functions held as weak threadsafe functions, called
//! from any thread.
//!
//! - [`JsAsyncFn`]: `(arg) => Promise<R>` (a plain `R` is accepted too). Rust awaits the
//!   result; a rejection or a synchronous throw arrives as a [`JsFailure`]. Several
//!   arguments are passed as `FnArgs<(A, B)>`.
//! - [`JsListener`]: `(arg) => void`, called without waiting, in call order.
//!
//! Every JS value is read on the JS thread and only owned Rust data crosses threads, so no
//! napi reference is ever touched off the JS thread. The functions are *weak*: holding one
//! does not keep the Node/ArkTS event loop alive (a pending run's Promise does).

use std::cell::Cell;
use std::marker::PhantomData;
use std::rc::Rc;

use futures::channel::oneshot;
use napi_ohos::bindgen_prelude::{
    CallbackContext, FromNapiValue, Function, JsObjectValue, JsValue, JsValuesTupleIntoVec,
    PromiseRaw, ToNapiValue, Unknown,
};
use napi_ohos::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_ohos::{Status, ValueType};

/// A JS function as napi-ohos hands it to a `#[napi]` method.
pub type JsFunction<'scope, A> = Function<'scope, A, Unknown<'static>>;

type Tsfn<A> = ThreadsafeFunction<A, Unknown<'static>, A, Status, false, true>;

/// A weak, callee-unhandled threadsafe function (on the JS thread): the one shape every JS
/// callback here uses.
fn weak_tsfn<A: JsValuesTupleIntoVec + 'static>(
    function: JsFunction<'_, A>,
) -> napi_ohos::Result<Tsfn<A>> {
    function
        .build_threadsafe_function::<A>()
        .callee_handled::<false>()
        .weak::<true>()
        .build()
}

/// Why a JS callback did not produce a value: it threw, its Promise rejected, it returned
/// the wrong shape, or the JS environment is shutting down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsFailure {
    /// The thrown value's string `code` property, when it has one.
    pub code: Option<String>,
    /// The thrown value's `message` (or its string form).
    pub message: String,
}

impl JsFailure {
    fn new(message: impl Into<String>) -> Self {
        Self {
            code: None,
            message: message.into(),
        }
    }

    /// From a napi-ohos error: a failed conversion, or a synchronous throw (whose reason is
    /// the thrown value's string form followed by its stack; the stack is dropped).
    fn from_napi(error: &napi_ohos::Error) -> Self {
        Self::new(error.reason.lines().next().unwrap_or_default())
    }

    /// Reads `code` and `message` of a thrown or rejected JS value (on the JS thread).
    fn from_thrown(value: &Unknown<'_>) -> Self {
        let mut failure = Self::new(String::new());
        if matches!(value.get_type(), Ok(ValueType::Object)) {
            if let Ok(object) = value.coerce_to_object() {
                failure.code = object
                    .get_named_property::<Option<String>>("code")
                    .ok()
                    .flatten();
                failure.message = object
                    .get_named_property::<Option<String>>("message")
                    .ok()
                    .flatten()
                    .unwrap_or_default();
            }
        }
        if failure.message.is_empty() {
            failure.message = value
                .coerce_to_string()
                .and_then(|s| s.into_utf8())
                .and_then(|s| s.into_owned())
                .unwrap_or_default();
        }
        failure
    }
}

type Reply<R> = Rc<Cell<Option<oneshot::Sender<Result<R, JsFailure>>>>>;

fn send<R>(reply: &Reply<R>, value: Result<R, JsFailure>) {
    if let Some(sender) = reply.take() {
        // The receiver is gone when Rust stopped waiting (e.g. cancelled): nothing to do.
        let _ = sender.send(value);
    }
}

/// A JS function `(arg: A) => Promise<R>` that Rust can await from any thread. `A` is one
/// value, or `FnArgs<(A, B, …)>` for several arguments.
pub struct JsAsyncFn<A: JsValuesTupleIntoVec + 'static, R> {
    tsfn: Tsfn<A>,
    _result: PhantomData<fn() -> R>,
}

impl<A, R> JsAsyncFn<A, R>
where
    A: JsValuesTupleIntoVec + 'static,
    R: FromNapiValue + Send + 'static,
{
    /// Wraps a JS function (on the JS thread).
    pub fn new(function: JsFunction<'_, A>) -> napi_ohos::Result<Self> {
        let tsfn = weak_tsfn(function)?;
        Ok(Self {
            tsfn,
            _result: PhantomData,
        })
    }

    /// Calls the function with `arg` and waits for its Promise to settle.
    pub async fn call(&self, arg: A) -> Result<R, JsFailure> {
        let (sender, receiver) = oneshot::channel();
        let status = self.tsfn.call_with_return_value(
            arg,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned, _env| {
                let reply: Reply<R> = Rc::new(Cell::new(Some(sender)));
                match returned {
                    Err(thrown) => send(&reply, Err(JsFailure::from_napi(&thrown))),
                    Ok(value) => settle(value, reply),
                }
                // Never report an error back: napi-ohos would raise it as a fatal exception.
                Ok(())
            },
        );
        if status != Status::Ok {
            return Err(JsFailure::new(format!("JS callback unavailable: {status}")));
        }
        receiver
            .await
            .unwrap_or_else(|_| Err(JsFailure::new("JS callback dropped without settling")))
    }
}

/// Forwards the settled value of `value` (a Promise or a plain value) to `reply`.
fn settle<R: FromNapiValue + 'static>(value: Unknown<'_>, reply: Reply<R>) {
    if !value.is_promise().unwrap_or(false) {
        // SAFETY: `value` is a live value of the current scope; `R::from_napi_value`
        // checks its type and fails cleanly on a mismatch.
        let converted = unsafe { value.cast::<R>() };
        send(&reply, converted.map_err(|e| JsFailure::from_napi(&e)));
        return;
    }
    let promise: PromiseRaw<'_, R> = PromiseRaw::new(value.value().env, value.raw());
    let on_reject = reply.clone();
    // A value of the wrong shape fails inside `then`, which rejects the chained promise,
    // so `catch` sees it too.
    let chained = promise
        .then(move |ctx: CallbackContext<R>| {
            send(&reply, Ok(ctx.value));
            Ok(())
        })
        .and_then(|then| {
            let on_reject = on_reject.clone();
            then.catch(move |ctx: CallbackContext<Unknown<'_>>| {
                send(&on_reject, Err(JsFailure::from_thrown(&ctx.value)));
                Ok(())
            })
        });
    if let Err(e) = chained {
        send(&on_reject, Err(JsFailure::from_napi(&e)));
    }
}

/// A JS function `(arg: A) => void` called without waiting; calls arrive in order.
pub struct JsListener<A: ToNapiValue + 'static> {
    tsfn: Tsfn<A>,
}

impl<A: ToNapiValue + 'static> JsListener<A> {
    /// Wraps a JS function (on the JS thread).
    pub fn new(function: JsFunction<'_, A>) -> napi_ohos::Result<Self> {
        let tsfn = weak_tsfn(function)?;
        Ok(Self { tsfn })
    }

    /// Queues a call. A listener that throws is ignored (a broken listener must not break
    /// the caller); after the JS environment closed, calls are dropped.
    pub fn notify(&self, arg: A) {
        let _ = self.tsfn.call_with_return_value(
            arg,
            ThreadsafeFunctionCallMode::NonBlocking,
            |_returned, _env| Ok(()),
        );
    }
}

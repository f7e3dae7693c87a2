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

use std::marker::PhantomData;

use futures::channel::oneshot;
use napi_ohos::bindgen_prelude::{
    FromNapiValue, Function, JsObjectValue, JsValue, JsValuesTupleIntoVec, ToNapiValue, Unknown,
};
use napi_ohos::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_ohos::{sys, Status, ValueType};

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
    ///
    /// PERF-5: one threadsafe-function call per crossing; the result comes back through a
    /// oneshot channel, settled on the JS thread (see [`promises`]) without a second hop.
    pub async fn call(&self, arg: A) -> Result<R, JsFailure> {
        self.call_then(arg, |_| {}).await
    }

    /// Like [`call`](Self::call), and runs `settled` on the JS thread, with the call's env,
    /// as soon as the call settled (returned, threw, or its Promise fulfilled or rejected),
    /// whether Rust still waits or not. Not run when the call never reached JS.
    pub async fn call_then(
        &self,
        arg: A,
        settled: impl FnOnce(sys::napi_env) + Send + 'static,
    ) -> Result<R, JsFailure> {
        let (sender, receiver) = oneshot::channel();
        let status = self.tsfn.call_with_return_value(
            arg,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned, env| {
                let raw_env = env.raw();
                let reply = move |outcome: Outcome| {
                    settled(raw_env);
                    // The receiver is gone when Rust stopped waiting (e.g. cancelled).
                    let _ = sender.send(outcome.into_result::<R>());
                };
                match returned {
                    Err(thrown) => reply(Outcome::Failed(JsFailure::from_napi(&thrown))),
                    Ok(value) => promises::settle(env.raw(), value.raw(), reply),
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

/// How a JS call ended, as raw values of the scope the outcome is handled in.
enum Outcome {
    /// It returned (or its Promise fulfilled with) this value.
    Value(sys::napi_env, sys::napi_value),
    /// It threw (or its Promise rejected with) this value.
    Thrown(sys::napi_env, sys::napi_value),
    /// No JS value to read (the call or the `then` failed in napi).
    Failed(JsFailure),
}

impl Outcome {
    /// Reads the outcome on the JS thread, in the scope its values belong to.
    ///
    /// Reading a host value can throw in JS (a property read on `undefined` or `null`, a
    /// throwing getter, a Symbol turned into a string); such an exception is cleared here,
    /// after the read: left pending, it would reject the `then` chain nobody handles (an
    /// unhandled rejection that ends a Node process) or surface as an uncaught exception.
    fn into_result<R: FromNapiValue>(self) -> Result<R, JsFailure> {
        let env = match &self {
            Self::Value(env, _) | Self::Thrown(env, _) => Some(*env),
            Self::Failed(_) => None,
        };
        let result = self.read();
        if let Some(env) = env {
            clear_pending_exception(env);
        }
        result
    }

    fn read<R: FromNapiValue>(self) -> Result<R, JsFailure> {
        match self {
            // SAFETY: `value` is live in the current scope (see `Outcome`); `R`'s conversion
            // checks the type and fails cleanly on a mismatch.
            Self::Value(env, value) => {
                unsafe { R::from_napi_value(env, value) }.map_err(|e| JsFailure::from_napi(&e))
            }
            Self::Thrown(env, value) => {
                // SAFETY: as above.
                Err(JsFailure::from_thrown(&unsafe {
                    Unknown::from_raw_unchecked(env, value)
                }))
            }
            Self::Failed(failure) => Err(failure),
        }
    }
}

/// Clears a JS exception left pending on `env` by reading a host value (on the JS thread).
fn clear_pending_exception(env: sys::napi_env) {
    let mut pending = false;
    // SAFETY: `env` is live on this (the JS) thread; both calls only query or clear its
    // exception state.
    unsafe {
        if sys::napi_is_exception_pending(env, &mut pending) == sys::Status::napi_ok && pending {
            let mut exception = std::ptr::null_mut();
            let _ = sys::napi_get_and_clear_last_exception(env, &mut exception);
        }
    }
}

/// Settling a returned Promise into Rust with no napi function, reference or finalizer
/// created per call (PERF-5).
///
/// napi-ohos's `PromiseRaw::then`/`catch` create a new native function (whose callback
/// data V8 tracks with a weak handle) and wrap the chained promise (another weak handle
/// and finalizer) per call, each with its own boxed closure. Here every JS thread keeps,
/// per napi env, two native functions created once (`fulfilled(id, value)` and
/// `rejected(id, reason)`, held by references that live as long as the env) and a table
/// of the waiting Rust continuations by id. A call binds the two functions to its id
/// (`Function.prototype.bind`, plain JS objects) and hands them to `promise.then`.
///
/// A continuation leaves the table when its Promise settles. A Promise that never
/// settles keeps its entry (a oneshot sender) until the env closes, when the table is
/// dropped and the waiting Rust side gets "dropped without settling".
mod promises {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::ffi::c_void;
    use std::ptr;

    use napi_ohos::sys;

    use super::{JsFailure, Outcome};

    type Continuation = Box<dyn FnOnce(Outcome)>;

    /// The settling functions and waiting continuations of one env (on its JS thread).
    struct EnvPromises {
        env: sys::napi_env,
        fulfilled: sys::napi_ref,
        rejected: sys::napi_ref,
        next_id: u32,
        waiting: HashMap<u32, Continuation>,
    }

    thread_local! {
        static ENVS: RefCell<Vec<EnvPromises>> = const { RefCell::new(Vec::new()) };
    }

    fn failed(what: &str, status: sys::napi_status) -> Outcome {
        Outcome::Failed(JsFailure::new(format!(
            "cannot await the JS callback's Promise ({what}: napi status {status})"
        )))
    }

    /// `Ok(())` when `status` is `napi_ok`, else the failure naming `what`.
    fn check(status: sys::napi_status, what: &str) -> Result<(), Outcome> {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(failed(what, status))
        }
    }

    /// Hands `reply` the outcome of `value`: at once for a plain value, when it settles
    /// for a Promise. On the JS thread, inside the scope `value` belongs to.
    pub(super) fn settle(
        env: sys::napi_env,
        value: sys::napi_value,
        reply: impl FnOnce(Outcome) + 'static,
    ) {
        let mut is_promise = false;
        // SAFETY: `env` and `value` are live in the current scope.
        let status = unsafe { sys::napi_is_promise(env, value, &mut is_promise) };
        if status != sys::Status::napi_ok || !is_promise {
            reply(Outcome::Value(env, value));
            return;
        }
        let Some((id, fulfilled, rejected)) = register(env, Box::new(reply)) else {
            return; // `register` replied
        };
        // SAFETY: `env`, `value` are live; the references belong to `env`.
        if let Err(outcome) = unsafe { chain(env, value, id, fulfilled, rejected) } {
            if let Some(reply) = take(env, id) {
                reply(outcome);
            }
        }
    }

    /// Stores `reply` under a fresh id; returns the id and the env's two settling
    /// functions (created on first use). Replies itself and returns `None` on failure.
    fn register(
        env: sys::napi_env,
        reply: Continuation,
    ) -> Option<(u32, sys::napi_ref, sys::napi_ref)> {
        let registered = ENVS.with(|envs| {
            let Ok(mut envs) = envs.try_borrow_mut() else {
                return Err((
                    reply,
                    failed("re-entered", sys::Status::napi_generic_failure),
                ));
            };
            let index = match envs.iter().position(|e| e.env == env) {
                Some(index) => index,
                // SAFETY: on the JS thread of `env`.
                None => match unsafe { create(env) } {
                    Ok(created) => {
                        envs.push(created);
                        envs.len() - 1
                    }
                    Err(outcome) => return Err((reply, outcome)),
                },
            };
            let entry = &mut envs[index];
            let id = entry.next_id;
            // Ids wrap after 2^32 calls; an entry still waiting under a reused id (a
            // Promise pending for 4 billion calls) is dropped: "dropped without settling".
            entry.next_id = entry.next_id.wrapping_add(1);
            entry.waiting.insert(id, reply);
            Ok((id, entry.fulfilled, entry.rejected))
        });
        match registered {
            Ok(registered) => Some(registered),
            Err((reply, outcome)) => {
                reply(outcome); // outside the borrow
                None
            }
        }
    }

    /// Removes and returns the continuation waiting under `id`.
    fn take(env: sys::napi_env, id: u32) -> Option<Continuation> {
        ENVS.with(|envs| {
            let mut envs = envs.try_borrow_mut().ok()?;
            envs.iter_mut()
                .find(|e| e.env == env)
                .and_then(|entry| entry.waiting.remove(&id))
        })
    }

    /// The env's settling functions, referenced for the env's lifetime, and the cleanup
    /// hook that drops its table when the env closes.
    ///
    /// # Safety
    /// On the JS thread of `env`.
    unsafe fn create(env: sys::napi_env) -> Result<EnvPromises, Outcome> {
        let mut fulfilled_fn = ptr::null_mut();
        let mut rejected_fn = ptr::null_mut();
        let mut fulfilled = ptr::null_mut();
        let mut rejected = ptr::null_mut();
        // SAFETY: the names are NUL-terminated; the callbacks take no data.
        unsafe {
            check(
                sys::napi_create_function(
                    env,
                    c"fulfilled".as_ptr(),
                    9,
                    Some(on_fulfilled),
                    ptr::null_mut(),
                    &mut fulfilled_fn,
                ),
                "napi_create_function",
            )?;
            check(
                sys::napi_create_function(
                    env,
                    c"rejected".as_ptr(),
                    8,
                    Some(on_rejected),
                    ptr::null_mut(),
                    &mut rejected_fn,
                ),
                "napi_create_function",
            )?;
            check(
                sys::napi_create_reference(env, fulfilled_fn, 1, &mut fulfilled),
                "napi_create_reference",
            )?;
            check(
                sys::napi_create_reference(env, rejected_fn, 1, &mut rejected),
                "napi_create_reference",
            )?;
            // The hook's argument is a fresh allocation, not `env` itself: ArkTS keys an
            // env's cleanup hooks by argument alone and refuses a second hook with the same
            // one (another module passing `env` would make ours fail).
            let token = Box::into_raw(Box::new(env));
            let status = sys::napi_add_env_cleanup_hook(env, Some(forget_env), token.cast());
            if status != sys::Status::napi_ok {
                // SAFETY: not registered, so still ours alone.
                drop(Box::from_raw(token));
                return Err(failed("napi_add_env_cleanup_hook", status));
            }
        }
        Ok(EnvPromises {
            env,
            fulfilled,
            rejected,
            next_id: 0,
            waiting: HashMap::new(),
        })
    }

    /// The env closes: its references go with it; the waiting continuations are dropped
    /// (their Rust callers see "dropped without settling").
    unsafe extern "C" fn forget_env(token: *mut c_void) {
        // SAFETY: `token` is the `Box<napi_env>` leaked when the hook was added; the hook
        // runs once.
        let env = *unsafe { Box::from_raw(token.cast::<sys::napi_env>()) };
        let removed = ENVS.with(|envs| {
            let mut envs = envs.try_borrow_mut().ok()?;
            let index = envs.iter().position(|e| e.env == env)?;
            Some(envs.swap_remove(index))
        });
        drop(removed); // outside the borrow: dropping a sender runs no JS, but stays safe
    }

    /// `promise.then(fulfilled.bind(undefined, id), rejected.bind(undefined, id))`.
    ///
    /// # Safety
    /// `env` and `promise` live in the current scope; the references belong to `env`.
    unsafe fn chain(
        env: sys::napi_env,
        promise: sys::napi_value,
        id: u32,
        fulfilled: sys::napi_ref,
        rejected: sys::napi_ref,
    ) -> Result<(), Outcome> {
        let mut undefined = ptr::null_mut();
        let mut id_value = ptr::null_mut();
        let mut handlers = [ptr::null_mut(); 2];
        let mut bind: sys::napi_value = ptr::null_mut();
        let mut then = ptr::null_mut();
        let mut chained = ptr::null_mut();
        // SAFETY: every value below is created in, or live in, the current scope.
        unsafe {
            check(
                sys::napi_get_undefined(env, &mut undefined),
                "napi_get_undefined",
            )?;
            check(
                sys::napi_create_uint32(env, id, &mut id_value),
                "napi_create_uint32",
            )?;
            for (handler, reference) in handlers.iter_mut().zip([fulfilled, rejected]) {
                let mut function = ptr::null_mut();
                check(
                    sys::napi_get_reference_value(env, reference, &mut function),
                    "napi_get_reference_value",
                )?;
                if bind.is_null() {
                    check(
                        sys::napi_get_named_property(env, function, c"bind".as_ptr(), &mut bind),
                        "bind",
                    )?;
                }
                let args = [undefined, id_value];
                check(
                    sys::napi_call_function(env, function, bind, 2, args.as_ptr(), handler),
                    "bind",
                )?;
            }
            check(
                sys::napi_get_named_property(env, promise, c"then".as_ptr(), &mut then),
                "then",
            )?;
            check(
                sys::napi_call_function(env, promise, then, 2, handlers.as_ptr(), &mut chained),
                "then",
            )?;
        }
        Ok(())
    }

    unsafe extern "C" fn on_fulfilled(
        env: sys::napi_env,
        info: sys::napi_callback_info,
    ) -> sys::napi_value {
        // SAFETY: napi calls this with a live `env` and `info`.
        unsafe { resume(env, info, Outcome::Value) }
    }

    unsafe extern "C" fn on_rejected(
        env: sys::napi_env,
        info: sys::napi_callback_info,
    ) -> sys::napi_value {
        // SAFETY: as above.
        unsafe { resume(env, info, Outcome::Thrown) }
    }

    /// Runs the continuation bound to this call's first argument (the id) with its second
    /// (the settled value). Returns `undefined` (a null `napi_value`).
    ///
    /// # Safety
    /// A napi callback's `env` and `info`.
    unsafe fn resume(
        env: sys::napi_env,
        info: sys::napi_callback_info,
        outcome: fn(sys::napi_env, sys::napi_value) -> Outcome,
    ) -> sys::napi_value {
        let mut argc = 2;
        let mut argv = [ptr::null_mut(); 2];
        let mut id = 0;
        // SAFETY: `argv` has room for `argc` values; missing arguments read as undefined.
        let read = unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
            ) == sys::Status::napi_ok
                && sys::napi_get_value_uint32(env, argv[0], &mut id) == sys::Status::napi_ok
        };
        if read {
            if let Some(reply) = take(env, id) {
                reply(outcome(env, argv[1]));
            }
        }
        ptr::null_mut()
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

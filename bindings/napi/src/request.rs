//! The request handed to the JS transport, a plain object
//! `{ method, url, headers, bodyBytes, body, stream }` (the `HttpRequest` interface of the
//! d.ts).
//!
//! PERF-9: the body crosses with no copy, as an external `ArrayBuffer` (`bodyBytes`) over
//! the bytes the runtime lends (`Arc<String>`). `body`, the same bytes as a JS string, is a
//! getter that makes the string only when a host reads it (one copy, then kept on the
//! object as a plain property). When the transport's Promise settles, the `ArrayBuffer` is
//! detached and the bytes let go at once ([`BodyLease::release`], before the runtime hears
//! of the response), so the runtime's next turn takes its buffer back instead of copying
//! it. (Leaving that to the engine's finalizer would race it: Node runs it on a later tick.)

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex};

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::ToNapiValue;
use napi_ohos::sys;

/// One HTTP header.
#[napi(object, js_name = "HttpHeader")]
pub struct JsHttpHeader {
    pub name: String,
    pub value: String,
}

/// A request for the JS transport, with the lease on its body.
pub struct JsHttpRequest {
    request: arkagent::HttpRequest,
    lease: Arc<BodyLease>,
}

impl JsHttpRequest {
    /// `request`, whose body's `ArrayBuffer` `lease` will release.
    pub fn new(request: arkagent::HttpRequest, lease: Arc<BodyLease>) -> Self {
        Self { request, lease }
    }
}

/// A napi reference, moved between the closures of one JS thread only.
struct RawRef(sys::napi_ref);

// SAFETY: the reference is created and used on the JS thread of its env only (the request
// object is built, and the call settled, on that thread); `Send` only lets the lease sit
// in the `Arc` shared with the call's future.
unsafe impl Send for RawRef {}

/// What the JS side holds of one request body: a weak reference to its `bodyBytes`, and
/// the bytes that `ArrayBuffer` shows.
#[derive(Default)]
struct Held {
    reference: Option<RawRef>,
    body: Option<Arc<String>>,
}

/// The hold the JS side has on one request body, taken when the request object is built
/// and released when the call settles (both on the JS thread). The bytes stay alive as
/// long as an `ArrayBuffer` may show them: until [`release`](Self::release) detached it
/// (then at once, so the runtime's next turn takes its buffer back instead of copying it),
/// else until the engine finalizes the `ArrayBuffer` (garbage collection, the env closing).
#[derive(Default)]
pub struct BodyLease {
    held: Mutex<Held>,
}

impl BodyLease {
    fn hold(&self, reference: sys::napi_ref, body: Option<Arc<String>>) {
        if let Ok(mut held) = self.held.lock() {
            *held = Held {
                reference: Some(RawRef(reference)),
                body,
            };
        }
    }

    /// Keeps `body` until the engine finalizes its `ArrayBuffer` (no reference to detach it).
    fn keep(&self, body: Option<Arc<String>>) {
        if let Ok(mut held) = self.held.lock() {
            held.body = body;
        }
    }

    /// Detaches the body's `ArrayBuffer` and lets go of the bytes: from now on `bodyBytes`
    /// is empty. When the `ArrayBuffer` cannot be detached the bytes stay until it is
    /// finalized.
    pub fn release(&self, env: sys::napi_env) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        let Some(RawRef(reference)) = held.reference.take() else {
            return;
        };
        let mut buffer = ptr::null_mut();
        // SAFETY: on the JS thread of `env`, which created `reference` (see `RawRef`);
        // a collected `ArrayBuffer` reads as NULL.
        let unseen = unsafe {
            let read =
                sys::napi_get_reference_value(env, reference, &mut buffer) == sys::Status::napi_ok;
            let unseen = read
                && (buffer.is_null()
                    || sys::napi_detach_arraybuffer(env, buffer) == sys::Status::napi_ok);
            let _ = sys::napi_delete_reference(env, reference);
            unseen
        };
        if unseen {
            // No JS value shows these bytes any more; the engine only hands the pointer to
            // the finalizer (`drop_body`), which never reads through it.
            held.body = None;
        }
    }
}

fn check(status: sys::napi_status, what: &str) -> napi_ohos::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi_ohos::Error::new(
            napi_ohos::Status::from(status),
            format!("cannot build the HttpRequest object ({what})"),
        ))
    }
}

/// Sets `object[key] = value` (on the JS thread).
///
/// # Safety
/// `env`, `object` and `value` are live values of the current napi scope.
unsafe fn set_raw(
    env: sys::napi_env,
    object: sys::napi_value,
    key: &std::ffi::CStr,
    value: sys::napi_value,
) -> napi_ohos::Result<()> {
    // SAFETY: as the caller promises; `key` is NUL-terminated.
    check(
        unsafe { sys::napi_set_named_property(env, object, key.as_ptr(), value) },
        "property",
    )
}

/// Sets `object[key]` to `value` converted (on the JS thread).
///
/// # Safety
/// As [`set_raw`].
unsafe fn set_property<V: ToNapiValue>(
    env: sys::napi_env,
    object: sys::napi_value,
    key: &std::ffi::CStr,
    value: V,
) -> napi_ohos::Result<()> {
    // SAFETY: `env` is live (caller); the conversion creates a value in the current scope.
    let value = unsafe { V::to_napi_value(env, value) }?;
    // SAFETY: as the caller promises.
    unsafe { set_raw(env, object, key, value) }
}

/// The engine finalized an external `ArrayBuffer` (detached or collected): its share of
/// the lease goes, and with the lease's last share the bytes it still held.
unsafe extern "C" fn drop_body(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the `Box<Arc<BodyLease>>` leaked in `body_bytes`; the engine calls
    // this once.
    drop(unsafe { Box::from_raw(hint.cast::<Arc<BodyLease>>()) });
}

/// An `ArrayBuffer` over `body`'s bytes: external (no copy) where the engine allows it,
/// else a copy (an engine refusing external buffers); empty for an empty body. Also
/// returns the bytes `lease` must hold while the buffer may show them (none for a copy).
///
/// # Safety
/// `env` is live, on the JS thread.
unsafe fn body_bytes(
    env: sys::napi_env,
    body: &Arc<String>,
    lease: &Arc<BodyLease>,
) -> napi_ohos::Result<(sys::napi_value, Option<Arc<String>>)> {
    let mut buffer = ptr::null_mut();
    if !body.is_empty() {
        let hint = Box::into_raw(Box::new(Arc::clone(lease)));
        // The engine only reads these bytes: index.d.ts tells hosts never to write into
        // `bodyBytes`. The caller hands them to the lease before any JS runs.
        // SAFETY: the pointer and length describe the shared body, alive in `body` now and
        // in the lease from before any JS runs until the buffer is detached or finalized.
        let status = unsafe {
            sys::napi_create_external_arraybuffer(
                env,
                body.as_ptr().cast_mut().cast(),
                body.len(),
                Some(drop_body),
                hint.cast(),
                &mut buffer,
            )
        };
        if status == sys::Status::napi_ok {
            return Ok((buffer, Some(Arc::clone(body))));
        }
        // Refused (napi_no_external_buffers_allowed): no finalizer will run.
        // SAFETY: `hint` came from `Box::into_raw` above and was not taken.
        drop(unsafe { Box::from_raw(hint) });
    }
    let mut data = ptr::null_mut();
    // SAFETY: `env` is live; the new buffer has room for `body.len()` bytes.
    unsafe {
        check(
            sys::napi_create_arraybuffer(env, body.len(), &mut data, &mut buffer),
            "arraybuffer",
        )?;
        if !body.is_empty() {
            ptr::copy_nonoverlapping(body.as_ptr(), data.cast::<u8>(), body.len());
        }
    }
    Ok((buffer, None))
}

/// The `body` getter: `this.bodyBytes` as a string, made on first read and then kept on
/// the object as a plain `body` property (an `ArrayBuffer` no longer there, detached or
/// replaced, reads as "").
unsafe extern "C" fn body_text(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut this = ptr::null_mut();
    let mut argc = 0;
    let mut bytes = ptr::null_mut();
    let mut data: *mut c_void = ptr::null_mut();
    let mut len = 0usize;
    let mut text = ptr::null_mut();
    // SAFETY: napi calls this getter with a live `env` and `info`; every value read below
    // lives in the getter's scope; `data`/`len` describe the ArrayBuffer's live bytes.
    unsafe {
        let _ = sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            ptr::null_mut(),
            &mut this,
            ptr::null_mut(),
        );
        let read = sys::napi_get_named_property(env, this, c"bodyBytes".as_ptr(), &mut bytes)
            == sys::Status::napi_ok
            && sys::napi_get_arraybuffer_info(env, bytes, &mut data, &mut len)
                == sys::Status::napi_ok;
        if !read || data.is_null() {
            len = 0;
        }
        let start = if len == 0 {
            c"".as_ptr()
        } else {
            data.cast::<std::ffi::c_char>()
        };
        let length = isize::try_from(len).unwrap_or(0);
        if sys::napi_create_string_utf8(env, start, length, &mut text) != sys::Status::napi_ok {
            return ptr::null_mut();
        }
        let cached = sys::napi_property_descriptor {
            utf8name: c"body".as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: text,
            attributes: DATA,
            data: ptr::null_mut(),
        };
        let _ = sys::napi_define_properties(env, this, 1, &cached);
    }
    text
}

/// `Object.defineProperty` and the one `{ get: body_text, enumerable, configurable }`
/// descriptor of an env, made for its first request and reused: a getter made per request
/// (`napi_define_properties`) costs Node a function, its callback bundle and a finalizer
/// reference each — measured +4 MB at 2,000 turns (BENCHMARKS.md, PERF-9).
struct Accessor {
    env: sys::napi_env,
    define: sys::napi_ref,
    descriptor: sys::napi_ref,
}

thread_local! {
    static ACCESSORS: RefCell<Vec<Accessor>> = const { RefCell::new(Vec::new()) };
}

/// Defines the `body` getter on `object`.
///
/// # Safety
/// `env` and `object` are live values of the current scope, on the JS thread.
unsafe fn define_body(env: sys::napi_env, object: sys::napi_value) -> napi_ohos::Result<()> {
    let cached = ACCESSORS.with(|all| {
        all.borrow()
            .iter()
            .find(|a| a.env == env)
            .map(|a| (a.define, a.descriptor))
    });
    // SAFETY: on the JS thread of `env` (caller); the references belong to `env`.
    let (define, descriptor) = match cached {
        Some(refs) => refs,
        None => unsafe { new_accessor(env) }?,
    };
    let mut values = [ptr::null_mut(); 5];
    // SAFETY: as above; `args` are live values of the current scope.
    unsafe {
        check(
            sys::napi_get_reference_value(env, define, &mut values[0]),
            "defineProperty",
        )?;
        check(
            sys::napi_get_reference_value(env, descriptor, &mut values[1]),
            "descriptor",
        )?;
        check(
            sys::napi_create_string_utf8(env, c"body".as_ptr(), 4, &mut values[2]),
            "key",
        )?;
        check(sys::napi_get_undefined(env, &mut values[3]), "undefined")?;
        let args = [object, values[2], values[1]];
        check(
            sys::napi_call_function(env, values[3], values[0], 3, args.as_ptr(), &mut values[4]),
            "defineProperty",
        )
    }
}

/// Makes and keeps the env's `Accessor` (its references live as long as the env; a
/// cleanup hook forgets them when it closes).
///
/// # Safety
/// On the JS thread of `env`.
unsafe fn new_accessor(env: sys::napi_env) -> napi_ohos::Result<(sys::napi_ref, sys::napi_ref)> {
    let mut v = [ptr::null_mut(); 6];
    let (mut define, mut descriptor) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: every value is created in, or read from, the current scope of `env`.
    unsafe {
        check(sys::napi_get_global(env, &mut v[0]), "global")?;
        check(
            sys::napi_get_named_property(env, v[0], c"Object".as_ptr(), &mut v[1]),
            "Object",
        )?;
        check(
            sys::napi_get_named_property(env, v[1], c"defineProperty".as_ptr(), &mut v[2]),
            "defineProperty",
        )?;
        check(
            sys::napi_create_function(
                env,
                c"body".as_ptr(),
                4,
                Some(body_text),
                ptr::null_mut(),
                &mut v[3],
            ),
            "getter",
        )?;
        check(sys::napi_create_object(env, &mut v[4]), "descriptor")?;
        check(sys::napi_get_boolean(env, true, &mut v[5]), "true")?;
        set_raw(env, v[4], c"get", v[3])?;
        set_raw(env, v[4], c"enumerable", v[5])?;
        set_raw(env, v[4], c"configurable", v[5])?;
        check(
            sys::napi_create_reference(env, v[2], 1, &mut define),
            "reference",
        )?;
        check(
            sys::napi_create_reference(env, v[4], 1, &mut descriptor),
            "reference",
        )?;
        // A fresh allocation as the hook's argument (ArkTS keys hooks by argument alone).
        let token = Box::into_raw(Box::new(env));
        if sys::napi_add_env_cleanup_hook(env, Some(forget_accessor), token.cast())
            != sys::Status::napi_ok
        {
            drop(Box::from_raw(token));
        }
    }
    ACCESSORS.with(|all| {
        all.borrow_mut().push(Accessor {
            env,
            define,
            descriptor,
        })
    });
    Ok((define, descriptor))
}

/// The env closes: its references go with it.
unsafe extern "C" fn forget_accessor(token: *mut c_void) {
    // SAFETY: `token` is the `Box<napi_env>` leaked in `new_accessor`; the hook runs once.
    let env = *unsafe { Box::from_raw(token.cast::<sys::napi_env>()) };
    ACCESSORS.with(|all| {
        if let Ok(mut all) = all.try_borrow_mut() {
            all.retain(|a| a.env != env);
        }
    });
}

/// A plain, enumerable, configurable, writable property.
const DATA: sys::napi_property_attributes = sys::PropertyAttributes::writable
    | sys::PropertyAttributes::enumerable
    | sys::PropertyAttributes::configurable;

impl ToNapiValue for JsHttpRequest {
    unsafe fn to_napi_value(env: sys::napi_env, value: Self) -> napi_ohos::Result<sys::napi_value> {
        let JsHttpRequest { request, lease } = value;
        let mut object = ptr::null_mut();
        // SAFETY: `env` is the env of the threadsafe-function call converting this
        // argument, on the JS thread; every value below is created in its scope.
        unsafe {
            check(sys::napi_create_object(env, &mut object), "object")?;
            let headers: Vec<JsHttpHeader> = request
                .headers
                .into_iter()
                .map(|(name, value)| JsHttpHeader { name, value })
                .collect();
            set_property(env, object, c"method", request.method)?;
            set_property(env, object, c"url", request.url)?;
            set_property(env, object, c"headers", headers)?;
            let (bytes, shown) = body_bytes(env, &request.body, &lease)?;
            let mut reference = ptr::null_mut();
            let made = sys::napi_create_reference(env, bytes, 0, &mut reference);
            if made != sys::Status::napi_ok {
                // Without a reference it cannot be detached: the bytes go with the buffer.
                lease.keep(shown);
                return Err(napi_ohos::Error::new(
                    napi_ohos::Status::from(made),
                    "cannot build the HttpRequest object (reference)",
                ));
            }
            lease.hold(reference, shown);
            set_raw(env, object, c"bodyBytes", bytes)?;
            define_body(env, object)?;
            set_property(env, object, c"stream", request.stream)?;
        }
        Ok(object)
    }
}

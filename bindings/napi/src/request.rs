//! The request handed to the JS transport, a plain object
//! `{ method, url, headers, bodyBytes, body, stream }` (the `HttpRequest` interface of the
//! d.ts).
//!
//! PERF-9: the body crosses with no copy, as an external `ArrayBuffer` (`bodyBytes`) over
//! the bytes the runtime lends (`Arc<String>`). `body`, the same bytes as a JS string, is a
//! getter that makes the string only when a host reads it (one copy, then kept on the
//! object as a plain property). When the transport's Promise settles, the `ArrayBuffer` is
//! detached ([`BodyLease::release`]): the engine lets go of the bytes and the runtime's next
//! turn takes its buffer back instead of copying it.

use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Mutex};

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::ToNapiValue;
use napi_ohos::sys;

/// One HTTP header (of a request, or of a response the host hands back).
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

/// The hold the JS side has on one request body: a weak reference to its `bodyBytes`,
/// taken when the request object is built and released when the call settles (both on
/// the JS thread). Without a release (the env closed first) the engine's garbage
/// collector frees the bytes as it frees the `ArrayBuffer`.
#[derive(Default)]
pub struct BodyLease {
    reference: Mutex<Option<RawRef>>,
}

impl BodyLease {
    fn hold(&self, reference: sys::napi_ref) {
        if let Ok(mut slot) = self.reference.lock() {
            *slot = Some(RawRef(reference));
        }
    }

    /// Detaches the body's `ArrayBuffer` (still alive) and drops the reference: from now
    /// on `bodyBytes` is empty and the engine releases the runtime's bytes.
    pub fn release(&self, env: sys::napi_env) {
        let Some(RawRef(reference)) = self.reference.lock().ok().and_then(|mut slot| slot.take())
        else {
            return;
        };
        let mut buffer = ptr::null_mut();
        // SAFETY: on the JS thread of `env`, which created `reference` (see `RawRef`);
        // a collected `ArrayBuffer` reads as NULL.
        unsafe {
            if sys::napi_get_reference_value(env, reference, &mut buffer) == sys::Status::napi_ok
                && !buffer.is_null()
            {
                let _ = sys::napi_detach_arraybuffer(env, buffer);
            }
            let _ = sys::napi_delete_reference(env, reference);
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

/// Frees the bytes an external `ArrayBuffer` held: its `Arc` share of the request body.
unsafe extern "C" fn drop_body(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the `Box<Arc<String>>` leaked in `body_bytes`; the engine calls
    // this once, when the buffer is detached or collected.
    drop(unsafe { Box::from_raw(hint.cast::<Arc<String>>()) });
}

/// An `ArrayBuffer` over `body`'s bytes: external (no copy) where the engine allows it,
/// else a copy (an engine refusing external buffers); empty for an empty body.
///
/// # Safety
/// `env` is live, on the JS thread.
unsafe fn body_bytes(env: sys::napi_env, body: &Arc<String>) -> napi_ohos::Result<sys::napi_value> {
    let mut buffer = ptr::null_mut();
    if !body.is_empty() {
        let hint = Box::into_raw(Box::new(Arc::clone(body)));
        // The engine only reads these bytes: index.d.ts tells hosts never to write into
        // `bodyBytes`. The `Arc` in `hint` keeps them alive until `drop_body`.
        // SAFETY: the pointer and length describe the shared body, alive through `hint`.
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
            return Ok(buffer);
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
    Ok(buffer)
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
            let bytes = body_bytes(env, &request.body)?;
            let mut reference = ptr::null_mut();
            check(
                sys::napi_create_reference(env, bytes, 0, &mut reference),
                "reference",
            )?;
            lease.hold(reference);
            set_raw(env, object, c"bodyBytes", bytes)?;
            let getter = sys::napi_property_descriptor {
                utf8name: c"body".as_ptr(),
                name: ptr::null_mut(),
                method: None,
                getter: Some(body_text),
                setter: None,
                value: ptr::null_mut(),
                attributes: sys::PropertyAttributes::enumerable
                    | sys::PropertyAttributes::configurable,
                data: ptr::null_mut(),
            };
            check(
                sys::napi_define_properties(env, object, 1, &getter),
                "body getter",
            )?;
            set_property(env, object, c"stream", request.stream)?;
        }
        Ok(object)
    }
}

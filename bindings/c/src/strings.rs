//! Strings across the boundary.

use std::ffi::{c_char, CStr, CString};

use crate::boundary::last_error;
use crate::codes::{ArkAgentResult, FfiError, FfiResult};

/// Borrows a C string argument as UTF-8.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string valid for the call.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, what: &str) -> FfiResult<&'a str> {
    if ptr.is_null() {
        return Err(FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated per the caller's contract.
    let cstr = unsafe { CStr::from_ptr(ptr) };
    cstr.to_str().map_err(|_| FfiError::new(ArkAgentResult::InvalidUtf8, format!("{what} is not valid UTF-8")))
}

/// Borrows an optional C string argument (NULL → `None`).
///
/// # Safety
/// As [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(ptr: *const c_char, what: &str) -> FfiResult<Option<&'a str>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { str_arg(ptr, what) }.map(Some)
    }
}

/// Hands `value` to the caller through `out` (which must not be NULL).
///
/// # Safety
/// `out` is NULL or valid for one pointer write.
pub(crate) unsafe fn write_out_string(out: *mut *mut c_char, value: String) -> FfiResult<()> {
    if out.is_null() {
        return Err(FfiError::new(ArkAgentResult::NullArgument, "out is NULL"));
    }
    let c = CString::new(value).map_err(|_| FfiError::new(ArkAgentResult::Internal, "string contains NUL"))?;
    // SAFETY: checked non-NULL; caller guarantees it is writable.
    unsafe { *out = c.into_raw() };
    Ok(())
}

/// Frees a string returned by this library through a `char **out` parameter. NULL is a
/// no-op. Passing any other pointer is undefined behaviour.
///
/// # Safety
/// `s` is NULL or a pointer this library returned and that was not freed yet.
#[no_mangle]
pub unsafe extern "C" fn arkagent_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: produced by CString::into_raw in write_out_string.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// Copies the calling thread's last error message into `buf` (NUL-terminated, cut at a
/// UTF-8 character boundary when `buf_len` is too small) and returns the message's full
/// length in bytes, without the NUL. With `buf` NULL or `buf_len` 0 it only returns the
/// length. The message is empty after a successful call.
///
/// # Safety
/// `buf` is NULL or valid for `buf_len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn arkagent_last_error_message(buf: *mut c_char, buf_len: usize) -> usize {
    let message = last_error();
    if !buf.is_null() && buf_len > 0 {
        let mut n = message.len().min(buf_len - 1);
        while !message.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: buf is valid for buf_len bytes and n + 1 <= buf_len.
        unsafe {
            std::ptr::copy_nonoverlapping(message.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    message.len()
}

/// The library version, e.g. `"0.1.0"`. Static storage: never free it.
#[no_mangle]
pub extern "C" fn arkagent_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Routes the library's `tracing` output to HiLog (domain 0xA6A0, tag "arkagent") at
/// `max_level` (0 error, 1 warn, 2 info, 3 debug, 4 trace) and above. Returns true when
/// installed; false for a `max_level` above 4, off OpenHarmony, or when the process
/// already has a global subscriber. Call once, early, from any thread.
#[no_mangle]
pub extern "C" fn arkagent_log_to_hilog(max_level: u32) -> bool {
    let level = match max_level {
        0 => tracing::Level::ERROR,
        1 => tracing::Level::WARN,
        2 => tracing::Level::INFO,
        3 => tracing::Level::DEBUG,
        4 => tracing::Level::TRACE,
        _ => return false,
    };
    std::panic::catch_unwind(|| arkagent::hilog::install(level)).unwrap_or(false)
}

/// Serializes `value` into `*out` (NULL `out` is an error).
///
/// # Safety
/// `out` NULL or valid for one pointer write.
pub(crate) unsafe fn write_out_json<T: serde::Serialize + ?Sized>(out: *mut *mut c_char, value: &T) -> FfiResult<()> {
    let json = serde_json::to_string(value).map_err(arkagent::ArkAgentError::from)?;
    // SAFETY: forwarded contract.
    unsafe { write_out_string(out, json) }
}

/// `NULL_ARGUMENT`: "`what` is NULL".
pub(crate) fn null(what: &str) -> FfiError {
    FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL"))
}

/// Checks an out-pointer before anything is created for it.
pub(crate) fn out_arg<T>(out: *mut T, what: &str) -> FfiResult<*mut T> {
    if out.is_null() {
        Err(null(what))
    } else {
        Ok(out)
    }
}

/// `len` bytes at `data`, copied (`data` may be NULL when `len` is 0).
pub(crate) fn bytes_arg(data: *const u8, len: usize, what: &str) -> FfiResult<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if data.is_null() {
        return Err(FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL with a non-zero length")));
    }
    // SAFETY: the host passes `len` readable bytes at `data`.
    Ok(unsafe { std::slice::from_raw_parts(data, len) }.to_vec())
}

//! Link fixes that let the module run under Node.js on the host (tests only; the OHOS
//! build never compiles this file). `build.rs` passes `--wrap` for both symbols, so every
//! call napi-ohos makes to them lands here.
//!
//! 1. napi-derive-ohos registers the module from a constructor with a *stack-allocated*
//!    `napi_module`. ArkTS copies it; Node keeps the pointer and later jumps through
//!    garbage. Node finds the module through the exported `napi_register_module_v1`
//!    anyway, so registration becomes a no-op here.
//! 2. After `napi_wrap`, napi-ohos calls `napi_reference_unref(ref, NULL)` because ArkTS
//!    hands the wrap reference back with refcount 1. Node hands it back with refcount 0
//!    and the unref fails, which would fail every class constructor. Exactly that call
//!    (a NULL `result` pointer) has its failure mapped to success; the end state, a
//!    weak wrap reference, equals ArkTS's.

use napi_ohos::sys;

extern "C" {
    fn __real_napi_reference_unref(
        env: sys::napi_env,
        reference: sys::napi_ref,
        result: *mut u32,
    ) -> sys::napi_status;
}

/// Replaces `napi_module_register` on the host: Node loads the module through
/// `napi_register_module_v1` and must not keep the caller's stack pointer.
#[no_mangle]
pub extern "C" fn __wrap_napi_module_register(_module: *mut sys::napi_module) {}

/// Replaces `napi_reference_unref` on the host; see the module comment (fix 2).
///
/// # Safety
/// Same contract as `napi_reference_unref`: called by napi-ohos on the JS thread with a
/// valid env and reference.
#[no_mangle]
pub unsafe extern "C" fn __wrap_napi_reference_unref(
    env: sys::napi_env,
    reference: sys::napi_ref,
    result: *mut u32,
) -> sys::napi_status {
    // SAFETY: forwards the caller's arguments unchanged to the real function.
    let status = unsafe { __real_napi_reference_unref(env, reference, result) };
    if result.is_null() && status == sys::Status::napi_generic_failure {
        sys::Status::napi_ok
    } else {
        status
    }
}

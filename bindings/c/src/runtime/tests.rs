#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::callbacks::{arkagent_http_fail, ArkAgentHttp, ArkAgentHttpCompletion, ArkAgentHttpRequest};
use crate::codes::ArkAgentResult;
use crate::handles::{self, Kind};
use crate::workers::arkagent_workers_new;
use super::*;

const CONFIG: &std::ffi::CStr =
    c"{\"model\":{\"base_url\":\"http://x/v1\",\"api_key\":\"k\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},\"delegation\":{\"allow_clone\":true}}";

/// These tests create runtimes; the handle count in the first one must not see the others'.
static SERIAL: Mutex<()> = Mutex::new(());

/// Counts requests in `*userdata` (an `AtomicUsize`) and fails each at once.
unsafe extern "C" fn failing_http(userdata: *mut c_void, _request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: the tests pass a live AtomicUsize.
    unsafe { (*userdata.cast::<AtomicUsize>()).fetch_add(1, Ordering::SeqCst) };
    // SAFETY: a static string.
    unsafe { arkagent_http_fail(completion, 0, c"offline".as_ptr()) };
}

/// The `ArkAgentHttp` of the tests: `failing_http` counting into `userdata`.
fn failing(userdata: *mut c_void) -> ArkAgentHttp {
    ArkAgentHttp { send: Some(failing_http), cancel: None, userdata }
}

#[test]
fn ffi_5_refused_constructors_register_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let calls = AtomicUsize::new(0);
    let ud = std::ptr::from_ref(&calls).cast_mut().cast::<c_void>();
    let before = [Kind::Runtime, Kind::Tools, Kind::Workers].map(handles::live_count);
    for _ in 0..50 {
        // SAFETY: valid strings; NULL out pointers are the point.
        unsafe {
            assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), std::ptr::null_mut()), ArkAgentResult::NullArgument);
            assert_eq!(arkagent_tools_new(std::ptr::null_mut()), ArkAgentResult::NullArgument);
            let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
            assert_eq!(
                arkagent_runtime_new_with_compressor(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), None, ud, 0, &mut rt),
                ArkAgentResult::NullArgument
            );
            assert!(rt.is_null());
            assert_eq!(arkagent_workers_new(std::ptr::null_mut()), ArkAgentResult::NullArgument);
        }
    }
    assert_eq!([Kind::Runtime, Kind::Tools, Kind::Workers].map(handles::live_count), before, "a refused call left a handle behind");
}

#[test]
fn ffi_5_run_decomposed_refuses_a_null_out_before_sending_anything() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let calls = AtomicUsize::new(0);
    let ud = std::ptr::from_ref(&calls).cast_mut().cast::<c_void>();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    let tasks = c"[{\"assignee\":\"clone\",\"task_description\":\"look it up\"}]";
    // SAFETY: valid strings and out pointers.
    unsafe {
        assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), &mut rt), ArkAgentResult::Ok);
        assert_eq!(arkagent_runtime_run_decomposed(rt, tasks.as_ptr(), 0, std::ptr::null_mut()), ArkAgentResult::NullArgument);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "no request may be sent by a refused call");
        let mut subs: *mut c_char = std::ptr::null_mut();
        assert_eq!(arkagent_runtime_sub_agents(rt, &mut subs), ArkAgentResult::Ok);
        let json = std::ffi::CStr::from_ptr(subs).to_str().unwrap().to_owned();
        crate::arkagent_string_free(subs);
        assert!(json.contains("\"history\":[]") && json.contains("\"active\":[]"), "no child recorded: {json}");
        // The same call with an out pointer does run the task (so the check above is real).
        let mut out: *mut c_char = std::ptr::null_mut();
        assert_eq!(arkagent_runtime_run_decomposed(rt, tasks.as_ptr(), 0, &mut out), ArkAgentResult::Ok);
        assert!(calls.load(Ordering::SeqCst) > 0);
        crate::arkagent_string_free(out);
        arkagent_runtime_free(rt);
    }
}

#[test]
fn ffi_5_enum_arguments_out_of_range_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let calls = AtomicUsize::new(0);
    let ud = std::ptr::from_ref(&calls).cast_mut().cast::<c_void>();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    // SAFETY: valid strings and out pointers.
    unsafe {
        assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), &mut rt), ArkAgentResult::Ok);
        for tier in [2, 7, 9, -1, i32::MAX, i32::MIN] {
            assert_eq!(arkagent_runtime_memory_store(rt, tier, c"k".as_ptr(), c"1".as_ptr()), ArkAgentResult::InvalidArgument, "tier {tier}");
            let mut out: *mut c_char = std::ptr::null_mut();
            assert_eq!(arkagent_runtime_memory_recall(rt, tier, c"k".as_ptr(), &mut out), ArkAgentResult::InvalidArgument);
            assert!(out.is_null());
        }
        // Tier 1 stored nothing under another tier's name.
        assert_eq!(arkagent_runtime_memory_store(rt, 1, c"k".as_ptr(), c"\"short\"".as_ptr()), ArkAgentResult::Ok);
        for (tier, want) in [(0, "null"), (1, "\"short\"")] {
            let mut out: *mut c_char = std::ptr::null_mut();
            assert_eq!(arkagent_runtime_memory_recall(rt, tier, c"k".as_ptr(), &mut out), ArkAgentResult::Ok);
            assert_eq!(std::ffi::CStr::from_ptr(out).to_str().unwrap(), want);
            crate::arkagent_string_free(out);
        }
        arkagent_runtime_free(rt);
    }
}

//! Checked opaque handles. A handle is a number, never dereferenced: the registry maps it
//! to an `Arc` of the right kind, so freed, forged or mistyped handles are detected
//! (FFI-5). Numbers are never reused.
//!
//! A handle carries its kind in bits 4..7 (`serial << 7 | kind << 4`; multiples of 16 look
//! like aligned pointers to tools such as valgrind). That lets a completion handle that was
//! already finished — and so removed from the registry — be told apart from a forged or
//! wrong-kind one without keeping a tombstone per request: it is a completion-kind number
//! the registry issued, so the answer is `ALREADY_COMPLETED` (FFI-3), not `INVALID_HANDLE`.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::codes::{ArkAgentResult, FfiError, FfiResult};

type Registry = Mutex<HashMap<usize, Arc<dyn Any + Send + Sync>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// The next serial number (0 is never issued).
static NEXT: AtomicUsize = AtomicUsize::new(1);

const KIND_SHIFT: u32 = 4;
const SERIAL_SHIFT: u32 = 7;
const KIND_MASK: usize = 0b111;

/// What a handle refers to; encoded in the handle so a finished completion is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Store = 0,
    Tools = 1,
    Runtime = 2,
    Workers = 3,
    WorkerBuilder = 4,
    HttpCompletion = 5,
    ToolCompletion = 6,
    CompressCompletion = 7,
}

fn invalid() -> FfiError {
    FfiError::new(ArkAgentResult::InvalidHandle, "invalid, freed or wrong-kind handle")
}

/// The error for a handle that is not (or no longer) in the registry.
fn missing(key: usize, kind: Kind) -> FfiError {
    let serial = key >> SERIAL_SHIFT;
    let issued = key & ((1 << KIND_SHIFT) - 1) == 0
        && (key >> KIND_SHIFT) & KIND_MASK == kind as usize
        && serial != 0
        && serial < NEXT.load(Ordering::Acquire);
    if issued && matches!(kind, Kind::HttpCompletion | Kind::ToolCompletion | Kind::CompressCompletion) {
        FfiError::new(ArkAgentResult::AlreadyCompleted, "this completion was already finished")
    } else {
        invalid()
    }
}

fn null_handle() -> FfiError {
    FfiError::new(ArkAgentResult::NullArgument, "the handle is NULL")
}

/// Registers `value` and returns its handle typed as `*mut H`.
pub(crate) fn insert<H, T: Any + Send + Sync>(kind: Kind, value: Arc<T>) -> *mut H {
    let serial = NEXT.fetch_add(1, Ordering::AcqRel);
    let id = (serial << SERIAL_SHIFT) | ((kind as usize) << KIND_SHIFT);
    // A poisoned registry would make the handle unusable; every use then reports it.
    if let Ok(mut map) = registry().lock() {
        map.insert(id, value);
    }
    id as *mut H
}

/// The live object behind `handle`, if it is of kind `T`. NULL gives `NULL_ARGUMENT`.
pub(crate) fn get<H, T: Any + Send + Sync>(kind: Kind, handle: *const H) -> FfiResult<Arc<T>> {
    if handle.is_null() {
        return Err(null_handle());
    }
    let key = handle as usize;
    let map = registry().lock().map_err(|_| invalid())?;
    let any = map.get(&key).ok_or_else(|| missing(key, kind))?;
    Arc::clone(any).downcast::<T>().map_err(|_| invalid())
}

/// Unregisters `handle` (if it is of kind `T`) and returns the object.
pub(crate) fn remove<H, T: Any + Send + Sync>(kind: Kind, handle: *const H) -> FfiResult<Arc<T>> {
    if handle.is_null() {
        return Err(null_handle());
    }
    let key = handle as usize;
    let mut map = registry().lock().map_err(|_| invalid())?;
    match map.get(&key) {
        None => return Err(missing(key, kind)),
        Some(v) if !v.is::<T>() => return Err(invalid()),
        Some(_) => {}
    }
    let any = map.remove(&key).ok_or_else(invalid)?;
    any.downcast::<T>().map_err(|_| invalid())
}

/// Whether `handle` is NULL or a live handle of kind `T` (for optional arguments that
/// must be checked before anything is done).
pub(crate) fn check_optional<H, T: Any + Send + Sync>(kind: Kind, handle: *const H) -> FfiResult<Option<Arc<T>>> {
    if handle.is_null() {
        Ok(None)
    } else {
        get(kind, handle).map(Some)
    }
}

/// How many live handles of `kind` exist (tests check that refused calls register none).
#[cfg(test)]
pub(crate) fn live_count(kind: Kind) -> usize {
    registry().lock().map(|m| m.keys().filter(|k| (*k >> KIND_SHIFT) & KIND_MASK == kind as usize).count()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[derive(Debug)]
    struct Thing;

    #[test]
    fn ffi_5_handles_tell_null_forged_wrong_kind_and_finished_apart() {
        let h: *mut u8 = insert(Kind::HttpCompletion, Arc::new(Thing));
        assert!(get::<u8, Thing>(Kind::HttpCompletion, h).is_ok());
        assert_eq!(get::<u8, Thing>(Kind::HttpCompletion, std::ptr::null()).unwrap_err().0, ArkAgentResult::NullArgument);
        // Same number read as another kind: the kind bits do not match.
        assert_eq!(get::<u8, String>(Kind::Runtime, h).unwrap_err().0, ArkAgentResult::InvalidHandle);
        remove::<u8, Thing>(Kind::HttpCompletion, h).unwrap();
        assert_eq!(get::<u8, Thing>(Kind::HttpCompletion, h).unwrap_err().0, ArkAgentResult::AlreadyCompleted);
        assert_eq!(remove::<u8, Thing>(Kind::HttpCompletion, h).unwrap_err().0, ArkAgentResult::AlreadyCompleted);
        // A freed runtime is invalid, not "completed".
        let r: *mut u8 = insert(Kind::Runtime, Arc::new(Thing));
        remove::<u8, Thing>(Kind::Runtime, r).unwrap();
        assert_eq!(get::<u8, Thing>(Kind::Runtime, r).unwrap_err().0, ArkAgentResult::InvalidHandle);
        // Forged numbers: unaligned, never issued, or with a serial not yet handed out.
        for forged in [0xdead_beef_usize, 0x10, (usize::MAX >> 8) << 7 | (5 << 4), 0xdead_beef0] {
            let e = get::<u8, Thing>(Kind::HttpCompletion, forged as *const u8).unwrap_err();
            assert_eq!(e.0, ArkAgentResult::InvalidHandle, "{forged:#x}");
        }
    }
}

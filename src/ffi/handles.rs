//! Checked opaque handles. A handle is a number, never dereferenced: the registry maps it
//! to an `Arc` of the right kind, so freed, forged or mistyped handles are detected
//! (FFI-5). Numbers are never reused.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::boundary::{FfiError, FfiResult};
use super::codes::ArkAgentResult;

type Registry = Mutex<HashMap<usize, Arc<dyn Any + Send + Sync>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

static NEXT: AtomicUsize = AtomicUsize::new(1);

fn invalid() -> FfiError {
    FfiError::new(ArkAgentResult::InvalidHandle, "invalid, freed or wrong-kind handle")
}

/// Registers `value` and returns its handle typed as `*mut H`.
pub(crate) fn insert<H, T: Any + Send + Sync>(value: Arc<T>) -> *mut H {
    // Multiples of 16 look like aligned pointers to tools such as valgrind.
    let id = NEXT.fetch_add(1, Ordering::Relaxed) << 4;
    if let Ok(mut map) = registry().lock() {
        map.insert(id, value);
    }
    id as *mut H
}

/// The live object behind `handle`, if it is of kind `T`.
pub(crate) fn get<H, T: Any + Send + Sync>(handle: *const H) -> FfiResult<Arc<T>> {
    let map = registry().lock().map_err(|_| invalid())?;
    let any = map.get(&(handle as usize)).ok_or_else(invalid)?;
    Arc::clone(any).downcast::<T>().map_err(|_| invalid())
}

/// Unregisters `handle` (if it is of kind `T`) and returns the object.
pub(crate) fn remove<H, T: Any + Send + Sync>(handle: *const H) -> FfiResult<Arc<T>> {
    let mut map = registry().lock().map_err(|_| invalid())?;
    let key = handle as usize;
    if !map.get(&key).is_some_and(|v| v.is::<T>()) {
        return Err(invalid());
    }
    let any = map.remove(&key).ok_or_else(invalid)?;
    any.downcast::<T>().map_err(|_| invalid())
}

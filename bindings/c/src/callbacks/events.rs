//! The host's event callback as a core observer.

use std::ffi::{c_char, c_void, CString};


use super::types::UserData;
use arkagent::runtime::{AgentEvent, AgentObserver};

// ---------------------------------------------------------------- events

pub(crate) struct HostObserver {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char),
    pub userdata: UserData,
}

impl AgentObserver for HostObserver {
    fn on_event(&self, event: &AgentEvent) {
        let Ok(json) = serde_json::to_string(event) else { return };
        let Ok(json) = CString::new(json) else { return };
        // SAFETY: the host registered this callback and promised userdata stays valid.
        in_callback(|| unsafe { (self.callback)(self.userdata.0, json.as_ptr()) });
    }
}

thread_local! {
    /// How many host callbacks this thread is inside of that the library called outside
    /// its executor (events of `rewind`, `fork`, `approve`, … come on the caller's thread).
    static IN_CALLBACK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Calls a host callback, marking this thread as inside it: a blocking call made from it
/// is refused (`ARK_AGENT_RESULT_REENTRANT`) wherever the library called it from.
pub(crate) fn in_callback<R>(call: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            IN_CALLBACK.with(|n| n.set(n.get().saturating_sub(1)));
        }
    }
    IN_CALLBACK.with(|n| n.set(n.get() + 1));
    let _leave = Leave;
    call()
}

/// True while this thread is inside a host callback called through [`in_callback`].
pub(crate) fn in_host_callback() -> bool {
    IN_CALLBACK.with(|n| n.get() > 0)
}

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
        unsafe { (self.callback)(self.userdata.0, json.as_ptr()) };
    }
}

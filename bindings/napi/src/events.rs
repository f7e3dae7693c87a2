//! Runtime events to JS listeners `(event: AgentEvent) => void`.

use arkagent::{AgentEvent, AgentObserver};
use napi_derive_ohos::napi;

use crate::callback::{JsFunction, JsListener};

/// A runtime event; `payloadJson` is the event's JSON (its `type` and type-specific fields).
#[napi(object, js_name = "AgentEvent")]
pub struct JsAgentEvent {
    #[napi(js_name = "type")]
    pub kind: String,
    pub session_id: String,
    pub run_id: String,
    pub seq: f64,
    pub payload_json: String,
}

impl From<&AgentEvent> for JsAgentEvent {
    fn from(event: &AgentEvent) -> Self {
        Self {
            kind: event.kind.type_name().to_owned(),
            session_id: event.session_id.clone(),
            run_id: event.run_id.clone(),
            // JS numbers: exact below 2^53.
            seq: event.seq as f64,
            payload_json: serde_json::to_string(&event.kind).unwrap_or_default(),
        }
    }
}

/// [`AgentObserver`] forwarding every event to a JS listener, in order, without blocking
/// the run.
pub struct JsObserver {
    listener: JsListener<JsAgentEvent>,
}

impl JsObserver {
    /// Wraps the JS listener (on the JS thread).
    pub fn new(function: JsFunction<'_, JsAgentEvent>) -> napi_ohos::Result<Self> {
        Ok(Self {
            listener: JsListener::new(function)?,
        })
    }
}

impl AgentObserver for JsObserver {
    fn on_event(&self, event: &AgentEvent) {
        self.listener.notify(event.into());
    }
}

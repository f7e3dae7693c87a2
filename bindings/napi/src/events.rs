//! Runtime events to JS listeners `(event: AgentEvent) => void`, and the typed view of a
//! "sub_agent" event (`SubAgentChildEvent`, SUB-7).

use arkagent::{AgentEvent, AgentObserver, EventKind};
use napi_derive_ohos::napi;

use crate::args::Arg;
use crate::callback::{JsFunction, JsListener};
use crate::convert::{optional, Optional};
use crate::error::{private_constructor, thrown, Thrown};
use crate::records;

/// A runtime event. `payloadJson` is the event's payload as JSON: its `type` and that
/// type's fields, camelCase like every record of this module, typed by the payload
/// interfaces generated above (RunStartedPayload … RunFinishedPayload, one per EventType):
/// `JSON.parse(event.payloadJson) as ModelRequestPayload` for a "model_request" event, and
/// so on. A field declared `T | null` is present with null when it does not apply; one
/// declared `name?:` is left out. Every run — run() and runDecomposed() alike — begins
/// with "run_started" and ends with "run_finished"; a runtime constructed with a
/// SessionStore also sends "session_committed" after each commit: everything up to it
/// survives the app being killed.
#[napi(object, js_name = "AgentEvent")]
pub struct JsAgentEvent {
    /// The event's type: the `type` of its payloadJson.
    #[napi(js_name = "type", ts_type = "EventType")]
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
            // The payload's one ArkTS spelling (BND-2): its JSON with camelCase keys.
            payload_json: records::to_js_json(&event.kind),
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

/// A "sub_agent" event, typed (SUB-7): the parent's and the child's session and run ids,
/// the assignee, the task, the child's depth (1 for a child of the root) and the child's
/// own event.
#[napi]
pub struct SubAgentChildEvent {
    inner: arkagent::runtime::SubAgentChildEvent,
}

#[napi]
impl SubAgentChildEvent {
    /// Instances come from `SubAgentChildEvent.from()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SubAgentChildEvent"))
    }

    /// The typed view of an event a listener got; undefined for any type but "sub_agent".
    /// Throws "invalid_json" when a "sub_agent" event's payloadJson does not parse.
    #[napi]
    pub fn from(event: Arg<JsAgentEvent>) -> Result<Optional<SubAgentChildEvent>, Thrown> {
        if event.0.kind != "sub_agent" {
            return Ok(optional(None));
        }
        let payload: serde_json::Value = serde_json::from_str(&event.0.payload_json).map_err(|e| thrown(e.into()))?;
        let kind: EventKind = records::from_js(payload, "payloadJson")?;
        Ok(optional(match kind {
            EventKind::SubAgent(inner) => Some(Self { inner }),
            _ => None,
        }))
    }

    #[napi(getter)]
    pub fn parent_session_id(&self) -> String {
        self.inner.parent_session_id.clone()
    }

    #[napi(getter)]
    pub fn parent_run_id(&self) -> String {
        self.inner.parent_run_id.clone()
    }

    #[napi(getter)]
    pub fn child_session_id(&self) -> String {
        self.inner.child_session_id.clone()
    }

    #[napi(getter)]
    pub fn child_run_id(&self) -> String {
        self.inner.child_run_id.clone()
    }

    /// A worker name or CLONE_ASSIGNEE.
    #[napi(getter)]
    pub fn assignee(&self) -> String {
        self.inner.assignee.clone()
    }

    #[napi(getter)]
    pub fn task_description(&self) -> String {
        self.inner.task_description.clone()
    }

    #[napi(getter)]
    pub fn depth(&self) -> u32 {
        self.inner.depth
    }

    /// The child's own event.
    #[napi(getter)]
    pub fn event(&self) -> JsAgentEvent {
        JsAgentEvent::from(self.inner.event.as_ref())
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: AgentEvent

/**
 * Receives runtime events, in order, on the JS thread. Delivery is asynchronous: the last
 * events of a run may arrive just after its `run()` Promise settles; "run_finished" is
 * always a run's last event. A listener that throws is ignored.
 */
export type AgentEventListener = (event: AgentEvent) => void;

// declare: SubAgentChildEvent
*/

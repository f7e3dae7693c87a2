//! Runtime events to JS listeners `(event: AgentEvent) => void`, and the typed view of a
//! "sub_agent" event (`SubAgentChildEvent`, SUB-7).

use arkagent::{AgentEvent, AgentObserver};
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
///
/// Read from the payload's JSON as it is, field by field (PERF-9: no typed decoding of every
/// event type into the library for this one view).
#[napi]
pub struct SubAgentChildEvent {
    parent_session_id: String,
    parent_run_id: String,
    child_session_id: String,
    child_run_id: String,
    assignee: String,
    task_description: String,
    depth: u32,
    /// The child's event: type, session id, run id, seq, and its payload's JSON.
    event: (String, String, String, f64, String),
}

/// The string at `key` of a "sub_agent" payload (`invalid_argument` naming it otherwise).
fn text(object: &serde_json::Map<String, serde_json::Value>, key: &str) -> Result<String, Thrown> {
    match object.get(key) {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        _ => Err(napi_ohos::Error::new("invalid_argument".to_owned(), format!("payloadJson: no string {key:?}"))),
    }
}

impl SubAgentChildEvent {
    /// The typed view of a "sub_agent" payload (camelCase keys, as `payloadJson` has them).
    fn of(payload: serde_json::Value) -> Result<Self, Thrown> {
        let bad = |what: &str| napi_ohos::Error::new("invalid_argument".to_owned(), format!("payloadJson: {what}"));
        let serde_json::Value::Object(mut object) = payload else { return Err(bad("not an object")) };
        let Some(serde_json::Value::Object(mut child)) = object.remove("event") else { return Err(bad("no child event")) };
        let depth = object.get("depth").and_then(serde_json::Value::as_u64).and_then(|d| u32::try_from(d).ok()).ok_or_else(|| bad("no depth"))?;
        let (kind, session_id, run_id) = (text(&child, "type")?, text(&child, "sessionId")?, text(&child, "runId")?);
        let seq = child.get("seq").and_then(serde_json::Value::as_f64).ok_or_else(|| bad("no child seq"))?;
        // The child's payload: its event without the stamp (what a listener's payloadJson holds).
        for stamp in ["sessionId", "runId", "seq", "atMs"] {
            child.remove(stamp);
        }
        Ok(Self {
            parent_session_id: text(&object, "parentSessionId")?,
            parent_run_id: text(&object, "parentRunId")?,
            child_session_id: text(&object, "childSessionId")?,
            child_run_id: text(&object, "childRunId")?,
            assignee: text(&object, "assignee")?,
            task_description: text(&object, "taskDescription")?,
            depth,
            event: (kind, session_id, run_id, seq, serde_json::Value::Object(child).to_string()),
        })
    }
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
        Ok(optional(Some(Self::of(payload)?)))
    }

    #[napi(getter)]
    pub fn parent_session_id(&self) -> String {
        self.parent_session_id.clone()
    }

    #[napi(getter)]
    pub fn parent_run_id(&self) -> String {
        self.parent_run_id.clone()
    }

    #[napi(getter)]
    pub fn child_session_id(&self) -> String {
        self.child_session_id.clone()
    }

    #[napi(getter)]
    pub fn child_run_id(&self) -> String {
        self.child_run_id.clone()
    }

    /// A worker name or CLONE_ASSIGNEE.
    #[napi(getter)]
    pub fn assignee(&self) -> String {
        self.assignee.clone()
    }

    #[napi(getter)]
    pub fn task_description(&self) -> String {
        self.task_description.clone()
    }

    #[napi(getter)]
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The child's own event.
    #[napi(getter)]
    pub fn event(&self) -> JsAgentEvent {
        let (kind, session_id, run_id, seq, payload_json) = self.event.clone();
        JsAgentEvent { kind, session_id, run_id, seq, payload_json }
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
 * always the last event of a run() (or resumeRun()) call. A run paused for approval hears
 * more under its runId afterwards: answers to it are committed ("session_committed", with
 * a store) and resumeRun() goes on with it. A listener that throws is ignored.
 */
export type AgentEventListener = (event: AgentEvent) => void;

// declare: SubAgentChildEvent
*/

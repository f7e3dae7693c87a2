//! Runtime events to JS listeners `(event: AgentEvent) => void`, and the typed view of a
//! "sub_agent" event (`SubAgentChildEvent`, SUB-7).

use arkagent::{AgentEvent, AgentObserver, EventKind};
use napi_derive_ohos::napi;

use crate::args::Arg;
use crate::callback::{JsFunction, JsListener};
use crate::convert::{optional, Optional};
use crate::error::{private_constructor, thrown, Thrown};

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

/// A "sub_agent" event, typed (SUB-7).
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

    /// The typed view of a "sub_agent" event; undefined for any other event. Throws
    /// `invalid_json` when its payloadJson does not parse.
    #[napi]
    pub fn from(event: Arg<JsAgentEvent>) -> Result<Optional<SubAgentChildEvent>, Thrown> {
        if event.0.kind != "sub_agent" {
            return Ok(optional(None));
        }
        let kind: EventKind = serde_json::from_str(&event.0.payload_json).map_err(|e| thrown(e.into()))?;
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

// index.d.ts: the declarations of this module's JS API, with their docs (the promises the
// tests keep). scripts/gen-dts.sh assembles these blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts; edit them here, then regenerate.
/* ts
/**
 * A runtime event. `payloadJson` is the event's JSON: its `type` and type-specific fields
 * (snake_case). Types: "run_started", "model_request" (iteration, message_count,
 * tool_count, estimated_prompt_tokens — the prompt size the compression trigger uses: the
 * larger of the local estimate and the provider's last count plus what was added since —
 * compression_threshold when compression is on, and prompt_size_source: which figure
 * decided, "estimate" (the static CJK-aware estimate), "calibrated" (that estimate
 * corrected per script class from this model's earlier prompt_tokens; the correction is
 * kept in exportState() as token_calibration) or "provider" (the provider's last count
 * plus what was added since)),
 * "model_response", "text_delta" (iteration, delta: each piece as it streams in, or the
 * whole text once for a non-streamed answer), "reasoning_delta" (iteration, delta;
 * streaming only), "tool_call_delta" (iteration, index, name on a call's first delta,
 * arguments_delta; streaming only), "tool_call_started", "tool_call_finished"
 * (call_id, name, is_error, error_code, content, metadata), "compression" (trigger:
 * "preflight" | "post_turn" | "overflow" | "manual"; outcome; reason; episode_id;
 * error_code; messages_before; messages_after; estimated_prompt_tokens; threshold;
 * usage), "sub_agent" (an event of a delegated child: parent_session_id, parent_run_id,
 * child_session_id, child_run_id, assignee, task_description, depth, and the child's own
 * event in `event`), "run_finished" (status, iterations, error_code), and from a runtime
 * constructed with a SessionStore: "session_committed" (commit_seq: the session's commit
 * sequence number, 1 for its first commit, as SessionSummary.commitSeq reports it;
 * message_count: messages committed, live plus archived) — everything up to it survives
 * the app being killed.
 */
export interface AgentEvent {
  type: string;
  sessionId: string;
  runId: string;
  seq: number;
  payloadJson: string;
}

/**
 * Receives runtime events, in order, on the JS thread. Delivery is asynchronous: the last
 * events of a run may arrive just after its `run()` Promise settles; "run_finished" is
 * always a run's last event. A listener that throws is ignored.
 */
export type AgentEventListener = (event: AgentEvent) => void;

/**
 * A "sub_agent" event, typed (SUB-7): the parent's and the child's session and run ids,
 * the assignee, the task, the child's depth (1 for a child of the root) and the child's
 * own event.
 */
export class SubAgentChildEvent {
  /** Instances come from `SubAgentChildEvent.from()`. */
  private constructor();
  /**
   * The typed view of an event a listener got; undefined for any type but "sub_agent".
   * Throws "invalid_json" when a "sub_agent" event's payloadJson does not parse.
   */
  static from(event: AgentEvent): SubAgentChildEvent | undefined;
  readonly parentSessionId: string;
  readonly parentRunId: string;
  readonly childSessionId: string;
  readonly childRunId: string;
  /** A worker name or CLONE_ASSIGNEE. */
  readonly assignee: string;
  readonly taskDescription: string;
  readonly depth: number;
  /** The child's own event. */
  readonly event: AgentEvent;
}
*/

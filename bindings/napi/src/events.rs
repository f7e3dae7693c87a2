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
    /// One of the `EventType` union (generated from `EventKind`): `EventKind::type_name`.
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
 * whole text once for a non-streamed answer), "reasoning_delta" (iteration, delta, and
 * redacted: true for a block the provider encrypted; as it streams, or the whole reasoning
 * once), "tool_call_delta" (iteration, index, name on a call's first delta,
 * arguments_delta; streaming only), "tool_call_started", "tool_call_finished"
 * (call_id, name, is_error, error_code, content, metadata), "compression" (trigger:
 * "preflight" | "post_turn" | "overflow" | "manual"; outcome; reason; episode_id;
 * error_code; messages_before; messages_after; estimated_prompt_tokens; threshold;
 * usage), "sub_agent" (an event of a delegated child: parent_session_id, parent_run_id,
 * child_session_id, child_run_id, assignee, task_description, depth, and the child's own
 * event in `event`), "run_finished" (status, iterations, error_code, usage), and from a
 * runtime constructed with a SessionStore: "session_committed" (commit_seq: the session's commit
 * sequence number, 1 for its first commit, as SessionSummary.commitSeq reports it;
 * message_count: messages committed, live plus archived) — everything up to it survives
 * the app being killed. Each type's fields are typed by its payload interface
 * (RunStartedPayload … RunFinishedPayload, below): `JSON.parse(event.payloadJson) as
 * ModelRequestPayload` for a "model_request" event, and so on. Every run — run() and
 * runDecomposed() alike — begins with "run_started" and ends with "run_finished".
 */
export interface AgentEvent {
  type: EventType;
  sessionId: string;
  runId: string;
  seq: number;
  payloadJson: string;
}

/**
 * What every event's payloadJson holds: its type. The payload interface of each type
 * extends it with that type's fields (snake_case, as in the JSON); a field declared
 * `T | null` is present with null when it does not apply.
 */
export interface EventPayload {
  type: EventType;
}

/**
 * "run_started": a run began with this user input; always a run's first event,
 * runDecomposed() included.
 */
export interface RunStartedPayload extends EventPayload {
  type: 'run_started';
  /** The user input; for runDecomposed(), the task descriptions, one per line. */
  input: string;
}

/** "model_request": a model request is about to be sent. */
export interface ModelRequestPayload extends EventPayload {
  type: 'model_request';
  /** 1-based model call number within the run. */
  iteration: number;
  /** Messages in the history sent. */
  message_count: number;
  /** Tools offered. */
  tool_count: number;
  /** The prompt's size in tokens as the compression trigger sees it (see AgentEvent). */
  estimated_prompt_tokens: number;
  /** The compression threshold when compression is on. */
  compression_threshold: number | null;
  /** Which figure decided estimated_prompt_tokens. */
  prompt_size_source: PromptSizeSource;
}

/** Token usage of one model call as the events carry it (snake_case; cf. ModelUsage). */
export interface UsagePayload {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
  /** Prompt tokens written to the provider's cache (Anthropic), when reported. */
  cache_write_tokens?: number;
  /** Where the usage came from, when not a plain model call. */
  source?: UsageSource;
  /** The model calls it stands for, when more than one. */
  call_count?: number;
  /** What the call cost, when its model has a price (COST-2); absent otherwise, never 0. */
  cost?: CostPayload;
}

/** An exact amount as the events carry it (cf. Cost): billionths of the currency unit. */
export interface CostPayload {
  /** The currency code as the price names it, e.g. "USD", "CNY". */
  currency: string;
  /** The amount in billionths of the currency unit (an integer). */
  nanos: number;
}

/** What a run used, as "run_finished" carries it (snake_case; cf. ChildUsageSummary). */
export interface UsageSummaryPayload {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** Model calls made (see ChildUsageSummary.callCount). */
  call_count: number;
  /** How many of call_count carry a cost. */
  priced_call_count: number;
  /** One exact sum per currency, sorted by currency code; absent when no call was priced. */
  costs?: CostPayload[];
}

/** "model_response": a model response was parsed and appended. */
export interface ModelResponsePayload extends EventPayload {
  type: 'model_response';
  iteration: number;
  /** Usage, when reported. */
  usage: UsagePayload | null;
  /** Tool calls requested. */
  tool_call_count: number;
  /** The provider's finish_reason, when reported. */
  finish_reason: string | null;
}

/** "text_delta": answer text arrived (each piece as it streams, or the whole text once). */
export interface TextDeltaPayload extends EventPayload {
  type: 'text_delta';
  iteration: number;
  delta: string;
}

/**
 * "reasoning_delta": reasoning arrived (THINK-5: Chat Completions reasoning_content, Anthropic
 * thinking; each piece as it streams, or the whole reasoning once); never part of the answer.
 * `redacted` is true (and `delta` "") when the provider encrypted a block (Anthropic
 * redacted_thinking): there is reasoning, but no text to show.
 */
export interface ReasoningDeltaPayload extends EventPayload {
  type: 'reasoning_delta';
  iteration: number;
  delta: string;
  redacted?: boolean;
}

/** "tool_call_delta": part of a tool call the model is still writing (streaming only). */
export interface ToolCallDeltaPayload extends EventPayload {
  type: 'tool_call_delta';
  iteration: number;
  /** Position of the call in the answer. */
  index: number;
  /** The tool name, on a call's first delta. */
  name: string | null;
  /** Argument text to concatenate (empty on the first delta). */
  arguments_delta: string;
}

/** "tool_call_started": a tool call started. */
export interface ToolCallStartedPayload extends EventPayload {
  type: 'tool_call_started';
  call_id: string;
  name: string;
  /** The arguments as the model sent them. */
  arguments: string;
}

/** "tool_call_finished": a tool call finished, failed or was cancelled. */
export interface ToolCallFinishedPayload extends EventPayload {
  type: 'tool_call_finished';
  call_id: string;
  name: string;
  is_error: boolean;
  /** The error code on failure: the runtime's ("unknown_tool", "invalid_tool_arguments",
   * "cancelled", …) or the one a tool rejected with. */
  error_code: string | null;
  /** What the model will see. */
  content: string;
  /** Structured host data from the tool result, when it had any (any JSON value). */
  metadata?: Object;
}

/** "compression": a compression attempt that did something or could not (see AgentEvent). */
export interface CompressionPayload extends EventPayload {
  type: 'compression';
  trigger: CompressionTrigger;
  outcome: CompressOutcomeKind;
  reason: CompressReason;
  /** The new episode, when compressed. */
  episode_id: string | null;
  /** The model error's code when reason is "llm_error" (or a custom compressor's). */
  error_code: string | null;
  messages_before: number;
  messages_after: number;
  /** The prompt size checked against the threshold (automatic attempts). */
  estimated_prompt_tokens: number | null;
  threshold: number | null;
  /** The summary calls' usage (recorded only when compressed). */
  usage: UsagePayload | null;
}

/**
 * A delegated child's event as "sub_agent" carries it: its correlation fields, its type
 * and (not declared here) that type's fields; SubAgentChildEvent.from() gives it as an
 * AgentEvent.
 */
export interface ChildEventPayload extends EventPayload {
  session_id: string;
  run_id: string;
  seq: number;
  /** Time from the runtime's clock, ms since the Unix epoch. */
  at_ms: number;
}

/** "sub_agent": an event of a delegated child (SUB-7). */
export interface SubAgentPayload extends EventPayload {
  type: 'sub_agent';
  parent_session_id: string;
  parent_run_id: string;
  child_session_id: string;
  child_run_id: string;
  /** A worker name or CLONE_ASSIGNEE. */
  assignee: string;
  task_description: string;
  /** 1 for a child of the root. */
  depth: number;
  /** The child's own event. */
  event: ChildEventPayload;
}

/** "session_committed": a commit reached the SessionStore (STORE-6). */
export interface SessionCommittedPayload extends EventPayload {
  type: 'session_committed';
  /** The session's commit sequence number (1 for its first commit). */
  commit_seq: number;
  /** Messages committed, live plus archived. */
  message_count: number;
}

/**
 * "run_finished": the run ended; always a run's last event, runDecomposed() included
 * (status "completed", or "cancelled" after cancel(): a task's failure is in its result).
 */
export interface RunFinishedPayload extends EventPayload {
  type: 'run_finished';
  status: RunStatus;
  /** Model calls made (0 for runDecomposed(): its children make the calls). */
  iterations: number;
  /** The error's code when status is "failed". */
  error_code: ErrorCode | null;
  /** What the run used up to its end, failed runs included (as RunResult.usage; COST-1,
   * COST-2); for runDecomposed(), its children's. */
  usage: UsageSummaryPayload;
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

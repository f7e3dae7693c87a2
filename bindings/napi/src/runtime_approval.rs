//! `AgentRuntime`'s approval methods (TOOL-1, TOOL-2): the calls a paused turn waits on,
//! the person's answers and resuming the run. A third `#[napi] impl` block of the class
//! declared in `runtime`; each method delegates to the core runtime.

use std::sync::{Arc, Mutex};

use arkagent::tools::ApprovalDecision;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{Either, PromiseRaw};
use napi_ohos::Env;
use serde_json::Value;

use crate::args::Arg;
use crate::approval_order::{Answer, Outcome, Slot};
use crate::error::CodedError;
use crate::error::{internal, rejection, Thrown};
use crate::records;
use crate::runtime::{settle_holding_slot, AgentRuntime};

impl AgentRuntime {
    /// Queues `answer` (on the JS thread, so answers keep their order) and makes it off the
    /// JS thread; one spawned future type for every approval call (PERF-9: each distinct one
    /// is code in the library).
    ///
    /// An answer to the paused turn given while run() or resumeRun() still holds the run
    /// slot (its Promise not yet settled: e.g. from an "approval_requested" listener) is
    /// refused with "run_in_progress" as of when it is given — not when a worker thread makes
    /// it, by which time the slot may be free (a sub-agent's waiting call is answered while
    /// its run goes on: [`Answer::Decide`] carries the moment, the core decides).
    fn answer<'env>(&self, env: &'env Env, answer: Answer) -> Result<PromiseRaw<'env, Either<(), bool>>, Thrown> {
        let slot = match answer {
            Answer::CancelAll if self.core().is_running() => Slot::new(Mutex::new(Some(Err(CodedError::from(arkagent::ArkAgentError::RunInProgress))))),
            answer => self.answers().queue(answer),
        };
        let (core, answers) = (self.core().clone(), Arc::clone(self.answers()));
        let mine = Arc::clone(&slot);
        env.spawn_future_with_callback(
            async move { Ok(answers.answer_in_order(&core, &slot)) },
            move |env: &'env Env, result: Outcome| result.map_err(|e| rejection(env, e)),
        )
        .map_err(|e| {
            self.answers().withdraw(&mine);
            internal(e)
        })
    }
}

#[napi]
impl AgentRuntime {
    /// TOOL-1: the calls waiting for an answer: the paused turn's (`path` empty; read it
    /// after a restart — the turn is in the SessionStore and exportState() — to show the same
    /// dialogs again) and, while a run is going, its sub-agents' calls waiting in flight
    /// (`path`: the session ids from this runtime's child down to the sub-agent that made the
    /// call; `callId` `<that session id>/<its call id>`; not stored: such a call ends with its
    /// delegation). A sub-agent's call arrives as a "sub_agent" event whose child event is
    /// "approval_requested". Empty when nothing waits.
    #[napi(ts_return_type = "PendingApproval[]")]
    pub fn pending_approvals(&self) -> Value {
        records::to_js(&self.core().pending_approvals())
    }

    /// TOOL-1: approves one waiting call. A sub-agent's call is answered while the run goes
    /// on (its sub-agent makes no model call until then) and runs at once; answered again,
    /// or after its sub-agent ended, it rejects with "approval_already_answered" or
    /// "approval_not_pending" (never "run_in_progress": it will not wait again). A call of the
    /// paused turn runs when the run resumes — with
    /// `editedArgumentsJson` instead of the model's arguments when given (a JSON object
    /// with every property the tool's schema requires; the model then reads, before the
    /// tool's answer, a line saying the person changed the arguments and what ran). The
    /// answer is committed to the SessionStore (off the JS thread) before the Promise
    /// resolves: an app killed after that loses nothing. Nothing expires by itself. Await it
    /// before resumeRun(). Answers (approve, reject, cancelApprovals) are made in the order
    /// they were called, awaited or not: of two taps on one dialog the first answers and the
    /// second rejects with "approval_already_answered". Rejects (nothing changed) with "approval_not_pending",
    /// "approval_unknown_call", "approval_already_answered", "tool_arguments_invalid",
    /// "run_in_progress" or the store's code.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn approve<'env>(
        &self,
        env: &'env Env,
        call_id: Arg<String>,
        edited_arguments_json: Arg<Option<String>>,
    ) -> Result<PromiseRaw<'env, Either<(), bool>>, Thrown> {
        let decision = match edited_arguments_json.0 {
            None => ApprovalDecision::Approve,
            Some(arguments) => ApprovalDecision::ApproveWithArguments { arguments },
        };
        self.answer(env, Answer::Decide(call_id.0, decision, self.core().is_running()))
    }

    /// TOOL-1: rejects one waiting call: it never runs; the model reads a "tool_rejected"
    /// error result with `reason` (absent or empty: "the user rejected this call").
    /// Committed and refused like approve().
    #[napi(ts_return_type = "Promise<void>")]
    pub fn reject<'env>(&self, env: &'env Env, call_id: Arg<String>, reason: Arg<Option<String>>) -> Result<PromiseRaw<'env, Either<(), bool>>, Thrown> {
        self.answer(env, Answer::Decide(call_id.0, ApprovalDecision::Reject { reason: reason.0.unwrap_or_default() }, self.core().is_running()))
    }

    /// TOOL-1: closes the paused turn without resuming it — the person stopped: every call
    /// that did not run is answered as on a cancel ("cancelled"; "tool_rejected" and
    /// "tool_interrupted" as decided), the calls that ran keep their results, the turn joins
    /// the history and is committed (off the JS thread); no model call. Resolves true when a
    /// turn was closed, false when none waited; answering afterwards rejects with
    /// "approval_not_pending". Rejects with "run_in_progress" or the store's code (the turn
    /// is then closed in memory and the next commit writes it).
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn cancel_approvals<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Either<(), bool>>, Thrown> {
        self.answer(env, Answer::CancelAll)
    }

    /// TOOL-1: resumes the paused run once every waiting call is answered: the approved
    /// calls run (each at most once: a call an app kill interrupted is answered
    /// "tool_interrupted", never run again), the model gets every result in the calls'
    /// order, and the run goes on as run() does (it may pause again); events as for a run,
    /// under the paused run's id, starting with "run_started" (empty input). Rejects with
    /// "approval_not_pending", "approval_pending" (a call still waits), "run_in_progress",
    /// or a run's codes.
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn resume_run<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let started = self.core().start_resume_run_holding_slot();
        settle_holding_slot(env, started, |outcome: Result<arkagent::RunOutcome, _>| outcome.map(|o| records::to_js(&o)))
    }
}

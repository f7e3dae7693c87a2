//! TOOL-1..TOOL-3: tool calls that wait for a person. Before a turn's calls run, each
//! passes the role's whitelist (ISO-2, in `tool_exec`), then the app's [`ToolPolicy`]
//! (allow / deny / ask), then its tool's own rule (always, or its predicate). When one
//! must ask, the run pauses: the turn — the model's answer, every call's state, the
//! results already produced — is the state's `pending_turn`, committed to the store and
//! carried by exports; the calls that need no answer run at once; one
//! `approval_requested` event per waiting call; the run ends `awaiting_approval`. The host
//! answers each call ([`AgentRuntime::answer_approval`]); [`AgentRuntime::resume_run`] runs
//! the approved calls and goes on. A call runs at most once (TOOL-2): it is `running` in
//! the store before its tool is called, so one a kill interrupted is answered
//! `tool_interrupted` when the run resumes, never run again.
//!
//! [`ToolPolicy`]: crate::tools::ToolPolicy

use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::agent::{AgentRuntime, Inner};
use super::approval_hub::{check_edited, required_properties};
use super::events::EventKind;
use super::outcome::{PendingApproval, RunOutcome, RunStatus};
use super::run_loop::Run;
use super::start::RunSlot;
use super::tool_exec::parse_arguments;
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{PendingCall, PendingCallState, PendingTurn, ToolCall};
use crate::subagent::DELEGATE_TASK_TOOL_NAME;
use crate::tools::{ApprovalDecision, PolicyDecision, ToolInvocation, ToolResult};

/// How a run ends.
type Ended = Result<RunOutcome, ArkAgentError>;

/// What happens to one call of a turn.
enum Gate {
    /// It runs now (or is answered by `tool_exec`: not allowed, unknown, bad arguments).
    Run,
    /// Answered without running (the policy denied it).
    Answer(ToolResult),
    /// It waits for a person; why (`tool` or `policy`).
    Ask(&'static str),
}

thread_local! {
    /// TOOL-1: this thread is making an answer to a paused turn (holds an `answering` lock).
    static ANSWERING_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Answers to a paused turn held off while it lives (see [`Inner::hold_answers`]).
pub(super) struct HeldAnswers<'a> {
    _answering: std::sync::MutexGuard<'a, ()>,
}

impl Drop for HeldAnswers<'_> {
    fn drop(&mut self) {
        ANSWERING_HERE.with(|here| here.set(false));
    }
}

impl Inner {
    /// TOOL-1: waits for an answer being made on another thread (checked, set, committed,
    /// or taken back when its commit failed) and holds the next ones off while the guard
    /// lives. Answers take it, and so does everything that claims the run slot or swaps the
    /// store (attach, detach): a paused turn is never dropped, replaced or resumed halfway
    /// through an answer, so an answer that failed never puts back a turn that had gone, and
    /// one that succeeded is in the store the turn went with. `None` on a thread making an
    /// answer already (an event callback of its commit, which has succeeded by then): it
    /// never waits for itself.
    pub(super) fn hold_answers(&self) -> Option<HeldAnswers<'_>> {
        if ANSWERING_HERE.with(std::cell::Cell::get) {
            return None;
        }
        let answering = self.answering.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        ANSWERING_HERE.with(|here| here.set(true));
        Some(HeldAnswers { _answering: answering })
    }

    /// Refuses an operation while a turn waits for approval (`approval_pending`).
    pub(super) fn refuse_while_pending(&self) -> Result<(), ArkAgentError> {
        match &self.session.snapshot().pending_turn {
            Some(_) => Err(ArkAgentError::approval(
                ErrorCode::ApprovalPending,
                "a turn waits for approval: answer its calls and resume the run first",
            )),
            None => Ok(()),
        }
    }
}

/// Deciding, pausing and resuming.
impl Run<'_> {
    /// The gate of one call: the role's whitelist first (left to `tool_exec`, which
    /// answers a call its role may not make), then the policy, then the tool's rule.
    async fn gate(&self, call: &ToolCall) -> Gate {
        let inner = self.inner;
        let policy = &inner.exec_policy;
        let barred = (policy.is_sub_agent && call.name == DELEGATE_TASK_TOOL_NAME) || !policy.allows(&call.name);
        let tools = inner.tools();
        let (Some(tool), false) = (tools.get(&call.name), barred) else { return Gate::Run };
        let Ok(arguments) = parse_arguments(&call.arguments) else { return Gate::Run };
        let invocation = ToolInvocation { call_id: call.id.clone(), name: call.name.clone(), arguments };
        let mut ask = None;
        let cancelled = || Gate::Answer(ToolResult::error("cancelled", "the run was cancelled before this tool call finished"));
        if let Some(policy) = &inner.config.tool_policy {
            let decided = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return cancelled(),
                decided = policy.decide(&invocation) => decided,
            };
            match decided {
                PolicyDecision::Allow => {}
                PolicyDecision::Deny { reason } => return Gate::Answer(ToolResult::error("tool_denied", &reason)),
                PolicyDecision::Ask => ask = Some("policy"),
            }
        }
        if ask.is_none() && tool.definition.requires_approval {
            ask = Some("tool");
        }
        if let (None, Some(predicate)) = (ask, &tool.approval) {
            let asks = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return cancelled(),
                asks = predicate.needs_approval(&invocation) => asks,
            };
            if asks {
                ask = Some("tool");
            }
        }
        match ask {
            Some(why) => Gate::Ask(why),
            None => Gate::Run,
        }
    }

    /// A turn under a policy or approval rules: every call gated; without a call that
    /// asks, the others run (or are answered) and the results are pushed as usual;
    /// otherwise the run pauses.
    pub(super) async fn answer_gated(&self, iteration: u32, calls: &[ToolCall]) -> ControlFlow<Ended> {
        let mut gates: Vec<Gate> = Vec::with_capacity(calls.len());
        for call in calls {
            gates.push(self.gate(call).await);
        }
        // A cancel while the gates decided: nothing pauses; the turn is answered as a
        // cancelled turn is (the loop then ends the run `cancelled`).
        if self.cancel.is_cancelled() {
            gates = gates.into_iter().map(|g| if matches!(g, Gate::Ask(_)) { Gate::Run } else { g }).collect();
        } else if gates.iter().any(|g| matches!(g, Gate::Ask(_))) {
            if self.inner.depth > 0 {
                // Issue 37 item 5: a sub-agent's calls wait in flight for the root's host.
                let results = self.answer_waiting(calls, gates).await;
                self.inner.session.push_tool_results(calls, results);
                return ControlFlow::Continue(());
            }
            return ControlFlow::Break(self.pause(iteration, calls, gates).await);
        }
        let runnable: Vec<ToolCall> = calls.iter().zip(&gates).filter(|(_, g)| matches!(g, Gate::Run)).map(|(c, _)| c.clone()).collect();
        let mut ran = self.run_tools(&runnable).await.into_iter();
        let mut results = Vec::with_capacity(calls.len());
        for (call, gate) in calls.iter().zip(gates) {
            results.push(match gate {
                Gate::Answer(result) => {
                    self.tool_finished_event(call, &result);
                    result
                }
                _ => ran.next().unwrap_or_else(|| ToolResult::error("cancelled", "the run was cancelled before this tool call finished")),
            });
        }
        self.inner.session.push_tool_results(calls, results);
        ControlFlow::Continue(())
    }

    /// A sub-agent's turn with calls that ask (issue 37 item 5): the calls that need no
    /// answer run; each asking call waits in the tree's hub under
    /// `<session id>/<call id>` (an `approval_requested` event names it; the parent sees it
    /// as a `sub_agent` event) until the root's host answers it or this run is cancelled
    /// (`cancelled`); the approved ones then run. One result per call, in order.
    async fn answer_waiting(&self, calls: &[ToolCall], gates: Vec<Gate>) -> Vec<ToolResult> {
        let inner = self.inner;
        let session_id = inner.session.view().session_id();
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut runnable = Vec::new();
        let mut asking = Vec::new();
        for ((i, call), gate) in calls.iter().enumerate().zip(gates) {
            match gate {
                Gate::Run => runnable.push(i),
                Gate::Answer(result) => {
                    self.tool_finished_event(call, &result);
                    results[i] = Some(result);
                }
                Gate::Ask(why) => {
                    let id = format!("{session_id}/{}", call.id);
                    let path = inner.place.lineage.clone();
                    let approval = PendingApproval { call_id: id.clone(), name: call.name.clone(), arguments: call.arguments.clone(), path: path.clone() };
                    let required = inner.tools().get(&call.name).map(|t| required_properties(&t.definition.parameters)).unwrap_or_default();
                    let (answer, guard) = inner.place.approvals.wait(approval, required);
                    inner.emit(self.run_id, EventKind::ApprovalRequested {
                        call_id: id,
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        reason: why.to_owned(),
                        path,
                    });
                    asking.push((i, answer, guard));
                }
            }
        }
        let now: Vec<ToolCall> = runnable.iter().map(|&i| calls[i].clone()).collect();
        for (i, result) in runnable.into_iter().zip(self.run_tools(&now).await) {
            results[i] = Some(result);
        }
        let mut approved = Vec::new();
        for (i, answer, _guard) in asking {
            let decision = tokio::select! {
                biased;
                () = self.cancel.cancelled() => None,
                decision = answer => decision.ok(),
            };
            let call = &calls[i];
            let answered = match decision {
                None => ToolResult::error("cancelled", "the run was cancelled before this tool call finished"),
                Some(ApprovalDecision::Reject { reason }) if reason.trim().is_empty() => ToolResult::error("tool_rejected", "the user rejected this call"),
                Some(ApprovalDecision::Reject { reason }) => ToolResult::error("tool_rejected", &reason),
                Some(ApprovalDecision::Approve) => {
                    approved.push((i, call.clone(), false));
                    continue;
                }
                Some(ApprovalDecision::ApproveWithArguments { arguments }) => {
                    approved.push((i, ToolCall { arguments, ..call.clone() }, true));
                    continue;
                }
            };
            self.tool_finished_event(call, &answered);
            results[i] = Some(answered);
        }
        let approved_calls: Vec<ToolCall> = approved.iter().map(|(_, c, _)| c.clone()).collect();
        for ((i, call, edited), result) in approved.into_iter().zip(self.run_tools(&approved_calls).await) {
            results[i] = Some(if edited { edited_result(&call.arguments, result) } else { result });
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| ToolResult::error("cancelled", "the run was cancelled before this tool call finished")))
            .collect()
    }

    /// Pauses the run at `iteration`'s turn: the pending turn committed with the calls
    /// that run now marked `running` (TOOL-2), those run and their results committed,
    /// one `approval_requested` per waiting call, the run ended `awaiting_approval`.
    async fn pause(&self, iteration: u32, calls: &[ToolCall], gates: Vec<Gate>) -> Ended {
        let inner = self.inner;
        let session = &inner.session;
        let Some(assistant) = session.snapshot().history.messages.last().cloned() else {
            return Err(ArkAgentError::InvalidState("a paused turn without its answer".into()));
        };
        let mut asked = Vec::new();
        let mut runnable = Vec::new();
        let mut pending = Vec::with_capacity(calls.len());
        for (call, gate) in calls.iter().zip(gates) {
            let state = match gate {
                Gate::Ask(why) => {
                    asked.push((call, why));
                    PendingCallState::AwaitingApproval
                }
                Gate::Answer(result) => {
                    self.tool_finished_event(call, &result);
                    PendingCallState::Done { result: session.pending_result_message(&call.id, result) }
                }
                Gate::Run => {
                    runnable.push(call.clone());
                    PendingCallState::Running
                }
            };
            pending.push(PendingCall { call_id: call.id.clone(), name: call.name.clone(), arguments: call.arguments.clone(), state });
        }
        session.set_pending_turn(Some(PendingTurn { run_id: self.run_id.to_owned(), iteration, assistant, calls: pending }));
        if let Err(e) = inner.commit_point(self.run_id) {
            // Nothing ran: the calls that were about to run run when the turn resumes.
            set_states(session, &runnable, |_| PendingCallState::Approved { edited_arguments: None });
            return Err(inner.store_failed(self.run_id, iteration, e));
        }
        if !runnable.is_empty() {
            let results = self.run_tools(&runnable).await;
            self.record_done(&runnable, results);
            inner.commit_point(self.run_id).map_err(|e| inner.store_failed(self.run_id, iteration, e))?;
        }
        if self.cancel.is_cancelled() {
            // Cancelled while the calls that needed no answer ran: nothing waits; the turn
            // closes with the waiting calls answered `cancelled`.
            return self.close_cancelled(iteration);
        }
        for (call, why) in &asked {
            inner.emit(self.run_id, EventKind::ApprovalRequested {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                reason: (*why).to_owned(),
                path: Vec::new(),
            });
        }
        let mut outcome = inner.finish(self.run_id, RunStatus::AwaitingApproval, iteration, None);
        outcome.pending_approvals = pending_approvals(&inner.session.snapshot().pending_turn);
        Ok(outcome)
    }

    /// Records each call's result in the pending turn (`done`).
    fn record_done(&self, calls: &[ToolCall], results: Vec<ToolResult>) {
        let session = &self.inner.session;
        let messages: Vec<_> = calls.iter().zip(results).map(|(c, r)| (c.id.clone(), session.pending_result_message(&c.id, r))).collect();
        session.update_pending_turn(|turn| {
            for (id, message) in messages {
                if let Some(call) = turn.call_mut(&id) {
                    call.state = PendingCallState::Done { result: message };
                }
            }
        });
    }

    /// Resumes a paused turn whose calls are all answered: the approved ones marked
    /// `running` and committed, then run; the turn's results join the history in order
    /// (rejected: `tool_rejected`; interrupted by a kill: `tool_interrupted`), then the
    /// loop goes on after the turn's model call.
    async fn resume_turn(&self, turn: PendingTurn) -> Ended {
        let inner = self.inner;
        let iteration = turn.iteration;
        let mut approved = Vec::new();
        for call in &turn.calls {
            if let PendingCallState::Approved { edited_arguments } = &call.state {
                let arguments = edited_arguments.clone().unwrap_or_else(|| call.arguments.clone());
                approved.push((ToolCall { id: call.call_id.clone(), name: call.name.clone(), arguments }, edited_arguments.is_some()));
            }
        }
        if !approved.is_empty() {
            let calls: Vec<ToolCall> = approved.iter().map(|(c, _)| c.clone()).collect();
            set_states(&inner.session, &calls, |_| PendingCallState::Running);
            if let Err(e) = inner.commit_point(self.run_id) {
                // Nothing ran: the decisions stand as they were, for the next resume.
                inner.session.set_pending_turn(Some(turn));
                return Err(inner.store_failed(self.run_id, iteration, e));
            }
            let results = self.run_tools(&calls).await;
            let results = approved.iter().zip(results).map(|((call, edited), r)| if *edited { edited_result(&call.arguments, r) } else { r }).collect();
            self.record_done(&calls, results);
        }
        let Some(turn) = inner.session.snapshot().pending_turn.clone() else {
            return Err(ArkAgentError::InvalidState("the paused turn disappeared".into()));
        };
        let results = turn.calls.iter().map(|call| final_result(&inner.session, call)).collect();
        inner.session.close_pending_turn(turn.assistant, results);
        if let ControlFlow::Break(ended) = self.after_turn(iteration).await {
            return ended;
        }
        self.iterate(iteration.saturating_add(1)).await
    }

    /// Closes the paused turn of a cancelled run (the calls not run answered `cancelled`,
    /// committed) and ends the run `cancelled`.
    fn close_cancelled(&self, iteration: u32) -> Ended {
        let inner = self.inner;
        if let Some(turn) = inner.session.snapshot().pending_turn.clone() {
            let results = turn.calls.iter().map(|call| final_result(&inner.session, call)).collect();
            inner.session.close_pending_turn(turn.assistant, results);
        }
        inner.commit_point(self.run_id).map_err(|e| inner.store_failed(self.run_id, iteration, e))?;
        Ok(inner.finish(self.run_id, RunStatus::Cancelled, iteration, None))
    }

}

/// The `tool` message a call of a closing turn answers with: its result, or the answer
/// for a call that did not run (rejected, interrupted by a kill, or cancelled).
fn final_result(session: &crate::session::Session, call: &PendingCall) -> crate::history::Message {
    let error = |code: &str, message: &str| session.pending_result_message(&call.call_id, ToolResult::error(code, message));
    match &call.state {
        PendingCallState::Done { result } => result.clone(),
        PendingCallState::Rejected { reason } if reason.trim().is_empty() => error("tool_rejected", "the user rejected this call"),
        PendingCallState::Rejected { reason } => error("tool_rejected", reason),
        PendingCallState::Running => {
            error("tool_interrupted", "this call was interrupted (the app stopped) before it answered; it was not run again")
        }
        PendingCallState::AwaitingApproval | PendingCallState::Approved { .. } => {
            error("cancelled", "the run was cancelled before this tool call finished")
        }
    }
}

/// Sets the state of each of `calls` in the paused turn.
fn set_states(session: &crate::session::Session, calls: &[ToolCall], state: impl Fn(&ToolCall) -> PendingCallState) {
    session.update_pending_turn(|t| {
        for call in calls {
            if let Some(pending) = t.call_mut(&call.id) {
                pending.state = state(call);
            }
        }
    });
}

/// An edited call's result as the model reads it: first what ran, then the tool's answer.
fn edited_result(arguments: &str, mut result: ToolResult) -> ToolResult {
    result.content = format!("[The user changed the arguments before this call ran; it ran with {arguments}]\n{}", result.content);
    result
}

/// The waiting calls of `turn`, as the outcome lists them.
fn pending_approvals(turn: &Option<PendingTurn>) -> Vec<PendingApproval> {
    turn.iter()
        .flat_map(PendingTurn::awaiting)
        .map(|c| PendingApproval { call_id: c.call_id.clone(), name: c.name.clone(), arguments: c.arguments.clone(), path: Vec::new() })
        .collect()
}

impl AgentRuntime {
    /// TOOL-1: the calls of the paused turn still waiting for an answer (empty when no
    /// turn waits). Read after a restart to show the same dialogs again.
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        let mut all = pending_approvals(&self.inner.session.snapshot().pending_turn);
        all.extend(self.inner.place.approvals.waiting());
        all
    }

    /// TOOL-1: answers one waiting call of the paused turn; committed to the store before
    /// this returns (TOOL-2: a kill after it loses nothing). Calls are answered
    /// independently; [`resume_run`](Self::resume_run) goes on once none waits. Nothing expires
    /// by itself. Errors (nothing changed): `approval_not_pending`,
    /// `approval_unknown_call`, `approval_already_answered`, `tool_arguments_invalid`
    /// (edited arguments that are not a JSON object with every property the tool's schema
    /// requires), `run_in_progress`, the store's codes. A sub-agent's call answered already,
    /// or whose sub-agent ended, gives `approval_already_answered` or `approval_not_pending`
    /// (never `run_in_progress`: it will not wait again).
    pub fn answer_approval(&self, call_id: &str, decision: ApprovalDecision) -> Result<(), ArkAgentError> {
        self.answer_approval_given(call_id, decision, false)
    }

    /// TOOL-1: [`answer_approval`](Self::answer_approval) for an answer the app gave at a
    /// moment when a run held the slot (`was_running`): unless it answers a sub-agent's
    /// call, it is refused with `run_in_progress` as of that moment, even when the run has
    /// ended since — for a binding that makes answers off the caller's thread (the N-API
    /// module), so an answer given from an `approval_requested` listener before `run()`
    /// returned is always refused.
    pub fn answer_approval_given(&self, call_id: &str, decision: ApprovalDecision, was_running: bool) -> Result<(), ArkAgentError> {
        let inner = &self.inner;
        // A sub-agent's call waits in flight while the root's run goes on.
        let decision = match decision {
            ApprovalDecision::Reject { mut reason } => {
                inner.session.redact_text(&mut reason);
                ApprovalDecision::Reject { reason }
            }
            other => other,
        };
        if let Some(answered) = inner.place.approvals.answer(call_id, decision.clone()) {
            return answered;
        }
        // Answers wait for each other (each commits), not for the run slot: two answered at
        // once both land. A run holding the slot (the pause being made, a resume) refuses.
        let _answering = inner.hold_answers();
        if was_running || self.is_running() {
            return Err(ArkAgentError::RunInProgress);
        }
        let snapshot = inner.session.snapshot();
        let Some(turn) = &snapshot.pending_turn else {
            return Err(ArkAgentError::approval(ErrorCode::ApprovalNotPending, "no turn waits for approval"));
        };
        let Some(call) = turn.calls.iter().find(|c| c.call_id == call_id) else {
            return Err(ArkAgentError::approval(ErrorCode::ApprovalUnknownCall, format!("the paused turn has no call {call_id:?}")));
        };
        if call.state != PendingCallState::AwaitingApproval {
            return Err(ArkAgentError::approval(
                ErrorCode::ApprovalAlreadyAnswered,
                format!("call {call_id:?} was answered already ({})", call.state.name()),
            ));
        }
        // LLM-4: what the person typed is stored and sent without the secret.
        let state = match decision {
            ApprovalDecision::Approve => PendingCallState::Approved { edited_arguments: None },
            ApprovalDecision::ApproveWithArguments { arguments } => {
                let mut arguments = self.checked_arguments(&call.name, &arguments)?;
                inner.session.redact_text(&mut arguments);
                PendingCallState::Approved { edited_arguments: Some(arguments) }
            }
            ApprovalDecision::Reject { mut reason } => {
                inner.session.redact_text(&mut reason);
                PendingCallState::Rejected { reason }
            }
        };
        let before = snapshot.pending_turn.clone();
        let run_id = turn.run_id.clone();
        inner.session.update_pending_turn(|t| {
            if let Some(c) = t.call_mut(call_id) {
                c.state = state;
            }
        });
        if let Err(e) = inner.commit_point(&run_id) {
            // Nothing lost, nothing half-done: the answer is taken back.
            inner.session.set_pending_turn(before);
            return Err(e);
        }
        Ok(())
    }

    /// TOOL-1: closes the paused turn without resuming it — the person stopped: every call
    /// that did not run (waiting, approved, or interrupted by a kill) is answered as it
    /// would be on a cancel (`cancelled`; `tool_rejected`, `tool_interrupted` as decided),
    /// the calls that ran keep their results, the turn joins the history paired and is
    /// committed; no model call. True when a turn was closed, false when none waited.
    /// The next run starts from there; answering afterwards gives `approval_not_pending`.
    /// Errors: `run_in_progress`, the store's codes (the turn is closed in memory and the
    /// next commit point writes it).
    pub fn cancel_approvals(&self) -> Result<bool, ArkAgentError> {
        let inner = &self.inner;
        let _answering = inner.hold_answers();
        let active = self.claim()?;
        let Some(turn) = active.inner.session.snapshot().pending_turn.clone() else { return Ok(false) };
        let results = turn.calls.iter().map(|call| final_result(&inner.session, call)).collect();
        inner.session.close_pending_turn(turn.assistant, results);
        inner.commit_point(&turn.run_id)?;
        Ok(true)
    }

    /// Edited arguments as they will run: a JSON object (re-serialized) with every
    /// property the tool's schema requires.
    fn checked_arguments(&self, tool: &str, arguments: &str) -> Result<String, ArkAgentError> {
        let required = self.inner.tools().get(tool).map(|t| required_properties(&t.definition.parameters)).unwrap_or_default();
        check_edited(arguments, &required).map(|v| v.to_string()).map_err(|m| ArkAgentError::approval(ErrorCode::ToolArgumentsInvalid, m))
    }

    /// TOOL-1: resumes the paused run once every waiting call is answered: runs the
    /// approved calls (each at most once), gives the model every result in the calls'
    /// order and goes on as [`run`](Self::run) does (it may pause again). Begins with
    /// `run_started` (empty input) and ends with `run_finished`, under the paused run's id.
    /// Errors: `approval_not_pending`, `approval_pending` (a call still waits),
    /// `run_in_progress`, then a run's.
    pub async fn resume_run(&self) -> Result<RunOutcome, ArkAgentError> {
        self.start_resume_run()?.await
    }

    /// [`resume_run`](Self::resume_run) claiming the run slot *now* (its errors at once), for
    /// bindings that spawn the future.
    pub fn start_resume_run(&self) -> Result<impl Future<Output = Result<RunOutcome, ArkAgentError>> + Send + 'static, ArkAgentError> {
        let slot = self.start_resume_run_holding_slot()?;
        Ok(async move { slot.await.0 })
    }

    /// [`start_resume_run`](Self::start_resume_run) whose future also hands over the run slot.
    pub fn start_resume_run_holding_slot(
        &self,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim()?;
        let turn = match &active.inner.session.snapshot().pending_turn {
            None => return Err(ArkAgentError::approval(ErrorCode::ApprovalNotPending, "no turn waits for approval")),
            Some(turn) if turn.awaiting().next().is_some() => {
                return Err(ArkAgentError::approval(ErrorCode::ApprovalPending, "calls still wait for an answer"));
            }
            Some(turn) => turn.clone(),
        };
        let span = tracing::info_span!("arkagent.run", run_id = %turn.run_id, resumed = true);
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            let run_id = turn.run_id.clone();
            let outcome = inner.resume_loop(turn, &run_id, &active.cancel).await;
            (outcome, RunSlot::new(active))
        }
        .instrument(span))
    }
}

impl Inner {
    /// A resumed run: its budgets (SUB-3: the paused run's delegation count goes on, when
    /// this runtime made it) and usage mark, `run_started`, the paused turn closed, then
    /// the loop.
    async fn resume_loop(&self, turn: PendingTurn, run_id: &str, cancel: &CancellationToken) -> Ended {
        if let Some(service) = &self.sub_agents {
            service.start_run(run_id);
        }
        self.run_usage.start(&self.session.snapshot());
        self.emit(run_id, EventKind::RunStarted { input: String::new() });
        if self.mcp.is_some() {
            self.mcp_point(run_id, cancel).await;
        }
        Run::new(self, run_id, cancel, None).resume_turn(turn).await
    }
}

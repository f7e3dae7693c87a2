//! `AgentRuntime`'s chat gestures (CHAT-1, CHAT-2): rewind, regenerate, edit and resend,
//! fork. A fourth `#[napi] impl` block of the class declared in `runtime`; each method
//! delegates to the core runtime, which claims the run slot before the Promise is returned
//! and writes the store off the JS thread.

use napi_derive_ohos::napi;
use arkagent::runtime::RunSlot;
use napi_ohos::bindgen_prelude::{Either, PromiseRaw};
use napi_ohos::Env;
use serde_json::Value;

use crate::args::Arg;
use crate::error::{internal, rejection, CodedError, Thrown};
use crate::records;
use crate::runtime::{settle_holding_slot, AgentRuntime};

impl AgentRuntime {
    /// Runs a rewind or a fork (claimed now) off the JS thread, holding the run slot until
    /// its Promise settles (as run() does: nothing slips in between); one spawned future
    /// type for both (PERF-9: each distinct one is code in the library).
    fn gesture<'env>(&self, env: &'env Env, fork: Option<(String, Option<String>)>, run_id: String) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let core = self.core();
        // Claimed (and checked) now; a refusal rejects the Promise, as run()'s do.
        let work = match &fork {
            None => core.start_rewind_holding_slot(&run_id).map(Either::A),
            Some((id, through)) => core.start_fork_holding_slot(id, through.as_deref()).map(Either::B),
        };
        env.spawn_future_with_callback(
            async move {
                Ok(match work {
                    Err(e) => (Err(e), None),
                    Ok(Either::A(rewind)) => {
                        let (result, slot) = rewind.await;
                        (result.map(|r| records::to_js(&r)), Some(slot))
                    }
                    Ok(Either::B(fork)) => {
                        let (result, slot) = fork.await;
                        (result.map(Value::String), Some(slot))
                    }
                })
            },
            // The slot is let go here, on the JS thread, once the Promise has its result.
            move |env: &'env Env, (result, _slot): (Result<Value, arkagent::ArkAgentError>, Option<RunSlot>)| {
                result.map_err(|e| rejection(env, CodedError::from(e)))
            },
        )
        .map_err(internal)
    }
}

#[napi]
impl AgentRuntime {
    /// CHAT-1: goes back to just before run `runId` began (the `runId` of its RunResult or
    /// of its events): that run and every later one are dropped — their messages, a turn of
    /// theirs waiting for approval — as one change, written to the SessionStore first (off
    /// the JS thread, one transaction: an app killed meanwhile reopens the old session or
    /// the rewound one, never half of it). What the dropped turns spent stays counted
    /// (totalUsage().discarded: the provider billed it). The next request starts with the
    /// bytes the provider already saw up to that point, so its prompt cache still serves
    /// them. Emits "session_rewound" (then "session_committed" with a store). Resolves with
    /// what was dropped (`inputText`: the dropped input, for an edit box). Rejects (nothing
    /// changes) with "unknown_run" (no such run, or an earlier rewind dropped it),
    /// "run_compressed" (a compression archived its input into an episode: refused, never a
    /// guess), "invalid_state" (an imported history marks the run inside a tool cycle),
    /// "run_in_progress" or the store's code. Like run(), it takes the run slot
    /// before the Promise is returned and holds it until the Promise settles.
    #[napi(ts_return_type = "Promise<RewindResult>")]
    pub fn rewind<'env>(&self, env: &'env Env, run_id: Arg<String>) -> Result<PromiseRaw<'env, Value>, Thrown> {
        self.gesture(env, None, run_id.0)
    }

    /// CHAT-1: "regenerate this answer": rewind(runId), then a new run (a new run id) of the
    /// same input, as one call; its first request is the bytes the dropped run sent, so the
    /// provider's prompt cache serves them. Rejects like rewind() (then no run starts), then
    /// with a run's codes; when the run failed before the model answered (the provider
    /// down), the session is put back as it was before the call, in the store too
    /// ("session_committed"): nothing is lost and the same call can be made again.
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn regenerate<'env>(&self, env: &'env Env, run_id: Arg<String>) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let started = self.core().start_regenerate_holding_slot(&run_id.0);
        settle_holding_slot(env, started, |outcome: Result<arkagent::RunOutcome, _>| outcome.map(|o| records::to_js(&o)))
    }

    /// CHAT-1: "edit my message and send it again": rewind(runId), then a new run of `input`
    /// in its place, as one call. Rejects like rewind() (then no run starts), then with a
    /// run's codes; when the run failed before the model answered, the session is put
    /// back as it was before the call, like regenerate().
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn edit_and_resend<'env>(&self, env: &'env Env, run_id: Arg<String>, input: Arg<String>) -> Result<PromiseRaw<'env, Value>, Thrown> {
        let started = self.core().start_edit_and_resend_holding_slot(&run_id.0, input.0);
        settle_holding_slot(env, started, |outcome: Result<arkagent::RunOutcome, _>| outcome.map(|o| records::to_js(&o)))
    }

    /// CHAT-2: a new session `newSessionId` starting from this one through run
    /// `throughRunId` (its answer included; absent: the whole session, a turn waiting for
    /// approval included): the messages, the episodes (copied), the run ids (so it can be
    /// rewound too) and the token calibration; its usages start empty (what was spent
    /// stays this session's, so both totals add up to what was billed). With a SessionStore
    /// the fork is written into it as a new session (off the JS thread, one transaction); a
    /// new AgentRuntime with `sessionId` = `newSessionId` and the store resumes it. Resolves
    /// with the fork's state JSON (what importState() takes; without a store, the only copy).
    /// This session does not change; working memory is a runtime's and is not copied.
    /// Rejects (nothing written) with "unknown_run", "run_compressed" (the point is inside
    /// what a compression archived), "session_exists" (the store has that session, or it is
    /// this session's own id), "session_locked" (another runtime has that session open),
    /// "invalid_config" (an empty id), "run_in_progress" or the
    /// store's code. Like run(), it takes the run slot before the Promise is returned and
    /// holds it until the Promise settles.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn fork<'env>(&self, env: &'env Env, new_session_id: Arg<String>, through_run_id: Arg<Option<String>>) -> Result<PromiseRaw<'env, Value>, Thrown> {
        self.gesture(env, Some((new_session_id.0, through_run_id.0)), String::new())
    }
}

//! CMP-1 for C: a context compressor written by the host. The library hands it the state
//! and a context as JSON; the host answers a `ForeignCompression` JSON through a
//! completion handle. The core checks the answer and commits it transactionally
//! ([`arkagent::compress::ForeignCompressor`]); this file only moves strings.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::boundary::boundary;
use crate::callbacks::UserData;
use crate::codes::{ArkAgentResult, FfiError, FfiResult, poisoned};
use crate::handles::{self, Kind};
use crate::strings::{opt_str_arg, str_arg};
use crate::workers::{with_builder, ArkAgentWorkerBuilder};
use arkagent::compress::{ForeignCompressor, ForeignCompressorCall};
use arkagent::runtime::Compression;

/// Opaque: one compression attempt the host must finish with exactly one of
/// [`arkagent_compress_complete`] or [`arkagent_compress_fail`]; later calls give
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`. Finishing it after the run was cancelled or the
/// runtime freed is allowed and ignored (`ARK_AGENT_RESULT_OK`).
pub struct ArkAgentCompressCompletion {
    _private: [u8; 0],
}

/// A context compressor written in C (CMP-1), given to
/// `arkagent_runtime_new_with_compressor`. Called on the thread running
/// `arkagent_runtime_run`, `arkagent_runtime_compress_now` or
/// `arkagent_runtime_run_decomposed` — before a model call (pre-flight) and after a turn
/// only when the prompt size reaches the runtime's `threshold` (see
/// `arkagent_runtime_new_with_compressor`), on a context overflow, and for
/// `compress_now`; a delegated `clone` child inherits the compressor and calls it with
/// its own state, a named worker has one only when its factory gives it one
/// ([`arkagent_worker_set_compressor`]). Answer `{"outcome":"skipped"}` when there is
/// nothing to do. Do not call blocking arkagent functions from it
/// (`ARK_AGENT_RESULT_REENTRANT`).
///
/// - `userdata`: the `compress_userdata` given with the callback; used from library
///   threads until the runtime is freed and no run is active.
/// - `state_json`: the state exactly as `arkagent_runtime_export_state` writes it
///   (`{"version","session_id","history":{"messages":[…],"episodic_memories":[…]},
///   "usages":[…],"child_usages"?,"token_calibration"?}`), byte for byte, except that
///   each episode comes without its `"archived_messages"` (id, summary, created_at_ms,
///   message_count: what a new summary folds in); borrowed, valid only during the call.
/// - `context_json`: `{"estimated_prompt_tokens": n | null, "force": bool}` (`force` is
///   true after the model refused the context as too long); borrowed, valid only during
///   the call.
/// - `completion`: finish it exactly once, inside the callback or later from any thread,
///   with [`arkagent_compress_complete`] or [`arkagent_compress_fail`]. Owned by the
///   library; never freed by the host.
pub type ArkAgentCompressCallback = Option<
    unsafe extern "C" fn(userdata: *mut c_void, state_json: *const c_char, context_json: *const c_char, completion: *mut ArkAgentCompressCompletion),
>;

type Reply = oneshot::Sender<Result<String, String>>;

pub(crate) struct CompressCompletionState {
    reply: Mutex<Option<Reply>>,
}

impl CompressCompletionState {
    fn new(reply: Reply) -> Self {
        Self { reply: Mutex::new(Some(reply)) }
    }
}

/// The host compressor as the core sees it.
pub(crate) struct HostCompressor {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut ArkAgentCompressCompletion),
    pub userdata: UserData,
}

#[async_trait]
impl ForeignCompressorCall for HostCompressor {
    async fn compress_json(&self, state_json: String, context_json: String, _cancel: CancellationToken) -> Result<String, String> {
        let (tx, rx) = oneshot::channel();
        let state = CString::new(state_json).map_err(|_| "the state contains NUL".to_owned())?;
        let context = CString::new(context_json).map_err(|_| "the context contains NUL".to_owned())?;
        let completion =
            handles::insert::<ArkAgentCompressCompletion, _>(Kind::CompressCompletion, Arc::new(CompressCompletionState::new(tx)));
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, state.as_ptr(), context.as_ptr(), completion) };
        drop((state, context));
        // Cancellation is the core's: it stops waiting and the late answer is ignored.
        rx.await.unwrap_or_else(|_| Err("the host dropped the compress completion".to_owned()))
    }
}

/// Hands `answer` to the waiting attempt; exactly one caller per completion gets `Ok`.
fn finish(completion: *mut ArkAgentCompressCompletion, answer: Result<String, String>) -> FfiResult<()> {
    let state: Arc<CompressCompletionState> = handles::get(Kind::CompressCompletion, completion)?;
    let mut slot = state.reply.lock().map_err(|_| poisoned())?;
    let reply = slot
        .take()
        .ok_or_else(|| FfiError::new(ArkAgentResult::AlreadyCompleted, "this compression was already answered"))?;
    // Under the lock, so a racing loser sees either the empty slot or no handle.
    let _ = handles::remove::<_, CompressCompletionState>(Kind::CompressCompletion, completion);
    drop(slot);
    // A closed receiver means the attempt stopped waiting (cancelled): ignore.
    let _ = reply.send(answer);
    Ok(())
}

/// The seed's `DEFAULT_SUMMARY_PROMPT`: the summary instructions the default compressor
/// uses when the config's `"compression"` object gives no `"summary_prompt"` (a C
/// compressor may start from it). Static storage, NUL-terminated: never free it.
#[no_mangle]
pub extern "C" fn arkagent_default_summary_prompt() -> *const c_char {
    static PROMPT: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    // The prompt holds no NUL (a unit test checks); an empty string would stand in.
    PROMPT.get_or_init(|| CString::new(arkagent::compress::DEFAULT_SUMMARY_PROMPT).unwrap_or_default()).as_ptr()
}

/// Answers a compression attempt. `answer_json` (copied before the call returns) is a
/// `ForeignCompression`: `{"outcome":"skipped"|"failed"|"compressed","reason"?:"<CMP-2
/// code>","split_index"?:n,"summary"?:"…","episode_id"?:"…","usage"?:{"prompt_tokens",
/// "completion_tokens","total_tokens"},"error_code"?:"…"}`. `compressed` needs
/// `split_index` (the messages before it move into a new episode) and a non-blank
/// `summary`. The library checks the answer and commits all of it or nothing: an answer
/// that does not parse or has the wrong shape fails the attempt with reason
/// `compressor_error`, a `split_index` out of range (0, past the last message, or equal
/// to the number of messages while the history ends with one the model has yet to answer:
/// the user's input or a tool result, as before a model call) with
/// `invalid_split_index`, one that cuts a tool call from its result with
/// `post_commit_pairing_violation`, a blank `episode_id` with `invalid_episode_id`; then
/// the state is unchanged. Consumes `completion`. Any
/// thread. A completion already finished (by this function or
/// [`arkagent_compress_fail`]) gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`; of two racing
/// calls exactly one returns `ARK_AGENT_RESULT_OK`.
///
/// # Safety
/// `answer_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_compress_complete(completion: *mut ArkAgentCompressCompletion, answer_json: *const c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let answer = unsafe { str_arg(answer_json, "answer_json") }?;
        finish(completion, Ok(answer.to_owned()))
    })
}

/// Fails a compression attempt (reason `compressor_error`; the state is unchanged and
/// automatic attempts back off for a few model calls). `message` may be NULL; it is only
/// logged. Consumes `completion`. Any thread; races as [`arkagent_compress_complete`].
///
/// # Safety
/// `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_compress_fail(completion: *mut ArkAgentCompressCompletion, message: *const c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("the host compressor failed").to_owned();
        finish(completion, Err(message))
    })
}

/// SUB-1, CMP-1: gives the worker being built its own C compressor (a named worker has a
/// custom compressor only when its factory calls this; a `clone` child inherits the
/// parent's). `compress`, `compress_userdata` and `threshold` as for
/// `arkagent_runtime_new_with_compressor` (0: called on every automatic attempt;
/// `ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD` for the default); the callback gets the
/// worker's own state. `compress_userdata` must stay valid until the runtime is freed. Only during the factory call
/// (`ARK_AGENT_RESULT_INVALID_HANDLE` after it).
///
/// # Safety
/// `builder` the factory's builder; `compress` NULL or a valid callback.
#[no_mangle]
pub unsafe extern "C" fn arkagent_worker_set_compressor(
    builder: *mut ArkAgentWorkerBuilder,
    compress: ArkAgentCompressCallback,
    compress_userdata: *mut c_void,
    threshold: u64,
) -> ArkAgentResult {
    boundary(|| {
        let callback = compress.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "compress is NULL"))?;
        with_builder(builder, |config| {
            let call = HostCompressor { callback, userdata: UserData(compress_userdata) };
            config.compression = Some(Compression::Custom(Arc::new(ForeignCompressor::new(call, Some(threshold)))));
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Barrier;

    use super::*;

    fn open() -> (*mut ArkAgentCompressCompletion, oneshot::Receiver<Result<String, String>>) {
        let (tx, rx) = oneshot::channel();
        (handles::insert(Kind::CompressCompletion, Arc::new(CompressCompletionState::new(tx))), rx)
    }

    /// Issue 40 item 13: C has the seed's DEFAULT_SUMMARY_PROMPT, the core's exactly.
    #[test]
    fn par_1_c_default_summary_prompt_is_the_cores() {
        let prompt = unsafe { std::ffi::CStr::from_ptr(arkagent_default_summary_prompt()) };
        assert_eq!(prompt.to_str().unwrap(), arkagent::compress::DEFAULT_SUMMARY_PROMPT);
        assert!(!arkagent::compress::DEFAULT_SUMMARY_PROMPT.is_empty());
        assert_eq!(arkagent_default_summary_prompt(), arkagent_default_summary_prompt(), "static storage");
    }

    #[test]
    fn cmp_1_racing_compress_completions_have_exactly_one_winner_whose_answer_arrives() {
        const THREADS: usize = 8;
        for _ in 0..200 {
            let (handle, mut rx) = open();
            let handle = handle as usize;
            let start = Arc::new(Barrier::new(THREADS));
            let threads: Vec<_> = (0..THREADS)
                .map(|i| {
                    let start = Arc::clone(&start);
                    std::thread::spawn(move || {
                        start.wait();
                        let c = handle as *mut ArkAgentCompressCompletion;
                        // SAFETY: static strings; the handle is a number.
                        let r = unsafe {
                            if i % 2 == 0 {
                                arkagent_compress_complete(c, c"{\"outcome\":\"skipped\"}".as_ptr())
                            } else {
                                arkagent_compress_fail(c, c"boom".as_ptr())
                            }
                        };
                        (i % 2 == 0, r)
                    })
                })
                .collect();
            let results: Vec<(bool, ArkAgentResult)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            let winners: Vec<_> = results.iter().filter(|(_, r)| *r == ArkAgentResult::Ok).collect();
            assert_eq!(winners.len(), 1, "{results:?}");
            assert!(results.iter().all(|(_, r)| matches!(r, ArkAgentResult::Ok | ArkAgentResult::AlreadyCompleted)));
            let answer = rx.try_recv().unwrap();
            assert_eq!(answer.is_ok(), winners[0].0, "the winner's answer arrived");
            let c = handle as *mut ArkAgentCompressCompletion;
            // SAFETY: as above.
            unsafe {
                assert_eq!(arkagent_compress_fail(c, std::ptr::null()), ArkAgentResult::AlreadyCompleted);
                assert_eq!(arkagent_compress_complete(c, c"{}".as_ptr()), ArkAgentResult::AlreadyCompleted);
            }
        }
    }

    #[test]
    fn cmp_1_refused_arguments_leave_the_attempt_open() {
        let (handle, mut rx) = open();
        let bad_utf8 = [b'{', 0xff, b'}', 0];
        // SAFETY: NUL-terminated byte strings; the handles are numbers.
        unsafe {
            assert_eq!(arkagent_compress_complete(handle, std::ptr::null()), ArkAgentResult::NullArgument);
            assert_eq!(arkagent_compress_complete(handle, bad_utf8.as_ptr().cast()), ArkAgentResult::InvalidUtf8);
            assert_eq!(arkagent_compress_fail(handle, bad_utf8.as_ptr().cast()), ArkAgentResult::InvalidUtf8);
            assert_eq!(arkagent_compress_complete(std::ptr::null_mut(), c"{}".as_ptr()), ArkAgentResult::NullArgument);
            assert_eq!(arkagent_compress_complete(0xdead_beef0 as *mut _, c"{}".as_ptr()), ArkAgentResult::InvalidHandle);
            assert!(rx.try_recv().is_err(), "nothing was answered yet");
            assert_eq!(arkagent_compress_fail(handle, std::ptr::null()), ArkAgentResult::Ok);
        }
        assert!(matches!(rx.try_recv(), Ok(Err(_))));
    }
}

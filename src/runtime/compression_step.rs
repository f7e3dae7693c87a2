//! One compression attempt (CMP-1..CMP-12): the trigger's backoff, the compressor's
//! staging, the session's transactional commit, the event.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::agent::Inner;
use super::outcome::CompressionTrigger;
use super::events::EventKind;
use crate::compress::{CompressContext, CompressOutcome, CompressReason, CompressResult, ConversationPrefix};

/// How long a cancelled run waits for a compressor that has not returned yet.
const COMPRESSOR_CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl Inner {
    /// CMP-6: stage, then commit only a `compressed` result. The compressor reads a
    /// shared snapshot (no copy); on `skipped` or `failed` nothing was touched, so history
    /// and usages serialize byte-identical to before. The compression's usage is recorded
    /// only after the commit (CMP-5, CMP-7).
    pub(super) async fn maybe_compress_context(
        &self,
        run_id: &str,
        cancel: &CancellationToken,
        trigger: CompressionTrigger,
        estimate: Option<u64>,
    ) -> CompressResult {
        let Some(compressor) = &self.compressor else {
            return CompressResult::skipped(CompressReason::NoUsage);
        };
        let snapshot = self.session.snapshot();
        let automatic = matches!(trigger, CompressionTrigger::Preflight | CompressionTrigger::PostTurn);
        let calls = snapshot.usages.len();
        if automatic && self.session.compression_backing_off(calls) {
            let result = CompressResult::skipped(CompressReason::BackingOffAfterFailure);
            let messages = snapshot.history.messages.len();
            self.emit_compression(run_id, trigger, &result, messages, messages, estimate, compressor.threshold());
            return result;
        }
        let ctx = CompressContext {
            id_generator: Arc::clone(&self.config.id_generator),
            clock: Arc::clone(&self.config.clock),
            cancel: cancel.clone(),
            estimated_prompt_tokens: estimate,
            force: trigger == CompressionTrigger::Overflow,
            after_compression: self.session.just_compressed(calls),
            // COST-3: a summarizer on this conversation's model reuses its request bytes.
            conversation: Some(Arc::clone(&self.session) as Arc<dyn ConversationPrefix>),
            before_summarizer_call: Some(self.summarizer_request_hook(run_id)),
        };
        let span = tracing::info_span!("arkagent.compress", ?trigger, messages = snapshot.history.messages.len());
        let attempt = AssertUnwindSafe(compressor.compress(&snapshot, &ctx)).catch_unwind().instrument(span);
        // A compressor that does not heed the cancel cannot hold the run (nor a parent that
        // winds its child down, SUB-7): past a grace after the cancel it is dropped, as
        // `failed` `cancelled` (nothing is committed before `apply_compression`). Ours
        // heed it and end within the grace, their usage accounted.
        let given_up = async {
            cancel.cancelled().await;
            tokio::time::sleep(COMPRESSOR_CANCEL_GRACE).await;
        };
        let attempt = tokio::select! {
            attempt = attempt => attempt,
            () = given_up => Ok(CompressResult::failed(CompressReason::Cancelled, None)),
        };
        let mut result = attempt.unwrap_or_else(|_| {
            tracing::error!("context compressor panicked; state unchanged");
            CompressResult::failed(CompressReason::CompressorPanicked, None)
        });
        let messages_before = snapshot.history.messages.len();
        if let Some(staged) = result.staged.take().filter(|_| result.outcome == CompressOutcome::Compressed) {
            // The session commits it only if the state is still the snapshot the compressor
            // read (else `state_changed`), with the summary redacted (LLM-4);
            // apply_compression checks everything before it changes anything. A commit
            // forgets the provider count and the backoff.
            if let Err(reason) = self.session.apply_compression(snapshot, staged, result.usage.as_ref()) {
                result = CompressResult::failed_archiving(reason, result.usage.take(), result.messages_archived);
            }
        } else if result.outcome == CompressOutcome::Compressed {
            result = CompressResult::failed_archiving(CompressReason::InvalidSplitIndex, result.usage.take(), result.messages_archived);
        }
        if result.outcome == CompressOutcome::Compressed {
            // STORE-2: the episode, its originals, the shortened history and the summary's
            // usage in one store transaction. A failed commit is retried at the next
            // commit point (the in-memory compression stands).
            if let Err(e) = self.commit_point(run_id) {
                tracing::warn!(code = e.code().as_str(), "could not commit a compression; retried at the next commit point");
            }
        }
        if result.outcome == CompressOutcome::Failed && automatic {
            self.session.compression_failed(calls);
        }
        let messages_after = self.session.message_count();
        tracing::debug!(outcome = ?result.outcome, reason = result.reason.code(), messages_before, messages_after, "compression attempt");
        let quiet = result.outcome == CompressOutcome::Skipped
            && matches!(result.reason, CompressReason::BelowThreshold | CompressReason::NoUsage | CompressReason::HistoryTooShort);
        if !quiet {
            self.emit_compression(run_id, trigger, &result, messages_before, messages_after, estimate, compressor.threshold());
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_compression(
        &self,
        run_id: &str,
        trigger: CompressionTrigger,
        result: &CompressResult,
        messages_before: usize,
        messages_after: usize,
        estimate: Option<u64>,
        threshold: Option<u64>,
    ) {
        self.emit(run_id, EventKind::Compression {
            trigger,
            outcome: result.outcome,
            reason: result.reason,
            episode_id: result.episode_id.clone(),
            error_code: result.error_code.clone(),
            messages_before,
            messages_after,
            estimated_prompt_tokens: estimate,
            threshold,
            usage: result.usage.clone(),
        });
    }

}

impl Inner {
    /// ISO-5: what the compressor calls before each summarizer call — a
    /// `summarizer_request` event, which a sub-agent's meter counts before the call is made.
    fn summarizer_request_hook(&self, run_id: &str) -> Arc<dyn Fn(u64) + Send + Sync> {
        let (emitter, run_id) = (self.emitter.clone(), run_id.to_owned());
        Arc::new(move |estimated_prompt_tokens| {
            if emitter.is_observed() {
                emitter.emit(&run_id, EventKind::SummarizerRequest { estimated_prompt_tokens });
            } else {
                emitter.skip();
            }
        })
    }
}

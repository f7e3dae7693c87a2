/*
 * Type declarations of the native module libarkagent.so (N-API, built with napi-ohos
 * from bindings/napi). Held to ArkTS rules: no any/unknown, no object-literal types,
 * no index signatures. Every async method returns a Promise; every error thrown or
 * rejected by the module is an Error whose `code` property is a stable string code
 * (e.g. "invalid_json", "run_in_progress", "llm_auth").
 *
 * Refused inputs. A missing argument, a value of the wrong type, an object that is not an
 * instance of the declared class, and a number that is negative, fractional, NaN,
 * ±Infinity, 2 ** 53 or more, or too large for its field (maxTokens, maxAttempts,
 * maxIterations, maxParallelTools, maxDepth, maxDelegationsPerRun, maxConcurrentChildren,
 * maxImagesPerRequest, toolTimeoutMs, a thinking budgetTokens and subscription ids stop
 * at 4294967295) is never converted; it throws, before
 * anything changes:
 *   "invalid_config"   when assigned to a property, or passed to the constructor of a
 *                      settings class (ModelConfig, AgentRuntimeConfig, ContextCompressor,
 *                      SubAgentPolicy; WorkerConfig properties);
 *   "invalid_argument" when passed to a method, a static method or another constructor
 *                      (ToolDefinition, AgentRuntime). Methods that return a Promise throw
 *                      these synchronously.
 * `temperature` takes any finite number a 32-bit float holds (up to about 3.4e38; it
 * reads back as set, e.g. 0.7). Other codes of the module itself:
 *   "private_constructor" `new` on a class declared with a private constructor: its
 *                      instances are created by the module.
 *   "invalid_call"     a public constructor called without `new` (or on an existing
 *                      instance, `Class.call(instance)`); subclassing with super(…) works.
 *   "internal"         the JS engine refused an operation the module needed (not caused by
 *                      the arguments).
 * The other codes come from the library core and are listed where they can occur. An
 * exception thrown by the caller's own code while an argument is read (a throwing getter
 * of a DecomposedTask) propagates unchanged.
 *
 * Keep in sync with bindings/napi/src: tests/js/dts_sync.test.js fails when a class,
 * method or property exists on one side only.
 *
 * Generated: this file is assembled by scripts/gen-dts.sh from the `ts` comment blocks
 * beside the Rust code of each bindings/napi/src module, the closed sets and the records
 * (from the Rust types); edit those and run scripts/regen.sh.
 * tests/js/dts_generated.test.js fails when this file differs from them.
 */

/*
 * Closed sets. Every string the module hands over from a fixed set — error codes, event
 * types, compression outcomes and reasons, run statuses — has a union type below,
 * generated from the Rust enum that defines it; the declarations use these types, the
 * values at run time are the same strings. tests/js/dts_closed_sets.test.js fails when a
 * union and its enum differ.
 */

/**
 * A stable error code: the `code` of every Error the module throws or rejects with.
 * Generated from the Rust enums `arkagent::ErrorCode` (src/error/code.rs: the library's
 * codes) and `ModuleCode` (bindings/napi/src/codes.rs: the module's own):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type ErrorCode =
  | 'invalid_config'
  | 'tool_name_invalid'
  | 'tool_name_duplicate'
  | 'tool_parameters_invalid'
  | 'subagent_name_empty'
  | 'subagent_name_reserved'
  | 'subagent_name_duplicate'
  | 'delegation_not_configured'
  | 'subagent_factory_failed'
  | 'invalid_json'
  | 'invalid_state'
  | 'run_in_progress'
  | 'llm_auth'
  | 'llm_rate_limited'
  | 'llm_server'
  | 'llm_timeout'
  | 'llm_context_overflow'
  | 'llm_bad_request'
  | 'llm_malformed_response'
  | 'cancelled'
  | 'llm_transport'
  | 'session_locked'
  | 'store_corrupt'
  | 'store_foreign'
  | 'store_newer_schema'
  | 'store_full'
  | 'store_read_only'
  | 'store_io'
  | 'image_unsupported_type'
  | 'image_invalid'
  | 'image_too_large'
  | 'too_many_images'
  | 'image_not_found'
  | 'image_dimensions_unsupported'
  | 'image_animated'
  | 'image_codec_failed'
  | 'thinking_unsupported'
  | 'thinking_conflict'
  | 'extra_body_conflict'
  | 'approval_pending'
  | 'approval_not_pending'
  | 'approval_unknown_call'
  | 'approval_already_answered'
  | 'tool_arguments_invalid'
  | 'unknown_run'
  | 'run_compressed'
  | 'session_exists'
  | 'invalid_argument'
  | 'private_constructor'
  | 'invalid_call'
  | 'internal'
  | 'subagent_unknown_role';

/**
 * The `type` of an AgentEvent, and of its payloadJson: one per kind of event, each with
 * its payload interface (RunStartedPayload, …; see AgentEvent). Generated from the Rust
 * enum `arkagent::EventKind` (src/runtime/events.rs; the serde tag of each variant):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type EventType =
  | 'run_started'
  | 'model_request'
  | 'model_response'
  | 'text_delta'
  | 'reasoning_delta'
  | 'tool_call_delta'
  | 'tool_call_started'
  | 'tool_call_finished'
  | 'approval_requested'
  | 'summarizer_request'
  | 'compression'
  | 'sub_agent'
  | 'session_committed'
  | 'session_rewound'
  | 'mcp_server'
  | 'run_finished';

/**
 * What a compression attempt did: CompressResult.outcome, CompressOutcome.outcome and the
 * "compression" event's outcome. Generated from the Rust enum
 * `arkagent::compress::CompressOutcome` (src/compress/compressor.rs): scripts/gen-dts.sh
 * writes one string per variant.
 */
export type CompressOutcomeKind =
  | 'skipped'
  | 'compressed'
  | 'failed';

/**
 * Why a compression attempt ended as it did (CMP-2): CompressResult.reason and the
 * "compression" event's reason. Generated from the Rust enum
 * `arkagent::compress::CompressReason` (src/compress/compressor.rs; `code()`):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type CompressReason =
  | 'no_usage'
  | 'history_too_short'
  | 'below_threshold'
  | 'last_usage_is_compression'
  | 'no_safe_split'
  | 'compressed'
  | 'llm_error'
  | 'empty_summary'
  | 'malformed_summary'
  | 'post_commit_pairing_violation'
  | 'cancelled'
  | 'summary_not_smaller'
  | 'compressor_panicked'
  | 'summarizer_window_too_small'
  | 'backing_off_after_failure'
  | 'state_changed'
  | 'invalid_episode_id'
  | 'invalid_split_index'
  | 'compressor_error';

/**
 * What started a compression attempt: the "compression" event's trigger. Generated from
 * the Rust enum `arkagent::CompressionTrigger` (src/runtime/outcome.rs):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type CompressionTrigger =
  | 'preflight'
  | 'post_turn'
  | 'overflow'
  | 'manual';

/**
 * Which figure decided a prompt's size (CMP-12): the "model_request" event's
 * prompt_size_source. Generated from the Rust enum `arkagent::compress::PromptSizeSource`
 * (src/compress/calibration.rs): scripts/gen-dts.sh writes one string per variant.
 */
export type PromptSizeSource =
  | 'estimate'
  | 'calibrated'
  | 'provider';

/**
 * How a run ended: RunResult.status ("completed", "cancelled", "max_iterations") and the
 * "run_finished" event's status (also "failed"). Generated from the Rust enum
 * `arkagent::RunStatus` (src/runtime/outcome.rs): scripts/gen-dts.sh writes one string per
 * variant.
 */
export type RunStatus =
  | 'completed'
  | 'cancelled'
  | 'max_iterations'
  | 'failed'
  | 'awaiting_approval';

/**
 * A model family's rule for an image's tokens (IMG-3): ModelConfig.imageTokens. Generated
 * from the Rust enum `arkagent::history::ImageTokenRule` (src/history/image_rule.rs;
 * `as_str`): scripts/gen-dts.sh writes one string per variant.
 */
export type ImageTokenRule =
  | 'openai_tiles'
  | 'openai_gpt5_tiles'
  | 'openai_4o_mini_tiles'
  | 'openai_o_tiles'
  | 'openai_mini_patches'
  | 'openai_nano_patches'
  | 'openai_o4_mini_patches'
  | 'anthropic'
  | 'anthropic_high_res'
  | 'qwen_vl'
  | 'qwen_vl_high_res'
  | 'qwen3_vl'
  | 'qwen3_vl_high_res'
  | 'gemini'
  | 'gemini_3';

/**
 * An image's type (IMG-1): ContentPart.image()'s mimeType, ImageInfo.mimeType. Generated
 * from the Rust enum `arkagent::history::ImageMime` (src/history/image.rs; `as_str`):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type ImageMimeType =
  | 'image/jpeg'
  | 'image/png'
  | 'image/webp'
  | 'image/gif'
  | 'image/heic'
  | 'image/heif';

/**
 * How closely the model looks at an image (OpenAI's detail; other formats ignore it).
 * Generated from the Rust enum `arkagent::history::ImageDetail` (src/history/image.rs):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type ImageDetail =
  | 'low'
  | 'high'
  | 'auto';

/**
 * Where a sub-agent's record stands (ISO-4): SubAgentContext.status. Generated from the
 * Rust enum `arkagent::subagent::SubAgentStatus` (src/subagent/context.rs):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type SubAgentStatus =
  | 'active'
  | 'completed'
  | 'failed';

/**
 * How a delegated child ended, in short (SUB-8): DecomposedResult.status and the
 * delegate_task result metadata's status. Generated from the Rust
 * `arkagent::subagent::ChildEnding::STATUSES` (src/subagent/ending.rs; `status()`):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type ChildStatus =
  | 'completed'
  | 'forced'
  | 'failed';

/**
 * How a delegated child ended (SUB-8, ISO-5): the library's forcedReason values (a host
 * may force-complete with a reason of its own), the delegate_task metadata's reason, and
 * the code of a forced child's tool error. Generated from the Rust enum
 * `arkagent::subagent::ChildEnding` (src/subagent/ending.rs; `as_str`): scripts/gen-dts.sh
 * writes one string per variant.
 */
export type ChildEnding =
  | 'completed'
  | 'failed'
  | 'token-budget-exceeded'
  | 'max-iterations'
  | 'force-completed'
  | 'cancelled'
  | 'session-closed'
  | 'stale';

/**
 * A provider protocol (WIRE-1): ModelConfig.wireFormat — one name per protocol the library
 * registers. Generated from the Rust `arkagent::llm::wire_format_names()` (the protocols'
 * names in `REGISTRY`, src/llm/format/mod.rs): scripts/gen-dts.sh writes one string per
 * variant.
 */
export type WireFormat =
  | 'openai'
  | 'anthropic';

/**
 * Where a usage came from when it is not a plain model call (BND-1): ModelUsage.source.
 * Generated from the Rust enum `arkagent::history::UsageSource` (src/history/usage.rs;
 * `as_str`): scripts/gen-dts.sh writes one string per variant.
 */
export type UsageSource =
  | 'context_compression'
  | 'unreported';

/**
 * A model's provider (THINK-4): ModelConfig.provider — how thinking is switched and what a
 * thinking model refuses (README, "Thinking models"). Generated from the Rust enum
 * `arkagent::llm::Provider` (src/llm/thinking.rs; `as_str`): scripts/gen-dts.sh writes one
 * string per variant.
 */
export type Provider =
  | 'deepseek'
  | 'kimi'
  | 'glm'
  | 'qwen'
  | 'doubao'
  | 'anthropic'
  | 'openai'
  | 'other';

/**
 * An effort level of a thinking model (THINK-4): ThinkingLevel.effort. Generated from the
 * Rust enum `arkagent::llm::Effort` (src/llm/thinking.rs; `as_str`): scripts/gen-dts.sh
 * writes one string per variant.
 */
export type ThinkingEffort =
  | 'minimal'
  | 'low'
  | 'medium'
  | 'high'
  | 'xhigh'
  | 'max';

/**
 * Which earlier reasoning goes back in later requests (THINK-2):
 * ModelConfig.reasoningReplay. Generated from the Rust enum
 * `arkagent::llm::ReasoningReplay` (src/llm/thinking.rs; `as_str`): scripts/gen-dts.sh
 * writes one string per variant.
 */
export type ReasoningReplay =
  | 'auto'
  | 'tool_calls'
  | 'all'
  | 'none';

/**
 * What happened to an MCP server at a run's start (MCP-3): the "mcp_server" event's state.
 * Generated from the Rust enum `arkagent::mcp::McpServerState` (src/mcp/hub.rs):
 * scripts/gen-dts.sh writes one string per variant.
 */
export type McpServerState =
  | 'connected'
  | 'tools_changed'
  | 'failed';

/**
 * Why an MCP server failed (MCP-3): the "mcp_server" event's errorCode, and the code of a
 * tool error the model reads from one of its tools. Generated from the Rust enum
 * `arkagent::mcp::McpErrorCode` (src/mcp/mod.rs; `as_str`): scripts/gen-dts.sh writes one
 * string per variant.
 */
export type McpErrorCode =
  | 'mcp_unreachable'
  | 'mcp_timeout'
  | 'mcp_auth'
  | 'mcp_http'
  | 'mcp_protocol'
  | 'mcp_version'
  | 'mcp_too_large'
  | 'mcp_rpc_error'
  | 'mcp_tool_error';

/*
 * Records. Everything the module hands over as data — event payloads, usages, costs,
 * usage sums, run and compression results, sub-agent records, session summaries — is one
 * of the interfaces below, generated from the Rust type that defines it: its JSON, keys
 * in camelCase (values left open, `Object`, pass as the host or the runtime wrote them).
 * The same record has the same shape wherever it appears, an event's payloadJson
 * included. A property declared `name?:` may be absent; one declared `T | null` is
 * present, null when it does not apply. Numbers are exact below 2^53.
 */

/** What happened. */
export interface EventPayload {
  type: EventType;
}

/** A run began with this user input (`run_decomposed` is a run too: its first event). */
export interface RunStartedPayload extends EventPayload {
  type: 'run_started';
  /** The user input; for `run_decomposed`, the task descriptions, one per line. */
  input: string;
}

/** A model request is about to be sent. */
export interface ModelRequestPayload extends EventPayload {
  type: 'model_request';
  /** 1-based model call number within the run. */
  iteration: number;
  /** Messages in the history sent. */
  messageCount: number;
  /** Tools offered. */
  toolCount: number;
  /**
   * The prompt's size in tokens as the compression trigger sees it (CMP-3, CMP-11, CMP-12):
   * the larger of the CJK-aware estimate (calibrated per model once the provider reported
   * prompt tokens) and, after a call that reported usage, the provider's prompt tokens plus an
   * estimate of the messages appended since.
   */
  estimatedPromptTokens: number;
  /** The compression threshold, when compression is on: how close the UI is to it. */
  compressionThreshold: number | null;
  /**
   * Which figure decided `estimated_prompt_tokens` (CMP-12): the static estimate, the estimate
   * calibrated from this model's earlier counts, or the provider's count of the previous
   * request plus what was appended since.
   */
  promptSizeSource: PromptSizeSource;
}

/** An amount of money in one currency, exact: `nanos` billionths of the currency unit. */
export interface Cost {
  /**
   * The currency code as the host set it on the price (e.g. `"USD"`, `"CNY"`); compared as
   * written.
   */
  currency: string;
  /** The amount in billionths of the currency unit. */
  nanos: number;
}

/**
 * Token usage of one model call (CORE-3), or of the calls one record stands for (a
 * compression's summarizer calls). Every field is typed (BND-1); usages written by earlier
 * versions, with a `raw` map (`source`, `calls`, `cache_creation_input_tokens`), read into
 * these fields.
 */
export interface ModelUsage {
  /** Prompt (input) tokens. */
  promptTokens: number;
  /** Completion (output) tokens, reasoning included. */
  completionTokens: number;
  /** Total tokens as reported (or prompt + completion when the provider omits it). */
  totalTokens: number;
  /**
   * Prompt tokens written to the provider's cache (Anthropic's `cache_creation_input_tokens`),
   * when reported: priced apart (COST-2).
   */
  cacheWriteTokens?: number;
  /** Prompt tokens served from the provider's cache, when reported. */
  cachedTokens?: number;
  /**
   * The model calls this usage stands for: 1, or a chunked compression's N summarizer calls
   * (left out of the JSON when 1).
   */
  callCount?: number;
  /**
   * What the call cost (COST-2), priced once when it was recorded by the `ModelPrice` of the
   * model config that made it; absent when that config has no price (never 0 for "unknown"),
   * for a call without reported usage, and in usages recorded before prices existed. A
   * compression's usage carries the sum of its summarizer calls' costs; a foreign compressor's
   * usage carries the cost its host gave, if any. Boxed: a long chat holds a usage per call,
   * most of them unpriced, and an absent cost then costs a pointer, not the amount and its
   * currency (PERF-2).
   */
  cost?: Cost;
  /**
   * CHAT-1: the call answered a turn a rewind dropped. Its tokens and cost stay in every total
   * (the provider billed them); the totals sums them apart (`UsageTotals.discarded`). Absent
   * (false) otherwise.
   */
  discarded?: boolean;
  /** Reasoning tokens (part of the completion tokens), when reported. */
  reasoningTokens?: number;
  /** Where the usage came from, when it is not a plain model call. */
  source?: UsageSource;
}

/** A model response was parsed and appended. */
export interface ModelResponsePayload extends EventPayload {
  type: 'model_response';
  /** 1-based model call number within the run. */
  iteration: number;
  /** Usage, when reported; with its `cost` when the model config has a price (COST-2). */
  usage: ModelUsage | null;
  /** Tool calls requested. */
  toolCallCount: number;
  /** `finish_reason`, when reported. */
  finishReason: string | null;
}

/**
 * Answer text arrived: each piece as it streams in (before `model_response`), or the whole
 * text once after `model_response` for non-streaming calls.
 */
export interface TextDeltaPayload extends EventPayload {
  type: 'text_delta';
  /** 1-based model call number within the run. */
  iteration: number;
  /** The new text. */
  delta: string;
}

/**
 * Reasoning arrived (THINK-5: Chat Completions `reasoning_content`, Anthropic `thinking`; a
 * non-streamed answer's whole reasoning at once). Never part of the answer.
 */
export interface ReasoningDeltaPayload extends EventPayload {
  type: 'reasoning_delta';
  /** 1-based model call number within the run. */
  iteration: number;
  /** The new text ("" for a redacted block). */
  delta: string;
  /**
   * True when the provider encrypted this reasoning (Anthropic `redacted_thinking`): a block
   * began that has no text to show. Left out of the event's JSON when false.
   */
  redacted?: boolean;
}

/**
 * Part of a tool call the model is still writing arrived (streaming only): the name when the
 * call begins, then argument fragments to concatenate.
 */
export interface ToolCallDeltaPayload extends EventPayload {
  type: 'tool_call_delta';
  /** 1-based model call number within the run. */
  iteration: number;
  /** Position of the call in the answer. */
  index: number;
  /** Tool name, on the first delta of a call. */
  name: string | null;
  /** Argument text fragment (empty on the first delta). */
  argumentsDelta: string;
}

/** A tool call started. */
export interface ToolCallStartedPayload extends EventPayload {
  type: 'tool_call_started';
  /** Call id. */
  callId: string;
  /** Tool name. */
  name: string;
  /** Arguments as the model sent them. */
  arguments: string;
}

/** A tool call finished (or was cancelled, or failed). */
export interface ToolCallFinishedPayload extends EventPayload {
  type: 'tool_call_finished';
  /** Call id. */
  callId: string;
  /** Tool name. */
  name: string;
  /** True on failure. */
  isError: boolean;
  /** Runtime error code (`unknown_tool`, `invalid_tool_arguments`, `cancelled`, …). */
  errorCode: string | null;
  /**
   * The result's text as the tool gave it. The model reads it with a failure's code around it
   * (`{"error":{"code","message"}}`), after a note when a person edited the call's arguments
   * at approval, or an error in its place when its images exceed the model's bounds.
   */
  content: string;
  /** Structured host data from the tool result. */
  metadata?: Object;
}

/**
 * TOOL-1: a tool call waits for a person's answer (one event per call, just before the run
 * ends `awaiting_approval`). Once the run has returned, answer it (ArkTS `approve`/`reject`, C
 * `arkagent_runtime_approve`/`_reject`, Rust `answer_approval`; an answer while the run still
 * holds its slot is refused with `run_in_progress`), then resume the run (`resumeRun`,
 * `arkagent_runtime_resume_run`, `resume_run`). Nothing expires by itself.
 */
export interface ApprovalRequestedPayload extends EventPayload {
  type: 'approval_requested';
  /** Call id: what the answer names. */
  callId: string;
  /** Tool name. */
  name: string;
  /** The arguments as the model made them (JSON object text). */
  arguments: string;
  /**
   * Why it waits: `tool` (the tool requires approval, always or for these arguments) or
   * `policy` (the app's policy asked).
   */
  reason: string;
  /**
   * For a sub-agent's call, the session ids from the root's child down to the sub-agent that
   * made it (its `call_id` is then `<that session id>/<call id>`); empty for the runtime's own
   * calls.
   */
  path: string[];
}

/**
 * ISO-5: a compression is about to call its summarizer (one event per call: a chunked
 * transcript makes several), with the call's estimated prompt; a sub-agent's token budget
 * counts it before the call is made, and may stop the attempt there.
 */
export interface SummarizerRequestPayload extends EventPayload {
  type: 'summarizer_request';
  /** The summarizer call's estimated prompt tokens. */
  estimatedPromptTokens: number;
}

/**
 * A compression attempt that did something or could not: every `compressed` and `failed`
 * outcome, and `skipped` for `no_safe_split`, `last_usage_is_compression` and
 * `backing_off_after_failure` (routine below-threshold checks are not reported). After a
 * failed automatic attempt (before a model call or after a turn) the automatic attempts are
 * skipped with `backing_off_after_failure` until three more model calls were made
 * (`COMPRESSION_BACKOFF_MODEL_CALLS`): a failing summarizer is not paid for at every step; a
 * manual attempt and a context overflow are never held back.
 */
export interface CompressionPayload extends EventPayload {
  type: 'compression';
  /** What started it. */
  trigger: CompressionTrigger;
  /** What happened. */
  outcome: CompressOutcomeKind;
  /** The reason (CMP-2), its code. */
  reason: CompressReason;
  /** The new episode, when compressed. */
  episodeId: string | null;
  /** The model error's code when the reason is `llm_error`. */
  errorCode: string | null;
  /** Messages in the history before. */
  messagesBefore: number;
  /** Messages in the history after. */
  messagesAfter: number;
  /**
   * The prompt size checked against the threshold (automatic attempts): the larger of the
   * local estimate and the provider's last count plus the messages since.
   */
  estimatedPromptTokens: number | null;
  /** The compressor's threshold. */
  threshold: number | null;
  /** The summary calls' usage (recorded in the state only when compressed). */
  usage: ModelUsage | null;
}

/**
 * One runtime event (CORE-5), with correlation fields, serialized flat: the correlation fields
 * beside the event's `type` and that type's fields.
 */
export interface ChildEventPayload extends EventPayload {
  /** Session of the runtime that emitted it. */
  sessionId: string;
  /** Run it belongs to. */
  runId: string;
  /** Per-runtime sequence number, strictly increasing. */
  seq: number;
  /** Time from the injected clock. */
  atMs: number;
}

/** An event of a sub-agent this runtime delegated to, with correlation fields (SUB-7). */
export interface SubAgentPayload extends EventPayload {
  type: 'sub_agent';
  /** The parent's session. */
  parentSessionId: string;
  /** The parent's run. */
  parentRunId: string;
  /** The child's session. */
  childSessionId: string;
  /** The child's run. */
  childRunId: string;
  /** Worker name or `clone`. */
  assignee: string;
  /** The delegated task. */
  taskDescription: string;
  /** The child's depth (1 for a child of the root). */
  depth: number;
  /** The child's event, unchanged. */
  event: ChildEventPayload;
}

/**
 * A commit reached the session store (STORE-6): everything up to here survives a kill. Only
 * for a runtime with a store.
 */
export interface SessionCommittedPayload extends EventPayload {
  type: 'session_committed';
  /**
   * The session's commit sequence number (1 for its first commit), as
   * `SessionSummary::commit_seq` reports it.
   */
  commitSeq: number;
  /** Messages the session has committed (live plus archived originals). */
  messageCount: number;
}

/**
 * Usage of model calls, summed (SUB-6, COST-1, COST-2): a child's (it goes into the delegate
 * tool result's metadata and the parent's `ChildUsageRecord`s — never into the parent's own
 * usages), a run's, or a session's (`UsageTotals`). JSON (C, ArkTS `toJson()`, the delegate
 * metadata's `child_usage`, stored records):
 * `{"prompt_tokens","completion_tokens","total_tokens","cached_tokens",
 * "reasoning_tokens","call_count","priced_call_count","costs"?:[{"currency","nanos"}]}`;
 * records written before cached tokens and money existed load with those at 0 / absent.
 */
export interface ChildUsageSummary {
  /** Sum of prompt tokens over the calls. */
  promptTokens: number;
  /** Sum of completion tokens. */
  completionTokens: number;
  /** Sum of total tokens. */
  totalTokens: number;
  /**
   * Sum of prompt tokens served from the provider's prompt cache (COST-1; a call that reported
   * none counts 0).
   */
  cachedTokens: number;
  /**
   * Sum of reasoning tokens (COST-1; part of the completion tokens; a call that reported none
   * counts 0).
   */
  reasoningTokens: number;
  /**
   * Model calls made: every call of the run loop the model answered (usage reported or not: a
   * call without reported usage is recorded as a zero usage with source `"unreported"`) or cut
   * off mid-answer, and every summarizer call of a committed compression (a summary written in
   * N chunks is N calls). The same number whether summed from usages (`from_usages`) or read
   * from a total.
   */
  callCount: number;
  /**
   * How many of `call_count` carry a cost (COST-2): the rest had no price (or no reported
   * usage), so `costs` is complete exactly when this equals `call_count`.
   */
  pricedCallCount: number;
  /**
   * What the priced calls cost: one exact sum per currency, sorted by currency code; empty
   * (absent in JSON) when no call was priced — never a 0 standing for "unknown". Calls priced
   * in different currencies are never converted or added together: each currency keeps its own
   * sum.
   */
  costs?: Cost[];
}

/**
 * CHAT-1: the session went back to just before a run (a rewind, or the first step of a
 * regenerate or an edit-and-resend): that run and every later one are gone from the history
 * (and the store, before this event). The event's `run_id` is empty.
 */
export interface SessionRewoundPayload extends EventPayload {
  type: 'session_rewound';
  /** The run the session went back to (gone with every later run). */
  rewoundRunId: string;
  /** The ids of the runs dropped, oldest first. */
  droppedRunIds: string[];
  /** Live history messages removed. */
  messagesRemoved: number;
  /** Live history messages left. */
  messageCount: number;
  /** What the dropped turns had spent: still in every total (`UsageTotals.discarded`). */
  discarded: ChildUsageSummary;
}

/**
 * MCP-3: at a run's start, an MCP server connected (`connected`), was listed again after it
 * said its tools changed (`tools_changed`), or could not be reached (`failed`, with a stable
 * `error_code`: the run goes on without it). Before the run's first `model_request`; never a
 * header value in it.
 */
export interface McpServerPayload extends EventPayload {
  type: 'mcp_server';
  /** The server's name (its tools' namespace). */
  server: string;
  /** `connected`, `tools_changed` (listed again after the server's `list_changed`) or `failed`. */
  state: McpServerState;
  /** Tools offered from it now (after the allow/deny filter). */
  toolCount: number;
  /** The revision agreed on, once connected. */
  protocolVersion: string | null;
  /** Why it failed. */
  errorCode: McpErrorCode | null;
  /** What failed, free of secrets. */
  message: string | null;
}

/** The run ended (a `run_decomposed` job too: its last event). */
export interface RunFinishedPayload extends EventPayload {
  type: 'run_finished';
  /**
   * How it ended (`completed` or `cancelled` for `run_decomposed`: a task's failure is in its
   * result).
   */
  status: RunStatus;
  /** Model calls made (0 for `run_decomposed`: its children make the calls). */
  iterations: number;
  /** Error code when `status` is `failed`. */
  errorCode: ErrorCode | null;
  /**
   * What the run used up to its end, failed runs included (COST-1, COST-2): as
   * `RunOutcome::usage`.
   */
  usage: ChildUsageSummary;
}

/**
 * The one documented total of what a session cost (SUB-6): the parent's own calls (including
 * compression) plus every child's, each counted once; tokens, cached and reasoning tokens,
 * calls and per-currency costs alike, so `total` is exactly `parent + children` and `parent`
 * exactly the sum of the session's usages.
 */
export interface UsageTotals {
  /** The parent's own model calls. */
  parent: ChildUsageSummary;
  /** All children's model calls. */
  children: ChildUsageSummary;
  /** `parent + children`. */
  total: ChildUsageSummary;
  /**
   * CHAT-1: the part of `total` spent by turns a rewind dropped (their answers are gone, their
   * cost is not); all zero when nothing was dropped.
   */
  discarded: ChildUsageSummary;
}

/** TOOL-1: a tool call waiting for a person's answer, as the run's outcome lists it. */
export interface PendingApproval {
  /** Call id: what the answer names. */
  callId: string;
  /** Tool name. */
  name: string;
  /** The arguments as the model made them (JSON object text). */
  arguments: string;
  /**
   * For a sub-agent's call (issue 37 item 5), the session ids of the delegation path from the
   * root's child down to the sub-agent that made it; its `call_id` is then `<that sub-agent's
   * session id>/<its call id>`. Empty for the runtime's own calls.
   */
  path: string[];
}

/** The result of `AgentRuntime::run`. */
export interface RunResult {
  /** Run id. */
  runId: string;
  /** How it ended. */
  status: RunStatus;
  /** The final answer text, when completed. */
  finalText: string | null;
  /** Model calls made. */
  iterations: number;
  /**
   * What the run used (COST-1, COST-2): its own model calls (compression included) plus the
   * children it delegated to — tokens, cached and reasoning tokens, calls and per-currency
   * costs (absent without a price), summed from the usages the run recorded. What this
   * runtime's runs used, plus each compression `compress_now` committed (its
   * `CompressResult::usage`) and the usages a resumed or imported state brought, adds up to
   * `total_usage`.
   */
  usage: ChildUsageSummary;
  /**
   * TOOL-1: the calls waiting for an answer when the run paused (status `awaiting_approval`);
   * empty otherwise.
   */
  pendingApprovals: PendingApproval[];
}

/** The result of `ContextCompressor::compress`. */
export interface CompressResult {
  /** What happened. */
  outcome: CompressOutcomeKind;
  /** Why. */
  reason: CompressReason;
  /** The new episode's id when compressed. */
  episodeId: string | null;
  /**
   * Usage of the summary call(s), with source `context_compression`. Recorded in the state
   * only when the compression is committed (CMP-5, CMP-7).
   */
  usage: ModelUsage | null;
  /** The model error's code when `reason` is `llm_error`. */
  errorCode: string | null;
  /** Messages archived (compressed) or that would have been. */
  messagesArchived: number;
}

/**
 * What a rewind dropped (CHAT-1): the run it went back to, every run after it, and what their
 * turns had spent — which stays in the session's totals.
 */
export interface RewindResult {
  /**
   * The run the session went back to: it is gone with every later run, and the session is as
   * it was just before that run began.
   */
  runId: string;
  /** The ids of the runs dropped, oldest first (the run gone back to first). */
  droppedRunIds: string[];
  /**
   * The text of the dropped run's input (an image stands as its line): what an "edit" button
   * puts back into the text box.
   */
  inputText: string;
  /** Live history messages removed. */
  messagesRemoved: number;
  /** Live history messages left. */
  messageCount: number;
  /**
   * What the dropped turns had spent (their model calls and delegations): still in every
   * total, and in `UsageTotals.discarded`.
   */
  discarded: ChildUsageSummary;
}

/** What a sub-agent produced. */
export interface SubAgentResult {
  /** The three-level summary the parent received (ISO-3). */
  summary: string;
  /** Structured outputs (e.g. the full final text when it was summarized). */
  artifacts: string[];
  /**
   * Tokens the child used (reported where available, estimated otherwise: a call cut off
   * mid-answer counts its estimate so far; one answered with an error before any answer
   * arrived used none), its own children's included, up to its end — however it ended (ISO-4).
   */
  tokenCount: number;
  /** Distinct tools it called, in first-use order (however it ended). */
  toolsUsed: string[];
  /**
   * Why it was force-completed (`token-budget-exceeded`, `max-iterations`, `cancelled`,
   * `session-closed`), if it was.
   */
  forcedReason: string | null;
  /** The error code when it failed. */
  errorCode: string | null;
  /**
   * What its model calls used, its own children's included (COST-1, COST-2): the same summary
   * the parent records and the delegate tool's metadata carries as `child_usage` — tokens,
   * cached and reasoning tokens, calls and costs. Absent in records written before it existed
   * (all zero).
   */
  usage: ChildUsageSummary;
}

/** One sub-agent (seed 003 `SubAgentContext`). */
export interface SubAgentContext {
  /** The child's session id. */
  id: string;
  /** The parent's session id. */
  parentId: string | null;
  /** Role (`general` when none was given). */
  role: string;
  /** Worker name or `clone`. */
  assignee: string;
  /** The task. */
  task: string;
  /**
   * The child's own, isolated messages (filled when it ends; a force-completed child's are
   * those it had then, completed once its run wound down).
   */
  messages: Object[];
  /** Tools it may use; `None` = all. */
  allowedTools: string[] | null;
  /** Its iteration limit. */
  maxIterations: number;
  /** Status. */
  status: SubAgentStatus;
  /** The result once it ended. */
  result: SubAgentResult | null;
  /** Start time (injected clock), ms. */
  startedAtMs: number;
  /** End time, ms. */
  endedAtMs: number | null;
}

/** Totals (`getStats`). */
export interface SubAgentStats {
  /** Running now. */
  active: number;
  /** Kept in the history ring (≤ 100). */
  history: number;
  /**
   * Completed or failed since the registry was created (a resumed or imported session's
   * earlier children are in its `total_usage()`, not here).
   */
  completedCount: number;
  /**
   * Tokens used by every ended sub-agent, each call counted once (a nested child's tokens are
   * in its parent's `token_count` too, but counted here once). A force-completed one counts
   * what it spent up to its end, like any other, a call it had in flight by its prompt
   * estimate (as the budget charged it; no usage reports it): once the runs wound down, this
   * equals the children part of the parents' `total_usage()` unless such a call was cut off.
   */
  totalTokens: number;
  /**
   * The reported usage of every ended sub-agent, each call counted once (COST-1, COST-2):
   * tokens, cached and reasoning tokens, calls and per-currency costs, from each result's
   * `usage` with a nested child's part counted in the child alone, forced endings included.
   * Unlike `total_tokens` it holds no estimates: once the runs wound down it equals the
   * children part of the parents' `total_usage()`.
   */
  usage: ChildUsageSummary;
}

/**
 * A registry read at one moment (ISO-4): running and ended sub-agents and the totals, as the C
 * and ArkTS surfaces hand it out.
 */
export interface SubAgentRegistryView {
  /** Running sub-agents, oldest first. */
  active: SubAgentContext[];
  /** The last (at most 100) ended sub-agents, oldest first. */
  history: SubAgentContext[];
  /** Totals. */
  stats: SubAgentStats;
}

/** One session of a store, as `SessionStore::list_sessions` lists it. */
export interface SessionSummary {
  /** Session id (the runtime config's `session_id`). */
  id: string;
  /**
   * The first user text's first line, at most 80 characters (a photo without text is passed
   * over); empty before the first run. It follows an edit of the first run's text, and a
   * rewind to before the first run empties it.
   */
  title: string;
  /** Time of the last commit (the runtime's clock), milliseconds since the Unix epoch. */
  updatedMs: number;
  /** Messages the session ever had: live plus archived by compressions. */
  messageCount: number;
  /** Total tokens: the session's own model calls plus its sub-agents'. */
  totalTokens: number;
  /** Sequence number of the last commit (1 for the first). */
  commitSeq: number;
}

/** IMG-8: what the model's provider makes of an image. */
export interface ImageEstimate {
  /** The family's rule that counted it (the model's `image_tokens`, else its name's). */
  rule: ImageTokenRule;
  /** Input tokens the image costs. */
  tokens: number;
  /**
   * Width in pixels of the image the provider looks at, after its own resize: the coordinates
   * the model answers in. The displayed width when it does not resize.
   */
  width: number;
  /** Height in pixels of the image the provider looks at, after its own resize. */
  height: number;
}

/**
 * An Error thrown or rejected by the module, typed: its `code` is one of ErrorCode (see
 * the header; an exception of the caller's own code propagates unchanged). In ArkTS,
 * `(e as NativeError).code`.
 */
export interface NativeError extends Error {
  /** The stable code. */
  code: ErrorCode;
  /** What went wrong, for people (its wording may change). */
  message: string;
  stack?: string;
}

/** One HTTP header. */
export interface HttpHeader {
  name: string;
  value: string;
}

/**
 * A request the host must send. The body (UTF-8 JSON) comes two ways (PERF-9):
 * `bodyBytes`, an ArrayBuffer over the library's own bytes, handed over without a copy —
 * send this one (NetworkKit: `extraData: request.bodyBytes`, leaving it out when
 * `byteLength` is 0); and `body`, the same bytes as a string, made only when a host reads
 * it (one copy of the body, kept on the object after the first read). Both are valid until
 * the transport's Promise settles: then `bodyBytes` is detached (byteLength 0) and the
 * library takes its bytes back, and `body`, if not read before, reads "". Never write into
 * `bodyBytes`: the library reuses those bytes.
 */
export interface HttpRequest {
  method: string;
  url: string;
  headers: HttpHeader[];
  readonly bodyBytes: ArrayBuffer;
  readonly body: string;
  /** true when the library asked the provider for an SSE stream. */
  stream: boolean;
}

/**
 * What the host received. Either the whole body as text in `body`, or `streamed: true`
 * (resolved as soon as the headers arrived; `body` is then ignored) with the body written
 * to the request's HttpBodySink as it arrives. A missing `body` is an empty body.
 */
export interface HttpResponse {
  status: number;
  headers?: HttpHeader[];
  body?: string;
  /** true: the body follows through the HttpBodySink. */
  streamed?: boolean;
}

/**
 * Where the transport writes a streamed response body (LLM-2): after resolving with
 * `streamed: true`, call `write`/`writeBytes` for each piece as it arrives, then `end()`,
 * or `fail()` when the body broke off. Chunk boundaries may fall anywhere, also inside a
 * UTF-8 character (writeBytes). Writes never block; they return false once the library
 * stopped reading (answer complete, timeout, cancel) or after end()/fail(): stop
 * receiving then. Each request gets its own sink.
 */
export class HttpBodySink {
  /** Instances come from the runtime with each transport call. */
  private constructor();
  /** Appends text (sent as UTF-8). */
  write(text: string): boolean;
  /**
   * Appends bytes: an ArrayBuffer, or a Uint8Array (a Node Buffer included) — exactly
   * the view's bytes, also when it is a window into a larger buffer.
   */
  writeBytes(data: ArrayBuffer | Uint8Array): boolean;
  /** The body is complete. */
  end(): void;
  /**
   * The body broke off: the model call fails like a transport rejection with this code
   * ("timeout" is a timeout, "cancelled" cancelled, anything else "llm_transport").
   */
  fail(message: string, code?: string): void;
  /**
   * The streamed answer was an HTTP error after all, for a host that learns the status
   * only after the body (NetworkKit at API 12): the model call fails as if the transport
   * had resolved with `response` — classified by its status, headers (`Retry-After` is
   * honoured) and body (pass at least its first 64 KiB), like any error answer: a 429 or
   * 503 is retried after the wait the server asked for.
   */
  failWithResponse(response: HttpResponse): void;
  /**
   * Registers a callback run once, on the JS thread, when the library stops wanting this
   * response before the host finished the request (OHOS-7): the run was cancelled or
   * timed out (requestTimeoutMs, idleTimeoutMs), or the rest of the body is not needed (the answer's `[DONE]` arrived before end()). Abort the
   * request there (NetworkKit: `destroy()`); this covers non-streamed requests and
   * streams that have not received a byte yet. Registered after the cancellation, the
   * callback runs soon (asynchronously). Never called when the host finished first:
   * the transport resolved with a whole body or rejected, or end()/fail()/failWithResponse()
   * was called. A callback that throws is ignored.
   */
  onCancel(callback: () => void): void;
  /** True once the library stopped wanting this response before the host finished it. */
  readonly cancelled: boolean;
}

/**
 * The host's HTTP transport: sends the request and resolves with the response (any
 * status; the library classifies error statuses), either with the whole body or, for
 * `request.stream`, preferably streamed through `sink` so text deltas reach listeners
 * while the model is still writing. Reject when no response arrived: an Error whose
 * `code` is "timeout" counts as a timeout, "cancelled" as cancelled, anything else as a
 * network failure (error code "llm_transport").
 */
export type HttpTransport = (request: HttpRequest, sink: HttpBodySink) => Promise<HttpResponse>;

/** A tool call the model made, handed to a tool executor. */
export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as a JSON object text (already validated as JSON). */
  argumentsJson: string;
}

/** What a tool executor resolves with. */
export interface ToolResult {
  content: string;
  isError?: boolean;
  /**
   * Images the model sees after the text (IMG-1), each a file's bytes (JPEG, PNG, WebP, GIF;
   * the type is read from the bytes) or a ToolImage (bytes or an https:/data: URL, with a
   * detail), as C tool results take them. On Anthropic Messages they go inside the
   * tool_result; on Chat Completions, which cannot put an image in a tool message, one user
   * message after the turn's last tool result carries them. An image that is refused
   * (another type, a header that does not parse, a URL neither https: nor data:, over the
   * model's bounds, a ToolImage with neither or both of data and url, a detail not low,
   * high or auto) makes the result a tool error naming its code, e.g.
   * "image_unsupported_type".
   */
  images?: (ToolImage | Uint8Array)[];
}

/**
 * An image of a ToolResult given with its detail, or by URL (IMG-1): `data` or `url`, not
 * both.
 */
export interface ToolImage {
  /** The file's bytes (JPEG, PNG, WebP, GIF; the type is read from them). */
  data?: Uint8Array;
  /** An https: or data: URL, sent as it is. */
  url?: string;
  /** How closely the model looks (OpenAI's detail; other formats ignore it). */
  detail?: ImageDetail;
}

/**
 * A host tool: resolves with the result the model will see. A rejection is reported to the
 * model as a failed result carrying the error's message; with a string `code` the model
 * sees `{"error":{"code":…,"message":…}}`. Its `context` (seed 000 §3: every tool gets the
 * MemoryService) reads the calling runtime's episodic memory over its live state and
 * reaches its memory namespace — for a sub-agent's tool, the sub-agent's own.
 */
export type ToolExecutor = (call: ToolCall, context: ToolContext) => Promise<ToolResult>;

/**
 * TOOL-1: decides whether one call of a tool waits for a person's approval (true: it
 * waits). Given to ToolRegistry.register(); a throw or rejection counts as true.
 */
export type ApprovalPredicate = (call: ToolCall) => boolean | Promise<boolean>;

/**
 * TOOL-3: what a ToolPolicy decides for one call: `decision` "allow" (no objection: it
 * runs, unless its tool asks for approval itself), "deny" (it does not run; the model reads
 * a "tool_denied" error result with `reason`) or "ask" (it waits for a person, as if its
 * tool required approval). Any other decision, and a policy that throws or rejects, denies.
 */
export interface PolicyDecision {
  decision: string;
  reason?: string;
}

/**
 * TOOL-3: the app's check before every tool call (AgentRuntimeConfig.setToolPolicy), after
 * the role's whitelist; never for a tool that does not exist.
 */
export type ToolPolicy = (call: ToolCall) => PolicyDecision | Promise<PolicyDecision>;

/** Describes a tool to the model. `parametersJson` is a JSON Schema object text. */
export class ToolDefinition {
  /**
   * `parametersJson` is parsed when the definition is registered. `timeoutMs` (TOOL-4):
   * how long one call may run before the model is answered with a "tool_timeout" error
   * result, the call's `context.signal` fires with reason "tool_timeout" and the run
   * goes on; absent: the runtime's `AgentRuntimeConfig.toolTimeoutMs`; 0: no deadline.
   * Never sent to the model. Throws "invalid_argument" for a `timeoutMs` that is not an
   * integer from 0 to 4294967295.
   */
  constructor(name: string, description: string, parametersJson: string, timeoutMs?: number);
  /** The tool's own deadline in ms (TOOL-4); null: the runtime's. */
  readonly timeoutMs: number | null;
  /**
   * TOOL-1: every call waits for a person's answer before it runs (default false): the
   * run pauses with an "approval_requested" event and resolves with status
   * "awaiting_approval" and its pendingApprovals; answer with AgentRuntime.approve() or
   * reject(), then resumeRun(). For a decision per call, give register() a
   * `needsApproval` function instead. Read when the definition is registered.
   */
  requiresApproval: boolean;
  readonly name: string;
  readonly description: string;
  readonly parametersJson: string;
}

/** Tools by name. */
export class ToolRegistry {
  constructor();
  /**
   * Throws code "tool_name_invalid" for a name that is not 1–64 characters of ASCII
   * letters, digits, `_` and `-`; "tool_name_duplicate" when the name is taken;
   * "tool_parameters_invalid" when the parameters are not a JSON object; "invalid_json"
   * when they are not JSON. A refused definition changes nothing.
   * `needsApproval` (TOOL-1) decides per call whether it waits for a person (e.g. a
   * payment above an amount), called with the call before it would run; one that throws
   * or rejects asks. The definition's `requiresApproval` asks for every call.
   */
  register(definition: ToolDefinition, executor: ToolExecutor, needsApproval?: ApprovalPredicate): void;
  unregister(name: string): boolean;
  has(name: string): boolean;
  names(): string[];
}

/** One compressed stretch of conversation (read-only). */
export class EpisodicMemory {
  /**
   * Instances come from `AgentRuntime.episodicMemories()`, `listEpisodes()` and `findEpisode()`.
   */
  private constructor();
  /** Snapshot id, unique within the session. */
  readonly id: string;
  /** The `<state_snapshot>` summary. */
  readonly summary: string;
  /** Creation time, milliseconds since the Unix epoch. */
  readonly createdAtMs: number;
  /** How many messages the episode covers. */
  readonly messageCount: number;
  /** The archived original messages as JSON (an array). */
  readonly archivedMessagesJson: string;
}

/** Entry counts of one memory namespace (MEM-4; read-only). */
export class NamespaceStats {
  /** Instances come from `MemoryNamespace.stats()`. */
  private constructor();
  readonly working: number;
  readonly shortTerm: number;
}

/**
 * One runtime's working and short-term memory (MEM-4): "global" for a root runtime, the
 * child's session id for a sub-agent; namespaces never see each other's entries. A live
 * handle. `tier`: "working" | "short_term" (else "invalid_argument").
 */
export class MemoryNamespace {
  /** Instances come from `AgentRuntime.memory()` and `ToolContext.memory`. */
  private constructor();
  readonly namespace: string;
  /** Stores (or replaces) an entry (JSON text). Throws "invalid_argument", "invalid_json". */
  store(tier: string, id: string, entryJson: string): void;
  /** The entry (JSON text), if any. */
  recall(tier: string, id: string): string | undefined;
  /** Removes an entry; true when it was there. */
  forget(tier: string, id: string): boolean;
  /** The ids of a tier, sorted. */
  ids(tier: string): string[];
  stats(): NamespaceStats;
}

/** What a tool executor gets besides the call (read-only services; never the state). */
export class ToolContext {
  /** Instances come from the runtime, one per tool executor call. */
  private constructor();
  /** The calling runtime's session id. */
  readonly sessionId: string;
  readonly runId: string;
  /** The calling runtime's episodes over its live state, oldest first (MEM-1). */
  listEpisodes(): EpisodicMemory[];
  /** The episode with this snapshot id, if any (MEM-1). */
  findEpisode(snapshotId: string): EpisodicMemory | undefined;
  /** The calling runtime's memory namespace. */
  readonly memory: MemoryNamespace;
  /**
   * TOOL-4: this call's abort signal — it fires on the call's deadline, on the run's
   * cancel and when the runtime stops waiting; see ToolAbortSignal.
   */
  readonly signal: ToolAbortSignal;
}

/**
 * TOOL-4: a tool call's abort signal, like the web's `AbortSignal`: it fires once, when
 * the call passes its deadline (reason "tool_timeout": the model was answered with a
 * "tool_timeout" error result), when the run is cancelled (`AgentRuntime.cancel()`, a
 * sub-agent's force-completion: "cancelled") or when the runtime stops waiting for the
 * call otherwise ("closed"). It never fires for a call whose Promise settled first.
 * Whatever the executor does, the run does not wait for it past the deadline; a tool that
 * listens stops its work (a request, a dialog) instead of finishing it for nobody. What
 * it resolves with after the signal fired is ignored.
 */
export class ToolAbortSignal {
  /** Instances come from `ToolContext.signal`. */
  private constructor();
  /** Whether the signal fired. */
  readonly aborted: boolean;
  /** Why it fired: "tool_timeout", "cancelled" or "closed"; null while it has not. */
  readonly reason: string | null;
  /**
   * Calls `listener()` once, on the JS thread, when the signal fires — soon after, if it
   * already fired — unless the call's Promise settled first; `signal.reason` then says
   * why (as with the web's AbortSignal). Several listeners may be added; one that throws
   * is ignored.
   */
  onAbort(listener: () => void): void;
}

/**
 * A runtime event. `payloadJson` is the event's payload as JSON: its `type` and that
 * type's fields, camelCase like every record of this module, typed by the payload
 * interfaces generated above (RunStartedPayload … RunFinishedPayload, one per EventType):
 * `JSON.parse(event.payloadJson) as ModelRequestPayload` for a "model_request" event, and
 * so on. A field declared `T | null` is present with null when it does not apply; one
 * declared `name?:` is left out. Every run — run() and runDecomposed() alike — begins
 * with "run_started" and ends with "run_finished"; a runtime constructed with a
 * SessionStore also sends "session_committed" after each commit: everything up to it
 * survives the app being killed.
 */
export interface AgentEvent {
  /** The event's type: the `type` of its payloadJson. */
  type: EventType;
  sessionId: string;
  runId: string;
  seq: number;
  payloadJson: string;
}

/**
 * Receives runtime events, in order, on the JS thread. Delivery is asynchronous: the last
 * events of a run may arrive just after its `run()` Promise settles; "run_finished" is
 * always the last event of a run() (or resumeRun()) call. A run paused for approval hears
 * more under its runId afterwards: answers to it are committed ("session_committed", with
 * a store) and resumeRun() goes on with it. A listener that throws is ignored.
 */
export type AgentEventListener = (event: AgentEvent) => void;

/**
 * A "sub_agent" event, typed (SUB-7): the parent's and the child's session and run ids,
 * the assignee, the task, the child's depth (1 for a child of the root) and the child's
 * own event.
 *
 * Read from the payload's JSON as it is, field by field (PERF-9: no typed decoding of every
 * event type into the library for this one view).
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

/**
 * Sums model usages (e.g. `runtime.usages()`), as Rust and C do: callCount is the number
 * of model calls they stand for (a usage with `callCount` counts that many, any other
 * usage one), costs one exact sum per currency. Throws "invalid_argument" for a token
 * count that is not a non-negative integer, an unknown source or an empty currency.
 */
export function sumUsages(usages: ModelUsage[]): ChildUsageSummary;

/**
 * What a model costs, per 1M tokens, in one currency (COST-2). The library has no price of
 * its own: set the provider's published rates. A call is priced once, when its usage
 * arrives: prompt tokens served from the cache (`cachedTokens`) at cachedInputPerMillion,
 * prompt tokens written to the cache (Anthropic's cache creation) at cacheWritePerMillion
 * when set, the rest of the prompt at inputPerMillion, completion tokens (reasoning
 * included) at outputPerMillion; rounded to the nearest billionth of the currency unit.
 */
export interface ModelPrice {
  /** Currency code, 1 to 16 bytes without spaces (ISO 4217 such as "USD", "CNY" recommended). */
  currency: string;
  inputPerMillion: number;
  cachedInputPerMillion: number;
  outputPerMillion: number;
  cacheWritePerMillion?: number;
}

/**
 * Where and how to reach the model: an OpenAI-compatible Chat Completions endpoint
 * (wireFormat 'openai', the default) or an Anthropic Messages one ('anthropic').
 */
export class ModelConfig {
  /**
   * baseUrl including the version path, e.g. "https://api.deepseek.com/v1": the request goes
   * to `${baseUrl}/chat/completions` ('openai') or `${baseUrl}/messages` ('anthropic', e.g.
   * "https://api.anthropic.com/v1").
   */
  constructor(baseUrl: string, apiKey: string, model: string);
  baseUrl: string;
  model: string;
  /**
   * The provider protocol (default 'openai'). 'anthropic' speaks Anthropic Messages: the key
   * goes in `x-api-key`, `max_tokens` is always sent (4096 when maxTokens is unset), and
   * prompt-cache breakpoints are placed automatically. Any other value throws "invalid_config".
   */
  wireFormat: WireFormat;
  temperature?: number;
  /** `max_tokens`; unset means none for 'openai' and 4096 for 'anthropic'. */
  maxTokens?: number;
  /** Ask for an SSE stream. */
  stream: boolean;
  /**
   * Attempts per model call, the first included (default 3; 0 and 1 mean no retry).
   * Retried: rate limits, server errors, timeouts, transport failures — never after a
   * streamed answer started arriving, never past cancel().
   */
  maxAttempts: number;
  /**
   * Backoff ceiling before the first retry in ms (default 500); doubles per retry, with full jitter.
   */
  initialBackoffMs: number;
  /** Upper bound of one wait in ms, a server's Retry-After included (default 8000). */
  maxBackoffMs: number;
  /**
   * Time limit of one attempt in ms until the response arrives — for a streamed request
   * until the transport resolved, otherwise until the whole body is in (default 60000;
   * 0: none). A streamed body has no total limit: idleTimeoutMs guards it. The HAR's
   * NetworkKitTransport cuts a whole request at its readTimeoutMs (65 s): raise both.
   */
  requestTimeoutMs: number;
  /**
   * Longest silence of a streamed body in ms (default 120000; 0: none): when no chunk
   * arrives for this long the attempt fails with "llm_timeout" (retried like a timeout
   * unless part of the answer was shown) and the sink's onCancel callbacks run. A stream
   * that keeps sending is never cut by the library; the HAR's NetworkKitTransport cuts any
   * stream after its streamReadTimeoutMs (1 hour) and fails silence after its
   * streamIdleTimeoutMs (5 minutes) too.
   */
  idleTimeoutMs: number;
  /**
   * How an image's tokens are estimated (IMG-3): the model family's published rule, read
   * from the image's pixel size. Unset: 'openai_tiles' for wireFormat 'openai', 'anthropic'
   * for 'anthropic'. Set 'qwen_vl' for Qwen-VL on DashScope, 'gemini' for Gemini, the
   * '…_patches' ones for OpenAI's mini and nano models. It also decides whether HEIC/HEIF
   * photos are taken ('gemini' and the Qwen-VL ones). Another name throws "invalid_config".
   */
  imageTokens?: ImageTokenRule;
  /**
   * The largest image accepted, in bytes (default 20971520, 20 MiB): a larger one is refused with "image_too_large".
   */
  maxImageBytes: number;
  /**
   * The most images one request may carry (default 100): an input past it is refused with "too_many_images".
   */
  maxImagesPerRequest: number;
  /**
   * What this model costs (COST-2); absent (the default): calls carry no cost. Setting a
   * price with an empty or spaced currency, or a rate that is negative, not finite or
   * above 1e9, throws "invalid_config". A worker or summarizer on another model is
   * priced by its own ModelConfig's price.
   */
  price?: ModelPrice;
  /**
   * THINK-4: the provider, which decides how `thinking` is sent and what a thinking model
   * refuses. Unset: recognised from baseUrl's host, else from the model name (README,
   * "Thinking models"). Another name throws "invalid_config".
   */
  provider?: Provider;
  /**
   * THINK-4: how much the model thinks — 'off', 'on', { effort } or { budgetTokens }.
   * Unset (the default) sends nothing: the provider's default holds (DeepSeek V4, Kimi,
   * GLM, Qwen3.5 and recent Claude models think by default). A malformed value throws
   * "invalid_config"; a setting the provider has no switch for is refused when the runtime
   * is created ("thinking_unsupported"), and so is an option the thinking model refuses
   * ("thinking_conflict": a forced toolChoice or a temperature with Anthropic thinking or
   * an OpenAI reasoning model, Qwen thinking without stream).
   */
  thinking?: Thinking;
  /**
   * THINK-2: which earlier reasoning goes back in later requests (default 'auto', the
   * provider's rule: on 'openai', `reasoning_content` of every answer that called a tool,
   * exactly as received — "" included, never where the provider sent none (but "" to
   * DeepSeek and Kimi while they think: they refuse a tool-call message without it); none
   * for Qwen and OpenAI; every answer's for GLM with `clear_thinking: false` in extraBody;
   * on 'anthropic', every answer's thinking blocks, byte-exact, before its tool_use, or
   * in their places among its text and tool calls as the message's `block_order` says).
   */
  reasoningReplay: ReasoningReplay;
  /**
   * THINK-4: fields merged into the top level of every request body (a provider option the
   * library has no setting for), e.g. { enable_search: true }. A field the library writes
   * itself (model, messages, tools, stream, temperature, max_tokens, the thinking fields…)
   * is refused when the runtime is created ("extra_body_conflict"). Default {}; setting a
   * value that is not a plain JSON object throws "invalid_config".
   */
  extraBody: Record<string, Object>;
  /**
   * Headers sent with every request besides the library's own, as { name: value } (C/Rust
   * `extra_headers`): e.g. Anthropic's "anthropic-beta", a gateway's organisation id or
   * its "api-key" (a credential header's value is kept out of histories, events and
   * exports like the API key). Default {}; a value that is not a string throws
   * "invalid_config".
   */
  extraHeaders: Record<string, string>;
}

/** THINK-4: the object forms of a thinking setting: exactly one of the two. */
export interface ThinkingLevel {
  effort?: ThinkingEffort;
  budgetTokens?: number;
}

/** THINK-4: how much a model thinks (ModelConfig.thinking). */
export type Thinking = 'off' | 'on' | ThinkingLevel;

/**
 * The structured summary prompt of the default compressor (CMP-8): it asks for one
 * `<state_snapshot>` with overall_goal, key_knowledge, file_system_state, recent_actions
 * and current_plan; a reply without all five is rejected ("malformed_summary").
 */
export const DEFAULT_SUMMARY_PROMPT: string;

/**
 * Transactional context compression into episodic memory (the default compressor's
 * settings). Before every model call and after every turn (the final answer's too) the
 * runtime checks the prompt size — the larger of its own CJK-aware estimate and the
 * provider's reported prompt tokens of the last call plus an estimate of the messages
 * added since — and when it reaches `totalTokenThreshold` the older messages are summarized into a
 * `<state_snapshot>` and moved into an `EpisodicMemory`; the last
 * `keepRecentMessageCount` messages stay (never splitting a tool call from its result;
 * with 0, the user's input or tool results the model has yet to answer still stay).
 * A failed or skipped attempt changes nothing; after a failed automatic attempt the
 * automatic ones are skipped ("backing_off_after_failure") until three more model calls
 * were made (compressNow() and a context overflow are never held back). With a
 * compressor configured the model is
 * also offered the `retrieve_memory` tool to read the archived messages.
 * When the summarizer is the conversation's own model (no `summarizerModel`, or one with
 * the same wire format, base URL, model, key and stream setting), the snapshot is asked
 * for with the conversation's next request unchanged (tools and tool choice included) plus
 * one instruction that forbids tool calls, so the provider serves it from its prompt
 * cache; an answer that calls a tool or holds no valid snapshot is asked for once more,
 * then the older messages are summarized from a transcript instead, as they always are
 * for another model.
 * Counts must be non-negative safe integers (else code "invalid_config").
 */
export class ContextCompressor {
  /**
   * The seed's constructor without client and model (those come from the runtime);
   * omitted arguments keep the seed's defaults (64000, 10, DEFAULT_SUMMARY_PROMPT, 3).
   * Throws `invalid_config` for a negative or fractional count.
   */
  constructor(totalTokenThreshold?: number, keepRecentMessageCount?: number, summaryPrompt?: string, minMessagesToSummarize?: number);
  /**
   * Prompt tokens that trigger a compression (default 64000). 0, like a custom
   * compressor's 0: every automatic attempt compresses (right after a compression
   * excepted: CMP-7's loop guard).
   */
  totalTokenThreshold: number;
  /** Messages kept verbatim at the end (default 10). */
  keepRecentMessageCount: number;
  /** The summary instructions (default DEFAULT_SUMMARY_PROMPT). */
  summaryPrompt: string;
  /** Fewer messages than this to summarize: skipped (default 3). */
  minMessagesToSummarize: number;
  /**
   * Input tokens one summary request may use, as the summarizer model's calibrated
   * estimate counts them plus 15 %: a conversation larger than this is summarized from a
   * transcript, in chunks that fit. Unset: chunks of the threshold's size, but at least
   * 4096 (room for the summary prompt and a chunk), and no limit on the request with the
   * conversation's own bytes (a context-overflow answer to it falls back to chunks).
   * A value too small for the summary prompt and one chunk makes the runtime constructor
   * throw "invalid_config".
   */
  summarizerMaxInputTokens?: number;
  /**
   * A different model for summaries (same transport); unset: the runtime's model. Reading gives a copy.
   */
  summarizerModel?: ModelConfig;
}

/**
 * A context compressor written in ArkTS/JS (CMP-1): gets the state exactly as exportState()
 * gives it (token_calibration and child_usages included), except that each episode comes
 * without its archived_messages (its id, summary, created_at_ms and message_count are what
 * a new summary folds in), and
 * `{"estimated_prompt_tokens": number | null, "force": boolean}`, and resolves with
 * a JSON text `{"outcome": "skipped" | "failed" | "compressed", "reason"?: code,
 * "split_index"?: number, "summary"?: string, "episode_id"?: string, "usage"?: {…},
 * "error_code"?: string}`. "compressed" needs split_index (the messages before it move into
 * a new episode with summary) and a non-blank summary. The runtime checks everything before
 * it commits, so a custom compressor is as transactional as the default one: anything
 * unusable, a throw or a rejection fails the attempt ("compressor_error", or
 * "invalid_split_index", "post_commit_pairing_violation", "invalid_episode_id",
 * "empty_summary") and changes nothing. A split index must be at least 1 and at most the
 * number of messages, and leave the last message when the model has yet to answer it (the
 * user's input or a tool result ends the history, as before a model call): else
 * "invalid_split_index". Its usage is tagged "context_compression".
 * CompressContext.parse(contextJson) and CompressOutcome give both typed; the helpers
 * computeSafeSplitIndex (keeping at least 1 message in that case) and toolCallsPaired pick
 * a split the runtime accepts.
 */
export type CustomCompressor = (stateJson: string, contextJson: string) => Promise<string>;

/**
 * MCP-3: one MCP server whose tools the runtime offers (AgentRuntimeConfig.addMcpServer).
 * The model sees its tools as `<name>__<tool>`. The server is reached through the
 * runtime's HttpTransport (NetworkKit on the phone) at the start of the first run, which
 * emits an "mcp_server" event; a server that cannot be reached fails only itself.
 */
export interface McpServerOptions {
  /** The tools' namespace: 1 to 32 of A-Z, a-z, 0-9 and "-". */
  name: string;
  /**
   * The server's Streamable HTTP endpoint (https:, or http: for a local server). Put no
   * credential in it: the URL is not treated as a secret.
   */
  url: string;
  /**
   * Headers sent with every request (e.g. Authorization). Their values are secrets:
   * never in events, logs, errors or exports.
   */
  headers?: Record<string, string>;
  /** Only these of the server's tools are offered (its own names); absent: all. */
  allow?: string[];
  /** These of the server's tools are never offered. */
  deny?: string[];
  /**
   * Which calls wait for a person's approval (TOOL-1): "never" (the default), "always",
   * or the server's names of the tools that do.
   */
  approval?: string | string[];
  /** One call's deadline in ms (TOOL-4); absent: the runtime's toolTimeoutMs; 0: none. */
  timeoutMs?: number;
  /** The deadline of connecting (initialize and tools/list), in ms (default 15000). */
  connectTimeoutMs?: number;
  /**
   * How long a server that failed is left alone before a run tries again, in ms
   * (default 30000).
   */
  retryAfterMs?: number;
}

/**
 * What an McpAuthorize callback is asked for: the server's name, and whether the server
 * refused the last headers (401/403: refresh the token).
 */
export interface McpAuthRequest {
  server: string;
  refresh: boolean;
}

/**
 * MCP-1: the app's authorization for an MCP server (AgentRuntimeConfig.addMcpServer):
 * resolves with the headers to send (e.g. { 'Authorization': 'Bearer ' + token }), asked
 * before the server's first request and again with `refresh` true once after it answered
 * 401 or 403 — where the app runs its OAuth flow or reads its keystore. A throw or
 * rejection fails the server with "mcp_auth". The headers are kept in memory only.
 */
export type McpAuthorize = (request: McpAuthRequest) => Record<string, string> | Promise<Record<string, string>>;

/** Runtime settings. */
export class AgentRuntimeConfig {
  /**
   * A runtime's settings, starting from `model` (copied: later changes to it have no
   * effect) with the seed's defaults for the rest. An argument that is not a ModelConfig
   * instance throws "invalid_config".
   */
  constructor(model: ModelConfig);
  /** Delegation budgets. Assigning stores a copy; reading gives a copy. */
  subAgentPolicy: SubAgentPolicy;
  /**
   * Adds a worker; the model is offered `delegate_task` once a worker is registered or
   * `allowClone` is set. Throws "subagent_name_duplicate".
   */
  registerSubAgent(definition: SubAgentDefinition): void;
  /** The registered workers' names, in registration order. */
  subAgentNames(): string[];
  /**
   * Whether the model may delegate to "clone", a copy of this runtime's settings (default false).
   */
  allowClone: boolean;
  /**
   * Tokens one child may use before it is force-completed ("token-budget-exceeded"); unset:
   * no cap. The budget covers the child's whole subtree: with maxDepth above 1 its own
   * sub-agents' calls count against it too. Streamed deltas count as they arrive: the call
   * in flight is cancelled mid-stream.
   */
  childTokenBudget?: number;
  /**
   * Adds or replaces a role's tool whitelist (ISO-2); null or absent: every tool the
   * parent may use (a role never widens the parent's tools). A child delegated with that role is
   * neither shown nor allowed any other tool. Built in: "code-review",
   * "code-generation", "data-analysis", "document", "testing", "general" (every tool).
   */
  setRoleWhitelist(role: string, tools?: string[]): void;
  /** The role names, sorted. */
  roles(): string[];
  /** A role's whitelist; null: every tool. Throws "subagent_unknown_role". */
  roleWhitelist(role: string): string[] | null;
  /**
   * Context compression; unset (the default) turns it off. Assigning stores a copy of
   * the compressor's settings and reading gives a copy: to change a setting, assign again.
   */
  contextCompressor?: ContextCompressor;
  /**
   * Compresses with `compress` instead of the default compressor (contextCompressor is
   * then ignored); undefined removes it. `threshold` is the runtime's trigger: before a
   * model call and after a turn, `compress` is called only when the prompt size (as in the
   * "model_request" event) reaches it and a model call was made since the last
   * compression (whether or not that compression reported a usage); otherwise the runtime skips ("below_threshold", "last_usage_is_compression") without
   * calling it. Absent: 64000, the default compressor's; 0 (the same on every surface):
   * nothing is below it, so `compress` is called before every model call and after every
   * turn (except right after a compression, and while automatic attempts back off after a
   * failed one: skipped with "backing_off_after_failure" until three more model calls
   * were made). compressNow() and a context overflow always
   * call it. The threshold is reported in events. A `clone` child inherits the compressor;
   * a named worker has one only when its factory gives it one
   * (WorkerConfig.setCustomCompressor). Throws "invalid_argument" for a threshold that is
   * not a non-negative integer.
   */
  setCustomCompressor(compress: CustomCompressor | undefined, threshold?: number): void;
  /**
   * TOOL-3: checks every tool call before it runs — after the role's whitelist, never for
   * a tool that does not exist — and allows it, denies it with a reason the model reads
   * ("tool_denied") or asks a person (the run pauses as for a tool that requires
   * approval). Sub-agents inherit it. undefined removes it.
   */
  setToolPolicy(policy?: ToolPolicy): void;
  /**
   * IMG-9: the image codec of runtimes created with this config: each photo of a run's
   * input that the model's provider would shrink, cannot take in its type (HEIC/HEIF for
   * OpenAI's or Claude's families) or would receive turned is handed to it first, at
   * exactly the size the provider's own resize gives (the token count does not change),
   * and what it resolves with is sent instead. undefined removes it (the default codec,
   * setDefaultImageCodec, then applies).
   */
  setImageCodec(codec?: ImageCodec): void;
  /**
   * IMG-9: keep each photo the codec replaced, readable by its own id with
   * AgentRuntime.image() for the runtime's life (memory only: the history, the store
   * and exports hold the prepared photo). Default false.
   */
  keepOriginalImages: boolean;
  /**
   * MCP-3: adds an MCP server whose tools the runtime offers as `<name>__<tool>`,
   * connected through the runtime's HttpTransport at the start of the first run that
   * needs it (an "mcp_server" event); `authorize` supplies headers at connection time
   * and after a 401/403. Sub-agents share the server. Throws "invalid_argument" for
   * options that are not an McpServerOptions (a missing or unknown member, a value of
   * the wrong type, a negative or fractional number, or a millisecond count of 2 ** 32
   * or more) or an authorize that is not a function, "invalid_config" for a value it
   * refuses (a name outside 1 to 32 of A-Z,
   * a-z, 0-9 and "-", or one already added; a URL that is not http(s); an approval
   * other than "never", "always" or names; a connectTimeoutMs of 0).
   */
  addMcpServer(options: McpServerOptions, authorize?: McpAuthorize): void;
  /** The added MCP servers' names, in order. */
  mcpServerNames(): string[];
  /** Whether a custom compressor is set. */
  readonly hasCustomCompressor: boolean;
  systemPrompt: string;
  /** Model calls per run at most (default 16). */
  maxIterations: number;
  /** Tool calls of one turn that run at once at most (default 4). */
  maxParallelTools: number;
  /**
   * TOOL-4: how long a tool call may run, in ms, when its ToolDefinition sets no
   * `timeoutMs` (default 0: no deadline — a tool that waits for a person must not be cut
   * off). Past it the model is answered with a "tool_timeout" error result, the call's
   * `context.signal` fires and the run goes on. delegate_task and retrieve_memory have
   * none. A named worker starts with its parent's (WorkerConfig.toolTimeoutMs).
   */
  toolTimeoutMs: number;
  /** Fixed session id; empty means generated. */
  sessionId: string;
}

/**
 * Delegation budgets (SUB-3). Violations are answered to the model as tool errors:
 * "subagent_depth_exceeded", "subagent_run_budget_exceeded",
 * "subagent_concurrent_budget_exceeded". Values must be non-negative integers up to
 * 4294967295 (parentContextMessageCount: safe integers) (else code "invalid_config"); maxConcurrentChildren 0 is refused when the runtime is created.
 */
export class SubAgentPolicy {
  /**
   * Omitted arguments keep the seed's defaults (1, 4, 2, 10). Throws `invalid_config`
   * for a negative or fractional value.
   */
  constructor(maxDepth?: number, maxDelegationsPerRun?: number, maxConcurrentChildren?: number, parentContextMessageCount?: number);
  /**
   * Delegation depth (default 1: the runtime delegates, its workers never do). Above 1 a
   * child at depth d < maxDepth may delegate too, under the root's budgets: the per-run
   * cap counts the whole tree, the concurrency cap each depth of it (so the defaults
   * reach any maxDepth). A child at maxDepth never delegates.
   */
  maxDepth: number;
  /**
   *  Delegations one run may start (default 4), children's included. An unknown
   * assignee or a failing factory consumes none.
   */
  maxDelegationsPerRun: number;
  /**
   *  Children running at once at each depth of the delegation tree (default 2: the root's
   * children; their children together; …), so at most maxDepth × maxConcurrentChildren in
   * all; more are refused, not queued.
   */
  maxConcurrentChildren: number;
  /** Parent messages a child sees as context (default 10; a pairing-safe slice). */
  parentContextMessageCount: number;
}

/**
 * The worker a SubAgentFactory configures. It starts as a copy of the parent runtime's
 * settings (its tools included, not its custom compressor) and is read once the factory
 * returned or its Promise settled; later changes have no effect. The rule of every
 * surface: a named worker has a custom compressor only when its factory gives it one
 * (setCustomCompressor); a `clone` child inherits the parent's. Whatever it is given,
 * `delegate_task` is stripped: workers never delegate (below a maxDepth above 1, the
 * runtime gives a child the parent's own delegation settings instead). The tools it may
 * use are the parent's allowed tools ∩ the worker's ∩ the role's whitelist: never one its
 * parent is barred from.
 */
export class WorkerConfig {
  /** Instances come from the runtime, handed to a SubAgentFactory. */
  private constructor();
  /** The worker's name (the delegate_task assignee). */
  readonly name: string;
  systemPrompt: string;
  maxIterations: number;
  maxParallelTools: number;
  /**
   * TOOL-4: the worker's deadline for a tool call whose definition sets none
   * (AgentRuntimeConfig.toolTimeoutMs; starts as the parent's).
   */
  toolTimeoutMs: number;
  /** A copy of the worker's model; assign to use another model. */
  model: ModelConfig;
  /** The worker's tools, live: register into or unregister from it. */
  readonly tools: ToolRegistry;
  /**
   * Gives the worker its own compressor written in ArkTS/JS, called with the worker's
   * state, with the threshold rule of AgentRuntimeConfig.setCustomCompressor (absent:
   * 64000; 0: every automatic attempt); undefined removes it. Throws "invalid_argument"
   * for a threshold that is not a non-negative integer.
   */
  setCustomCompressor(compress: CustomCompressor | undefined, threshold?: number): void;
  /** Whether the worker has a custom compressor (only one its factory gave it). */
  readonly hasCustomCompressor: boolean;
}

/**
 * Configures one worker each time the model delegates to it, on the JS thread. A throw or
 * rejection fails that delegation ("subagent_factory_failed").
 */
export type SubAgentFactory = (worker: WorkerConfig) => void | Promise<void>;

/** A named worker (SUB-2). */
export class SubAgentDefinition {
  /** Instances come from `SubAgentDefinition.create()`. */
  private constructor();
  /**
   * The name is trimmed. Throws "subagent_name_empty", "subagent_name_reserved" ("clone" in any case).
   */
  static create(name: string, description: string, factory: SubAgentFactory): SubAgentDefinition;
  readonly name: string;
  /** What it is good at; shown to the model in the delegate_task description. */
  readonly description: string;
}

/**
 * ISO-3, the seed's `SubAgentContext.summarize(content)`: the three-level summary a parent
 * receives of a child's answer (a SubAgentContext's `result.summary`) — `content` as it is
 * when it has at most 500 characters (Unicode code points, never cut inside one);
 * otherwise its "## Summary" section (or else its "## Result" section: the heading line up
 * to the next "## " heading) when that has at most 1000; otherwise the first 500
 * characters followed by "[truncated, N chars]", N the full length.
 */
export function summarizeResult(content: string): string;

/** One task of a decomposed job (ISO-7). */
export interface DecomposedTask {
  /** A worker name or "clone". */
  assignee: string;
  taskDescription: string;
  /** Role (tool whitelist); default "general". */
  role?: string;
  /** What the child needs to know; by default it inherits a condensed view of the conversation. */
  context?: string;
}

/** The result of one decomposed task (read-only). */
export class DecomposedResult {
  /** Instances come from `AgentRuntime.runDecomposed()`. */
  private constructor();
  /** The child's summarized answer, or the error as JSON text. */
  readonly content: string;
  readonly isError: boolean;
  /**
   * The code when it failed, e.g. "subagent_unknown_assignee", "llm_auth", "token-budget-exceeded".
   */
  readonly errorCode?: string;
  /** "completed" | "forced" | "failed"; unset when it was refused before a child started. */
  readonly status?: ChildStatus;
  /** The child's session id, when a child started. */
  readonly childSessionId?: string;
  /** The child's usage, when a child started. */
  readonly childUsage?: ChildUsageSummary;
  /**
   * The result metadata as JSON (service, assignee, role, child ids, status, reason, child_usage).
   */
  readonly metadataJson?: string;
}

/** The delegation tool's name (SUB-1): "delegate_task". */
export const DELEGATE_TASK_TOOL_NAME: string;
/** The assignee that clones the parent (SUB-1): "clone". */
export const CLONE_ASSIGNEE: string;
/** The service id in a delegate_task result's metadata (`service`; SUB-1): "arkagent.sub_agent". */
export const SUB_AGENT_SERVICE_ID: string;
/**
 * The tool the model reads episodes with (MEM-2): "retrieve_memory", offered whenever the
 * runtime compresses (a contextCompressor or a custom compressor is set).
 */
export const RETRIEVE_MEMORY_TOOL_NAME: string;
/** retrieve_memory's page size when the model gives no `limit` (MEM-2): 20. */
export const DEFAULT_MEMORY_LIMIT: number;
/**
 * The largest `limit` retrieve_memory accepts (MEM-2): 100; a larger one is answered with
 * the tool error "invalid_limit".
 */
export const MAX_MEMORY_LIMIT: number;

/**
 * CMP-4, the seed's computeSafeSplitIndex: the largest index s (1 ≤ s ≤ n −
 * keepRecentMessageCount) at which both messages[0, s) and messages[s, n) keep every tool
 * call paired with its result — what a custom compressor answers as split_index — or -1
 * when there is none. O(n). `messagesJson`: a JSON array of messages as historyJson()
 * gives them (the `history.messages` of a compressor's stateJson). Throws "invalid_json",
 * "invalid_argument".
 */
export function computeSafeSplitIndex(messagesJson: string, keepRecentMessageCount: number): number;

/**
 * CORE-2, the seed's HistoryInvariants.toolCallsPaired: within the messages (as for
 * computeSafeSplitIndex), every tool call has exactly one result after it, every result
 * answers an earlier call and no id repeats. Throws "invalid_json".
 */
export function toolCallsPaired(messagesJson: string): boolean;

/** The verdict of validateEpisodicMemoryIds (read-only). */
export class EpisodeIdValidation {
  /** Instances come from `validateEpisodicMemoryIds()`. */
  private constructor();
  /** Every id is non-blank and unique. */
  readonly valid: boolean;
  /** The first id that is blank or repeats an earlier one. */
  readonly id?: string;
}

/**
 * MEM-3, the seed's validateEpisodicMemoryIds — the check importState() makes.
 * `episodesJson`: a JSON array of episodes (`{"id","summary","created_at_ms",
 * "message_count","archived_messages"?}`, e.g. the `history.episodic_memories` of a
 * compressor's stateJson). Throws "invalid_json".
 */
export function validateEpisodicMemoryIds(episodesJson: string): EpisodeIdValidation;

/** Draws a fresh id for allocateIsolatedSessionId. */
export type NextId = () => string;

/**
 * SUB-9, the seed's allocateIsolatedSessionId: the trimmed `requested` when it is
 * non-empty, not the trimmed parent id and not in `activeIds`; otherwise
 * `${parent}_w_${nextId()}`, drawn again while it is the parent's id or active, at most 16
 * more times. `nextId` is called synchronously; when it throws or returns something else
 * than a string, this throws "invalid_argument" (the message carries what it threw).
 */
export function allocateIsolatedSessionId(parentSessionId: string, requested: string, activeIds: string[], nextId: NextId): string;

/** A custom compressor's `contextJson`, typed (seed 000 §2: CompressContext). */
export class CompressContext {
  /** Instances come from `CompressContext.parse()`. */
  private constructor();
  /** Parses a CustomCompressor's contextJson. Throws "invalid_json". */
  static parse(contextJson: string): CompressContext;
  /** The next prompt's size for an automatic attempt; unset for compressNow() and overflow. */
  readonly estimatedPromptTokens?: number;
  /** True after the model refused the context as too long: compress whatever the size. */
  readonly force: boolean;
}

/**
 * A custom compressor's answer, typed (seed 000 §2: CompressOutcome skipped | compressed |
 * failed); a CustomCompressor resolves with its toJson().
 */
export class CompressOutcome {
  /** Instances come from the static constructors. */
  private constructor();
  /** Nothing to do; reason a CMP-2 skip code (default "below_threshold"). */
  static skipped(reason?: string): CompressOutcome;
  /** The attempt failed; reason a CMP-2 failure code (default "llm_error"). */
  static failed(reason?: string, errorCode?: string): CompressOutcome;
  /**
   * The messages before `splitIndex` move into a new episode with `summary` (episodeId
   * default: a fresh id; usage: the summarizer's). Throws "invalid_argument" for a split
   * index that is not a non-negative integer or a usage with a bad count.
   */
  static compressed(splitIndex: number, summary: string, episodeId?: string, usage?: ModelUsage): CompressOutcome;
  /** "skipped" | "failed" | "compressed". */
  readonly outcome: CompressOutcomeKind;
  readonly reason?: string;
  /** The JSON text a CustomCompressor resolves with. */
  toJson(): string;
}

/**
 * Durable sessions (STORE-6): where runtimes commit their sessions so that an app killed
 * at any instant loses nothing committed. One SQLite file (WAL journal), e.g.
 * `context.filesDir + '/sessions.db'` (in a page, `context` is
 * `this.getUIContext().getHostContext()`). Pass it as the 4th argument of the
 * AgentRuntime constructor. The API key is never written to it.
 *
 * Every method is synchronous: opening a store takes a few milliseconds, list() is one
 * query, delete() one transaction — below a frame for normal sizes.
 * Errors (the `code` of the thrown Error): "store_corrupt" (not a readable SQLite file:
 * corrupt, truncated or something else), "store_foreign" (another application's
 * database), "store_newer_schema" (written by a newer library; left untouched),
 * "store_read_only" (the file or its directory cannot be written), "store_full" (the disk
 * is full; nothing committed is damaged), "store_io" (any other failure, e.g. the path is
 * a directory), "session_locked" (a runtime has the session open).
 */
export class SessionStore {
  /** Instances come from `open()` and `openMemory()`. */
  private constructor();
  /**
   * Opens the store at `path`, creating the file if absent; an older schema is migrated
   * forward. "invalid_argument" for an empty path; the store codes above.
   */
  static open(path: string): SessionStore;
  /** A store in memory, gone with the process (tests, previews). */
  static openMemory(): SessionStore;
  /**
   * Every session, most recently updated first (by updatedMs; sessions of the same
   * millisecond by id).
   */
  list(): SessionSummary[];
  /**
   * Deletes a session with its episodes, archived originals and usages; false when it did
   * not exist. "session_locked" while a runtime has it open.
   */
  delete(sessionId: string): boolean;
}

/**
 * One part of a user message (IMG-1): text, or an image. Build parts with the static
 * factories and pass them to AgentRuntime.runParts(). A plain string stays a valid input
 * of run().
 */
export class ContentPart {
  /** Instances come from the static factories: `new ContentPart()` throws "private_constructor". */
  private constructor();
  static text(text: string): ContentPart;
  /**
   * An image from its file bytes — the ArrayBuffer (or a Uint8Array view) the photo picker (read with fs) or an
   * image packer (image.createImagePacker().packToData, e.g. as "image/jpeg") gave you. The
   * bytes are copied once into the library (no base64 string is made in JS). JPEG, PNG,
   * WebP, GIF and HEIC/HEIF; `mimeType` is checked against the bytes when given, sniffed
   * otherwise. The header is read, never the pixels (IMG-6): throws
   * "image_unsupported_type" (another type: AVIF, MP4, …), "image_invalid" (what a
   * decoder would refuse: a header or container that does not hold together, a PNG chunk
   * whose CRC fails, a JPEG without its end-of-image marker, a WebP or box size past the
   * end, bytes of another type than `mimeType`). A run refuses what the model's family
   * refuses ("image_unsupported_type" for HEIC/HEIF where it is not taken — pack it as
   * JPEG first or register an image codec — "image_dimensions_unsupported",
   * "image_animated"). `detail`: OpenAI's 'low' | 'high' | 'auto' (other formats ignore it).
   */
  static image(bytes: ArrayBuffer | Uint8Array, mimeType?: ImageMimeType, detail?: ImageDetail): ContentPart;
  /**
   * An image by URL: https: (fetched by the provider; `url` reads it back) or a data: URL
   * (decoded into the image's bytes and checked here, as ContentPart.image() does: `url`
   * is then undefined). Throws "image_invalid" (another scheme, a malformed data: URL)
   * or "image_unsupported_type" (a data: URL of another type).
   */
  static imageUrl(url: string, detail?: ImageDetail): ContentPart;
  readonly kind: 'image' | 'text';
  /** The text of a text part. */
  readonly textValue?: string;
  /** An image's type, pixel size (read from its header), byte length and id (SHA-256 hex). */
  readonly mimeType?: ImageMimeType;
  /**
   * An image's width and height as displayed (IMG-7: after its EXIF or HEIF orientation, so a
   * portrait phone photo is taller than wide); storedWidth and storedHeight as encoded.
   */
  readonly width?: number;
  readonly height?: number;
  readonly storedWidth?: number;
  readonly storedHeight?: number;
  /**
   * The EXIF orientation, 1 (as stored) to 8, read from a JPEG's or WebP's EXIF, a PNG's
   * eXIf or a HEIF's irot/imir.
   */
  readonly orientation?: number;
  readonly byteLength?: number;
  readonly imageId?: string;
  /** The URL of an image by https: URL (undefined for bytes, a data: URL's included). */
  readonly url?: string;
}

/** An image read back by id (AgentRuntime.image()). */
export interface ImageInfo {
  /** SHA-256 of the bytes, lowercase hex: the id a memory line names. */
  id: string;
  mimeType: ImageMimeType;
  /** As displayed, after the orientation (IMG-7). */
  width: number;
  height: number;
  /** As encoded in the file. */
  storedWidth: number;
  storedHeight: number;
  /** The EXIF orientation, 1 to 8. */
  orientation: number;
  /** The file's bytes (a copy owned by JS). */
  bytes: Uint8Array;
}

/**
 * What an ImageCodec is asked for (IMG-9): decode `bytes` (a `mimeType` file), apply the
 * EXIF `orientation` (1..8; 1: none), scale to exactly `width` × `height` (the size as
 * displayed, after the orientation) and encode as `targetMimeType`, without an
 * orientation tag.
 */
export interface ImageCodecRequest {
  /** The photo's file bytes (a copy owned by JS). */
  bytes: Uint8Array;
  mimeType: ImageMimeType;
  /** The photo's own type when the model takes it (JPEG, PNG, WebP), else "image/jpeg". */
  targetMimeType: ImageMimeType;
  width: number;
  height: number;
  orientation: number;
}

/**
 * IMG-9: the app's image codec: resolves with the encoded file (ImagePacker's ArrayBuffer
 * as a Uint8Array). A throw, a rejection, or bytes that are not an image of the type and
 * size asked fail the run with "image_codec_failed", nothing written.
 */
export type ImageCodec = (request: ImageCodecRequest) => Promise<Uint8Array>;

/**
 * IMG-9: the image codec of every runtime created from now on whose config sets none
 * (AgentRuntimeConfig.setImageCodec); undefined removes it. The HAR's ArkTS side
 * registers one on `@ohos.multimedia.image` when it loads (ImageKitCodec); call this
 * with undefined to send photos as they come.
 */
export function setDefaultImageCodec(codec?: ImageCodec): void;

/**
 * IMG-8: what `image` costs sent to `model`, in one call: the family's rule (the model's
 * imageTokens, else its name's, by the README's table), the tokens, and the size the
 * provider resizes it to (the coordinates the model answers in). The same checks of the
 * photo as a run: throws "image_unsupported_type", "image_dimensions_unsupported",
 * "image_animated" (a request's bounds, maxImageBytes and maxImagesPerRequest, are the
 * run's: not checked here). An image by URL, of unknown size, counts as 8000 × 8000. `prepared`
 * (default: whether a default image codec is registered — the HAR registers one): checked
 * as a run with an image codec sends the photo (IMG-9) — a HEIC for an OpenAI or Claude
 * model, or a photo larger than Claude takes, is prepared, not refused — at the same
 * tokens; false: as it comes.
 */
export function estimateImageTokens(model: ModelConfig, image: ContentPart, prepared?: boolean): ImageEstimate;

/** One conversation with a model and tools. */
export class AgentRuntime {
  /**
   * With `store`, the runtime opens the session `config.sessionId` in it — set a fixed
   * id to resume a chat after a restart; when it is empty a new id is generated, so a new
   * session is created every time (read it back from `sessionId`). A session with commits
   * is resumed: its history, episodes (retrieve_memory reaches their archived originals)
   * and usages replace the new runtime's empty state; the loading is synchronous (a few
   * ms for a normal chat, 38 ms at 10,000 messages). From then on every commit point (the
   * user message with the run start, each assistant message with its tool results, each
   * compression, usages) is written in one transaction, off the JS thread, and reported
   * by a "session_committed" event. Throws "session_locked" while another runtime (in
   * this process or another) has the session — until that runtime's detachStore() or its
   * garbage collection — and the SessionStore codes; "tool_name_duplicate" when `tools`
   * has a tool named "retrieve_memory" and the runtime compresses, or "delegate_task" and
   * it delegates (those names are the library's). Without `store` nothing is persisted
   * (exportState()/importState() remain).
   */
  constructor(config: AgentRuntimeConfig, transport: HttpTransport, tools: ToolRegistry, store?: SessionStore);
  readonly sessionId: string;
  /**
   * Runs until a final answer, max iterations or cancel(). The run is registered before
   * the Promise is returned: a cancel() right after run() cancels it, and a run() (or
   * compressNow()) while a run is active rejects with code "run_in_progress".
   * When it rejects with a model error and the model had produced nothing in this run (its
   * first call failed), the input is taken out again: the history is as before the run
   * (a compression committed meanwhile stays), so a retry never sends the input twice and
   * an input too large for the model cannot wedge the session. After a later call fails,
   * the history ends with the last tool results, paired.
   */
  run(input: string): Promise<RunResult>;
  /**
   * run() with ordered text and image parts as the input (IMG-1): e.g.
   * `[ContentPart.text('what is this plant?'), ContentPart.image(jpegBytes, 'image/jpeg')]`.
   * The photo goes to the model as its wire format carries images (an OpenAI-compatible
   * `image_url` data URL, an Anthropic `image` block), encoded once for the whole chat;
   * it is kept in the history, exportState() and the SessionStore. Rejects, with nothing
   * written and nothing sent, with "image_unsupported_type" (a HEIC/HEIF photo for a
   * model family that does not take it: pack it as JPEG first), "image_too_large" (over
   * ModelConfig.maxImageBytes) or "too_many_images" (the request would carry more than
   * ModelConfig.maxImagesPerRequest; earlier photos leave the request when a compression
   * archives them — compressNow() does only once the prompt reaches the threshold — or
   * when rewind() drops their runs).
   */
  runParts(parts: ContentPart[]): Promise<RunResult>;
  /**
   * The image with this id (SHA-256 hex), from the live history or an episode's archived
   * originals — the id a compressed-out photo's line names in summaries and retrieve_memory
   * results ("[image image/jpeg, 4032×3024 px, N bytes, id …]"); undefined when the
   * session holds none.
   */
  image(id: string): ImageInfo | undefined;
  /**
   * One compression attempt now, with the compressor's usual checks; resolves "skipped"
   * ("no_usage") when no compressor is configured. Like run(), it takes the run slot
   * before the Promise is returned: it rejects with "run_in_progress" while a run is
   * active, and a run() (or compressNow()) called before it settles is refused the same
   * way. A failed or skipped attempt leaves exportState() byte-identical.
   */
  compressNow(): Promise<CompressResult>;
  /**
   * Releases this runtime's session in its SessionStore, so that another runtime can open
   * it now (on a page rebuilt, say) rather than when this one is garbage-collected.
   * What was committed stays; nothing more is committed. A turn paused for approval goes
   * with the stored session: pendingApprovals() is then empty here, and approve(),
   * reject() and resumeRun() reject with "approval_not_pending" — so the runtime that
   * opens the session next is the one that answers, and no call runs twice. false when no
   * store is attached. Throws "run_in_progress" during a run.
   */
  detachStore(): boolean;
  /** Cancels the active run, if any: in-flight HTTP and tools stop, history stays paired. */
  cancel(): void;
  /**
   * The whole state (history, episodic memories, usages, session id) as JSON. Callable at
   * any moment — from a tool, a listener at any event, while a run is in flight — and
   * always accepted by importState(): while a turn's tools are running, it holds the last
   * consistent history (without that open turn). The API key never appears in it, even
   * when a tool, the model or the input echoed it (replaced by "<redacted>").
   */
  exportState(): string;
  /**
   * Replaces the state with an exported one. Throws "invalid_json", "invalid_state" or
   * "run_in_progress" (nothing changes). Without a store the state is replaced and the run
   * slot free before this returns (a run() right after it runs on the imported state),
   * and the Promise resolves. With one, the import is first written to the store
   * (replacing the stored session) off the JS thread and the state is replaced only when
   * that write succeeded; otherwise the Promise rejects with the store's code
   * ("store_full", "store_read_only", "store_io", "store_corrupt") and the old state is
   * kept, in memory and stored. A photo of the imported history out of this model's
   * bounds rejects it with the image's code ("image_too_large", "too_many_images", …),
   * nothing changed. With a store, until it settles, run() and compressNow() are refused
   * with "run_in_progress".
   */
  importState(stateJson: string): Promise<void>;
  /**
   * The messages as JSON (an array): the live history. While a turn's tools run or the
   * turn waits for approval it ends with that turn's model answer (mid-turn, with the
   * results so far), which exportState() — the committed history, always paired —
   * leaves out until the turn is paired.
   */
  historyJson(): string;
  /** The episodes compressed out of the live history, oldest first. */
  episodicMemories(): EpisodicMemory[];
  /** The episodes over the live state (after compressions and imports), oldest first. */
  listEpisodes(): EpisodicMemory[];
  /** The episode with this snapshot id, if any. */
  findEpisode(snapshotId: string): EpisodicMemory | undefined;
  usages(): ModelUsage[];
  /** Returns a subscription id. */
  subscribe(listener: AgentEventListener): number;
  /**
   * false for an unknown id; "invalid_argument" for one that is not an integer in 0..4294967295.
   */
  unsubscribe(subscriptionId: number): boolean;
  /** This runtime's memory namespace (MEM-4): store, recall, forget, ids, stats. */
  memory(): MemoryNamespace;
  /**
   * Stores an entry (JSON text) in this runtime's own memory namespace (MEM-4; a
   * sub-agent's namespace is freed when it ends, and reads never create one); tier:
   * "working" | "short_term". Throws "invalid_argument" for another tier, "invalid_json".
   */
  memoryStore(tier: string, id: string, entryJson: string): void;
  /** The entry (JSON text) stored under `id` in this runtime's namespace, if any. */
  memoryRecall(tier: string, id: string): string | undefined;
  /**
   * TOOL-1: the calls waiting for an answer: the paused turn's (`path` empty; read it
   * after a restart — the turn is in the SessionStore and exportState() — to show the same
   * dialogs again) and, while a run is going, its sub-agents' calls waiting in flight
   * (`path`: the session ids from this runtime's child down to the sub-agent that made the
   * call; `callId` `<that session id>/<its call id>`; not stored: such a call ends with its
   * delegation). A sub-agent's call arrives as a "sub_agent" event whose child event is
   * "approval_requested". Empty when nothing waits.
   */
  pendingApprovals(): PendingApproval[];
  /**
   * TOOL-1: approves one waiting call. A sub-agent's call is answered while the run goes
   * on (its sub-agent makes no model call until then) and runs at once; answered again,
   * or after its sub-agent ended, it rejects with "approval_already_answered" or
   * "approval_not_pending" (never "run_in_progress": it will not wait again). A call of the
   * paused turn runs when the run resumes — with
   * `editedArgumentsJson` instead of the model's arguments when given (a JSON object
   * with every property the tool's schema requires; the model then reads, before the
   * tool's answer, a line saying the person changed the arguments and what ran). The
   * answer is committed to the SessionStore (off the JS thread) before the Promise
   * resolves: an app killed after that loses nothing. Nothing expires by itself. Await it
   * before resumeRun(). Answers (approve, reject, cancelApprovals) are made in the order
   * they were called, awaited or not: of two taps on one dialog the first answers and the
   * second rejects with "approval_already_answered". Rejects (nothing changed) with "approval_not_pending",
   * "approval_unknown_call", "approval_already_answered", "tool_arguments_invalid",
   * "run_in_progress" or the store's code.
   */
  approve(callId: string, editedArgumentsJson?: string): Promise<void>;
  /**
   * TOOL-1: rejects one waiting call: it never runs; the model reads a "tool_rejected"
   * error result with `reason` (absent or empty: "the user rejected this call").
   * Committed and refused like approve().
   */
  reject(callId: string, reason?: string): Promise<void>;
  /**
   * TOOL-1: closes the paused turn without resuming it — the person stopped: every call
   * that did not run is answered as on a cancel ("cancelled"; "tool_rejected" and
   * "tool_interrupted" as decided), the calls that ran keep their results, the turn joins
   * the history and is committed (off the JS thread); no model call. Resolves true when a
   * turn was closed, false when none waited; answering afterwards rejects with
   * "approval_not_pending". Rejects with "run_in_progress" or the store's code (the turn
   * is then closed in memory and the next commit writes it).
   */
  cancelApprovals(): Promise<boolean>;
  /**
   * TOOL-1: resumes the paused run once every waiting call is answered: the approved
   * calls run (each at most once: a call an app kill interrupted is answered
   * "tool_interrupted", never run again), the model gets every result in the calls'
   * order, and the run goes on as run() does (it may pause again); events as for a run,
   * under the paused run's id, starting with "run_started" (empty input). Rejects with
   * "approval_not_pending", "approval_pending" (a call still waits), "run_in_progress",
   * or a run's codes.
   */
  resumeRun(): Promise<RunResult>;
  /**
   * The one total of what this session cost (SUB-6): its own calls plus every delegated child's.
   */
  totalUsage(): UsageTotals;
  /**
   * Session ids of this runtime's sub-agents running now — a view of the registry, so each
   * is in subAgents().active and closeSubAgents() reaches it. After cancel(), a child is
   * gone from both by the time run() resolves.
   */
  activeChildren(): string[];
  /** This runtime's sub-agents: running, ended, totals (ISO-4). Empty without delegation. */
  subAgents(): SubAgentRegistryView;
  /**
   * Force-completes (and cancels) every running sub-agent of this session, and theirs, with
   * "session-closed"; returns how many direct children. It reaches every child
   * activeChildren() lists, even one still being built (that one never starts). A
   * delegation whose SubAgentFactory has not settled has no child yet: it is not listed
   * and not reached (the child starts once the factory settles); cancel() the run to
   * stop it. Each
   * record in subAgents().history keeps what that child spent up to then (tokenCount,
   * usage, toolsUsed, its messages), as forceCompleteSubAgent() does.
   */
  closeSubAgents(): number;
  /**
   * ISO-1, the seed's per-child forceComplete(reason): ends the running sub-agent `id` (a
   * session id from activeChildren() or subAgents().active) with `reason` (its
   * forcedReason) and cancels its run; the delegate_task call is answered as forced.
   * false when it is not running (or delegation is off). Throws "invalid_argument" for a
   * blank reason. Its record in subAgents().history keeps what it spent up to then —
   * tokenCount, usage (cached tokens, costs, callCount), toolsUsed, its messages — and
   * subAgents().stats count it: once the run that delegated it has settled, stats.usage
   * equals totalUsage().children, and so does stats.totalTokens unless a model call was
   * in flight when it ended (then it also counts that call's prompt estimate, as the
   * budget did; no usage reports it). The registry is this runtime's: after a resume or
   * importState() the earlier children are in totalUsage() only.
   */
  forceCompleteSubAgent(id: string, reason: string): boolean;
  /**
   * ISO-4, the seed's registry cleanup(maxAgeMs): drops sub-agents that ended more than
   * `maxAgeMs` ago from subAgents().history and force-completes ("stale") running ones
   * started more than `maxAgeMs` ago (their records keep what they spent, as
   * forceCompleteSubAgent()); returns how many.
   */
  cleanupSubAgents(maxAgeMs: number): number;
  /**
   * Runs the tasks through delegation in parallel batches of maxConcurrency (default 3,
   * capped by the policy's maxConcurrentChildren), one batch at a time (ISO-7); a failing
   * task never cancels its siblings; results keep the input order. It counts as a run: it
   * takes the run slot like run(), per-run budgets apply and cancel() stops it: no worker
   * is built after cancel(), and the tasks not yet started answer "cancelled". Rejects
   * with "run_in_progress", or "delegation_not_configured" without workers or clone.
   * Listeners see it as a run: "run_started" first (input: the task descriptions, one per
   * line), the children's "sub_agent" events, "run_finished" last (status "completed", or
   * "cancelled" after cancel(); iterations 0; usage: its children's), all with the job's
   * runId.
   */
  runDecomposed(tasks: DecomposedTask[], maxConcurrency?: number): Promise<DecomposedResult[]>;
  /**
   * CHAT-1: goes back to just before run `runId` began (the `runId` of its RunResult or
   * of its events): that run and every later one are dropped — their messages, a turn of
   * theirs waiting for approval — as one change, written to the SessionStore first (off
   * the JS thread, one transaction: an app killed meanwhile reopens the old session or
   * the rewound one, never half of it). What the dropped turns spent stays counted
   * (totalUsage().discarded: the provider billed it). The next request starts with the
   * bytes the provider already saw up to that point, so its prompt cache still serves
   * them. Emits "session_rewound" (then "session_committed" with a store). Resolves with
   * what was dropped (`inputText`: the dropped input, for an edit box). Rejects (nothing
   * changes) with "unknown_run" (no such run, or an earlier rewind dropped it),
   * "run_compressed" (a compression archived its input into an episode: refused, never a
   * guess), "invalid_state" (an imported history marks the run inside a tool cycle),
   * "run_in_progress" or the store's code. Like run(), it takes the run slot
   * before the Promise is returned and holds it until the Promise settles.
   */
  rewind(runId: string): Promise<RewindResult>;
  /**
   * CHAT-1: "regenerate this answer": rewind(runId), then a new run (a new run id) of the
   * same input, as one call; its first request is the bytes the dropped run sent, so the
   * provider's prompt cache serves them. Rejects like rewind() (then no run starts), then
   * with a run's codes; when the run failed before the model answered (the provider
   * down), the session is put back as it was before the call, in the store too
   * ("session_committed"): nothing is lost and the same call can be made again.
   */
  regenerate(runId: string): Promise<RunResult>;
  /**
   * CHAT-1: "edit my message and send it again": rewind(runId), then a new run of `input`
   * in its place, as one call. Rejects like rewind() (then no run starts), then with a
   * run's codes; when the run failed before the model answered, the session is put
   * back as it was before the call, like regenerate().
   */
  editAndResend(runId: string, input: string): Promise<RunResult>;
  /**
   * CHAT-2: a new session `newSessionId` starting from this one through run
   * `throughRunId` (its answer included; absent: the whole session, a turn waiting for
   * approval included): the messages, the episodes (copied), the run ids (so it can be
   * rewound too) and the token calibration; its usages start empty (what was spent
   * stays this session's, so both totals add up to what was billed). With a SessionStore
   * the fork is written into it as a new session (off the JS thread, one transaction); a
   * new AgentRuntime with `sessionId` = `newSessionId` and the store resumes it. Resolves
   * with the fork's state JSON (what importState() takes; without a store, the only copy).
   * This session does not change; working memory is a runtime's and is not copied.
   * Rejects (nothing written) with "unknown_run", "run_compressed" (the point is inside
   * what a compression archived), "session_exists" (the store has that session, or it is
   * this session's own id), "session_locked" (another runtime has that session open),
   * "invalid_config" (an empty id), "run_in_progress" or the
   * store's code. Like run(), it takes the run slot before the Promise is returned and
   * holds it until the Promise settles.
   */
  fork(newSessionId: string, throughRunId?: string): Promise<string>;
}

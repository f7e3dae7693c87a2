/*
 * Type declarations of the native module libarkagent.so (N-API, built with napi-ohos
 * from bindings/napi). Held to ArkTS rules: no any/unknown, no object-literal types,
 * no index signatures. Every async method returns a Promise; every error thrown or
 * rejected by the module is an Error whose `code` property is a stable string code
 * (e.g. "invalid_json", "run_in_progress", "llm_auth").
 *
 * Keep in sync with bindings/napi/src: tests/js/dts_sync.test.js fails when a class,
 * method or property exists on one side only.
 */

/** One HTTP header. */
export interface HttpHeader {
  name: string;
  value: string;
}

/** A request the host must send. `body` is UTF-8 JSON. */
export interface HttpRequest {
  method: string;
  url: string;
  headers: HttpHeader[];
  body: string;
  /** true when the library asked the provider for an SSE stream. */
  stream: boolean;
}

/** What the host received. `body` is the whole response body as text. */
export interface HttpResponse {
  status: number;
  headers?: HttpHeader[];
  body: string;
}

/**
 * The host's HTTP transport: sends the request and resolves with the response (any
 * status; the library classifies error statuses). Reject when no response arrived: an
 * Error whose `code` is "timeout" counts as a timeout, "cancelled" as cancelled, anything
 * else as a network failure (error code "llm_transport").
 */
export type HttpTransport = (request: HttpRequest) => Promise<HttpResponse>;

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
}

/**
 * A host tool: resolves with the result the model will see. A rejection is reported to the
 * model as a failed result carrying the error's message (and its string `code`, if any).
 */
export type ToolExecutor = (call: ToolCall) => Promise<ToolResult>;

/**
 * A runtime event. `payloadJson` is the event's JSON: its `type` and type-specific fields
 * (snake_case). Types: "run_started", "model_request" (iteration, message_count,
 * tool_count, estimated_prompt_tokens, compression_threshold when compression is on),
 * "model_response", "text_delta", "tool_call_started", "tool_call_finished",
 * "compression" (trigger: "preflight" | "post_turn" | "overflow" | "manual"; outcome;
 * reason; episode_id; error_code; messages_before; messages_after;
 * estimated_prompt_tokens; threshold; usage), "run_finished".
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

/** Token usage of one model call. */
export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens?: number;
  reasoningTokens?: number;
  /** `raw.source` when set, e.g. "context_compression". */
  source?: string;
}

/** The outcome of one run. status: "completed" | "cancelled" | "max_iterations". */
export interface RunResult {
  runId: string;
  status: string;
  finalText?: string;
  iterations: number;
}

/** Describes a tool to the model. `parametersJson` is a JSON Schema object text. */
export class ToolDefinition {
  constructor(name: string, description: string, parametersJson: string);
  readonly name: string;
  readonly description: string;
  readonly parametersJson: string;
}

/** Tools by name. */
export class ToolRegistry {
  constructor();
  /** Throws code "tool_name_duplicate" when the name is taken, "invalid_json" on bad parameters. */
  register(definition: ToolDefinition, executor: ToolExecutor): void;
  unregister(name: string): boolean;
  has(name: string): boolean;
  names(): string[];
}

/** Where and how to reach an OpenAI-compatible Chat Completions endpoint. */
export class ModelConfig {
  /** baseUrl e.g. "https://api.deepseek.com/v1"; the request goes to `${baseUrl}/chat/completions`. */
  constructor(baseUrl: string, apiKey: string, model: string);
  baseUrl: string;
  model: string;
  temperature?: number;
  maxTokens?: number;
  /** Ask for an SSE stream. */
  stream: boolean;
}

/**
 * The structured summary prompt of the default compressor (CMP-8): it asks for one
 * `<state_snapshot>` with overall_goal, key_knowledge, file_system_state, recent_actions
 * and current_plan; a reply without all five is rejected ("malformed_summary").
 */
export const DEFAULT_SUMMARY_PROMPT: string;

/**
 * Transactional context compression into episodic memory (the default compressor's
 * settings). When the last model call's prompt tokens (or the estimate before a call)
 * reach `totalTokenThreshold`, the older messages are summarized into a
 * `<state_snapshot>` and moved into an `EpisodicMemory`; the last
 * `keepRecentMessageCount` messages stay (never splitting a tool call from its result).
 * A failed or skipped attempt changes nothing. With a compressor configured the model is
 * also offered the `retrieve_memory` tool to read the archived messages.
 * Counts must be non-negative integers (else code "invalid_config").
 */
export class ContextCompressor {
  constructor(totalTokenThreshold?: number, keepRecentMessageCount?: number, summaryPrompt?: string,
    minMessagesToSummarize?: number);
  /** Prompt tokens that trigger a compression (default 64000). */
  totalTokenThreshold: number;
  /** Messages kept verbatim at the end (default 10). */
  keepRecentMessageCount: number;
  /** The summary instructions (default DEFAULT_SUMMARY_PROMPT). */
  summaryPrompt: string;
  /** Fewer messages than this to summarize: skipped (default 3). */
  minMessagesToSummarize: number;
  /** Input tokens one summary request may use; longer parts are summarized in chunks. Unset: the threshold. */
  summarizerMaxInputTokens?: number;
  /** A different model for summaries (same transport); unset: the runtime's model. Reading gives a copy. */
  summarizerModel?: ModelConfig;
}

/** What one compression attempt did (read-only). */
export class CompressResult {
  /** Instances come from `AgentRuntime.compressNow()`. */
  private constructor();
  /** "skipped" | "compressed" | "failed". */
  readonly outcome: string;
  /**
   * The reason code. skipped: "no_usage", "history_too_short", "below_threshold",
   * "last_usage_is_compression", "no_safe_split"; compressed: "compressed"; failed:
   * "llm_error", "empty_summary", "malformed_summary", "summary_not_smaller",
   * "post_commit_pairing_violation", "cancelled", "compressor_panicked".
   */
  readonly reason: string;
  /** The new episode's snapshot id, when compressed. */
  readonly episodeId?: string;
  /** The model error's code when reason is "llm_error". */
  readonly errorCode?: string;
  /** Messages moved into the episode (or that would have been). */
  readonly messagesArchived: number;
  /** The summary calls' usage (source "context_compression"); recorded in usages() only when compressed. */
  readonly usage?: ModelUsage;
}

/** Runtime settings. */
export class AgentRuntimeConfig {
  constructor(model: ModelConfig);
  systemPrompt: string;
  /** Model calls per run at most (default 16). */
  maxIterations: number;
  /** Tool calls of one turn that run at once at most (default 4). */
  maxParallelTools: number;
  /** Fixed session id; empty means generated. */
  sessionId: string;
  /**
   * Context compression; unset (the default) turns it off. Assigning stores a copy of
   * the compressor's settings and reading gives a copy: to change a setting, assign again.
   */
  contextCompressor?: ContextCompressor;
}

/** One compressed stretch of conversation (read-only). */
export class EpisodicMemory {
  /** Instances come from `AgentRuntime.episodicMemories()`, `listEpisodes()` and `findEpisode()`. */
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

/** One conversation with a model and tools. */
export class AgentRuntime {
  constructor(config: AgentRuntimeConfig, transport: HttpTransport, tools: ToolRegistry);
  readonly sessionId: string;
  /**
   * Runs until a final answer, max iterations or cancel(). The run is registered before
   * the Promise is returned: a cancel() right after run() cancels it, and a run() (or
   * compressNow()) while a run is active rejects with code "run_in_progress".
   */
  run(input: string): Promise<RunResult>;
  /**
   * One compression attempt now, with the compressor's usual checks; resolves "skipped"
   * ("no_usage") when no compressor is configured. Rejects with "run_in_progress" while a
   * run is active (a run() called right after compressNow(), before it settles, may take
   * precedence). A failed or skipped attempt leaves exportState() byte-identical.
   */
  compressNow(): Promise<CompressResult>;
  /** Cancels the active run, if any: in-flight HTTP and tools stop, history stays paired. */
  cancel(): void;
  /** The whole state (history, episodic memories, usages, session id) as JSON. */
  exportState(): string;
  /** Replaces the state with an exported one. Throws "invalid_json" or "invalid_state". */
  importState(stateJson: string): void;
  /** The messages as JSON (an array). */
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
  unsubscribe(subscriptionId: number): boolean;
}

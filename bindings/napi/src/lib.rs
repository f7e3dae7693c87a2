//! N-API module `libarkagent.so` (napi-ohos): the classes of
//! `ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts`, each wrapping a core object.
//!
//! This crate converts and delegates only: every decision lives in the `arkagent` core.
//! JS callbacks (HTTP transport, tool executors, event listeners, sub-agent factories) all
//! go through [`callback`]; every error reaching JS carries a stable `code` ([`error`]),
//! argument-type errors included ([`args`]).
//!
//! Layers, bottom to top: a module uses (`crate::…`, in code or docs) only modules of a
//! lower layer, so the crate has no import circle (tests/js/napi_layers.test.js holds the
//! files to this list; a new file must be added to it):
//!
//! 0. `codes` (the module's own error codes, plain Rust: scripts/closed-sets compiles it too)
//! 1. `error`, `convert`, `callback`, `host_fix` (ground: errors, shared conversions, JS calls)
//! 2. `args`, `records` (arguments and settings coming in from JS; the records' one JS shape)
//! 3. `numbers`, `request` (range checks of JS numbers; the request object the transport gets)
//! 4. `usage`, `model_config`, `memory`, `events`, `store`, `transport`, `approval_order`
//! 5. `seed_helpers`, `tools`, `images`, `compression`, `mcp`
//! 6. `delegation`, `sub_agents`, `image_codec`
//! 7. `config` (`AgentRuntimeConfig`)
//! 8. `runtime` (`AgentRuntime`)
//! 9. `runtime_delegation`, `runtime_approval`, `runtime_gestures` (`AgentRuntime`'s delegation, approval and chat-gesture methods)
//!
//! index.d.ts is generated (ARCHITECTURE.md, "What is generated"): each module's `ts` block
//! lists its part — `// declare: Name` for a #[napi] item, declared from its signature and
//! its Rust doc (so the `///` docs of this crate are the JS docs, written for JS users), a
//! few hand lines for what no Rust item declares — and the records come from the core.

mod approval_order;
mod args;
mod callback;
mod codes;
mod compression;
mod config;
mod convert;
mod delegation;
mod error;
mod events;
#[cfg(all(not(target_env = "ohos"), target_os = "linux"))]
mod host_fix;
mod image_codec;
mod images;
mod mcp;
mod memory;
mod model_config;
mod numbers;
mod records;
mod request;
mod runtime;
mod runtime_approval;
mod runtime_delegation;
mod runtime_gestures;
mod seed_helpers;
mod store;
mod sub_agents;
mod tools;
mod transport;
mod usage;

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
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
*/

// The closed sets (STYLE rule 15, ARCH-2): scripts/gen-dts.js replaces the marker line by
// one string-literal union per Rust enum, its values printed by scripts/closed-sets.
/* ts
/*
 * Closed sets. Every string the module hands over from a fixed set — error codes, event
 * types, compression outcomes and reasons, run statuses — has a union type below,
 * generated from the Rust enum that defines it; the declarations use these types, the
 * values at run time are the same strings. tests/js/dts_closed_sets.test.js fails when a
 * union and its enum differ.
 */

// closed sets: generated by scripts/gen-dts.js
*/

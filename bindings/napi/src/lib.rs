//! N-API module `libarkagent.so` (napi-ohos): the classes of
//! `ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts`, each wrapping a core object.
//!
//! This crate converts and delegates only: every decision lives in the `arkagent` core.
//! JS callbacks (HTTP transport, tool executors, event listeners, sub-agent factories) all
//! go through [`callback`]; every error reaching JS carries a stable `code` ([`error`]),
//! argument-type errors included ([`args`]).

mod args;
mod callback;
mod compression;
mod config;
mod delegation;
mod error;
mod events;
#[cfg(all(not(target_env = "ohos"), target_os = "linux"))]
mod host_fix;
mod memory;
mod numbers;
mod parity;
mod runtime;
mod store;
mod sub_agents;
mod tools;
mod transport;

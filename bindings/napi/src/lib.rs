//! N-API module `libarkagent.so` (napi-ohos): the classes of
//! `ohos/src/main/cpp/types/libarkagent/index.d.ts`, each wrapping a core object.
//!
//! This crate converts and delegates only: every decision lives in the `arkagent` core.
//! JS callbacks (HTTP transport, tool executors, event listeners) all go through
//! [`callback`]; every error reaching JS carries the core's stable `code`
//! ([`error`]).

mod callback;
mod compression;
mod config;
mod error;
mod events;
#[cfg(all(not(target_env = "ohos"), target_os = "linux"))]
mod host_fix;
mod memory;
mod runtime;
mod tools;
mod transport;

//! Integration tests of the public Rust API. One binary; tests named after SPEC ids.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod arch_imports;
mod arch_names;
#[path = "../c/programs.rs"]
mod c_programs;
mod cmp_10_chunks;
mod cmp_calibration;
mod compression;
mod cost;
mod cost_3;
mod cost_4;
mod cost_c;
mod delegation;
mod doors;
mod fuzz_replay;
mod glossary;
mod header;
mod images;
mod images_store;
mod images_c;
mod isolation;
mod runtime;
mod runtime_correctness;
mod store;
mod store_import;
mod store_kill;
mod sub_nested;
mod support;
mod wire;
mod wire_fake;
mod llm_fake;
mod llm_providers;
mod llm_retry;
mod llm_secrets;
mod llm_stream;
mod numbers;
mod parity;
mod ohos_6_timeouts;
mod perf_2_memory;
mod perf_7;
mod photos;
mod prefix;

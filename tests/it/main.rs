//! Integration tests of the public Rust API. One binary; tests named after SPEC ids.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod c_abi;
mod compression;
mod header;
mod runtime;
mod support;

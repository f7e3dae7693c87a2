//! Integration tests of the public Rust API. One binary; tests named after SPEC ids.

mod runtime;
mod support;

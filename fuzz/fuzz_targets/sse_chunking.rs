#![no_main]
//! See `arkagent::fuzzing::check_sse_chunking`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_sse_chunking(data));

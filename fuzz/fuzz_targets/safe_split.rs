#![no_main]
//! See `arkagent::fuzzing::check_safe_split`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_safe_split(data));

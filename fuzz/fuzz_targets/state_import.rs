#![no_main]
//! See `arkagent::fuzzing::check_state_import`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_state_import(data));

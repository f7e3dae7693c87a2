#![no_main]
//! See `arkagent::fuzzing::check_config_json`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_config_json(data));

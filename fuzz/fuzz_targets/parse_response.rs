#![no_main]
//! See `arkagent::fuzzing::check_parse_response`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_parse_response(data));

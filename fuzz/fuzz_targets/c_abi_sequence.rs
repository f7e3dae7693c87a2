#![no_main]
//! See `arkagent_c::fuzzing::check_c_abi_sequence` (REL-6: random call sequences over the
//! C ABI with its oracles).
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent_c::fuzzing::check_c_abi_sequence(data));

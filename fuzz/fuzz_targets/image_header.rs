#![no_main]
//! See `arkagent::fuzzing::check_image_header` (IMG-5: no panic on any bytes).
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_image_header(data));

#![no_main]
//! See `arkagent::fuzzing::check_mcp_answer` (issue 42: an MCP answer read whole and chunked).
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_mcp_answer(data));

#![no_main]
//! See `arkagent::fuzzing::check_mcp_tools` (REL-7: an MCP server's tool list entry and
//! tool-call result against what the specification says they carry).
libfuzzer_sys::fuzz_target!(|data: &[u8]| arkagent::fuzzing::check_mcp_tools(data));

//! MCP-1..MCP-3 through the C ABI: tests/c/mcp.c, built against include/arkagent.h and
//! the freshly built libarkagent_c.so.

#[test]
fn mcp_1_mcp_3_c_servers_from_the_config_and_the_auth_callback() {
    let stdout = crate::c_programs::compile_and_run("mcp");
    assert!(stdout.contains("mcp: ") && stdout.contains(" 0 failed"), "{stdout}");
}

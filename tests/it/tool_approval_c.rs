//! TOOL-1..TOOL-3 through the C ABI: tests/c/tool_approval.c, built against
//! include/arkagent.h and the freshly built libarkagent_c.so.

#[test]
fn tool_1_tool_2_tool_3_c_approval_policy_and_restart() {
    let stdout = crate::c_programs::compile_and_run("tool_approval");
    assert!(stdout.contains("tool_approval: ") && stdout.contains(" 0 failed"), "{stdout}");
}

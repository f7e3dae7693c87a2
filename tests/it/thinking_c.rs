//! THINK-1..THINK-5 through the C ABI: tests/c/thinking.c, built against include/arkagent.h
//! and the freshly built libarkagent_c.so.

#[test]
fn think_2_c_tool_loops_complete_against_strict_thinking_providers() {
    let stdout = crate::c_programs::compile_and_run("thinking");
    assert!(stdout.contains("thinking: ") && stdout.contains(" 0 failed"), "{stdout}");
}

//! TOOL-4 through the C ABI: tests/c/tool_abort.c, built against include/arkagent.h and
//! the freshly built libarkagent_c.so.

#[test]
fn tool_4_c_deadlines_cancel_and_free_fire_the_abort_signal() {
    let stdout = crate::c_programs::compile_and_run("tool_abort");
    assert!(stdout.contains("tool_abort: ") && stdout.contains(" 0 failed"), "{stdout}");
}

//! CHAT-1..CHAT-3 through the C ABI: tests/c/chat.c, built against include/arkagent.h and
//! the freshly built libarkagent_c.so.

#[test]
fn chat_1_chat_2_chat_3_c_rewind_regenerate_edit_and_fork() {
    let stdout = crate::c_programs::compile_and_run("chat");
    assert!(stdout.contains("chat: ") && stdout.contains(" 0 failed"), "{stdout}");
}

//! MCP-1, MCP-4 through the Rust API over a real HTTP transport: the demo (`--mcp`) against
//! the official TypeScript SDK's server (tests/mcp/sdk-server.mjs, installed from its lock
//! file with `npm ci` when missing): the server connects at the first line, the simulated
//! model calls a tool it names, the answer quotes the server's result; a bearer token from
//! ARKAGENT_MCP_TOKEN reaches the server and is never printed.
#![allow(clippy::expect_used)] // a test may panic

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

fn mcp_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// The SDK server with `args`, and its URL; it exits when its stdin closes (the child is
/// killed at the end of the test too).
fn sdk_server(args: &[&str]) -> (Child, String) {
    let dir = mcp_dir();
    // Once for the whole test binary: two tests running `npm ci` at once in a fresh clone
    // would remove each other's node_modules.
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        dir.join("node_modules/@modelcontextprotocol/sdk").exists()
            || Command::new("npm").args(["ci", "--silent", "--no-audit", "--no-fund"]).current_dir(&dir).status().is_ok_and(|s| s.success())
    });
    assert!(installed, "npm ci in tests/mcp");
    let mut child = Command::new("node")
        .arg(dir.join("sdk-server.mjs"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the URL line");
    let url = serde_json::from_str::<serde_json::Value>(&line).expect("JSON")["url"].as_str().expect("url").to_owned();
    (child, url)
}

fn demo(args: &[&str], token: Option<&str>) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arkagent-demo"));
    command.args(args).env_remove("ARKAGENT_BASE_URL").env_remove("ARKAGENT_API_KEY").env_remove("RUST_LOG");
    match token {
        Some(t) => command.env("ARKAGENT_MCP_TOKEN", t),
        None => command.env_remove("ARKAGENT_MCP_TOKEN"),
    };
    let output = command.output().expect("the demo runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

#[test]
fn mcp_4_the_demo_calls_the_sdk_servers_tools_over_real_http() {
    for mode in [&["--json"][..], &[][..]] {
        let (mut server, url) = sdk_server(mode);
        let out = demo(&["--offline", "--mcp", &format!("sdk={url}"), "--say", r#"call sdk__add {"a": 2, "b": 40}"#, "--say", r#"call sdk__echo {"text": "hi"}"#], None);
        let _ = server.kill();
        assert!(out.contains("[mcp] sdk Connected: 7 tools (MCP 2025-11-25)"), "{out}");
        assert!(out.contains("<- tool sdk__add ok: 42") && out.contains("sdk__add returned 42"), "{out}");
        assert!(out.contains("<- tool sdk__echo ok: echo: hi"), "{out}");
        assert_eq!(out.matches("[mcp]").count(), 1, "connected once, at the first line: {out}");
    }
}

#[test]
fn mcp_1_the_token_reaches_the_server_and_is_never_printed() {
    let (mut server, url) = sdk_server(&["--require-auth", "--json"]);
    let with = demo(&["--offline", "--mcp", &url, "--say", "call mcp__whoami"], Some("mcp-secret-token"));
    let without = demo(&["--offline", "--mcp", &url, "--say", "hello"], None);
    let _ = server.kill();
    assert!(with.contains("<- tool mcp__whoami ok: auth ok"), "{with}");
    assert!(!with.contains("mcp-secret-token"), "never printed: {with}");
    assert!(without.contains("[mcp] mcp failed: mcp_auth"), "{without}");
}

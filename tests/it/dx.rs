//! DX-1 and DX-3 (issue 28 item 13): the README a newcomer reads first, and the `tracing`
//! output a host sees (routed to HiLog on OpenHarmony).

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arkagent::{AgentRuntime, AgentRuntimeConfig, ToolDefinition, ToolRegistry};
use serde_json::json;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::support::{model_config, text_reply, tool_calls_reply, Reply, ScriptedModel, WeatherTool, API_KEY};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The README's `## ` sections: heading → body.
fn sections(readme: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![("".into(), String::new())];
    for line in readme.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            out.push((heading.to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// DX-1: README says what and why before anything else, gives the two commands (real,
/// executable scripts), quickstarts for ArkTS, C and Rust (each with its code block; their
/// compiling is checked by napi_3_readme_arkts_quickstart_type_checks_against_the_har,
/// ffi_4_readme_c_snippets_compile_against_the_header and the README doctest) and an
/// architecture sketch.
#[test]
fn dx_1_readme_has_what_and_why_the_two_commands_three_quickstarts_and_a_sketch() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let sections = sections(&readme);
    let intro = &sections[0].1;
    assert!(intro.contains("The native core of an agent runtime for HarmonyOS apps") && intro.contains("\nWhy: "), "README opens with what and why");

    let find = |name: &str| sections.iter().find(|(h, _)| h.starts_with(name)).map(|(_, b)| b.as_str()).unwrap_or_else(|| panic!("README has no '## {name}'"));
    let commands = find("The two commands");
    let block = commands.split("```sh\n").nth(1).and_then(|b| b.split("```").next()).expect("the commands in a sh block");
    let scripts: Vec<&str> = block.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| w.starts_with("scripts/")).collect();
    assert_eq!(scripts, ["scripts/demo.sh", "scripts/test.sh"]);
    for script in scripts {
        let meta = std::fs::metadata(root().join(script)).unwrap_or_else(|e| panic!("{script}: {e}"));
        assert!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0, "{script} is not executable");
    }

    for (section, fence) in [("Quickstart: ArkTS", "```typescript\n"), ("Quickstart: C", "```c\n"), ("Quickstart: Rust", "```rust")] {
        let body = find(section);
        assert!(body.contains(fence), "'## {section}' has no {fence:?} block");
    }
    let layout = find("Layout");
    assert!(layout.contains("```text\n") && layout.contains("src/") && layout.contains("bindings/c/") && layout.contains("bindings/napi/") && layout.contains("ohos/"));
    assert!(readme.contains("[ARCHITECTURE.md](ARCHITECTURE.md)") || layout.contains("ARCHITECTURE.md"), "the sketch points to ARCHITECTURE.md");
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// DX-3: a run traces through `tracing` — an `arkagent.run` span (with the run id), an
/// `arkagent.tool` span per tool call (name and call id), the model requests and a failed
/// call's warning with its code — never the API key. Off OpenHarmony `hilog::install`
/// installs nothing (the host's subscriber is the one used); on it, the lines go to HiLog
/// under the tag `arkagent`.
#[tokio::test(flavor = "current_thread")]
async fn dx_3_runs_trace_spans_and_events_and_hilog_is_only_installed_on_ohos() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_span_events(FmtSpan::NEW)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("call_w", "weather", json!({"city": "Beijing"}))], 10),
        text_reply("sunny", 20),
        Reply::Raw(400, json!({"error": {"message": "bad request"}}).to_string()),
    ]);
    let mut tools = ToolRegistry::new();
    tools.register(ToolDefinition::new("weather", "Weather", json!({"type": "object"})), Arc::new(WeatherTool::default())).unwrap();
    let mut config = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m"));
    config.tools = tools;
    let runtime = AgentRuntime::new(config, model).unwrap();
    let outcome = runtime.run("weather?").await.unwrap();
    let failed = runtime.run("again").await.unwrap_err();
    assert_eq!(failed.code().as_str(), "llm_bad_request");

    let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    assert!(text.contains(&format!("arkagent.run{{run_id={}}}", outcome.run_id)), "no run span: {text}");
    assert!(text.contains("arkagent.tool{name=weather call_id=call_w}"), "no tool span: {text}");
    assert!(text.matches("model request").count() >= 3, "the model requests are traced: {text}");
    let warning = text.lines().find(|l| l.contains("WARN") && l.contains("model call failed")).unwrap_or_else(|| panic!("no warning: {text}"));
    assert!(warning.contains("code=\"llm_bad_request\"") || warning.contains("code=llm_bad_request"), "{warning}");
    assert!(!text.contains(API_KEY), "the key is in the trace");

    assert!(!arkagent::hilog::install(tracing::Level::INFO), "hilog::install installs nothing off OpenHarmony");
    assert_eq!((arkagent::hilog::HILOG_TAG, arkagent::hilog::HILOG_DOMAIN), ("arkagent", 0xA6A0));
}

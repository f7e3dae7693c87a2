//! DX-1 / STORE-1 / STORE-2 / STORE-4 / STORE-6: the README's "## Quickstart: Rust", read
//! by a stranger and held to what it says. Its function `chat` is copied below verbatim
//! (dx_1_rust_quickstart_is_the_readme_code holds the copy to the README) and run as
//! printed: in a child process of this test binary whose working directory is a fresh
//! temporary directory (the snippet opens "sessions.db" relative to it), on a scripted
//! OpenAI-compatible transport, twice. The child's stdout is what `chat` printed (the
//! event type names, the final text and totals) with the transport's observations
//! (`OBS {json}` lines: each request, and what the store listed while the model was
//! asked). The sentences below the snippet (the demo host, the `sqlite` feature, the
//! build without it, `InMemorySessionStore` or your own `SessionStore`) are held too.

// README: begin
use std::sync::Arc;
use arkagent::{runtime::Compression, AgentEvent, AgentRuntime, AgentRuntimeConfig, ArkAgentError, HttpTransport, ModelConfig, SessionStore, SqliteStore};

// `transport` is your HttpTransport (see examples/demo/src/transport.rs for one on ureq).
async fn chat(transport: Arc<dyn HttpTransport>) -> Result<(), ArkAgentError> {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("https://api.deepseek.com/v1", "sk-…", "deepseek-v4-flash"));
    config.compression = Some(Compression::default_compressor());
    // Durable sessions: committed at every commit point, resumed by session id.
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open("sessions.db")?);
    config.store = Some(store.clone());
    config.session_id = Some("chat-1".into());
    let runtime = AgentRuntime::new(config, transport)?; // resumes "chat-1" if it exists
    let _events = runtime.subscribe(Arc::new(|e: &AgentEvent| println!("{}", e.kind.type_name())));
    let outcome = runtime.run("Hello").await?;
    println!("{:?} — totals: {:?}", outcome.final_text, runtime.total_usage());
    Ok(())
}
// README: end

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use arkagent::store::{Commit, OpenedSession, SessionLease, SessionSummary};
use arkagent::{CancellationToken, HttpRequest, HttpResponse, InMemorySessionStore, StoreError, TransportError};
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The README's `## <heading>` section, up to the next `## `.
fn readme_section(heading: &str) -> String {
    let readme = read("README.md");
    let start = readme.find(&format!("\n## {heading}\n")).unwrap_or_else(|| panic!("README has no '## {heading}'"));
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |at| at + 3);
    rest[..end].to_owned()
}

// ------------------------------------------------------------------ the scripted model

const URL: &str = "https://api.deepseek.com/v1/chat/completions";
const KEY: &str = "sk-…";
const ANSWERS: [&str; 2] = ["Hi, first answer", "Welcome back, second answer"];

/// What the scripted model reads from the store while it is asked (as JSON).
type Probe = Box<dyn Fn() -> Value + Send + Sync>;

/// An OpenAI-compatible model: answers request n with `ANSWERS[n]` (the last one after
/// that) as a Chat Completions body, 21 prompt + 6 completion tokens; prints an `OBS` line
/// per request when `print` is set.
struct QuickModel {
    requests: Mutex<Vec<Value>>,
    /// What the probe read at each request.
    listed: Mutex<Vec<Value>>,
    probe: Option<Probe>,
    print: bool,
}

impl QuickModel {
    fn new(probe: Option<Probe>, print: bool) -> Arc<Self> {
        Arc::new(Self { requests: Mutex::default(), listed: Mutex::default(), probe, print })
    }
}

fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-readme", "object": "chat.completion", "created": 1718000000, "model": "deepseek-v4-flash",
        "system_fingerprint": "fp_readme",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": null, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 21, "completion_tokens": 6, "total_tokens": 27}
    })
}

#[async_trait::async_trait]
impl HttpTransport for QuickModel {
    async fn send(&self, request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let body: Value = serde_json::from_str(&request.body).expect("the request body is JSON");
        let auths: Vec<&str> = request.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("authorization")).map(|(_, v)| v.as_str()).collect();
        let key_elsewhere = request.body.contains(KEY)
            || request.url.contains(KEY)
            || request.headers.iter().any(|(k, v)| !k.eq_ignore_ascii_case("authorization") && v.contains(KEY));
        let listed = self.probe.as_ref().map_or(Value::Null, |probe| probe());
        let n = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(body.clone());
            requests.len() - 1
        };
        self.listed.lock().unwrap().push(listed.clone());
        if self.print {
            let seen = json!({
                "request": n, "method": request.method, "url": request.url, "stream": request.stream,
                "authorization_ok": auths == [format!("Bearer {KEY}")], "key_elsewhere": key_elsewhere,
                "body": body, "listed": listed,
            });
            println!("OBS {seen}");
        }
        Ok(HttpResponse::full(200, completion(ANSWERS[n.min(1)]).to_string()))
    }
}

// ------------------------------------------------------------------ the child process

const CHILD: &str = "ARKAGENT_README_QUICKSTART_CHILD";
const CHILD_TEST: &str = "readme_quickstart_rust::readme_rust_quickstart_child_process";

/// The README's `chat`, run twice as printed (with a working directory of its own), in
/// the child process dx_1's tests start; outside it (no `ARKAGENT_README_QUICKSTART_CHILD`)
/// it returns at once, so it proves nothing by itself (no requirement id in its name).
/// Panics (failing the parent's tests) when `chat` errs.
#[tokio::test]
async fn readme_rust_quickstart_child_process() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let probe: Probe = Box::new(|| serde_json::to_value(SqliteStore::open("sessions.db").and_then(|s| s.list_sessions()).expect("the store file lists while the model is asked")).unwrap());
    let model = QuickModel::new(Some(probe), true);
    for n in 1..=2 {
        println!("=== chat {n}");
        chat(model.clone()).await.expect("the README's chat runs");
    }
    println!("=== end");
}

/// What one child run printed, split by `chat` call.
struct ChildRun {
    /// What the store file in the child's working directory held afterwards, reopened.
    sessions: Vec<SessionSummary>,
    state: arkagent::AgentState,
    /// Per call: the lines `chat` printed (event type names, then its final line).
    printed: Vec<Vec<String>>,
    /// Per call: the transport's observations.
    seen: Vec<Vec<Value>>,
}

fn child_run() -> &'static ChildRun {
    static RUN: OnceLock<ChildRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("arkagent-readme-rust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(std::env::current_exe().unwrap())
            .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
            .current_dir(&dir)
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "the README's chat failed in {}:\n{stdout}\n{}", dir.display(), String::from_utf8_lossy(&out.stderr));
        let mut printed: Vec<Vec<String>> = Vec::new();
        let mut seen: Vec<Vec<Value>> = Vec::new();
        let mut inside = false;
        // libtest writes "test <name> ... " before the test's own first line.
        for line in stdout.lines().map(|l| l.find("=== ").map_or(l, |at| &l[at..])) {
            if line.starts_with("=== chat ") {
                printed.push(Vec::new());
                seen.push(Vec::new());
                inside = true;
            } else if line == "=== end" {
                inside = false;
            } else if let Some(obs) = line.strip_prefix("OBS ").filter(|_| inside) {
                seen.last_mut().unwrap().push(serde_json::from_str(obs).unwrap());
            } else if inside && !line.is_empty() {
                printed.last_mut().unwrap().push(line.to_owned());
            }
        }
        assert_eq!(printed.len(), 2, "two calls of chat in the child's output:\n{stdout}");
        let (sessions, state) = reopened(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        ChildRun { sessions, state, printed, seen }
    })
}

/// The store file the child's `chat` wrote, as a host would reopen it.
fn reopened(dir: &Path) -> (Vec<SessionSummary>, arkagent::AgentState) {
    let store = SqliteStore::open(dir.join("sessions.db")).expect("sessions.db in the working directory");
    let sessions = store.list_sessions().unwrap();
    let state = store.open_session("chat-1").unwrap().state.expect("chat-1 was committed");
    (sessions, state)
}

/// The (role, content) pairs of a request's messages, the system prompt left out.
fn dialogue(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().expect("messages");
    messages
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let content = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
                other => other.to_string(),
            };
            (m["role"].as_str().unwrap().to_owned(), content)
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(r, c)| ((*r).to_owned(), (*c).to_owned())).collect()
}

// ------------------------------------------------------------------ the snippet's promises

/// The code run here is the README's, character for character (and it compiles: this
/// file builds).
#[test]
fn dx_1_rust_quickstart_is_the_readme_code() {
    let section = readme_section("Quickstart: Rust");
    let block = section.split("```rust,no_run\n").nth(1).expect("a ```rust,no_run block").split("\n```").next().unwrap();
    let this = read("tests/it/readme_quickstart_rust.rs");
    let copy = this.split("// README: begin\n").nth(1).unwrap().split("\n// README: end").next().unwrap();
    assert_eq!(copy, block, "tests/it/readme_quickstart_rust.rs's copy of the README's Rust quickstart differs: copy the README's block again");
}

/// The snippet's requests are what its config says: POST to the base URL's
/// /chat/completions, the key in the Authorization header only, the model named, a whole
/// (non-streamed) answer, and `config.compression` in force (the model is offered
/// `retrieve_memory`, the tool of a compressing runtime).
#[test]
fn dx_1_rust_quickstart_requests_follow_its_config() {
    let run = child_run();
    for seen in run.seen.iter().flatten() {
        assert_eq!((seen["method"].as_str(), seen["url"].as_str(), seen["stream"].as_bool()), (Some("POST"), Some(URL), Some(false)), "{seen}");
        assert_eq!(seen["authorization_ok"], true, "one Authorization header: Bearer sk-…");
        assert_eq!(seen["key_elsewhere"], false, "the key only in the Authorization header");
        assert_eq!(seen["body"]["model"], "deepseek-v4-flash");
        let tools: Vec<&str> = seen["body"]["tools"].as_array().into_iter().flatten().filter_map(|t| t["function"]["name"].as_str()).collect();
        assert!(tools.contains(&"retrieve_memory"), "compression on: retrieve_memory offered; tools {tools:?}");
    }
    assert_eq!(run.seen.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1], "one request per chat");
}

/// "let _events = runtime.subscribe(Arc::new(|e: &AgentEvent| println!("{}", e.kind.type_name())));"
/// prints each event's type name, in order: a run starts, asks the model, hears it, commits,
/// finishes — all before `chat` prints its last line.
#[test]
fn dx_1_rust_quickstart_events_subscription_prints_type_names() {
    let run = child_run();
    for printed in &run.printed {
        let (last, names) = printed.split_last().expect("chat printed something");
        assert!(last.contains(" — totals: "), "chat's last line is the final text and totals: {printed:?}");
        assert!(names.iter().all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c == '_')), "not all type names: {names:?}");
        assert_eq!(names.first().map(String::as_str), Some("run_started"), "{names:?}");
        assert_eq!(names.last().map(String::as_str), Some("run_finished"), "{names:?}");
        for name in ["model_request", "model_response", "session_committed"] {
            assert!(names.iter().any(|n| n == name), "no {name} among {names:?}");
        }
        let at = |name: &str| names.iter().position(|n| n == name).unwrap();
        assert!(at("run_started") < at("model_request") && at("model_request") < at("model_response"), "{names:?}");
    }
}

/// `println!("{:?} — totals: {:?}", outcome.final_text, runtime.total_usage())`: the model's
/// answer and the session's totals — after the resume, the first run's usage included.
#[test]
fn dx_1_rust_quickstart_prints_the_final_text_and_totals() {
    let run = child_run();
    let finals: Vec<&String> = run.printed.iter().map(|p| p.last().unwrap()).collect();
    assert!(finals[0].starts_with(&format!("Some({:?}) — totals: UsageTotals {{", ANSWERS[0])), "{}", finals[0]);
    assert!(finals[1].starts_with(&format!("Some({:?}) — totals: UsageTotals {{", ANSWERS[1])), "{}", finals[1]);
    assert!(finals[0].contains("total: ChildUsageSummary { prompt_tokens: 21, completion_tokens: 6, total_tokens: 27,"), "{}", finals[0]);
    assert!(finals[1].contains("total: ChildUsageSummary { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54,"), "resumed usages count: {}", finals[1]);
}

/// "Durable sessions: committed at every commit point": while the model is asked, the
/// user's message is already in the file (the commit with the run start); after the run
/// its answer and usage are; each commit is one `session_committed` event (the store's
/// `commit_seq` equals the events printed).
#[test]
fn store_2_rust_quickstart_commits_at_every_commit_point() {
    let run = child_run();
    let listed_at = |call: usize| -> Vec<SessionSummary> { serde_json::from_value(run.seen[call][0]["listed"].clone()).unwrap() };
    let first = listed_at(0);
    assert_eq!(first.iter().map(|s| (s.id.as_str(), s.message_count)).collect::<Vec<_>>(), [("chat-1", 1)], "while run 1 asks the model: {first:?}");
    assert_eq!(first[0].title, "Hello");
    let second = listed_at(1);
    assert_eq!(second.iter().map(|s| (s.id.as_str(), s.message_count, s.total_tokens)).collect::<Vec<_>>(), [("chat-1", 3, 27)], "while run 2 asks: {second:?}");
    let (sessions, state) = (&run.sessions, &run.state);
    assert_eq!(sessions.iter().map(|s| (s.id.as_str(), s.message_count, s.total_tokens)).collect::<Vec<_>>(), [("chat-1", 4, 54)]);
    assert_eq!(state.usages.len(), 2, "both runs' usages committed");
    let committed: usize = run.printed.iter().flatten().filter(|n| *n == "session_committed").count();
    assert_eq!(sessions[0].commit_seq, committed as u64, "one session_committed event per commit");
    let after_run_1 = run.printed[0].iter().filter(|n| *n == "session_committed").count();
    assert!(after_run_1 >= 2, "run 1 committed its input and its answer: {:?}", run.printed[0]);
}

/// "resumed by session id" / "resumes "chat-1" if it exists": the second `chat` (a new
/// runtime, a new store handle, the same file) sends run 1's exchange before its own
/// "Hello"; the first started from nothing.
#[test]
fn store_4_rust_quickstart_resumes_chat_1_if_it_exists() {
    let run = child_run();
    assert_eq!(dialogue(&run.seen[0][0]["body"]), pairs(&[("user", "Hello")]), "a new chat-1 starts empty");
    assert_eq!(dialogue(&run.seen[1][0]["body"]), pairs(&[("user", "Hello"), ("assistant", ANSWERS[0]), ("user", "Hello")]), "chat-1 resumed");
    let state = &run.state;
    assert_eq!(state.session_id, "chat-1");
    let messages = serde_json::to_value(&state.history.messages).unwrap();
    let texts = messages.to_string();
    assert_eq!(texts.matches("Hello").count(), 2);
    assert!(texts.contains(ANSWERS[0]) && texts.contains(ANSWERS[1]), "{texts}");
}

// ------------------------------------------------------------------ the sentences below it

/// "See `examples/demo` for a complete host with a real HTTP client (ureq)." and the
/// snippet's "(see examples/demo/src/transport.rs for one on ureq)".
#[test]
fn dx_1_rust_quickstart_points_to_a_demo_host_with_a_ureq_transport() {
    let section = readme_section("Quickstart: Rust");
    assert!(section.contains("See `examples/demo` for a complete host with a real HTTP client (ureq)."), "the sentence changed: update this test");
    let manifest = read("examples/demo/Cargo.toml");
    assert!(manifest.lines().any(|l| l.starts_with("ureq =")), "examples/demo does not depend on ureq");
    let transport = read("examples/demo/src/transport.rs");
    assert!(transport.contains("impl HttpTransport for") && transport.contains("ureq::Agent"), "examples/demo/src/transport.rs is not an HttpTransport on ureq");
    // A complete host: a binary with a main, which builds a runtime.
    let main = read("examples/demo/src/main.rs");
    assert!(main.contains("fn main("), "examples/demo has no main");
    let sources: String = std::fs::read_dir(root().join("examples/demo/src")).unwrap().filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok()).collect();
    assert!(sources.contains("AgentRuntime::new(") && sources.contains("UreqTransport"), "the demo builds no runtime on its transport");
}

/// "`SqliteStore` needs the crate's default `sqlite` feature (bundled SQLite); with
/// `default-features = false` the core builds without it (`cargo check -p arkagent
/// --no-default-features`) … The C library and the N-API module are built with it."
/// The build without the feature is scripts/test.sh's step (checked here to be there);
/// the export is gated, SQLite bundled, and both bindings take the default features and
/// open a `SqliteStore`.
#[test]
fn store_1_readme_sqlite_is_the_default_bundled_feature_and_the_core_builds_without_it() {
    let section = readme_section("Quickstart: Rust");
    assert!(section.contains("`cargo check -p arkagent\n--no-default-features`"), "the sentence changed: update this test");
    let manifest = read("Cargo.toml");
    assert!(manifest.lines().any(|l| l.trim() == r#"default = ["sqlite"]"#), "sqlite is not a default feature");
    let rusqlite = manifest.lines().find(|l| l.starts_with("rusqlite =")).unwrap();
    assert!(rusqlite.contains("\"bundled\"") && rusqlite.contains("optional = true"), "SQLite is not bundled behind the feature: {rusqlite}");
    let lib = read("src/lib.rs");
    let export = lib.lines().position(|l| l.trim() == "pub use store::SqliteStore;").expect("lib.rs exports SqliteStore");
    assert_eq!(lib.lines().nth(export - 1).map(str::trim), Some(r#"#[cfg(feature = "sqlite")]"#), "SqliteStore's export is not behind the feature");
    // What remains without it: InMemorySessionStore and SessionStore, not gated.
    let unguarded = lib.lines().position(|l| l.starts_with("pub use store::{InMemorySessionStore, SessionStore")).expect("lib.rs exports InMemorySessionStore and SessionStore");
    assert!(!lib.lines().nth(unguarded - 1).unwrap().contains("cfg("), "InMemorySessionStore / SessionStore gated");
    let store_mod = read("src/store/mod.rs");
    let in_memory = store_mod.lines().position(|l| l.trim() == "mod in_memory;").expect("store/mod.rs has in_memory");
    assert!(!store_mod.lines().nth(in_memory - 1).unwrap().contains("cfg("), "in_memory gated");
    // The no-default-features build is a step of the one test command (CI).
    let test_sh = read("scripts/test.sh");
    assert!(
        test_sh.lines().any(|l| l.starts_with("step ") && l.ends_with("cargo check --quiet -p arkagent --no-default-features")),
        "scripts/test.sh has no step running `cargo check -p arkagent --no-default-features`"
    );
    // The bindings: default features, and a SqliteStore behind their store handles.
    for (manifest, source) in [("bindings/c/Cargo.toml", "bindings/c/src/store.rs"), ("bindings/napi/Cargo.toml", "bindings/napi/src/store.rs")] {
        let dep = read(manifest).lines().find(|l| l.starts_with("arkagent =")).map(str::to_owned).unwrap_or_else(|| panic!("{manifest} has no arkagent dependency"));
        assert!(!dep.contains("default-features = false") && !dep.contains("default_features = false"), "{manifest}: {dep}");
        assert!(read(source).contains("SqliteStore::open("), "{source} opens no SqliteStore");
    }
}

/// A store of your own: counts its commits and keeps sessions in an InMemorySessionStore.
struct MyStore {
    inner: InMemorySessionStore,
    commits: Arc<AtomicUsize>,
    opens: AtomicUsize,
}

struct MyLease {
    inner: Box<dyn SessionLease>,
    commits: Arc<AtomicUsize>,
}

impl SessionLease for MyLease {
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        self.commits.fetch_add(1, Ordering::SeqCst);
        self.inner.commit(commit)
    }
}

impl SessionStore for MyStore {
    fn open_session(&self, session_id: &str) -> Result<OpenedSession, StoreError> {
        self.opens.fetch_add(1, Ordering::SeqCst);
        let opened = self.inner.open_session(session_id)?;
        Ok(OpenedSession { lease: Box::new(MyLease { inner: opened.lease, commits: self.commits.clone() }), state: opened.state })
    }
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        self.inner.list_sessions()
    }
    fn delete_session(&self, session_id: &str) -> Result<bool, StoreError> {
        self.inner.delete_session(session_id)
    }
}

/// The README's config with `store` in place of the SqliteStore; one run of "Hello".
async fn chat_on(store: Arc<dyn SessionStore>, model: Arc<QuickModel>) -> Option<String> {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("https://api.deepseek.com/v1", "sk-…", "deepseek-v4-flash"));
    config.compression = Some(Compression::default_compressor());
    config.store = Some(store);
    config.session_id = Some("chat-1".into());
    let runtime = AgentRuntime::new(config, model).unwrap();
    runtime.run("Hello").await.unwrap().final_text
}

/// "… and sessions go to `InMemorySessionStore` or your own `SessionStore`": the same
/// snippet on either commits while the model is asked and resumes "chat-1" in a second
/// runtime.
#[tokio::test]
async fn store_1_readme_sessions_go_to_in_memory_session_store_or_your_own() {
    let section = readme_section("Quickstart: Rust");
    assert!(section.contains("sessions go to `InMemorySessionStore` or your own\n`SessionStore`"), "the sentence changed: update this test");

    let memory = Arc::new(InMemorySessionStore::new());
    let probe_store = memory.clone();
    let model = QuickModel::new(Some(Box::new(move || serde_json::to_value(probe_store.list_sessions().unwrap()).unwrap())), false);
    assert_eq!(chat_on(memory.clone(), model.clone()).await.as_deref(), Some(ANSWERS[0]));
    assert_eq!(chat_on(memory.clone(), model.clone()).await.as_deref(), Some(ANSWERS[1]));
    let listed = model.listed.lock().unwrap().clone();
    let listed: Vec<SessionSummary> = serde_json::from_value(listed[0].clone()).unwrap();
    assert_eq!(listed.iter().map(|s| (s.id.as_str(), s.message_count)).collect::<Vec<_>>(), [("chat-1", 1)], "InMemorySessionStore: the input committed before the model was asked");
    assert_eq!(dialogue(&model.requests.lock().unwrap()[1]), pairs(&[("user", "Hello"), ("assistant", ANSWERS[0]), ("user", "Hello")]), "InMemorySessionStore: chat-1 resumed");
    assert_eq!(memory.list_sessions().unwrap()[0].message_count, 4);

    let commits = Arc::new(AtomicUsize::new(0));
    let mine = Arc::new(MyStore { inner: InMemorySessionStore::new(), commits: commits.clone(), opens: AtomicUsize::new(0) });
    let counted = commits.clone();
    let model = QuickModel::new(Some(Box::new(move || json!(counted.load(Ordering::SeqCst)))), false);
    assert_eq!(chat_on(mine.clone(), model.clone()).await.as_deref(), Some(ANSWERS[0]));
    let after_first = commits.load(Ordering::SeqCst);
    assert_eq!(chat_on(mine.clone(), model.clone()).await.as_deref(), Some(ANSWERS[1]));
    let listed = model.listed.lock().unwrap().clone();
    assert!(listed[0].as_u64().unwrap() >= 1, "your store: a commit before the model was asked");
    assert!(after_first >= 2 && commits.load(Ordering::SeqCst) >= after_first + 2, "your store got every commit: {after_first} then {}", commits.load(Ordering::SeqCst));
    assert_eq!(mine.opens.load(Ordering::SeqCst), 2, "each runtime opened chat-1 through your store");
    assert_eq!(dialogue(&model.requests.lock().unwrap()[1]), pairs(&[("user", "Hello"), ("assistant", ANSWERS[0]), ("user", "Hello")]), "your store: chat-1 resumed");
}

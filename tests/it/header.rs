//! FFI-1: the committed header equals what cbindgen generates now.
//! Regenerate with `ARKAGENT_BLESS=1 cargo test --test it ffi_1` (scripts/gen-header.sh).

use std::path::Path;

#[test]
fn ffi_1_committed_header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(root.join("bindings/c"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = root.join("include/arkagent.h");
    if std::env::var_os("ARKAGENT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/arkagent.h is stale: run scripts/gen-header.sh and commit the result"
    );
}

/// PAR-1: every `#define ARKAGENT_<NAME>` of the header equals the Rust core's constant
/// `<NAME>` (the header's promise); a value changed on one side only fails here.
#[test]
fn par_1_header_constants_equal_the_core_constants() {
    let header = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/arkagent.h")).unwrap();
    let core: Vec<(&str, String)> = vec![
        ("DELEGATE_TASK_TOOL_NAME", format!("{:?}", arkagent::subagent::DELEGATE_TASK_TOOL_NAME)),
        ("CLONE_ASSIGNEE", format!("{:?}", arkagent::subagent::CLONE_ASSIGNEE)),
        ("SUB_AGENT_SERVICE_ID", format!("{:?}", arkagent::subagent::SUB_AGENT_SERVICE_ID)),
        ("RETRIEVE_MEMORY_TOOL_NAME", format!("{:?}", arkagent::memory::RETRIEVE_MEMORY_TOOL_NAME)),
        ("DEFAULT_MEMORY_LIMIT", arkagent::memory::DEFAULT_MEMORY_LIMIT.to_string()),
        ("MAX_MEMORY_LIMIT", arkagent::memory::MAX_MEMORY_LIMIT.to_string()),
        ("DEFAULT_TOTAL_TOKEN_THRESHOLD", arkagent::compress::DEFAULT_TOTAL_TOKEN_THRESHOLD.to_string()),
    ];
    let defines: Vec<(&str, &str)> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define ARKAGENT_"))
        .filter_map(|l| l.split_once(' '))
        .collect();
    assert_eq!(defines.len(), core.len(), "every define is checked here: {defines:?}");
    for (name, value) in &core {
        let define = defines.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
        assert_eq!(define, Some(value.as_str()), "ARKAGENT_{name}");
    }
}

/// IMG-3: the `"image_tokens"` names `arkagent_runtime_new`'s doc lists are every rule
/// the library has, in order.
#[test]
fn img_3_the_headers_image_tokens_names_are_every_rule() {
    let header = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/arkagent.h")).unwrap();
    let start = header.find("`\"image_tokens\"?` names the").expect("the image_tokens sentence");
    let list = &header[start..start + header[start..].find("(another name gives").unwrap()];
    let named: Vec<&str> = list.split('`').filter(|t| t.len() > 1 && t.starts_with('"') && t.ends_with('"')).map(|t| t.trim_matches('"')).collect();
    let rules: Vec<&str> = arkagent::history::ImageTokenRule::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(named, rules);
}

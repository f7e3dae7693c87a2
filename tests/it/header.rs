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

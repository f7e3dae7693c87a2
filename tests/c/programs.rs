//! Builds and runs the C programs in tests/c/: each is compiled with the system C compiler
//! against include/arkagent.h and the libarkagent_c.so cargo built for this test run.
//!
//! Shared by two test crates through `#[path]`: the core's integration tests
//! (tests/it/main.rs, `mod c_programs`) and the C ABI crate's own
//! (bindings/c/tests/c_abi/main.rs).
//! Both test binaries live in target/<profile>/deps, next to the cdylib of arkagent-c (a
//! dev-dependency of the core, the crate under test of the other).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root: the nearest ancestor of the crate under test holding
/// include/arkagent.h (the root itself for the core, `../..` for bindings/c).
pub(crate) fn repo_root() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().find(|dir| dir.join("include/arkagent.h").is_file()).expect("include/arkagent.h above the crate under test")
}

/// The directory of the test binary, where cargo put libarkagent_c.so and .a.
pub(crate) fn deps_dir() -> PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().to_path_buf()
}

/// Compiles `tests/c/<name>.c` and runs it; returns its stdout.
pub(crate) fn compile_and_run(name: &str) -> String {
    run_program(&compile(name), &[])
}

/// Compiles `tests/c/<name>.c` against the header and the freshly built library; returns
/// the executable.
pub(crate) fn compile(name: &str) -> PathBuf {
    let deps = deps_dir();
    assert!(deps.join("libarkagent_c.so").exists(), "libarkagent_c.so not built in {}", deps.display());
    let exe = deps.join(format!("arkagent-c-{name}"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(repo_root().join(format!("tests/c/{name}.c")))
        .arg("-I")
        .arg(repo_root().join("include"))
        .arg("-L")
        .arg(&deps)
        .arg("-larkagent_c")
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (cc) is installed");
    assert!(status.success(), "tests/c/{name}.c does not compile against include/arkagent.h");
    exe
}

/// Runs a compiled C test program with `args`; asserts it passed and returns its stdout.
pub(crate) fn run_program(exe: &Path, args: &[&str]) -> String {
    // Not cargo's LD_LIBRARY_PATH: it lists target/<profile> (where a stale
    // libarkagent_c.so from an earlier `cargo build` may lie) before deps, and beats the
    // rpath the program was linked with.
    let out = Command::new(exe).args(args).env_remove("LD_LIBRARY_PATH").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{} {args:?} failed ({:?}):\n{stdout}\n{stderr}", exe.display(), out.status);
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    stdout
}

//! FFI-4 / FFI-5: compiles tests/c/scenario.c with the system C compiler against
//! include/arkagent.h and the libarkagent.so cargo built for this test run, then runs it.

use std::path::Path;
use std::process::Command;

#[test]
fn ffi_4_c_program_runs_the_acceptance_scenario() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Integration test binaries live in target/<profile>/deps, next to the lib's cdylib.
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    assert!(deps.join("libarkagent.so").exists(), "libarkagent.so not built in {}", deps.display());
    let exe = deps.join("arkagent-c-scenario");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(root.join("tests/c/scenario.c"))
        .arg("-I")
        .arg(root.join("include"))
        .arg("-L")
        .arg(&deps)
        .arg("-larkagent")
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (cc) is installed");
    assert!(status.success(), "the C scenario does not compile against include/arkagent.h");
    let out = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "C scenario failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

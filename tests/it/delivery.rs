//! Delivery to HarmonyOS (issue 28 item 13): OHOS-4's import check run on shared objects
//! built here, and what NAPI-5 and PERF-4 ask of CI and of the release build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Compiles `source` into the shared object `dir/name` (soname `name`), without the host's
/// C library (`-nostdlib`), linked with `libs` (file names in `dir`).
fn shared_object(dir: &Path, name: &str, source: &str, libs: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let out = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(cc);
    cmd.args(["-shared", "-fPIC", "-nostdlib", "-o"]).arg(&out).arg(&c).arg(format!("-Wl,-soname,{name}")).arg("-L").arg(dir);
    for lib in libs {
        cmd.arg(format!("-l:{lib}"));
    }
    let status = cmd.status().expect("a C compiler (cc) is installed");
    assert!(status.success(), "{name} does not build");
    out
}

/// Runs scripts/ohos-imports-check.sh on `lib` with `libc` as the NDK's libc.so; its exit
/// code and output.
fn imports_check(libc: &Path, lib: &Path, min_api: &str) -> (i32, String) {
    let out = Command::new("bash")
        .arg(root().join("scripts/ohos-imports-check.sh"))
        .arg("--libc")
        .arg(libc)
        .arg(lib)
        .env("OHOS_MIN_API", min_api)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// OHOS-4: the import check accepts exactly the names a device provides — libc's exports
/// and the names of the NDK's published lists (scripts/ohos-ndk-symbols/, each recording
/// its source tag and commit) for the libraries the object really links, introduced at or
/// below the minimum API — and fails on any other import, naming it.
#[test]
fn ohos_4_the_import_check_fails_on_any_import_outside_the_published_lists() {
    for list in ["libace_napi.txt", "libhilog_ndk.txt"] {
        let text = read(&format!("scripts/ohos-ndk-symbols/{list}"));
        let source = text.lines().find(|l| l.contains("tag OpenHarmony-v")).unwrap_or_else(|| panic!("{list} records no source tag"));
        let commit = source.split("commit ").nth(1).unwrap_or_default();
        assert!(commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{list}: {source}");
        assert!(text.lines().any(|l| l == "napi_create_object" || l.starts_with("OH_LOG_Print")), "{list} lists no function");
    }
    let napi = read("scripts/ohos-ndk-symbols/libace_napi.txt");
    assert!(napi.lines().any(|l| l == "napi_add_finalizer since=11"), "the since= field this test relies on");

    let dir = std::env::temp_dir().join(format!("arkagent-ohos-4-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let libc = shared_object(&dir, "libc.so", "int libc_fn(void) { return 1; }\n", &[]);
    let stub = "int napi_create_object(void) { return 0; }\nint napi_add_finalizer(void) { return 0; }\nint napi_unpublished(void) { return 0; }\n";
    shared_object(&dir, "libace_napi.z.so", stub, &[]);
    shared_object(&dir, "libother.so", "int other_fn(void) { return 0; }\n", &[]);
    let calls = |names: &[&str]| {
        let decls: String = names.iter().map(|n| format!("int {n}(void);\n")).collect();
        let body: String = names.iter().map(|n| format!(" + {n}()")).collect();
        format!("{decls}int entry(void) {{ return 0{body}; }}\n")
    };
    let napi_libs = ["libace_napi.z.so", "libc.so"];

    let good = shared_object(&dir, "good.so", &calls(&["napi_create_object", "libc_fn"]), &napi_libs);
    let (code, out) = imports_check(&libc, &good, "12");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("every import is provided"), "{out}");

    let unpublished = shared_object(&dir, "unpublished.so", &calls(&["napi_unpublished"]), &napi_libs);
    let (code, out) = imports_check(&libc, &unpublished, "12");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("imports napi_unpublished"), "{out}");

    let unlisted_library = shared_object(&dir, "unlisted_library.so", &calls(&["other_fn"]), &["libother.so", "libc.so"]);
    let (code, out) = imports_check(&libc, &unlisted_library, "12");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("NEEDED libother.so has no published symbol list") && out.contains("imports other_fn"), "{out}");

    // A listed name resolves only through a library the object links.
    let not_linked = shared_object(&dir, "not_linked.so", &calls(&["napi_create_object"]), &["libc.so"]);
    let (code, out) = imports_check(&libc, &not_linked, "12");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("imports napi_create_object"), "{out}");

    // A name introduced after the minimum API is not there on an older device.
    let newer = shared_object(&dir, "newer.so", &calls(&["napi_add_finalizer"]), &napi_libs);
    assert_eq!(imports_check(&libc, &newer, "12").0, 0);
    let (code, out) = imports_check(&libc, &newer, "10");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("imports napi_add_finalizer") && out.contains("API <= 10"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);

    // The link check runs it on the library build-ohos.sh built, for both ABIs.
    let link_check = read("scripts/ohos-link-check.sh");
    assert!(link_check.matches("scripts/ohos-imports-check.sh\" --libc").count() >= 2, "ohos-link-check.sh no longer runs the import check on both ABIs");
}

/// NAPI-5: CI (scripts/test.sh) runs the JS tests against the host build
/// (scripts/test-js.sh builds arkagent-napi and runs tests/js under Node), the
/// `cargo +nightly check -Zbuild-std --target aarch64-unknown-linux-ohos` compile check
/// (scripts/ohos-check.sh) and the link check that produces an aarch64 ELF and checks it
/// is one (scripts/ohos-link-check.sh).
#[test]
fn napi_5_ci_runs_the_js_tests_the_ohos_compile_check_and_the_aarch64_link_check() {
    let test_sh = read("scripts/test.sh");
    let steps: Vec<&str> = test_sh.lines().filter(|l| l.starts_with("step ")).collect();
    for script in ["bash scripts/test-js.sh", "bash scripts/ohos-check.sh", "bash scripts/ohos-link-check.sh"] {
        assert!(steps.iter().any(|s| s.ends_with(script)), "scripts/test.sh has no step running {script}: {steps:#?}");
    }
    let test_js = read("scripts/test-js.sh");
    assert!(test_js.contains("cargo_flags=(-p arkagent-napi)") && test_js.contains("node --test"), "test-js.sh builds the module and runs Node");
    let ohos_check = read("scripts/ohos-check.sh");
    assert!(ohos_check.contains("TARGET=\"aarch64-unknown-linux-ohos\""), "ohos-check.sh targets aarch64 OHOS");
    let command = ohos_check.lines().filter(|l| !l.trim_start().starts_with('#')).find(|l| l.contains("cargo +nightly check")).unwrap_or_default();
    assert!(command.contains("-Zbuild-std") && command.contains("--target"), "ohos-check.sh runs the build-std check: {command}");
    let link_check = read("scripts/ohos-link-check.sh");
    assert!(link_check.contains("TARGET=\"aarch64-unknown-linux-ohos\""));
    assert!(link_check.contains("grep -q 'ELF 64-bit LSB shared object, ARM aarch64' <<<\"$desc\" && ok=1"), "the link check checks the ELF's machine");
}

/// PERF-4: the release build is made small (size-optimized, LTO, one codegen unit,
/// stripped; the HAR's `ohos` profile at opt-level "z"), its sizes are reported for the
/// host and the OHOS builds (BENCHMARKS.md), each within the 2.5 MB the OHOS link check
/// enforces on the arm64 library.
#[test]
fn perf_4_release_library_sizes_are_reported_for_host_and_ohos_and_kept_small() {
    let manifest = read("Cargo.toml");
    let release = manifest.split("[profile.release]").nth(1).unwrap_or_default().split("\n[").next().unwrap_or_default();
    for setting in ["opt-level = \"s\"", "lto = true", "codegen-units = 1", "strip = \"symbols\""] {
        assert!(release.lines().any(|l| l.trim() == setting), "[profile.release] lacks {setting}");
    }
    let ohos = manifest.split("[profile.ohos]").nth(1).unwrap_or_default();
    assert!(ohos.contains("inherits = \"release\"") && ohos.contains("opt-level = \"z\""), "[profile.ohos]");

    let benchmarks = read("BENCHMARKS.md");
    let section = benchmarks.split("## PERF-4").nth(1).expect("BENCHMARKS.md has a PERF-4 section").split("\n## ").next().unwrap_or_default();
    let rows: Vec<(&str, f64)> = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let mb: f64 = cells[2].trim_end_matches(" MB").parse().unwrap_or_else(|_| panic!("size of {l}"));
            (cells[1], mb)
        })
        .collect();
    assert!(rows.iter().any(|(target, _)| target.contains("x86_64-linux-gnu")), "no host size reported: {rows:?}");
    assert!(rows.iter().any(|(target, _)| *target == "aarch64-unknown-linux-ohos"), "no OHOS size reported: {rows:?}");
    assert!(rows.iter().all(|(_, mb)| *mb > 0.1), "{rows:?}");
    // PERF-9: the HAR's arm64 library is the one with a cap.
    assert!(rows.iter().filter(|(target, _)| *target == "aarch64-unknown-linux-ohos").all(|(_, mb)| *mb <= 2.5), "{rows:?}");
    let link_check = read("scripts/ohos-link-check.sh");
    assert!(link_check.contains("max_so=${OHOS_MAX_SO_BYTES:-2500000}") && link_check.contains("[ \"$so_bytes\" -le \"$max_so\" ]"), "the link check caps the arm64 library");
}

/// Runs scripts/ohos-std.sh's `ohos_std_for` with a fake `rustup` first on PATH whose
/// nightly (`FAKE_NIGHTLY`) and `target add` (`FAKE_TARGET`) succeed or fail: the cargo
/// command and build-std flags it chose (`None` when it refused), and what it printed.
fn ohos_std(nightly: bool, target: bool, build_std: Option<&str>) -> (Option<String>, String) {
    let dir = std::env::temp_dir().join(format!("arkagent-ohos-std-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rustup = dir.join("rustup");
    std::fs::write(
        &rustup,
        "#!/bin/sh\n\
         case \"$1 $2\" in\n\
         'run nightly'|'toolchain install'|'component add') [ \"$FAKE_NIGHTLY\" = ok ] ;;\n\
         'target add') [ \"$FAKE_TARGET\" = ok ] ;;\n\
         *) exit 2 ;;\n\
         esac\n",
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&rustup).status().unwrap();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let script = format!(
        "source '{}' && ohos_std_for aarch64-unknown-linux-ohos && echo \"${{cargo_cmd[*]}}|${{build_std[*]}}\"",
        root().join("scripts/ohos-std.sh").display()
    );
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script]).env("PATH", path).env("FAKE_NIGHTLY", if nightly { "ok" } else { "no" });
    cmd.env("FAKE_TARGET", if target { "ok" } else { "no" }).env_remove("OHOS_BUILD_STD");
    if let Some(v) = build_std {
        cmd.env("OHOS_BUILD_STD", v);
    }
    let out = cmd.output().unwrap();
    let chosen = out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    (chosen, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// PERF-9, OHOS-3: README's "Building for HarmonyOS" — std is built with nightly by default
/// and without its backtrace symbolizer; `OHOS_BUILD_STD=0` uses rustup's prebuilt std;
/// without nightly the script falls back to it and says so; with neither it refuses.
#[test]
fn perf_9_ohos_3_build_ohos_builds_std_with_nightly_unless_told_or_unable() {
    let nightly = "cargo +nightly|-Zbuild-std=std,panic_abort -Zbuild-std-features=panic-unwind,optimize_for_size --config build.rustflags=['-Zlocation-detail=none', '-Zfmt-debug=shallow', '-Clink-arg=-fuse-ld=lld', '-Clink-arg=-Wl,--icf=all']";
    let (chosen, said) = ohos_std(true, true, None);
    assert_eq!(chosen.as_deref(), Some(nightly), "{said}");
    assert!(said.contains("without the backtrace symbolizer"), "{said}");
    assert_eq!(ohos_std(true, true, Some("1")).0.as_deref(), Some(nightly));

    let (chosen, said) = ohos_std(true, true, Some("0"));
    assert_eq!(chosen.as_deref(), Some("cargo|"), "OHOS_BUILD_STD=0: the prebuilt std. {said}");
    assert!(said.contains("using the prebuilt std of aarch64-unknown-linux-ohos") && !said.contains("WARNING"), "{said}");

    let (chosen, said) = ohos_std(false, true, None);
    assert_eq!(chosen.as_deref(), Some("cargo|"), "no nightly: the prebuilt std. {said}");
    assert!(said.contains("WARNING: nightly + rust-src unavailable"), "it says so: {said}");

    let (chosen, said) = ohos_std(false, false, None);
    assert_eq!(chosen, None, "neither: refused");
    assert!(said.contains("no std for aarch64-unknown-linux-ohos"), "{said}");
    assert_eq!(ohos_std(true, false, Some("0")).0, None, "OHOS_BUILD_STD=0 without a prebuilt std: refused");
}

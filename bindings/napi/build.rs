//! Build script of the N-API module.
//!
//! - `napi_build_ohos::setup()` links `libace_napi.z.so` when targeting OHOS.
//! - The module registers under the name `arkagent`: ArkTS loads `libarkagent.so` and
//!   requires the registered name to match the library name (napi-derive-ohos reads
//!   `NAPI_BUILD_TARGET_NAME` while expanding `#[napi]`).
//! - On non-OHOS Linux (Node.js on the host, for tests) two napi-ohos calls that only
//!   work on ArkTS are redirected with `--wrap` to the shims in `src/host_fix.rs`; see
//!   that file. The OHOS build is untouched.

fn main() {
    napi_build_ohos::setup();
    println!("cargo:rustc-env=NAPI_BUILD_TARGET_NAME=arkagent");

    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_env != "ohos" && target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--wrap=napi_module_register");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--wrap=napi_reference_unref");
    }
}

/*
 * Minimal stub of the ArkUI kit: re-exports window only (the components are globals: component/).
 *
 * Source: interface_sdk-js kits/@kit.ArkUI.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import window from './@ohos.window';

export { window };

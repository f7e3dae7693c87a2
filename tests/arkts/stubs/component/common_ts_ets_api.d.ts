/*
 * Minimal stub of ArkUI's common_ts_ets_api.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): LocalStorage, named by the @Entry decorator's type.
 *
 * Source: interface_sdk-js api/@internal/component/ets/common_ts_ets_api.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare class LocalStorage {}

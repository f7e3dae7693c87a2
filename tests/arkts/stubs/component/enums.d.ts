/*
 * Minimal stub of ArkUI's enums.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the enums the attributes used name (members: only those the app uses).
 *
 * Source: interface_sdk-js api/@internal/component/ets/enums.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare enum Color {}

declare enum Edge {
  Bottom,
}

declare enum FontWeight {
  Bold,
}

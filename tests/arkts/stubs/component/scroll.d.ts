/*
 * Minimal stub of ArkUI's scroll.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the Scroller a List scrolls with.
 *
 * Source: interface_sdk-js api/@internal/component/ets/scroll.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare interface ScrollEdgeOptions {}

declare class Scroller {
  constructor();
  scrollEdge(value: Edge, options?: ScrollEdgeOptions);
}

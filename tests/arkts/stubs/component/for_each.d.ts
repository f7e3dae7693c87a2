/*
 * Minimal stub of ArkUI's for_each.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): ForEach.
 *
 * Source: interface_sdk-js api/@internal/component/ets/for_each.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

interface ForEachInterface {
  (
    arr: Array<any>,
    itemGenerator: (item: any, index: number) => void,
    keyGenerator?: (item: any, index: number) => string,
  ): ForEachAttribute;
}

declare class ForEachAttribute extends DynamicNode<ForEachAttribute> {}

declare const ForEach: ForEachInterface;

/*
 * Minimal stub of ArkUI's units.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the length, colour and resource types of the attributes used.
 *
 * Source: interface_sdk-js api/@internal/component/ets/units.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare type Resource = import('../api/global/resource').Resource;

declare type Length = string | number | Resource;

declare type ResourceStr = string | Resource;

declare type Padding = {
  top?: Length;
  right?: Length;
  bottom?: Length;
  left?: Length;
};

declare interface LocalizedPadding {}

declare type ResourceColor = Color | number | string | Resource;

/*
 * Minimal stub of the resource type that ArkUI's units.d.ts names (`$r(...)` values,
 * `Length`, `ResourceStr`); at this relative path because units.d.ts imports it as
 * '../api/global/resource', as in the SDK's ets/ layout (ets/component, ets/api).
 *
 * Source: interface_sdk-js api/global/resource.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

export interface Resource {
  bundleName: string;
  moduleName: string;
  id: number;
  params?: any[];
  type?: number;
}

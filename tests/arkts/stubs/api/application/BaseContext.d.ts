/*
 * Minimal stub of the base class of an ability's Context (what Context.d.ts extends); at
 * this relative path because ArkUI's common.d.ts names the Context as
 * import('../api/application/Context'), as in the SDK's ets/ layout.
 *
 * Source: interface_sdk-js api/application/BaseContext.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

export default abstract class BaseContext {
  stageMode: boolean;
}

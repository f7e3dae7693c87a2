/*
 * Minimal stub of ArkUI's UIContext: the ability's Context of a page
 * (`this.getUIContext().getHostContext()`, public since API 12; `getContext(this)` is
 * deprecated from API 18). ArkUI's common.d.ts names it as
 * import('../api/@ohos.arkui.UIContext').UIContext, as in the SDK's ets/ layout.
 *
 * Source: interface_sdk-js api/@ohos.arkui.UIContext.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import type common from './@ohos.app.ability.common';

export type Context = common.Context;

export class UIContext {
  getHostContext(): Context | undefined;
}

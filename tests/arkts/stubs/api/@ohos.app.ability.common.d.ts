/*
 * Minimal stub of the ability kit's `common` namespace: its Context type only, which
 * UIContext.getHostContext() returns.
 *
 * Source: interface_sdk-js api/@ohos.app.ability.common.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import * as _Context from './application/Context';

declare namespace common {
  export type Context = _Context.default;
}

export default common;

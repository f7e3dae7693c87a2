/*
 * Minimal stub of the BasicServicesKit kit: re-exports the @ohos.base types only.
 *
 * Source: interface_sdk-js kits/@kit.BasicServicesKit.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import { AsyncCallback, BusinessError, Callback, ErrorCallback } from './@ohos.base';

export { AsyncCallback, BusinessError, Callback, ErrorCallback };

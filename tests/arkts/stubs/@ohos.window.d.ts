/*
 * Minimal stub of @ohos.window (@kit.ArkUI): WindowStage.loadContent, which shows the example app's page.
 *
 * Source: interface_sdk-js api/@ohos.window.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import { AsyncCallback } from './@ohos.base';

declare namespace window {
  interface WindowStage {
    loadContent(path: string, callback: AsyncCallback<void>): void;
  }
}

export default window;

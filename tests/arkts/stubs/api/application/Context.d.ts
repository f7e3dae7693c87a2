/*
 * Minimal stub of an ability's Context: the app's files directory, where the example app
 * keeps its session store (`getContext(this).filesDir`). ArkUI's common.d.ts declares
 * `getContext()` returning `import('../api/application/Context').default`.
 *
 * Source: interface_sdk-js api/application/Context.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import BaseContext from './BaseContext';

export default class Context extends BaseContext {
  filesDir: string;
}

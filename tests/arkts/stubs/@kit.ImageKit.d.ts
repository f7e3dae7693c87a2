/*
 * Minimal stub of the ImageKit kit: like the real kit file it only re-exports the
 * @ohos.* modules (here just image).
 *
 * Source: interface_sdk-js kits/@kit.ImageKit.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import image from './@ohos.multimedia.image';

export { image };

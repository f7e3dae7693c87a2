/*
 * Minimal stub of the SDK's global functions (api/@internal/ets/global.d.ts, which ets-loader
 * makes global for every .ets file, as it does ArkUI's ets/component/ declarations): the
 * timer functions NetworkKitTransport.ets uses (a bounded wait for a final header block,
 * a stream's idle timer). The SDK file exports them (`export declare function`); as
 * globals they are declared here without `export`.
 *
 * Source: interface_sdk-js api/@internal/ets/global.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare function setTimeout(handler: Function | string, delay?: number, ...arguments: any[]): number;

declare function clearTimeout(timeoutID?: number): void;

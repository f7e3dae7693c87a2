/*
 * Minimal stub of ArkUI's row.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the Row container.
 *
 * Source: interface_sdk-js api/@internal/component/ets/row.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

interface RowInterface {
  (value?: { space?: string | number }): RowAttribute;
}

declare class RowAttribute extends CommonMethod<RowAttribute> {}

declare const Row: RowInterface;

declare const RowInstance: RowAttribute;

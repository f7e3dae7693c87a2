/*
 * Minimal stub of ArkUI's list.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the List container.
 *
 * Source: interface_sdk-js api/@internal/component/ets/list.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

interface ListInterface {
  (value?: { initialIndex?: number; space?: number | string; scroller?: Scroller }): ListAttribute;
}

declare class ListAttribute extends ScrollableCommonMethod<ListAttribute> {}

declare const List: ListInterface;

declare const ListInstance: ListAttribute;

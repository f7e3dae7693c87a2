/*
 * Minimal stub of ArkUI's list_item.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the ListItem container.
 *
 * Source: interface_sdk-js api/@internal/component/ets/list_item.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare interface ListItemOptions {}

interface ListItemInterface {
  (value?: ListItemOptions): ListItemAttribute;
  (value?: string): ListItemAttribute;
}

declare class ListItemAttribute extends CommonMethod<ListItemAttribute> {}

declare const ListItem: ListItemInterface;

declare const ListItemInstance: ListItemAttribute;

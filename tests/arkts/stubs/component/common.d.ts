/*
 * Minimal stub of ArkUI's common.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the struct base class (with getUIContext()), the decorators, getContext() and the common attributes the example app uses.
 *
 * Source: interface_sdk-js api/@internal/component/ets/common.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare const Component: ClassDecorator & ((options: ComponentOptions) => ClassDecorator);

declare const Entry: ClassDecorator & ((options?: LocalStorage | EntryOptions) => ClassDecorator);

declare const State: PropertyDecorator;

declare function getContext(component?: Object): Context;

declare type Context = import('../api/application/Context').default;

declare type UIContext = import('../api/@ohos.arkui.UIContext').UIContext;

declare interface ComponentOptions {
}

declare interface EntryOptions {
}

declare interface BaseEvent {
  timestamp: number;
}

declare interface ClickEvent extends BaseEvent {
  x: number;
  y: number;
}

declare class CommonMethod<T> {
  width(value: Length): T;
  height(value: Length): T;
  padding(value: Padding | Length | LocalizedPadding): T;
  layoutWeight(value: number | string): T;
  backgroundColor(value: ResourceColor): T;
  enabled(value: boolean): T;
  onClick(event: (event: ClickEvent) => void): T;
}

declare class CommonAttribute extends CommonMethod<CommonAttribute> {}

declare class ScrollableCommonMethod<T> extends CommonMethod<T> {}

declare class DynamicNode<T> {}

declare class CustomComponent extends CommonAttribute {
  build(): void;
  getUIContext(): UIContext;
  aboutToAppear?(): void;
  aboutToDisappear?(): void;
}

/*
 * Minimal stub of ArkUI's text.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the Text component.
 *
 * Source: interface_sdk-js api/@internal/component/ets/text.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

interface TextInterface {
  (content?: string | Resource, value?: TextOptions): TextAttribute;
}

declare class TextAttribute extends CommonMethod<TextAttribute> {
  fontSize(value: number | string | Resource): TextAttribute;
  fontColor(value: ResourceColor): TextAttribute;
  fontWeight(value: number | FontWeight | string): TextAttribute;
  maxLines(value: number): TextAttribute;
}

declare interface TextOptions {}

declare const Text: TextInterface;

declare const TextInstance: TextAttribute;

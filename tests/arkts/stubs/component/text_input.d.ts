/*
 * Minimal stub of ArkUI's text_input.d.ts (global declarations, like the SDK's ets/component/ dir
 * that ets-loader loads for every .ets file): the TextInput component.
 *
 * Source: interface_sdk-js api/@internal/component/ets/text_input.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare enum InputType {
  Normal,
  Password,
}

declare interface TextInputOptions {
  placeholder?: ResourceStr;
  text?: ResourceStr;
}

interface TextInputInterface {
  (value?: TextInputOptions): TextInputAttribute;
}

declare class TextInputAttribute extends CommonMethod<TextInputAttribute> {
  type(value: InputType): TextInputAttribute;
  onChange(callback: EditableTextOnChangeCallback): TextInputAttribute;
}

declare const TextInput: TextInputInterface;

declare const TextInputInstance: TextInputAttribute;

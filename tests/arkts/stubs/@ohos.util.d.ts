/*
 * Minimal stub of @ohos.util (@kit.ArkTS): util.TextDecoder as used to decode
 * streamed UTF-8 chunks (create since API 9, decodeToString since API 12).
 *
 * Source: interface_sdk-js api/@ohos.util.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare namespace util {
  interface TextDecoderOptions {
    fatal?: boolean;
    ignoreBOM?: boolean;
  }

  interface DecodeToStringOptions {
    stream?: boolean;
  }

  class TextDecoder {
    constructor();
    readonly encoding: string;
    readonly fatal: boolean;
    readonly ignoreBOM = false;
    static create(encoding?: string, options?: TextDecoderOptions): TextDecoder;
    decodeToString(input: Uint8Array, options?: DecodeToStringOptions): string;
  }
}

export default util;

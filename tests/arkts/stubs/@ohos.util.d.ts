/*
 * Minimal stub of interface_sdk-js api/@ohos.util.d.ts (@kit ArkTS): util.TextDecoder as
 * used to decode streamed UTF-8 chunks (create since API 9, decodeToString since API 12).
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
    readonly ignoreBOM: boolean;
    static create(encoding?: string, options?: TextDecoderOptions): TextDecoder;
    decodeToString(input: Uint8Array, options?: DecodeToStringOptions): string;
  }
}

export default util;

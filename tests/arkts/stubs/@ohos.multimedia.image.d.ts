/*
 * Minimal stub of @ohos.multimedia.image (@kit.ImageKit): decoding a file's bytes into a
 * PixelMap at a desired size, turning it, and packing it (ImageKitCodec, IMG-9); a PixelMap
 * from BGRA colors (the device test's photo).
 *
 * Source: interface_sdk-js api/@ohos.multimedia.image.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

declare namespace image {
  interface Size {
    height: number;
    width: number;
  }

  interface InitializationOptions {
    size: Size;
  }

  interface DecodingOptions {
    rotate?: number;
    desiredSize?: Size;
  }

  interface PackingOption {
    format: string;
    quality: number;
  }

  interface PixelMap {
    rotate(angle: number): Promise<void>;
    flip(horizontal: boolean, vertical: boolean): Promise<void>;
    release(): Promise<void>;
  }

  interface ImageSource {
    createPixelMap(options?: DecodingOptions): Promise<PixelMap>;
    release(): Promise<void>;
  }

  interface ImagePacker {
    packing(source: PixelMap, option: PackingOption): Promise<ArrayBuffer>;
    release(): Promise<void>;
  }

  function createPixelMap(colors: ArrayBuffer, options: InitializationOptions): Promise<PixelMap>;

  function createImageSource(buf: ArrayBuffer): ImageSource;

  function createImagePacker(): ImagePacker;
}

export default image;

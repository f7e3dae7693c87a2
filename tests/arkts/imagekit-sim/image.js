'use strict';
// '@kit.ImageKit' under Node, for running ImageKitCodec.ets and the ohosTest cases that use
// it (scripts/run-ohostest.js): the members of @ohos.multimedia.image the HAR and its tests
// use (tests/arkts/stubs/@ohos.multimedia.image.d.ts), on jpeg-js (tests/images). As on the
// device: a JPEG decodes as stored (its EXIF orientation is not applied), createPixelMap's
// desiredSize scales the decoded pixels, PixelMap.rotate turns clockwise by 90° steps and
// flip mirrors, ImagePacker.packing encodes 'image/jpeg'. Not a HEIF decoder: a HEIC/HEIF
// file decodes to a gradient of the desired size (the device's decoder applies irot itself
// and gives the displayed size, which ImageKitCodec asks for).
const path = require('node:path');

const jpegjs = require(path.join(__dirname, '..', '..', 'images', 'node_modules', 'jpeg-js'));

class PixelMap {
  constructor(width, height, rgba) {
    this.width = width;
    this.height = height;
    this.rgba = rgba;
    this.released = false;
  }

  pixel(x, y) {
    const i = (y * this.width + x) * 4;
    return this.rgba.subarray(i, i + 4);
  }

  remap(width, height, from) {
    const out = Buffer.alloc(width * height * 4);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const [sx, sy] = from(x, y);
        out.set(this.pixel(sx, sy), (y * width + x) * 4);
      }
    }
    this.width = width;
    this.height = height;
    this.rgba = out;
  }

  async rotate(angle) {
    const { width: w, height: h } = this;
    switch (((angle % 360) + 360) % 360) {
      case 90: this.remap(h, w, (x, y) => [y, h - 1 - x]); break;
      case 180: this.remap(w, h, (x, y) => [w - 1 - x, h - 1 - y]); break;
      case 270: this.remap(h, w, (x, y) => [w - 1 - y, x]); break;
      default: break;
    }
  }

  async flip(horizontal, vertical) {
    const { width: w, height: h } = this;
    this.remap(w, h, (x, y) => [horizontal ? w - 1 - x : x, vertical ? h - 1 - y : y]);
  }

  async release() {
    this.released = true;
  }
}

function scaled(width, height, rgba, size) {
  const map = new PixelMap(width, height, rgba);
  if (size && (size.width !== width || size.height !== height)) {
    map.remap(size.width, size.height, (x, y) => [Math.floor(x * width / size.width), Math.floor(y * height / size.height)]);
  }
  return map;
}

class ImageSource {
  constructor(buf) {
    this.bytes = Buffer.from(buf);
  }

  async createPixelMap(options) {
    const size = options && options.desiredSize;
    if (this.bytes[0] === 0xFF && this.bytes[1] === 0xD8) {
      const decoded = jpegjs.decode(this.bytes, { useTArray: true, formatAsRGBA: true });
      return scaled(decoded.width, decoded.height, Buffer.from(decoded.data), size);
    }
    if (this.bytes.subarray(4, 8).toString('latin1') === 'ftyp' && size) {
      const rgba = Buffer.alloc(size.width * size.height * 4);
      for (let i = 0; i < size.width * size.height; i++) rgba.set([i % 256, (i >> 8) % 256, 128, 255], i * 4);
      return new PixelMap(size.width, size.height, rgba);
    }
    throw Object.assign(new Error('the simulator decodes JPEG only'), { code: 62980096 });
  }

  async release() {}
}

class ImagePacker {
  async packing(source, option) {
    if (option.format !== 'image/jpeg') throw Object.assign(new Error(`the simulator packs image/jpeg only, not ${option.format}`), { code: 62980115 });
    const file = jpegjs.encode({ data: source.rgba, width: source.width, height: source.height }, option.quality).data;
    // An ArrayBuffer of exactly the file (a small Buffer sits in Node's shared pool).
    return file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
  }

  async release() {}
}

const image = {
  createImageSource: (buf) => new ImageSource(buf),
  createImagePacker: () => new ImagePacker(),
  // BGRA_8888 colors, as the device's default pixel format.
  createPixelMap: async (colors, options) => {
    const bgra = new Uint8Array(colors);
    const rgba = Buffer.alloc(bgra.length);
    for (let i = 0; i < bgra.length; i += 4) rgba.set([bgra[i + 2], bgra[i + 1], bgra[i], bgra[i + 3]], i);
    return new PixelMap(options.size.width, options.size.height, rgba);
  },
};

module.exports = { image };

'use strict';
// The SDK modules NetworkKitTransport.ets imports, for running it under Node:
// '@kit.NetworkKit' is the netstack simulator (http.js); '@kit.ArkTS' provides the one
// member the HAR uses, util.TextDecoder (create + decodeToString, @since 12), on Node's
// TextDecoder; '@kit.BasicServicesKit' is imported for a type only (erased).

const { http } = require('./http');

class TextDecoder {
  constructor(encoding) {
    this.decoder = new globalThis.TextDecoder(encoding || 'utf-8');
  }

  static create(encoding) {
    return new TextDecoder(encoding);
  }

  decodeToString(input, options) {
    return this.decoder.decode(input, { stream: Boolean(options && options.stream) });
  }
}

module.exports = {
  '@kit.NetworkKit': { http },
  // IMG-9: ImageKitCodec.ets and the image cases (tests/arkts/imagekit-sim).
  '@kit.ImageKit': require('../imagekit-sim/image'),
  '@kit.ArkTS': { util: { TextDecoder } },
  '@kit.BasicServicesKit': {},
};

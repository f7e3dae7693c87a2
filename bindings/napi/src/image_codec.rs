//! IMG-8, IMG-9 from ArkTS: an image token estimate in one call, and the app's image codec
//! (`@ohos.multimedia.image` on a device: decode, rotate, scale, pack) that prepares photos
//! the model's provider would shrink, refuse or receive turned — set per config, or once
//! for every runtime with `setDefaultImageCodec` (the HAR's ArkTS side registers one).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{ClassInstance, Uint8Array};
use serde_json::Value;

use arkagent::runtime::{ImageCodec, ImageCodecRequest};

use crate::args::Arg;
use crate::callback::{JsAsyncFn, JsFunction};
use crate::error::{internal, thrown, Thrown};
use crate::images::ContentPart;
use crate::model_config::ModelConfig;
use crate::records;

/// What an ImageCodec is asked for (IMG-9): decode `bytes` (a `mimeType` file), apply the
/// EXIF `orientation` (1..8; 1: none), scale to exactly `width` × `height` (the size as
/// displayed, after the orientation) and encode as `targetMimeType`, without an
/// orientation tag.
#[napi(object, js_name = "ImageCodecRequest")]
pub struct JsImageCodecRequest {
    /// The photo's file bytes (a copy owned by JS).
    pub bytes: Uint8Array,
    #[napi(ts_type = "ImageMimeType")]
    pub mime_type: String,
    /// The photo's own type when the model takes it (JPEG, PNG, WebP), else "image/jpeg".
    #[napi(ts_type = "ImageMimeType")]
    pub target_mime_type: String,
    pub width: u32,
    pub height: u32,
    pub orientation: u32,
}

/// A JS ImageCodec as the core's.
pub struct JsImageCodec {
    codec: JsAsyncFn<JsImageCodecRequest, Uint8Array>,
}

impl JsImageCodec {
    /// Wraps a JS codec function (on the JS thread).
    pub fn new(function: JsFunction<'_, JsImageCodecRequest>) -> Result<Self, Thrown> {
        Ok(Self { codec: JsAsyncFn::new(function).map_err(internal)? })
    }
}

#[async_trait]
impl ImageCodec for JsImageCodec {
    async fn transcode(&self, request: &ImageCodecRequest) -> Result<Vec<u8>, String> {
        let js = JsImageCodecRequest {
            bytes: Uint8Array::new(request.image.bytes().to_vec()),
            mime_type: request.image.mime().as_str().to_owned(),
            target_mime_type: request.target_mime.as_str().to_owned(),
            width: request.width,
            height: request.height,
            orientation: u32::from(request.orientation),
        };
        match self.codec.call(js).await {
            Ok(bytes) => Ok(bytes.to_vec()),
            Err(failure) => Err(format!("the app's image codec threw or rejected: {}", failure.message)),
        }
    }
}

/// The codec every runtime whose config sets none uses.
static DEFAULT_CODEC: Mutex<Option<Arc<dyn ImageCodec>>> = Mutex::new(None);

/// The default codec, if one is registered.
pub fn default_codec() -> Option<Arc<dyn ImageCodec>> {
    DEFAULT_CODEC.lock().ok()?.clone()
}

/// IMG-9: the image codec of every runtime created from now on whose config sets none
/// (AgentRuntimeConfig.setImageCodec); undefined removes it. The HAR's ArkTS side
/// registers one on `@ohos.multimedia.image` when it loads (ImageKitCodec); call this
/// with undefined to send photos as they come.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_args_type = "codec?: ImageCodec")]
pub fn set_default_image_codec(codec: Arg<Option<JsFunction<'_, JsImageCodecRequest>>>) -> Result<(), Thrown> {
    let codec = match codec.0 {
        Some(f) => Some(Arc::new(JsImageCodec::new(f)?) as Arc<dyn ImageCodec>),
        None => None,
    };
    if let Ok(mut slot) = DEFAULT_CODEC.lock() {
        *slot = codec;
    }
    Ok(())
}

/// IMG-8: what `image` costs sent to `model`, in one call: the family's rule (the model's
/// imageTokens, else its name's, by the README's table), the tokens, and the size the
/// provider resizes it to (the coordinates the model answers in). The same checks of the
/// photo as a run: throws "image_unsupported_type", "image_dimensions_unsupported",
/// "image_animated" (a request's bounds, maxImageBytes and maxImagesPerRequest, are the
/// run's: not checked here). An image by URL, of unknown size, counts as 8000 × 8000. `prepared`
/// (default: whether a default image codec is registered — the HAR registers one): checked
/// as a run with an image codec sends the photo (IMG-9) — a HEIC for an OpenAI or Claude
/// model, or a photo larger than Claude takes, is prepared, not refused — at the same
/// tokens; false: as it comes.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_args_type = "model: ModelConfig, image: ContentPart, prepared?: boolean", ts_return_type = "ImageEstimate")]
pub fn estimate_image_tokens(
    model: Arg<ClassInstance<'_, ModelConfig>>,
    image: Arg<ClassInstance<'_, ContentPart>>,
    prepared: Arg<Option<bool>>,
) -> Result<Value, Thrown> {
    let part = match image.0.core() {
        arkagent::ContentPart::Image(part) => part,
        arkagent::ContentPart::Text { .. } => {
            return Err(napi_ohos::Error::new("invalid_argument".to_owned(), "estimateImageTokens takes an image part, not a text one".to_owned()))
        }
    };
    let estimate = if prepared.0.unwrap_or_else(|| default_codec().is_some()) {
        arkagent::runtime::estimate_prepared_image_tokens(&model.0.core(), &part)
    } else {
        arkagent::compress::estimate_image_tokens(&model.0.core(), &part)
    };
    let estimate = estimate.map_err(thrown)?;
    Ok(records::to_js(&estimate))
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: ImageCodecRequest

/**
 * IMG-9: the app's image codec: resolves with the encoded file (ImagePacker's ArrayBuffer
 * as a Uint8Array). A throw, a rejection, or bytes that are not an image of the type and
 * size asked fail the run with "image_codec_failed", nothing written.
 */
export type ImageCodec = (request: ImageCodecRequest) => Promise<Uint8Array>;

// declare: setDefaultImageCodec

// declare: estimateImageTokens
*/

//! IMG-9: photos prepared on the device. When the host registers an [`ImageCodec`], each
//! photo of a run's input that the model's provider would shrink, cannot take in its type
//! (HEIC/HEIF for OpenAI's or Claude's families) or would receive turned (an EXIF or HEIF
//! orientation) is handed to it before the input enters the session: the codec decodes
//! it, applies the orientation, scales it to exactly the size the provider's own resize
//! produces (so the token count does not change) and encodes it in the type asked; what
//! comes back is checked like any input and sent instead. The library itself decodes
//! nothing. Without a codec, photos go as they came.

use std::sync::Arc;

use async_trait::async_trait;

use crate::compress::{image_plan, ImageEstimate};
use crate::llm::ModelConfig;
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{Content, ContentPart, ImageData, ImageMime, ImagePart, ImageSource, ImageTokenRule, MAX_IMAGE_PIXELS};

/// What the library asks a host codec for (IMG-9).
#[derive(Debug, Clone)]
pub struct ImageCodecRequest {
    /// The photo as the app gave it (its bytes, type, stored size and orientation).
    pub image: ImageData,
    /// The type to encode: the photo's own when the model takes it (JPEG, PNG, WebP),
    /// else JPEG (a HEIC/HEIF photo, a GIF).
    pub target_mime: ImageMime,
    /// The width to produce, in displayed orientation (after `orientation` is applied).
    pub width: u32,
    /// The height to produce, in displayed orientation.
    pub height: u32,
    /// The EXIF orientation (1..=8) to apply to the decoded pixels; the result carries
    /// none (or 1).
    pub orientation: u8,
}

/// A host image codec (IMG-9): ArkTS's `@ohos.multimedia.image`, a C callback, or any
/// Rust decoder. Called once per photo that needs it, before the run's first request.
#[async_trait]
pub trait ImageCodec: Send + Sync {
    /// Decodes `request.image`, turns it by `request.orientation`, scales it to exactly
    /// `request.width` × `request.height` and encodes it as `request.target_mime`; returns
    /// the file's bytes, or why it could not (the run then fails with
    /// `image_codec_failed`, nothing written).
    async fn transcode(&self, request: &ImageCodecRequest) -> Result<Vec<u8>, String>;
}

/// The codec request for `part` under `rule`, when the photo needs one: larger than the
/// provider will use, of a type it does not take, or turned. Never for an animation, an
/// image by URL or one over [`MAX_IMAGE_PIXELS`] (refused anyway: no host decodes it).
pub fn codec_request(rule: ImageTokenRule, part: &ImagePart) -> Option<ImageCodecRequest> {
    let image = part.image()?;
    let (w, h) = (image.width(), image.height());
    if image.frames() > 1 || u64::from(w) * u64::from(h) > MAX_IMAGE_PIXELS {
        return None;
    }
    let plan = image_plan(rule, w, h, part.detail);
    let shrink = plan.width <= w && plan.height <= h && (plan.width, plan.height) != (w, h);
    let foreign = !rule.accepts(image.mime());
    if !shrink && !foreign && image.orientation() == 1 {
        return None;
    }
    let target_mime = match image.mime() {
        mime @ (ImageMime::Jpeg | ImageMime::Png | ImageMime::Webp) => mime,
        _ if !foreign && !shrink => return None,
        _ => ImageMime::Jpeg,
    };
    let (width, height) = if shrink { (plan.width, plan.height) } else { (w, h) };
    Some(ImageCodecRequest { image: image.clone(), target_mime, width, height, orientation: image.orientation() })
}

/// IMG-8, IMG-9: [`estimate_image_tokens`](crate::compress::estimate_image_tokens) for a
/// run with an image codec. A photo the codec would prepare ([`codec_request`]) is checked
/// as the codec gives it back — a type the family does not take (HEIC/HEIF for OpenAI's or
/// Claude's families) is no refusal, its size is the one asked of the codec — and costs what
/// it costs unprepared (the codec scales to exactly the provider's resize). Other photos as
/// `estimate_image_tokens`. Errors: `image_unsupported_type`,
/// `image_dimensions_unsupported`, `image_animated`.
pub fn estimate_prepared_image_tokens(model: &ModelConfig, image: &ImagePart) -> Result<ImageEstimate, ArkAgentError> {
    let rule = crate::llm::image_rule_of(model);
    match codec_request(rule, image) {
        Some(request) => {
            rule.check_size(request.width, request.height)?;
            Ok(image_plan(rule, request.image.width(), request.image.height(), image.detail))
        }
        None => crate::compress::estimate_image_tokens(model, image),
    }
}

/// `input` with each photo that needs it prepared by `codec`; the originals replaced, in
/// `originals` when the app keeps them. Errors: `image_codec_failed`, `cancelled`.
pub(crate) async fn prepare(
    codec: &Arc<dyn ImageCodec>,
    rule: ImageTokenRule,
    input: Content,
    originals: Option<&mut Vec<ImageData>>,
) -> Result<Content, ArkAgentError> {
    let Content::Parts(mut parts) = input else { return Ok(input) };
    let mut kept = Vec::new();
    for part in parts.iter_mut() {
        let ContentPart::Image(image) = part else { continue };
        let Some(request) = codec_request(rule, image) else { continue };
        let bytes = codec.transcode(&request).await.map_err(|why| failed(format!("the image codec failed: {why}")))?;
        let prepared = ImageData::new(bytes).map_err(|e| failed(format!("the image codec's answer is not an image: {e}")))?;
        let got = (prepared.mime(), prepared.width(), prepared.height(), prepared.orientation());
        let asked = (request.target_mime, request.width, request.height, 1);
        if got != asked {
            return Err(failed(format!(
                "the image codec gave a {} of {}×{} (orientation {}) for a {} of {}×{} asked",
                got.0, got.1, got.2, got.3, asked.0, asked.1, asked.2
            )));
        }
        kept.push(request.image);
        image.source = ImageSource::Data(prepared);
    }
    if let Some(originals) = originals {
        originals.extend(kept);
    }
    Ok(Content::Parts(parts))
}

fn failed(message: String) -> ArkAgentError {
    ArkAgentError::Image { code: ErrorCode::ImageCodecFailed, message }
}

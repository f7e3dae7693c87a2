//! IMG-5, IMG-6 at the session's doors: an image enters the state only within the model's
//! bounds — a type its family takes, pixels and frames its provider takes, at most
//! `max_image_bytes`, and no more than `max_images_per_request` in the request it joins.
//! A refused input writes nothing.

use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{Content, ImageMime, ImageTokenRule};
use crate::llm::{image_rule_of, ModelConfig};

/// The model's image bounds.
#[derive(Debug, Clone, Copy)]
pub(super) struct ImageBounds {
    rule: ImageTokenRule,
    max_bytes: u64,
    max_count: u32,
}

fn refused(code: ErrorCode, message: String) -> ArkAgentError {
    ArkAgentError::Image { code, message }
}

impl ImageBounds {
    pub(super) fn of(model: &ModelConfig) -> Self {
        Self { rule: image_rule_of(model), max_bytes: model.max_image_bytes, max_count: model.max_images_per_request }
    }

    /// Checks each image of `content` (type, byte cap); their count when all pass.
    pub(super) fn check_each(&self, content: &Content) -> Result<usize, ArkAgentError> {
        let mut count = 0;
        for image in content.images() {
            count += 1;
            let Some(data) = image.image() else { continue };
            let mime = data.mime();
            if !self.rule.accepts(mime) {
                return Err(refused(ErrorCode::ImageUnsupportedType, unsupported(mime, self.rule)));
            }
            self.rule.check(data)?;
            if data.len() as u64 > self.max_bytes {
                let message = format!("the image is {} bytes, over the model's cap of {} bytes (max_image_bytes)", data.len(), self.max_bytes);
                return Err(refused(ErrorCode::ImageTooLarge, message));
            }
        }
        Ok(count)
    }

    /// Checks that a request of `in_request` images can take `adding` more.
    pub(super) fn check_count(&self, in_request: usize, adding: usize) -> Result<(), ArkAgentError> {
        if adding == 0 || in_request.saturating_add(adding) <= self.max_count as usize {
            return Ok(());
        }
        let message = format!(
            "the request would carry {} images, over the model's limit of {} (max_images_per_request); earlier photos leave the request when a compression archives them (once the prompt reaches the compressor's threshold) or when a rewind drops their runs",
            in_request + adding,
            self.max_count
        );
        Err(refused(ErrorCode::TooManyImages, message))
    }
}

fn unsupported(mime: ImageMime, rule: ImageTokenRule) -> String {
    if mime.is_heif() {
        format!("{mime} photos are not taken by {} models: pack the photo as JPEG first (e.g. with the image packer), or register an image codec", rule.as_str())
    } else {
        format!("{mime} is not taken by {} models", rule.as_str())
    }
}

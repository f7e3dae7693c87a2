//! IMG-1, IMG-4 on the C surface: a turn whose input is ordered text and image parts
//! (JSON, image bytes in base64), and an image read back by its id.

use std::ffi::c_char;

use arkagent::error::ErrorCode;
use arkagent::{ArkAgentError, Content};

use crate::boundary::boundary;
use crate::codes::ArkAgentResult;
use crate::strings::{out_arg, str_arg, write_out_json};
use super::executor::block_on;
use super::handle::{runtime_handle, ArkAgentRuntime};

/// Runs one user turn whose input is ordered text and image parts, exactly like
/// `arkagent_runtime_run` (same thread, outcome and rollback rules). `parts_json` is a JSON
/// array: `[{"type":"text","text":"what is this plant?"},{"type":"image",
/// "mime_type":"image/jpeg","data":"<base64 of the file's bytes>","detail":"low"},
/// {"type":"image","url":"https://…"}]` (`"detail"`: `"low"`, `"high"` or `"auto"`, optional;
/// a `"url"` may also be a `data:` URL). Image types: JPEG, PNG, WebP, GIF (HEIC/HEIF only
/// for a model whose `"image_tokens"` family takes them: Gemini, Qwen-VL). Nothing is
/// written and nothing sent when an image is refused:
/// `ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE` (for a HEIC photo the message says to pack it
/// as JPEG first), `ARK_AGENT_RESULT_IMAGE_INVALID` (a header that does not parse, bytes of
/// another type than declared, data that is not base64, a URL neither `https:` nor
/// `data:`), `ARK_AGENT_RESULT_IMAGE_TOO_LARGE` (over the model's `"max_image_bytes"`,
/// default 20 MiB), `ARK_AGENT_RESULT_TOO_MANY_IMAGES` (the request would carry more than
/// `"max_images_per_request"`, default 100); a malformed array is
/// `ARK_AGENT_RESULT_INVALID_JSON`. The bytes reach the model unchanged: base64 in the
/// request body (Chat Completions `image_url` data URLs, Anthropic `image` blocks).
///
/// # Safety
/// `parts_json` a NUL-terminated string; `out_outcome_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_run_parts(
    runtime: *mut ArkAgentRuntime,
    parts_json: *const c_char,
    out_outcome_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(parts_json, "parts_json") }?;
        let content = Content::from_parts_json(json)?;
        let outcome = block_on("arkagent_runtime_run_parts", handle.runtime.run(content))??;
        if out_outcome_json.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out_outcome_json, &outcome) }
    })
}

/// Writes the image whose id is `image_id` to `*out_json` as
/// `{"id","mime_type","width","height","stored_width","stored_height","orientation",
/// "data":"<base64>"}` (`width` × `height` as displayed, after the EXIF or HEIF
/// orientation; `stored_*` as encoded; `orientation` 1..=8); free it with
/// `arkagent_string_free`. The id is the SHA-256 of the bytes in lowercase hex: the id a
/// compressed-out image's line names (`[image image/jpeg, 4032×3024 px, N bytes, id …]`,
/// in `retrieve_memory` results and summaries), found in the live history or in an
/// episode's archived originals, or a photo the image codec replaced when the config's
/// `"keep_original_images"` is true. `ARK_AGENT_RESULT_IMAGE_NOT_FOUND` when the session
/// holds no such image.
///
/// # Safety
/// `image_id` a NUL-terminated string; `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_image(runtime: *mut ArkAgentRuntime, image_id: *const c_char, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out_json, "out_json")?;
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(image_id, "image_id") }?;
        let image = handle
            .runtime
            .image(id)
            .ok_or_else(|| ArkAgentError::Image { code: ErrorCode::ImageNotFound, message: format!("no image with id {id:?} in the session") })?;
        let json = serde_json::json!({
            "id": image.id(),
            "mime_type": image.mime().as_str(),
            "width": image.width(),
            "height": image.height(),
            "stored_width": image.stored_width(),
            "stored_height": image.stored_height(),
            "orientation": image.orientation(),
            "data": image.base64().to_string(),
        });
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out, &json) }
    })
}

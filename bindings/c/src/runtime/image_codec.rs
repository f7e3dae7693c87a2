//! IMG-8, IMG-9 on the C surface: an image token estimate in one call, and the host's
//! image codec as a callback on the tool set.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use arkagent::compress::estimate_image_tokens;
use arkagent::history::{ImageData, ImageDetail, ImagePart};
use arkagent::runtime::{ImageCodec, ImageCodecRequest};
use arkagent::ModelConfig;

use super::handle::{ArkAgentTools, ToolSet};
use crate::boundary::boundary;
use crate::callbacks::UserData;
use crate::codes::{poisoned, ArkAgentResult, FfiError};
use crate::handles::{self, Kind};
use crate::strings::{bytes_arg, opt_str_arg, out_arg, str_arg, write_out_json};

/// IMG-8: estimates the tokens of the image file `bytes` (`len` bytes: JPEG, PNG, WebP,
/// GIF, HEIC/HEIF) sent to the model `model_json` (the `"model"` object of
/// `arkagent_runtime_new`'s config: its `"model"` name picks the family's rule from the
/// documented table, `"image_tokens"` overrides it) with `detail` (`"low"`, `"high"`,
/// `"auto"` or NULL), and writes `{"rule":"openai_gpt5_tiles","tokens":630,"width":1024,
/// "height":768}` to `*out_json` (free it with `arkagent_string_free`): the tokens the
/// image costs and the size the provider resizes it to (the coordinates the model answers
/// in). The same checks as a run without an image codec (a HEIC for an OpenAI model is
/// refused here, though a runtime with `arkagent_tools_set_image_codec` would prepare
/// it, at the same tokens): `ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE`,
/// `ARK_AGENT_RESULT_IMAGE_INVALID`, `ARK_AGENT_RESULT_IMAGE_DIMENSIONS_UNSUPPORTED`,
/// `ARK_AGENT_RESULT_IMAGE_ANIMATED`; a model JSON that does not parse is
/// `ARK_AGENT_RESULT_INVALID_JSON`, a bad `detail` `ARK_AGENT_RESULT_INVALID_CONFIG`.
///
/// # Safety
/// `model_json` a NUL-terminated string; `bytes` readable for `len` bytes; `detail` NULL
/// or a NUL-terminated string; `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_estimate_image_tokens(
    model_json: *const c_char,
    bytes: *const u8,
    len: usize,
    detail: *const c_char,
    out_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out_json, "out_json")?;
        // SAFETY: forwarded contract.
        let model: ModelConfig = serde_json::from_str(unsafe { str_arg(model_json, "model_json") }?).map_err(arkagent::ArkAgentError::from)?;
        // SAFETY: forwarded contract.
        let detail = match unsafe { opt_str_arg(detail, "detail") }? {
            None => None,
            Some(text) => Some(serde_json::from_value::<ImageDetail>(serde_json::Value::String(text.to_owned())).map_err(|_| {
                FfiError::new(ArkAgentResult::InvalidConfig, format!("detail must be \"low\", \"high\" or \"auto\", got {text:?}"))
            })?),
        };
        let image = ImageData::new(bytes_arg(bytes, len, "bytes")?)?;
        let estimate = estimate_image_tokens(&model, &ImagePart::data(image, detail))?;
        // SAFETY: `out` checked above.
        unsafe { write_out_json(out, &estimate) }
    })
}

/// IMG-9: what the library asks the host's image codec for; every pointer is owned by the
/// library and valid only during the callback.
#[repr(C)]
pub struct ArkAgentImageCodecRequest {
    /// The photo's file bytes, as the app gave them.
    pub bytes: *const u8,
    /// Their length.
    pub len: usize,
    /// The photo's type, e.g. `"image/heic"` (NUL-terminated).
    pub mime_type: *const c_char,
    /// The type to encode: the photo's own when the model takes it (JPEG, PNG, WebP),
    /// else `"image/jpeg"` (NUL-terminated).
    pub target_mime_type: *const c_char,
    /// The width to produce, in displayed orientation.
    pub width: u32,
    /// The height to produce, in displayed orientation.
    pub height: u32,
    /// The EXIF orientation (1..=8) to apply to the decoded pixels; the result carries none.
    pub orientation: u8,
}

/// IMG-9: where the codec callback leaves its encoded file (through
/// `arkagent_image_codec_output_set`); owned by the library, valid only during the callback.
pub struct ArkAgentImageCodecOutput {
    bytes: Option<Vec<u8>>,
}

/// IMG-9: the host's image codec. `request` (owned by the library, valid only during the
/// call, its pointers too) says what to do; `output` (owned by the library, valid only
/// during the call) takes the result. The codec decodes `request->bytes`, turns the pixels by
/// `request->orientation`, scales them to exactly `request->width` × `request->height`,
/// encodes them as `request->target_mime_type` (without an orientation tag), hands the
/// file to `arkagent_image_codec_output_set(output, …)` and returns 0. Any other value,
/// or no output set, fails the run with `ARK_AGENT_RESULT_IMAGE_CODEC_FAILED` (nothing
/// written); so do bytes that are not an image of that type and size. Called on the
/// thread running the run, once per photo that needs it, before the run's first request.
pub type ArkAgentImageCodecCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, request: *const ArkAgentImageCodecRequest, output: *mut ArkAgentImageCodecOutput) -> i32>;

/// IMG-9: copies the codec's encoded file (`len` bytes at `bytes`) into `output`; a second
/// call replaces the first. Only inside the codec callback, with the `output` it was
/// given. Errors: `ARK_AGENT_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `output` the pointer the callback received; `bytes` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn arkagent_image_codec_output_set(output: *mut ArkAgentImageCodecOutput, bytes: *const u8, len: usize) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(output, "output")?;
        let copied = bytes_arg(bytes, len, "bytes")?;
        // SAFETY: the library's output, live for the callback (forwarded contract).
        unsafe { (*out).bytes = Some(copied) };
        Ok(())
    })
}

struct HostCodec {
    callback: unsafe extern "C" fn(*mut c_void, *const ArkAgentImageCodecRequest, *mut ArkAgentImageCodecOutput) -> i32,
    userdata: UserData,
}

#[async_trait]
impl ImageCodec for HostCodec {
    async fn transcode(&self, request: &ImageCodecRequest) -> Result<Vec<u8>, String> {
        let text = |s: &str| CString::new(s).map_err(|_| "a MIME type holds a NUL".to_owned());
        let (mime, target) = (text(request.image.mime().as_str())?, text(request.target_mime.as_str())?);
        let bytes = request.image.bytes();
        let c_request = ArkAgentImageCodecRequest {
            bytes: bytes.as_ptr(),
            len: bytes.len(),
            mime_type: mime.as_ptr(),
            target_mime_type: target.as_ptr(),
            width: request.width,
            height: request.height,
            orientation: request.orientation,
        };
        let mut output = ArkAgentImageCodecOutput { bytes: None };
        // SAFETY: the host registered this callback and promised userdata stays valid; the
        // request's pointers and the output live until the call returns.
        let status = unsafe { (self.callback)(self.userdata.get(), &c_request, &mut output) };
        match (status, output.bytes) {
            (0, Some(bytes)) => Ok(bytes),
            (0, None) => Err("the app's codec returned 0 without an output".to_owned()),
            (status, _) => Err(format!("the app's codec returned {status}")),
        }
    }
}

/// IMG-9: sets the image codec of runtimes created with these tools from now on
/// (`callback` NULL removes it); a runtime keeps the one it was created with. With a
/// codec, each photo of a run's input that the model's provider would shrink, cannot take
/// in its type (HEIC/HEIF for OpenAI's or Claude's families) or would receive turned is
/// prepared by it first, at exactly the size the provider's own resize gives (the token
/// count does not change); the config's `"keep_original_images": true` keeps the
/// originals readable by id (`arkagent_runtime_image`). `userdata` is passed to
/// `callback` and must stay valid until every runtime created with it is freed. Errors:
/// `ARK_AGENT_RESULT_NULL_ARGUMENT` (`tools` NULL), `ARK_AGENT_RESULT_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn arkagent_tools_set_image_codec(tools: *mut ArkAgentTools, callback: ArkAgentImageCodecCallback, userdata: *mut c_void) -> ArkAgentResult {
    boundary(|| {
        let set: Arc<Mutex<ToolSet>> = handles::get(Kind::Tools, tools)?;
        let codec = callback.map(|callback| Arc::new(HostCodec { callback, userdata: UserData(userdata) }) as Arc<dyn ImageCodec>);
        set.lock().map_err(|_| poisoned())?.image_codec = codec;
        Ok(())
    })
}

//! `ContentPart` and `ImageInfo` (IMG-1, IMG-4): photos in the conversation from ArkTS. An
//! image's bytes come in as the `ArrayBuffer` the photo picker or an image packer gave the
//! app, copied once into the core (no base64 text, no V8 string); the core checks them.

use std::sync::Arc;

use arkagent::history::{ImageData, ImageDetail, ImagePart, ImageSource};
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::Uint8Array;

use crate::args::Arg;
use crate::convert::{optional, Optional};
use crate::error::{private_constructor, thrown, Thrown};
use crate::transport::Bytes;

/// One part of a user message (IMG-1): text, or an image. Build parts with the static
/// factories and pass them to AgentRuntime.runParts(). A plain string stays a valid input
/// of run().
#[napi]
pub struct ContentPart {
    inner: arkagent::ContentPart,
}

impl ContentPart {
    /// The core part.
    pub fn core(&self) -> arkagent::ContentPart {
        self.inner.clone()
    }
}

fn detail_of(detail: Option<String>) -> Result<Option<ImageDetail>, Thrown> {
    detail
        .map(|d| match d.as_str() {
            "low" => Ok(ImageDetail::Low),
            "high" => Ok(ImageDetail::High),
            "auto" => Ok(ImageDetail::Auto),
            other => Err(napi_ohos::Error::new("invalid_argument".to_owned(), format!("detail must be low, high or auto, got {other:?}"))),
        })
        .transpose()
}

fn image(part: &arkagent::ContentPart) -> Option<&ImagePart> {
    match part {
        arkagent::ContentPart::Image(image) => Some(image),
        arkagent::ContentPart::Text { .. } => None,
    }
}

fn data(part: &arkagent::ContentPart) -> Option<&ImageData> {
    image(part).and_then(ImagePart::image)
}

#[napi]
impl ContentPart {
    /// Instances come from the static factories: `new ContentPart()` throws "private_constructor".
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("ContentPart"))
    }

    #[napi(factory)]
    pub fn text(text: Arg<String>) -> Self {
        Self { inner: arkagent::ContentPart::text(text.0) }
    }

    /// An image from its file bytes — the ArrayBuffer (or a Uint8Array view) the photo picker (read with fs) or an
    /// image packer (image.createImagePacker().packToData, e.g. as "image/jpeg") gave you. The
    /// bytes are copied once into the library (no base64 string is made in JS). JPEG, PNG,
    /// WebP, GIF and HEIC/HEIF; `mimeType` is checked against the bytes when given, sniffed
    /// otherwise. The header is read, never the pixels (IMG-6): throws
    /// "image_unsupported_type" (another type: AVIF, MP4, …), "image_invalid" (what a
    /// decoder would refuse: a header or container that does not hold together, a PNG chunk
    /// whose CRC fails, a JPEG without its end-of-image marker, a WebP or box size past the
    /// end, bytes of another type than `mimeType`). A run refuses what the model's family
    /// refuses ("image_unsupported_type" for HEIC/HEIF where it is not taken — pack it as
    /// JPEG first or register an image codec — "image_dimensions_unsupported",
    /// "image_animated"). `detail`: OpenAI's 'low' | 'high' | 'auto' (other formats ignore it).
    #[napi(factory, ts_args_type = "bytes: ArrayBuffer | Uint8Array, mimeType?: ImageMimeType, detail?: ImageDetail")]
    pub fn image(bytes: Arg<Bytes<'_>>, mime_type: Arg<Option<String>>, detail: Arg<Option<String>>) -> Result<Self, Thrown> {
        let copied: Arc<[u8]> = Arc::from(bytes.0.as_slice());
        let data = match mime_type.0 {
            Some(mime) => ImageData::with_mime(&mime, copied),
            None => ImageData::new(copied),
        }
        .map_err(thrown)?;
        Ok(Self { inner: arkagent::ContentPart::Image(ImagePart::data(data, detail_of(detail.0)?)) })
    }

    /// An image by URL: https: (fetched by the provider; `url` reads it back) or a data: URL
    /// (decoded into the image's bytes and checked here, as ContentPart.image() does: `url`
    /// is then undefined). Throws "image_invalid" (another scheme, a malformed data: URL)
    /// or "image_unsupported_type" (a data: URL of another type).
    #[napi(factory, ts_args_type = "url: string, detail?: ImageDetail")]
    pub fn image_url(url: Arg<String>, detail: Arg<Option<String>>) -> Result<Self, Thrown> {
        let part = ImagePart::url(&url.0, detail_of(detail.0)?).map_err(thrown)?;
        Ok(Self { inner: arkagent::ContentPart::Image(part) })
    }

    #[napi(getter, ts_return_type = "'text' | 'image'")]
    pub fn kind(&self) -> String {
        if image(&self.inner).is_some() { "image" } else { "text" }.to_owned()
    }

    /// The text of a text part.
    #[napi(getter)]
    pub fn text_value(&self) -> Optional<String> {
        optional(match &self.inner {
            arkagent::ContentPart::Text { text } => Some(text.clone()),
            arkagent::ContentPart::Image(_) => None,
        })
    }

    /// An image's type, pixel size (read from its header), byte length and id (SHA-256 hex).
    #[napi(getter, ts_return_type = "ImageMimeType | undefined")]
    pub fn mime_type(&self) -> Optional<String> {
        optional(data(&self.inner).map(|d| d.mime().as_str().to_owned()))
    }

    /// An image's width and height as displayed (IMG-7: after its EXIF or HEIF orientation, so a
    /// portrait phone photo is taller than wide); storedWidth and storedHeight as encoded.
    #[napi(getter)]
    pub fn width(&self) -> Optional<u32> {
        optional(data(&self.inner).map(ImageData::width))
    }

    #[napi(getter)]
    pub fn height(&self) -> Optional<u32> {
        optional(data(&self.inner).map(ImageData::height))
    }

    #[napi(getter)]
    pub fn stored_width(&self) -> Optional<u32> {
        optional(data(&self.inner).map(ImageData::stored_width))
    }

    #[napi(getter)]
    pub fn stored_height(&self) -> Optional<u32> {
        optional(data(&self.inner).map(ImageData::stored_height))
    }

    /// The EXIF orientation, 1 (as stored) to 8, read from a JPEG's or WebP's EXIF, a PNG's
    /// eXIf or a HEIF's irot/imir.
    #[napi(getter)]
    pub fn orientation(&self) -> Optional<u32> {
        optional(data(&self.inner).map(|d| u32::from(d.orientation())))
    }

    #[napi(getter)]
    pub fn byte_length(&self) -> Optional<f64> {
        optional(data(&self.inner).map(|d| d.len() as f64))
    }

    #[napi(getter)]
    pub fn image_id(&self) -> Optional<String> {
        optional(data(&self.inner).map(|d| d.id().to_owned()))
    }

    /// The URL of an image by https: URL (undefined for bytes, a data: URL's included).
    #[napi(getter)]
    pub fn url(&self) -> Optional<String> {
        optional(image(&self.inner).and_then(|i| match &i.source {
            ImageSource::Url(url) => Some(url.clone()),
            ImageSource::Data(_) => None,
        }))
    }
}

/// An image read back by id (AgentRuntime.image()).
#[napi(object, js_name = "ImageInfo")]
pub struct JsImageInfo {
    /// SHA-256 of the bytes, lowercase hex: the id a memory line names.
    pub id: String,
    #[napi(ts_type = "ImageMimeType")]
    pub mime_type: String,
    /// As displayed, after the orientation (IMG-7).
    pub width: u32,
    pub height: u32,
    /// As encoded in the file.
    pub stored_width: u32,
    pub stored_height: u32,
    /// The EXIF orientation, 1 to 8.
    pub orientation: u32,
    /// The file's bytes (a copy owned by JS).
    pub bytes: Uint8Array,
}

/// The image's info with its bytes copied into a `Uint8Array` handed to JS.
pub fn image_info(image: &ImageData) -> JsImageInfo {
    JsImageInfo {
        id: image.id().to_owned(),
        mime_type: image.mime().as_str().to_owned(),
        width: image.width(),
        height: image.height(),
        stored_width: image.stored_width(),
        stored_height: image.stored_height(),
        orientation: u32::from(image.orientation()),
        bytes: Uint8Array::new(image.bytes().to_vec()),
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: ContentPart

// declare: ImageInfo
*/

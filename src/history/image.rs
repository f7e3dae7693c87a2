//! IMG-1, IMG-5: an image in a message — its bytes with their type, read and checked
//! once where they enter (the type sniffed from the bytes, the pixel size read from the
//! image's own frame header without decoding), shared afterwards (`Arc`: a photo in the
//! history, its episode, the store's write and an export are one allocation), and named
//! by a content address (SHA-256) computed once, on first use.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

pub use super::image_mime::ImageMime;
use super::image_header::{self, Header, Strictness};
use crate::error::{ArkAgentError, ErrorCode};

/// How closely the model looks at an image (OpenAI's `detail`; other formats do not send
/// it, and the estimate of families without it ignores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageDetail {
    /// A fixed low-resolution look.
    Low,
    /// Full resolution (within the family's limits).
    High,
    /// The provider decides (counted as `high` by the estimate: the larger figure).
    Auto,
}

impl ImageDetail {
    /// `"low"`, `"high"` or `"auto"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::High => "high",
            Self::Auto => "auto",
        }
    }
}

/// An image's bytes with their type and pixel size, checked when made. Cheap to clone:
/// clones share the bytes and the content address.
///
/// ```
/// use arkagent::history::{ImageData, ImageMime};
/// // The smallest PNG: 1×1 pixels.
/// let png = arkagent::history::tiny_png();
/// let image = ImageData::new(png.clone()).unwrap();
/// assert_eq!((image.mime(), image.width(), image.height()), (ImageMime::Png, 1, 1));
/// assert_eq!(image.bytes().as_ref(), png.as_slice());
/// assert_eq!(image.id().len(), 64); // SHA-256, lowercase hex
/// ```
#[derive(Clone)]
pub struct ImageData(Arc<Inner>);

struct Inner {
    mime: ImageMime,
    bytes: Arc<[u8]>,
    header: Header,
    id: OnceLock<String>,
}

/// A 1×1 PNG (70 bytes), for examples and tests.
#[doc(hidden)]
pub fn tiny_png() -> Vec<u8> {
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    STANDARD.decode(PNG).unwrap_or_default()
}

fn image_error(code: ErrorCode, message: impl Into<String>) -> ArkAgentError {
    ArkAgentError::Image { code, message: message.into() }
}

impl ImageData {
    /// Checks `bytes` and takes them (no copy of an `Arc<[u8]>`): the type, stored size,
    /// orientation and frames read from the file's own header and container, never from
    /// its pixels (IMG-6, IMG-7). Errors: `image_unsupported_type` (not JPEG, PNG, WebP,
    /// GIF or HEIC/HEIF: AVIF, MP4 and the rest), `image_invalid` (what a decoder would
    /// refuse: a header or container that does not hold together, a PNG chunk whose CRC
    /// fails, a JPEG without its end-of-image marker, a WebP or box size past the end, a
    /// zero size).
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Result<Self, ArkAgentError> {
        Self::read(bytes.into(), Strictness::Door)
    }

    fn read(bytes: Arc<[u8]>, strict: Strictness) -> Result<Self, ArkAgentError> {
        let header = image_header::read(&bytes, strict)?;
        Ok(Self(Arc::new(Inner { mime: header.mime, bytes, header, id: OnceLock::new() })))
    }

    /// [`new`](Self::new) for bytes declared as `mime`: an unknown declared type is
    /// `image_unsupported_type`, bytes of another type than declared (or of none)
    /// `image_invalid`.
    pub fn with_mime(mime: &str, bytes: impl Into<Arc<[u8]>>) -> Result<Self, ArkAgentError> {
        Self::declared(mime, bytes.into(), Strictness::Door)
    }

    /// [`with_mime`](Self::with_mime) for bytes read back from a store or an export: a
    /// file the door took before this version's checks (cut after its header, say) still
    /// loads with the size its header gives.
    pub(crate) fn restored(mime: &str, bytes: impl Into<Arc<[u8]>>) -> Result<Self, ArkAgentError> {
        Self::declared(mime, bytes.into(), Strictness::Restore)
    }

    fn declared(mime: &str, bytes: Arc<[u8]>, strict: Strictness) -> Result<Self, ArkAgentError> {
        let declared = ImageMime::from_mime(mime).ok_or_else(|| {
            image_error(ErrorCode::ImageUnsupportedType, format!("{mime:?} is not a supported image type (image/jpeg, image/png, image/webp, image/gif)"))
        })?;
        // Bytes of no supported type under a supported declared one: not what they claim.
        let image = Self::read(bytes, strict).map_err(|e| match e.code() {
            ErrorCode::ImageUnsupportedType => image_error(ErrorCode::ImageInvalid, format!("declared {declared} but the bytes are not an image of that type")),
            _ => e,
        })?;
        if image.mime() != declared && !(declared.is_heif() && image.mime().is_heif()) {
            return Err(image_error(ErrorCode::ImageInvalid, format!("declared {declared} but the bytes are {}", image.mime())));
        }
        Ok(Self(Arc::new(Inner { mime: declared, bytes: Arc::clone(&image.0.bytes), header: image.0.header, id: OnceLock::new() })))
    }

    /// A `data:<mime>;base64,<data>` URL decoded and checked as [`with_mime`](Self::with_mime).
    /// A malformed URL or base64 is `image_invalid`.
    pub fn from_data_url(url: &str) -> Result<Self, ArkAgentError> {
        let malformed = || image_error(ErrorCode::ImageInvalid, "a data: URL must read data:<image type>;base64,<data>");
        let rest = url.get(..5).filter(|p| p.eq_ignore_ascii_case("data:")).and(url.get(5..)).ok_or_else(malformed)?;
        let (meta, data) = rest.split_once(',').ok_or_else(malformed)?;
        let mime = meta.strip_suffix(";base64").ok_or_else(malformed)?;
        let bytes = STANDARD.decode(data.trim()).map_err(|_| image_error(ErrorCode::ImageInvalid, "the data: URL's base64 does not decode"))?;
        Self::with_mime(mime, bytes)
    }

    /// The type.
    pub fn mime(&self) -> ImageMime {
        self.0.mime
    }

    /// The bytes, shared.
    pub fn bytes(&self) -> &Arc<[u8]> {
        &self.0.bytes
    }

    /// Width in pixels as the image is displayed (IMG-7): the stored width, or the stored
    /// height when the orientation turns the image a quarter (EXIF 5–8, HEIF `irot` 90°/270°).
    pub fn width(&self) -> u32 {
        self.0.header.displayed().0
    }

    /// Height in pixels as displayed (see [`width`](Self::width)).
    pub fn height(&self) -> u32 {
        self.0.header.displayed().1
    }

    /// Width in pixels as stored in the file, before orientation.
    pub fn stored_width(&self) -> u32 {
        self.0.header.width
    }

    /// Height in pixels as stored in the file, before orientation.
    pub fn stored_height(&self) -> u32 {
        self.0.header.height
    }

    /// The EXIF orientation, 1 (as stored) to 8: read from a JPEG's or WebP's EXIF, a
    /// PNG's `eXIf`, a HEIF's `irot`/`imir` (IMG-7).
    pub fn orientation(&self) -> u8 {
        self.0.header.orientation
    }

    /// Frames: more than 1 for an animated GIF, PNG (APNG) or WebP.
    pub fn frames(&self) -> u32 {
        self.0.header.frames
    }

    /// Byte length.
    pub fn len(&self) -> usize {
        self.0.bytes.len()
    }

    /// Never true (an image has a header); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.0.bytes.is_empty()
    }

    /// The content address: SHA-256 of the bytes in lowercase hex (computed once). The
    /// same photo sent twice has one id; the host reads the bytes back by it.
    pub fn id(&self) -> &str {
        self.0.id.get_or_init(|| content_id(&self.0.bytes))
    }

    /// True when both share one allocation (a clone), without comparing bytes.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || Arc::ptr_eq(&self.0.bytes, &other.0.bytes)
    }

    /// The bytes in standard base64, written straight into `f` (no intermediate string).
    pub fn base64(&self) -> impl fmt::Display + '_ {
        base64::display::Base64Display::new(&self.0.bytes, &STANDARD)
    }

    /// The `data:` URL form, written straight into `f`.
    pub fn data_url(&self) -> impl fmt::Display + '_ {
        DataUrl(self)
    }

    /// The same image shared with `bytes` already held elsewhere (the same content):
    /// used to store a photo sent twice once.
    pub(crate) fn sharing(&self, bytes: &Arc<[u8]>) -> Self {
        Self(Arc::new(Inner { mime: self.0.mime, bytes: Arc::clone(bytes), header: self.0.header, id: self.0.id.clone() }))
    }
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn content_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest.iter() {
        hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    hex
}

struct DataUrl<'a>(&'a ImageData);

impl fmt::Display for DataUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data:{};base64,{}", self.0.mime(), self.0.base64())
    }
}

impl PartialEq for ImageData {
    fn eq(&self, other: &Self) -> bool {
        self.mime() == other.mime() && (self.ptr_eq(other) || self.0.bytes == other.0.bytes)
    }
}

impl Eq for ImageData {}

impl fmt::Debug for ImageData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the bytes.
        f.debug_struct("ImageData")
            .field("mime", &self.mime().as_str())
            .field("bytes", &self.len())
            .field("width", &self.width())
            .field("height", &self.height())
            .field("orientation", &self.orientation())
            .finish()
    }
}

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    /// Bytes carried in the request (base64 on the wire).
    Data(ImageData),
    /// An `https:` URL the provider fetches (its size is unknown here: the estimate
    /// counts the family's largest image).
    Url(String),
}

/// An image part of a message (IMG-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    /// The bytes or the URL.
    pub source: ImageSource,
    /// OpenAI's `detail`, when set.
    pub detail: Option<ImageDetail>,
}

impl ImagePart {
    /// An image of checked bytes.
    pub fn data(image: ImageData, detail: Option<ImageDetail>) -> Self {
        Self { source: ImageSource::Data(image), detail }
    }

    /// An image from a URL: an `https:` URL is kept as it is, a `data:` URL is decoded
    /// into bytes and checked. Errors: `image_invalid` (another scheme, a malformed
    /// data URL), `image_unsupported_type`.
    pub fn url(url: &str, detail: Option<ImageDetail>) -> Result<Self, ArkAgentError> {
        let scheme = |s: &str| url.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s));
        if scheme("data:") {
            return Ok(Self::data(ImageData::from_data_url(url)?, detail));
        }
        if !scheme("https://") || url.len() <= "https://".len() || url.chars().any(char::is_whitespace) {
            return Err(image_error(ErrorCode::ImageInvalid, "an image URL must be https: or data:"));
        }
        Ok(Self { source: ImageSource::Url(url.to_owned()), detail })
    }

    /// IMG-4: the line that stands for this image where its bytes do not go (a chunked
    /// summary transcript, `retrieve_memory`): its type, pixel size, byte size and id —
    /// the host reads the bytes back by that id.
    ///
    /// ```
    /// use arkagent::history::{ImageData, ImagePart};
    /// let part = ImagePart::data(ImageData::new(arkagent::history::tiny_png()).unwrap(), None);
    /// assert!(part.line().starts_with("[image image/png, 1×1 px, 70 bytes, id "));
    /// ```
    pub fn line(&self) -> String {
        match &self.source {
            ImageSource::Data(d) => format!("[image {}, {}×{} px, {} bytes, id {}]", d.mime(), d.width(), d.height(), d.len(), d.id()),
            ImageSource::Url(url) => format!("[image at {url}]"),
        }
    }

    /// The image's bytes, when carried.
    pub fn image(&self) -> Option<&ImageData> {
        match &self.source {
            ImageSource::Data(image) => Some(image),
            ImageSource::Url(_) => None,
        }
    }
}

/// The JSON form of an image part (inside a part with `"type": "image"`): `mime_type`
/// and base64 `data`, or `url`; `detail` when set.
#[derive(Serialize, Deserialize)]
struct Repr<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    mime_type: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Base64Field<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    url: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<ImageDetail>,
}

/// Base64 text: written from the bytes, read as text.
enum Base64Field<'a> {
    Out(&'a ImageData),
    In(Cow<'a, str>),
}

impl Serialize for Base64Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Out(image) => serializer.collect_str(&image.base64()),
            Self::In(text) => serializer.serialize_str(text),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Base64Field<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Cow::<'a, str>::deserialize(deserializer).map(Self::In)
    }
}

impl Serialize for ImagePart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let repr = match &self.source {
            ImageSource::Data(image) => Repr {
                mime_type: Some(Cow::Borrowed(image.mime().as_str())),
                data: Some(Base64Field::Out(image)),
                url: None,
                detail: self.detail,
            },
            ImageSource::Url(url) => Repr { mime_type: None, data: None, url: Some(Cow::Borrowed(url)), detail: self.detail },
        };
        repr.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ImagePart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = Repr::deserialize(deserializer)?;
        let data = match &repr.data {
            Some(Base64Field::In(data)) => Some(data.as_ref()),
            _ => None,
        };
        Self::restored(repr.mime_type.as_deref(), data, repr.url.as_deref(), repr.detail).map_err(D::Error::custom)
    }
}

impl ImagePart {
    /// The image part of a stored or exported JSON form: `mime_type` and base64 `data`, or
    /// `url` (the bytes read back leniently: [`ImageData`]'s restore).
    pub(crate) fn restored(mime: Option<&str>, data: Option<&str>, url: Option<&str>, detail: Option<ImageDetail>) -> Result<Self, String> {
        match (mime, data, url) {
            (Some(mime), Some(data), None) => {
                let bytes = STANDARD.decode(data.as_bytes()).map_err(|_| "image data is not base64".to_owned())?;
                let image = ImageData::restored(mime, bytes).map_err(|e| e.to_string())?;
                Ok(Self::data(image, detail))
            }
            (None, None, Some(url)) => Self::url(url, detail).map_err(|e| e.to_string()),
            _ => Err("an image part has mime_type and data, or url".to_owned()),
        }
    }
}

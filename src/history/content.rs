//! IMG-1: what a user message or a tool result says — plain text (as before, and as every
//! stored session and export written before images serialized it: a JSON string), or an
//! ordered list of text and image parts (a JSON array).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::image::{ImageData, ImageDetail, ImagePart};
use crate::error::{ArkAgentError, ErrorCode};

/// One part of a message's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image (bytes or URL). JSON: `{"type":"image","mime_type":…,"data":<base64>}`
    /// or `{"type":"image","url":…}`, with `"detail"` when set.
    Image(ImagePart),
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image part of checked bytes.
    pub fn image(image: ImageData) -> Self {
        Self::Image(ImagePart::data(image, None))
    }
}

/// A user message's or a tool result's content: text, or ordered parts. A plain string
/// converts into it (`"hi".into()`), and serializes as one, so text-only messages look
/// as they always did.
///
/// ```
/// use arkagent::history::{Content, ContentPart, ImageData};
/// let text: Content = "what is this plant?".into();
/// assert_eq!(serde_json::to_string(&text).unwrap(), r#""what is this plant?""#);
/// let photo = ImageData::new(arkagent::history::tiny_png()).unwrap();
/// let parts = Content::Parts(vec![ContentPart::text("what is this plant?"), ContentPart::image(photo)]);
/// assert_eq!(parts.text(), "what is this plant?");
/// assert_eq!(parts.images().count(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Ordered parts.
    Parts(Vec<ContentPart>),
}

impl Default for Content {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

impl Content {
    /// The whole content when it is plain text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(text),
            Self::Parts(_) => None,
        }
    }

    /// The text: plain text as it is, parts' texts joined by newlines (images left out).
    pub fn text(&self) -> Cow<'_, str> {
        let parts = match self {
            Self::Text(text) => return Cow::Borrowed(text),
            Self::Parts(parts) => parts,
        };
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text { text } => Some(text.as_str()),
                ContentPart::Image(_) => None,
            })
            .collect();
        match texts.as_slice() {
            [] => Cow::Borrowed(""),
            [one] => Cow::Borrowed(one),
            many => Cow::Owned(many.join("\n")),
        }
    }

    /// IMG-4: the text with each image as its [line](ImagePart::line), in order, joined
    /// by newlines: what a transcript shows where the bytes do not go.
    pub fn transcript(&self) -> Cow<'_, str> {
        match self {
            Self::Text(text) => Cow::Borrowed(text),
            Self::Parts(parts) => {
                let pieces: Vec<Cow<'_, str>> = parts
                    .iter()
                    .map(|p| match p {
                        ContentPart::Text { text } => Cow::Borrowed(text.as_str()),
                        ContentPart::Image(image) => Cow::Owned(image.line()),
                    })
                    .collect();
                Cow::Owned(pieces.join("\n"))
            }
        }
    }

    /// This content with each image replaced by a text part holding its line (IMG-4).
    pub fn with_image_lines(&self) -> Content {
        match self {
            Self::Text(text) => Self::Text(text.clone()),
            Self::Parts(parts) => Self::Parts(
                parts
                    .iter()
                    .map(|p| match p {
                        ContentPart::Text { .. } => p.clone(),
                        ContentPart::Image(image) => ContentPart::Text { text: image.line() },
                    })
                    .collect(),
            ),
        }
    }

    /// The parts of a content of parts; empty for plain text (see [`Content::as_text`]).
    pub fn parts(&self) -> &[ContentPart] {
        match self {
            Self::Text(_) => &[],
            Self::Parts(parts) => parts,
        }
    }

    /// The image parts, in order.
    pub fn images(&self) -> impl Iterator<Item = &ImagePart> {
        self.parts().iter().filter_map(|p| match p {
            ContentPart::Image(image) => Some(image),
            ContentPart::Text { .. } => None,
        })
    }

    /// True when it carries at least one image.
    pub fn has_images(&self) -> bool {
        self.images().next().is_some()
    }

    /// Every text in it, mutable (the redactor's door: image bytes are never scanned).
    pub fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        let (text, parts): (Option<&mut String>, &mut [ContentPart]) = match self {
            Self::Text(text) => (Some(text), &mut []),
            Self::Parts(parts) => (None, parts),
        };
        text.into_iter().chain(parts.iter_mut().filter_map(|p| match p {
            ContentPart::Text { text } => Some(text),
            ContentPart::Image(image) => match &mut image.source {
                super::image::ImageSource::Url(url) => Some(url),
                super::image::ImageSource::Data(_) => None,
            },
        }))
    }

    /// Heap bytes it owns (PERF-2's report): texts, and each image's bytes (a photo
    /// shared by several messages is counted in each).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Self::Text(text) => text.capacity(),
            Self::Parts(parts) => {
                parts.capacity() * std::mem::size_of::<ContentPart>()
                    + parts
                        .iter()
                        .map(|p| match p {
                            ContentPart::Text { text } => text.capacity(),
                            ContentPart::Image(image) => match &image.source {
                                super::image::ImageSource::Url(url) => url.capacity(),
                                super::image::ImageSource::Data(data) => data.len(),
                            },
                        })
                        .sum::<usize>()
            }
        }
    }

    /// Every text in it (as [`Content::texts_mut`] sees them).
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        let (text, parts): (Option<&str>, &[ContentPart]) = match self {
            Self::Text(text) => (Some(text.as_str()), &[]),
            Self::Parts(parts) => (None, parts),
        };
        text.into_iter().chain(parts.iter().filter_map(|p| match p {
            ContentPart::Text { text } => Some(text.as_str()),
            ContentPart::Image(image) => match &image.source {
                super::image::ImageSource::Url(url) => Some(url.as_str()),
                super::image::ImageSource::Data(_) => None,
            },
        }))
    }
}

/// One part as a binding hands it over (see [`Content::from_parts_json`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartIn {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    mime_type: Option<String>,
    data: Option<String>,
    url: Option<String>,
    detail: Option<ImageDetail>,
}

impl PartIn {
    fn into_part(self) -> Result<ContentPart, ArkAgentError> {
        use base64::Engine;
        match (self.kind.as_str(), self.text, self.mime_type, self.data, self.url) {
            ("text", Some(text), None, None, None) => Ok(ContentPart::Text { text }),
            ("image", None, Some(mime), Some(data), None) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.as_bytes())
                    .map_err(|_| ArkAgentError::Image { code: ErrorCode::ImageInvalid, message: "an image's data is not base64".into() })?;
                Ok(ContentPart::Image(ImagePart::data(ImageData::with_mime(&mime, bytes)?, self.detail)))
            }
            ("image", None, None, None, Some(url)) => Ok(ContentPart::Image(ImagePart::url(&url, self.detail)?)),
            (kind, ..) => Err(ArkAgentError::InvalidJson(format!(
                "a part is {{\"type\":\"text\",\"text\"}} or {{\"type\":\"image\",\"mime_type\",\"data\"}} or {{\"type\":\"image\",\"url\"}} (got type {kind:?})"
            ))),
        }
    }
}

impl Content {
    /// Parses a JSON array of parts, as the C surface takes them:
    /// `[{"type":"text","text":…},{"type":"image","mime_type":"image/jpeg","data":<base64>,
    /// "detail"?:"low"|"high"|"auto"},{"type":"image","url":"https://…"}]`. Errors:
    /// `invalid_json` (not such an array), and each image's own check
    /// (`image_unsupported_type`, `image_invalid`: a header that does not parse, bytes of
    /// another type than declared, data that is not base64, a URL neither https: nor data:).
    pub fn from_parts_json(json: &str) -> Result<Self, ArkAgentError> {
        let parts: Vec<PartIn> = serde_json::from_str(json)?;
        parts.into_iter().map(PartIn::into_part).collect::<Result<Vec<_>, _>>().map(Self::Parts)
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<&String> for Content {
    fn from(text: &String) -> Self {
        Self::Text(text.clone())
    }
}

impl From<Vec<ContentPart>> for Content {
    fn from(parts: Vec<ContentPart>) -> Self {
        Self::Parts(parts)
    }
}

impl PartialEq<str> for Content {
    fn eq(&self, other: &str) -> bool {
        self.as_text() == Some(other)
    }
}

impl PartialEq<&str> for Content {
    fn eq(&self, other: &&str) -> bool {
        self.as_text() == Some(*other)
    }
}

impl fmt::Display for Content {
    /// The text ([`Content::text`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => serializer.serialize_str(text),
            Self::Parts(parts) => parts.serialize(serializer),
        }
    }
}

/// A part's kind (its `type`).
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum PartKind {
    Text,
    Image,
}

/// Every kind's fields in one flat record, read in one pass (serde's internally tagged
/// form buffers each part first: PERF-9).
#[derive(Deserialize)]
struct PartRepr<'a> {
    #[serde(rename = "type")]
    kind: PartKind,
    #[serde(default)]
    text: Option<String>,
    #[serde(default, borrow)]
    mime_type: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    data: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    url: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    detail: Option<ImageDetail>,
}

/// `{"type":"text","text"}` or `{"type":"image", "mime_type", "data" | "url", "detail"?}`.
impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let r = PartRepr::deserialize(deserializer)?;
        match r.kind {
            PartKind::Text => r.text.map(|text| Self::Text { text }).ok_or_else(|| de::Error::missing_field("text")),
            PartKind::Image => ImagePart::restored(r.mime_type.as_deref(), r.data.as_deref(), r.url.as_deref(), r.detail).map(Self::Image).map_err(de::Error::custom),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(part) = seq.next_element::<ContentPart>()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

//! IMG-1: the image types, shared by the header reader (which sniffs them) and the image
//! records (which carry them).

use std::fmt;

/// The image types a message can carry (IMG-1): JPEG, PNG, WebP and GIF go to every
/// model family; HEIC/HEIF (what phone cameras write) only to a family that accepts them
/// ([`crate::history::ImageTokenRule::accepts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageMime {
    /// `image/jpeg`.
    Jpeg,
    /// `image/png`.
    Png,
    /// `image/webp`.
    Webp,
    /// `image/gif`.
    Gif,
    /// `image/heic`.
    Heic,
    /// `image/heif`.
    Heif,
}

impl ImageMime {
    /// Every type, in declaration order.
    pub const ALL: [ImageMime; 6] = [Self::Jpeg, Self::Png, Self::Webp, Self::Gif, Self::Heic, Self::Heif];

    /// The MIME type, e.g. `"image/jpeg"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Webp => "image/webp",
            Self::Gif => "image/gif",
            Self::Heic => "image/heic",
            Self::Heif => "image/heif",
        }
    }

    /// The type named `mime` (ASCII case-insensitive; `image/jpg` is JPEG), if known.
    pub fn from_mime(mime: &str) -> Option<Self> {
        let mime = mime.trim();
        if mime.eq_ignore_ascii_case("image/jpg") {
            return Some(Self::Jpeg);
        }
        Self::ALL.into_iter().find(|m| m.as_str().eq_ignore_ascii_case(mime))
    }

    /// True for HEIC/HEIF.
    pub const fn is_heif(self) -> bool {
        matches!(self, Self::Heic | Self::Heif)
    }
}

impl fmt::Display for ImageMime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

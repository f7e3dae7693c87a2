//! IMG-6, IMG-7: the image header reader. It reads what a provider's decoder would read
//! before decoding — never the pixels — and refuses what the decoder would refuse: the type
//! from the file's own magic and container (a JPEG behind four PNG bytes is no PNG), the
//! stored size from the frame header the format defines (JPEG's SOF reached by walking the
//! marker segments, fill bytes included; PNG's IHDR as the first chunk, every chunk's CRC;
//! WebP's first chunk inside a RIFF size that fits the file; HEIF's primary item's `ispe`),
//! the orientation (EXIF in JPEG, WebP and PNG `eXIf`; HEIF `irot`/`imir`) and the frame
//! count. A file cut short (no JPEG end-of-image, no PNG `IEND`, a RIFF or box size past
//! the end) is `image_invalid` at the door; the same file read back from a store or an
//! export (`Strictness::Restore`) keeps the size its header gives, so old stores load.

mod bmff;
mod exif;
mod gif;
mod jpeg;
mod png;
mod webp;

use super::image_mime::ImageMime;
use crate::error::{ArkAgentError, ErrorCode};

/// What the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The type the bytes are.
    pub mime: ImageMime,
    /// Stored width in pixels (as encoded, before orientation).
    pub width: u32,
    /// Stored height in pixels.
    pub height: u32,
    /// EXIF orientation, 1..=8 (1: as stored). HEIF's `irot`/`imir` are mapped to it.
    pub orientation: u8,
    /// Frames: more than 1 for an animated GIF, APNG or WebP.
    pub frames: u32,
}

impl Header {
    /// The displayed size: the stored one, sides swapped for orientations 5 to 8.
    pub fn displayed(&self) -> (u32, u32) {
        if self.orientation >= 5 {
            (self.height, self.width)
        } else {
            (self.width, self.height)
        }
    }
}

/// How strictly a file is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// At the door: every check.
    Door,
    /// Read back from a store or an export: a file cut after its header still loads.
    Restore,
}

pub(crate) fn invalid(message: impl Into<String>) -> ArkAgentError {
    ArkAgentError::Image { code: ErrorCode::ImageInvalid, message: message.into() }
}

pub(crate) fn unsupported(message: impl Into<String>) -> ArkAgentError {
    ArkAgentError::Image { code: ErrorCode::ImageUnsupportedType, message: message.into() }
}

/// A file that ends before its structure does: refused at the door; at restore, the
/// header read so far stands when it gave a size.
pub(crate) fn cut(found: Option<Header>, strict: Strictness, what: &str) -> Result<Header, ArkAgentError> {
    match (found, strict) {
        (Some(header), Strictness::Restore) => Ok(header),
        _ => Err(invalid(format!("the file is cut short: {what}"))),
    }
}

/// Reads `bytes`' header. Errors: `image_unsupported_type` (no magic of ours: not JPEG,
/// PNG, WebP, GIF or HEIC/HEIF — AVIF and other ISO-BMFF brands included),
/// `image_invalid` (a header or container that does not hold together).
pub fn read(bytes: &[u8], strict: Strictness) -> Result<Header, ArkAgentError> {
    let header = if bytes.starts_with(b"\xFF\xD8") {
        jpeg::read(bytes, strict)
    } else if bytes.starts_with(b"\x89PNG") {
        png::read(bytes, strict)
    } else if bytes.starts_with(b"GIF8") {
        gif::read(bytes, strict)
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        webp::read(bytes, strict)
    } else if bytes.get(4..8) == Some(b"ftyp") {
        bmff::read(bytes, strict)
    } else {
        Err(unsupported("the bytes are not a JPEG, PNG, WebP, GIF or HEIC/HEIF image"))
    }?;
    if header.width == 0 || header.height == 0 {
        return Err(invalid(format!("the image header gives a size of {}×{}", header.width, header.height)));
    }
    Ok(header)
}

/// Big-endian u16 at `at`.
pub(crate) fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

/// Big-endian u32 at `at`.
pub(crate) fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

/// Little-endian u16 at `at`.
pub(crate) fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

/// Little-endian u32 at `at`.
pub(crate) fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

/// Little-endian 24-bit value at `at`.
pub(crate) fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(3)?)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

#[cfg(test)]
mod tests;

#[cfg(any(test, feature = "fuzzing"))]
pub mod fixtures;

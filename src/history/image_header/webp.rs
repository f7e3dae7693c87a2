//! WebP (RFC 9649): a RIFF whose size fits the file, whose first chunk is exactly `VP8 `
//! (a key frame's start code and 14-bit sides, the 2 scale bits masked off), `VP8L` (its
//! signature byte and 14-bit sides) or `VP8X` (the canvas); after a `VP8X`, the chunks are
//! walked inside the RIFF for `EXIF` (orientation) and `ANMF` (frames).

use super::{cut, exif, invalid, le16, le24, le32, Header, Strictness};
use super::ImageMime;

pub(super) fn read(b: &[u8], strict: Strictness) -> Result<Header, super::ArkAgentError> {
    let riff = le32(b, 4).map_or(0, |s| s as usize);
    if riff < 4 + 8 {
        return Err(invalid(format!("a WebP RIFF size of {riff}")));
    }
    let body_end = 8 + riff;
    let (Some(kind), Some(size)) = (b.get(12..16), le32(b, 16)) else { return Err(invalid("a WebP without its first chunk")) };
    let payload = b.get(20..).unwrap_or_default();
    let mut header = match kind {
        b"VP8 " => lossy(payload)?,
        b"VP8L" => lossless(payload)?,
        b"VP8X" => extended(payload)?,
        _ => return Err(invalid(format!("a WebP whose first chunk is {:?}, not VP8, VP8L or VP8X", String::from_utf8_lossy(kind)))),
    };
    if body_end > b.len() {
        return cut(Some(header), strict, "the WebP's RIFF size exceeds the file");
    }
    if 20 + size as usize > body_end {
        return cut(Some(header), strict, "the WebP's first chunk runs past its RIFF size");
    }
    if kind == b"VP8X" {
        walk(&b[..body_end], &mut header, strict)?;
    }
    Ok(header)
}

fn lossy(p: &[u8]) -> Result<Header, super::ArkAgentError> {
    if p.get(3..6) != Some(b"\x9D\x01\x2A") || p.first().is_some_and(|tag| tag & 1 != 0) {
        return Err(invalid("a WebP VP8 chunk without a key frame's start code"));
    }
    let (Some(w), Some(h)) = (le16(p, 6), le16(p, 8)) else { return Err(invalid("a short WebP VP8 frame header")) };
    Ok(still(u32::from(w & 0x3FFF), u32::from(h & 0x3FFF)))
}

fn lossless(p: &[u8]) -> Result<Header, super::ArkAgentError> {
    let (Some(0x2F), Some(bits)) = (p.first(), le32(p, 1)) else { return Err(invalid("a WebP VP8L chunk without its signature")) };
    if bits >> 29 != 0 {
        return Err(invalid("a WebP VP8L version other than 0"));
    }
    Ok(still((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
}

fn extended(p: &[u8]) -> Result<Header, super::ArkAgentError> {
    let (Some(&flags), Some(w), Some(h)) = (p.first(), le24(p, 4), le24(p, 7)) else { return Err(invalid("a short WebP VP8X chunk")) };
    let (width, height) = (w + 1, h + 1);
    if u64::from(width) * u64::from(height) > u64::from(u32::MAX) {
        return Err(invalid("a WebP canvas over 2³² − 1 pixels"));
    }
    // Animated (the flag): 2 until `walk` counts the ANMF chunks.
    let frames = if flags & 0x02 != 0 { 2 } else { 1 };
    Ok(Header { frames, ..still(width, height) })
}

fn still(width: u32, height: u32) -> Header {
    Header { mime: ImageMime::Webp, width, height, orientation: 1, frames: 1 }
}

/// The chunks of an extended WebP within `riff` (the file up to the RIFF's end).
fn walk(riff: &[u8], header: &mut Header, strict: Strictness) -> Result<(), super::ArkAgentError> {
    let mut pos = 12;
    let mut frames = 0;
    while pos < riff.len() {
        let (Some(kind), Some(size)) = (riff.get(pos..pos + 4), le32(riff, pos + 4)) else {
            return cut(Some(*header), strict, "a WebP chunk header past the RIFF size").map(|_| ());
        };
        let end = pos + 8 + size as usize;
        if end > riff.len() {
            return cut(Some(*header), strict, "a WebP chunk runs past the RIFF size").map(|_| ());
        }
        match kind {
            b"EXIF" => header.orientation = exif::orientation(&riff[pos + 8..end]).unwrap_or(1),
            b"ANMF" => frames += 1,
            _ => {}
        }
        pos = end + (size as usize & 1);
    }
    // The animation flag (frames 2 so far) counts the ANMF chunks; a still image has 1.
    if header.frames > 1 {
        header.frames = frames.max(1);
    }
    Ok(())
}

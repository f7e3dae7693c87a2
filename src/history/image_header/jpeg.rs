//! JPEG (ITU T.81): the marker segments walked from SOI — fill bytes (`0xFF` runs) before
//! a marker allowed (B.1.1.2), every segment's length checked against the file, the first
//! start-of-frame's size, the first EXIF APP1's orientation (an embedded thumbnail sits in
//! that segment and is skipped whole), each scan's entropy-coded data skipped to its next
//! marker (stuffed `FF 00`, restart markers), up to the end-of-image marker — at the door;
//! read back (`Strictness::Restore`) it stops at the frame header.

use super::{be16, cut, exif, invalid, ArkAgentError, Header, Strictness};
use super::ImageMime;

pub(super) fn read(b: &[u8], strict: Strictness) -> Result<Header, ArkAgentError> {
    let mut walk = Walk { found: None, orientation: 1, scanned: false };
    let mut pos = 2;
    loop {
        let (marker, at) = match marker(b, pos)? {
            Some(m) => m,
            None => return cut(walk.found, strict, "no JPEG end-of-image marker"),
        };
        pos = match marker {
            0x01 | 0xD0..=0xD7 => at,
            0xD9 if !walk.scanned => return cut(walk.found, strict, "the JPEG ends before its first scan"),
            0xD9 => return walk.found.ok_or_else(|| invalid("the JPEG ends before its frame header")),
            0x00 | 0xD8 => return Err(invalid(format!("marker FF{marker:02X} where a segment belongs"))),
            _ => match walk.segment(b, marker, at)? {
                // Read back (a store, an export): the frame header was checked at the door;
                // the rest of the file (its scans) need not be walked again.
                Step::At(next) => match walk.found {
                    Some(header) if strict == Strictness::Restore => return Ok(header),
                    _ => next,
                },
                Step::Ends(what) => return cut(walk.found, strict, what),
            },
        };
    }
}

/// The marker at `pos` (after any fill bytes) and the position after it; `None` at the
/// end of the data.
fn marker(b: &[u8], mut pos: usize) -> Result<Option<(u8, usize)>, ArkAgentError> {
    match b.get(pos) {
        None => return Ok(None),
        Some(0xFF) => {}
        Some(other) => return Err(invalid(format!("a JPEG segment starts with {other:#04x}, not a marker"))),
    }
    while b.get(pos) == Some(&0xFF) {
        pos += 1;
    }
    Ok(b.get(pos).map(|&m| (m, pos + 1)))
}

/// What the walk has read so far.
struct Walk {
    found: Option<Header>,
    orientation: u8,
    scanned: bool,
}

/// Where the walk goes on: the next marker's position, or the end of the data (why).
enum Step {
    At(usize),
    Ends(&'static str),
}

impl Walk {
    /// The segment of `marker` whose length starts at `pos`.
    fn segment(&mut self, b: &[u8], marker: u8, pos: usize) -> Result<Step, ArkAgentError> {
        let Some(len) = be16(b, pos).map(usize::from) else { return Ok(Step::Ends("a segment's length")) };
        if len < 2 {
            return Err(invalid("a JPEG segment length under 2"));
        }
        let end = pos + len;
        let Some(segment) = b.get(pos + 2..end) else { return Ok(Step::Ends("a segment runs past the end")) };
        match marker {
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                // One frame per image (T.81 B.2; a hierarchical file's DHP frames are not
                // taken): decoders disagree on which of two a file means (issue 42's fuzzer).
                if self.found.is_some() {
                    return Err(invalid("a second JPEG frame header"));
                }
                self.found = Some(frame(segment, self.orientation)?);
            }
            0xE1 if self.found.is_none() && self.orientation == 1 => {
                if let Some(tiff) = segment.strip_prefix(b"Exif\0\0") {
                    self.orientation = exif::orientation(tiff).unwrap_or(1);
                }
            }
            0xDA if self.found.is_none() => return Err(invalid("a JPEG scan before its frame header")),
            0xDA => {
                self.scanned = true;
                return Ok(next_marker(b, end).map_or(Step::Ends("no JPEG end-of-image marker after the scan"), Step::At));
            }
            _ => {}
        }
        Ok(Step::At(end))
    }
}

/// A start-of-frame segment: precision, height, width, components.
fn frame(s: &[u8], orientation: u8) -> Result<Header, ArkAgentError> {
    let (Some(height), Some(width), Some(&components)) = (be16(s, 1), be16(s, 3), s.get(5)) else {
        return Err(invalid("a JPEG frame header shorter than 6 bytes"));
    };
    if components == 0 || s.len() < 6 + 3 * usize::from(components) {
        return Err(invalid("a JPEG frame header whose components do not fit"));
    }
    if height == 0 {
        return Err(invalid("a JPEG of height 0 (set by a DNL marker) is not taken"));
    }
    Ok(Header { mime: ImageMime::Jpeg, width: u32::from(width), height: u32::from(height), orientation, frames: 1 })
}

/// The position of the first marker after entropy-coded data from `from` (a byte `FF`
/// followed by neither `00`, a restart marker nor another `FF`), if the data ends with one.
fn next_marker(b: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + b.get(from..)?.iter().position(|&x| x == 0xFF)?;
        match b.get(at + 1) {
            None => return None,
            Some(0x00 | 0xD0..=0xD7) => from = at + 2,
            Some(0xFF) => from = at + 1,
            Some(_) => return Some(at),
        }
    }
}

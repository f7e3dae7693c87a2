//! HEIF (ISO/IEC 23008-12) in ISO-BMFF: the `ftyp` brands decide the type (an HEVC brand:
//! HEIC; `mif1`/`msf1` alone: HEIF; AVIF and every other brand — MP4, QuickTime — are not
//! ours), then the primary item (`pitm`) is sized by the `ispe` property `ipma` associates
//! with it (not by the largest item: a thumbnail or a depth map may be larger), and turned
//! by its `irot`/`imir` properties in their association order. Every top-level box must fit
//! the file.

use super::{be16, be32, cut, invalid, unsupported, Header, Strictness};
use super::ImageMime;

/// A box: its type and body (after its header).
struct Bmff<'a> {
    kind: &'a [u8],
    body: &'a [u8],
}

/// The boxes in `data`, in order; `Err(true)` for one cut short by the end of the data,
/// `Err(false)` for a malformed header.
fn boxes(data: &[u8]) -> impl Iterator<Item = Result<Bmff<'_>, bool>> {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        if pos >= data.len() {
            return None;
        }
        let at = pos;
        let (Some(size), Some(kind)) = (be32(data, at), data.get(at + 4..at + 8)) else {
            pos = data.len();
            return Some(Err(true));
        };
        let (head, size) = match size {
            0 => (8, (data.len() - at) as u64),
            1 => match (be32(data, at + 8), be32(data, at + 12)) {
                (Some(hi), Some(lo)) => (16, u64::from(hi) << 32 | u64::from(lo)),
                _ => return Some(Err(true)),
            },
            n => (8, u64::from(n)),
        };
        pos = data.len();
        if size < head {
            return Some(Err(false));
        }
        // A 64-bit size near 2⁶⁴ (fuzz/regressions/image_header/bmff_size_overflow).
        let end = (at as u64).saturating_add(size);
        if end > data.len() as u64 {
            return Some(Err(true));
        }
        pos = end as usize;
        Some(Ok(Bmff { kind, body: &data[at + head as usize..pos] }))
    })
}

const HEVC: [&[u8; 4]; 6] = [b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx"];

pub(super) fn read(b: &[u8], strict: Strictness) -> Result<Header, super::ArkAgentError> {
    let size = be32(b, 0).map_or(0, |s| s as usize);
    if size < 16 || size > b.len() || !size.is_multiple_of(4) {
        return Err(invalid("an ISO-BMFF ftyp box of a wrong size"));
    }
    let brands: Vec<&[u8]> = std::iter::once(&b[8..12]).chain(b[16..size].chunks(4)).collect();
    let has = |set: &[&[u8; 4]]| brands.iter().any(|brand| set.iter().any(|s| s.as_slice() == *brand));
    let mime = if has(&HEVC) {
        ImageMime::Heic
    } else if has(&[b"avif", b"avis"]) {
        return Err(unsupported("AVIF images are not supported (JPEG, PNG, WebP, GIF, HEIC/HEIF)"));
    } else if has(&[b"mif1", b"msf1"]) {
        ImageMime::Heif
    } else {
        let major = String::from_utf8_lossy(&b[8..12]).into_owned();
        return Err(unsupported(format!("an ISO-BMFF file of brand {major:?} (a video or another format), not a HEIF image")));
    };
    let mut found = None;
    for item in boxes(b) {
        match item {
            Ok(Bmff { kind: b"meta", body }) if found.is_none() => found = Some(primary(body.get(4..).unwrap_or_default(), mime)?),
            Ok(_) => {}
            Err(true) => return cut(found, strict, "an ISO-BMFF box runs past the end"),
            Err(false) => return Err(invalid("a malformed ISO-BMFF box header")),
        }
    }
    found.ok_or_else(|| invalid("a HEIF file without a meta box"))
}

/// The primary item's header from the `meta` box's children.
fn primary(meta: &[u8], mime: ImageMime) -> Result<Header, super::ArkAgentError> {
    let mut primary_id = None;
    let mut iprp = None;
    for item in boxes(meta) {
        let item = item.map_err(|_| invalid("a malformed box inside the HEIF meta box"))?;
        match item.kind {
            b"pitm" => primary_id = pitm(item.body),
            b"iprp" => iprp = Some(item.body),
            _ => {}
        }
    }
    let id = primary_id.ok_or_else(|| invalid("a HEIF without a primary item (pitm)"))?;
    let iprp = iprp.ok_or_else(|| invalid("a HEIF without item properties (iprp)"))?;
    let mut properties = Vec::new();
    let mut indices = Vec::new();
    for item in boxes(iprp) {
        let item = item.map_err(|_| invalid("a malformed HEIF item property box"))?;
        match item.kind {
            b"ipco" => properties = boxes(item.body).collect::<Result<Vec<_>, _>>().map_err(|_| invalid("a malformed HEIF property"))?,
            b"ipma" => indices.extend(associations(item.body, id).ok_or_else(|| invalid("a malformed HEIF ipma box"))?),
            _ => {}
        }
    }
    let mut size = None;
    let mut turn = Turn::default();
    for index in indices {
        let Some(property) = index.checked_sub(1).and_then(|i| properties.get(i)) else { continue };
        match property.kind {
            b"ispe" if size.is_none() => size = be32(property.body, 4).zip(be32(property.body, 8)),
            b"irot" => turn.rotate(property.body.first().map_or(0, |a| a & 3)),
            b"imir" => turn.mirror(property.body.first().is_some_and(|a| a & 1 == 1)),
            _ => {}
        }
    }
    let (width, height) = size.ok_or_else(|| invalid("the HEIF primary item has no size (ispe)"))?;
    Ok(Header { mime, width, height, orientation: turn.exif(), frames: 1 })
}

fn pitm(body: &[u8]) -> Option<u32> {
    match body.first()? {
        0 => be16(body, 4).map(u32::from),
        _ => be32(body, 4),
    }
}

/// The property indices (1-based) `ipma` associates with item `id`, in order.
fn associations(body: &[u8], id: u32) -> Option<Vec<usize>> {
    let (version, wide) = (*body.first()?, body.get(3)? & 1 == 1);
    let count = be32(body, 4)?;
    let mut pos = 8;
    for _ in 0..count {
        let item = if version < 1 { u32::from(be16(body, pos)?) } else { be32(body, pos)? };
        pos += if version < 1 { 2 } else { 4 };
        let n = usize::from(*body.get(pos)?);
        pos += 1;
        let mut indices = Vec::with_capacity(n);
        for _ in 0..n {
            let index = if wide { usize::from(be16(body, pos)? & 0x7FFF) } else { usize::from(body.get(pos)? & 0x7F) };
            pos += if wide { 2 } else { 1 };
            indices.push(index);
        }
        if item == id {
            return Some(indices);
        }
    }
    Some(Vec::new())
}

/// A display transform: a left-right flip (or not), then `quarter` turns anticlockwise.
#[derive(Default)]
struct Turn {
    flip: bool,
    quarter: u8,
}

impl Turn {
    /// `irot`: `angle` × 90° anticlockwise.
    fn rotate(&mut self, angle: u8) {
        self.quarter = (self.quarter + angle) % 4;
    }

    /// `imir`: about the vertical axis (left-right, `top_bottom` false) or the horizontal
    /// one. A flip after a turn is the flip first and the turn reversed.
    fn mirror(&mut self, top_bottom: bool) {
        self.flip = !self.flip;
        self.quarter = ((if top_bottom { 2 } else { 0 }) + 4 - self.quarter) % 4;
    }

    /// The EXIF orientation of the same transform.
    fn exif(&self) -> u8 {
        match (self.flip, self.quarter) {
            (false, 0) => 1,
            (true, 0) => 2,
            (false, 2) => 3,
            (true, 2) => 4,
            (true, 1) => 5,
            (false, 3) => 6,
            (true, 3) => 7,
            _ => 8,
        }
    }
}

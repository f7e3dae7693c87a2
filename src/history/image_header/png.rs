//! PNG (ISO/IEC 15948): the full signature, IHDR as the first chunk with length 13, then
//! every chunk walked to IEND — its length within 2³¹ − 1 and the file, its type four ASCII
//! letters, its CRC checked (at the door); `acTL` gives the frames of an APNG, `eXIf` the orientation.

use super::{be32, cut, exif, invalid, Header, Strictness};
use super::ImageMime;

const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
const MAX: u32 = 0x7FFF_FFFF;

pub(super) fn read(b: &[u8], strict: Strictness) -> Result<Header, super::ArkAgentError> {
    if !b.starts_with(SIGNATURE) {
        return Err(invalid("the PNG signature is not the 8 bytes the format defines"));
    }
    if b.get(12..16) != Some(b"IHDR") || be32(b, 8) != Some(13) {
        return Err(invalid("a PNG's first chunk must be IHDR, 13 bytes long"));
    }
    let mut header: Option<Header> = None;
    let mut pos = SIGNATURE.len();
    let mut image_data = false;
    loop {
        let (Some(len), Some(kind)) = (be32(b, pos), b.get(pos + 4..pos + 8)) else {
            return cut(header, strict, "no PNG IEND chunk");
        };
        if len > MAX {
            return Err(invalid("a PNG chunk length over 2³¹ − 1"));
        }
        if !kind.iter().all(u8::is_ascii_alphabetic) {
            return Err(invalid("a PNG chunk type that is not four ASCII letters"));
        }
        let data_end = pos + 8 + len as usize;
        let Some(stored) = be32(b, data_end) else { return cut(header, strict, "a PNG chunk runs past the end") };
        // At restore the store's own content address vouches for the bytes.
        if strict == Strictness::Door && crc32(&b[pos + 4..data_end]) != stored {
            return Err(invalid(format!("the CRC of PNG chunk {} does not match", String::from_utf8_lossy(kind))));
        }
        let data = &b[pos + 8..data_end];
        match kind {
            b"IHDR" if header.is_none() => header = Some(ihdr(data)?),
            b"IHDR" => return Err(invalid("a second PNG IHDR chunk")),
            b"acTL" if !image_data => {
                let frames = be32(data, 0).unwrap_or(1).max(1);
                header = header.map(|h| Header { frames, ..h });
            }
            b"eXIf" if !image_data => {
                let orientation = exif::orientation(data).unwrap_or(1);
                header = header.map(|h| Header { orientation, ..h });
            }
            b"IDAT" => image_data = true,
            b"IEND" if image_data || strict == Strictness::Restore => return header.ok_or_else(|| invalid("a PNG without IHDR")),
            b"IEND" => return Err(invalid("a PNG without image data (IDAT)")),
            _ => {}
        }
        pos = data_end + 4;
    }
}

/// IHDR: width and height (1..=2³¹ − 1), a bit depth the colour type allows, compression,
/// filter and interlace methods the format defines.
fn ihdr(d: &[u8]) -> Result<Header, super::ArkAgentError> {
    let (Some(width), Some(height)) = (be32(d, 0), be32(d, 4)) else { return Err(invalid("a short PNG IHDR")) };
    if width == 0 || height == 0 || width > MAX || height > MAX {
        return Err(invalid(format!("a PNG IHDR size of {width}×{height} (each side 1 to 2³¹ − 1)")));
    }
    let (depth, colour) = (d[8], d[9]);
    let allowed: &[u8] = match colour {
        0 => &[1, 2, 4, 8, 16],
        3 => &[1, 2, 4, 8],
        2 | 4 | 6 => &[8, 16],
        _ => &[],
    };
    if !allowed.contains(&depth) || d[10] != 0 || d[11] != 0 || d[12] > 1 {
        return Err(invalid(format!("a PNG IHDR with colour type {colour}, bit depth {depth}, methods {}/{}/{}", d[10], d[11], d[12])));
    }
    Ok(Header { mime: ImageMime::Png, width, height, orientation: 1, frames: 1 })
}

/// CRC-32 (ISO 3309, as PNG uses it), one table lookup per byte: a 1 KiB table rather than
/// a crate's 16 KiB slicing tables (PERF-9: the arm64 library's size).
pub(crate) fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |crc, &byte| TABLE[usize::from((crc as u8) ^ byte)] ^ (crc >> 8))
}

const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

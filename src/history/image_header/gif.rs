//! GIF (87a, 89a): the logical screen size, then the blocks walked — image descriptors
//! (frames) with their colour tables and data sub-blocks, extensions — to the trailer.
//! A file that ends after a whole frame without its trailer is read (decoders show it).

use super::{cut, invalid, le16, Header, Strictness};
use super::ImageMime;

pub(super) fn read(b: &[u8], strict: Strictness) -> Result<Header, super::ArkAgentError> {
    if !(b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a")) {
        return Err(invalid("a GIF starts with GIF87a or GIF89a"));
    }
    let (Some(width), Some(height), Some(&flags)) = (le16(b, 6), le16(b, 8), b.get(10)) else {
        return Err(invalid("a GIF shorter than its screen descriptor"));
    };
    let mut header = Header { mime: ImageMime::Gif, width: u32::from(width), height: u32::from(height), orientation: 1, frames: 0 };
    let mut pos = 13 + colour_table(flags);
    loop {
        // What a cut file keeps at restore: the screen size, one frame at least.
        let partial = Some(Header { frames: header.frames.max(1), ..header });
        match b.get(pos) {
            None if header.frames > 0 => return Ok(header),
            None => return cut(partial, strict, "a GIF without any frame"),
            Some(0x3B) if header.frames > 0 => return Ok(header),
            Some(0x3B) => return cut(partial, strict, "a GIF without any frame"),
            Some(0x2C) => {
                let Some(&local) = b.get(pos + 9) else { return cut(partial, strict, "a GIF image descriptor") };
                // The descriptor, its colour table, the LZW minimum code size, the data.
                match sub_blocks(b, pos + 10 + colour_table(local) + 1) {
                    Some(next) => pos = next,
                    None => return cut(partial, strict, "a GIF frame's data runs past the end"),
                }
                header.frames += 1;
            }
            Some(0x21) => match sub_blocks(b, pos + 2) {
                Some(next) => pos = next,
                None => return cut(partial, strict, "a GIF extension runs past the end"),
            },
            Some(other) => return Err(invalid(format!("a GIF block starting with {other:#04x}"))),
        }
    }
}

fn colour_table(flags: u8) -> usize {
    if flags & 0x80 != 0 {
        3 << ((flags & 7) + 1)
    } else {
        0
    }
}

/// The position after the data sub-blocks starting at `pos` (ended by a 0 size).
fn sub_blocks(b: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        let size = usize::from(*b.get(pos)?);
        pos += 1;
        if size == 0 {
            return Some(pos);
        }
        pos += size;
        if pos > b.len() {
            return None;
        }
    }
}

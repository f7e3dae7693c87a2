//! EXIF (TIFF) orientation: tag 0x0112 of IFD0, a SHORT 1..=8. Anything else (no tag, a
//! malformed directory, a value out of range) reads as none.

/// The orientation in `tiff` (a TIFF header onward), if it states one.
pub(super) fn orientation(tiff: &[u8]) -> Option<u8> {
    let tiff = tiff.strip_prefix(b"Exif\0\0").unwrap_or(tiff);
    let little = match tiff.get(..4)? {
        b"II*\0" => true,
        b"MM\0*" => false,
        _ => return None,
    };
    let u16_at = |at: usize| if little { super::le16(tiff, at) } else { super::be16(tiff, at) };
    let u32_at = |at: usize| if little { super::le32(tiff, at) } else { super::be32(tiff, at) };
    let ifd = usize::try_from(u32_at(4)?).ok()?;
    let count = usize::from(u16_at(ifd)?);
    for i in 0..count {
        let entry = ifd + 2 + 12 * i;
        if u16_at(entry)? != 0x0112 {
            continue;
        }
        // Type SHORT (3), count 1: the value is in the entry's first two value bytes.
        if u16_at(entry + 2)? != 3 || u32_at(entry + 4)? != 1 {
            return None;
        }
        let value = u16_at(entry + 8)?;
        return u8::try_from(value).ok().filter(|v| (1..=8).contains(v));
    }
    None
}

//! Test photos: real headers of each type (JPEG with an EXIF thumbnail of another size,
//! PNG, GIF, WebP, HEIC), padded with bytes derived from a seed so every photo differs,
//! and helpers to read images back out of request bodies.

use arkagent::history::{image_fixtures, ContentPart, ImageData, ImageDetail, ImagePart};
use arkagent::Content;
use base64::Engine;
use serde_json::Value;

/// Bytes from a seed (xorshift), to pad photos so each has its own content.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Never 0xFF: a JPEG segment's bytes must not look like a marker to a reader
            // that scans (ours skips segments by length anyway).
            (x % 255) as u8
        })
        .collect()
}

fn segment(marker: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0xFF, marker];
    out.extend_from_slice(&u16::try_from(payload.len() + 2).unwrap().to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn sof0(w: u16, h: u16) -> Vec<u8> {
    let mut p = vec![8];
    p.extend_from_slice(&h.to_be_bytes());
    p.extend_from_slice(&w.to_be_bytes());
    p.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    segment(0xC0, &p)
}

/// A JPEG of `w` × `h` whose APP1 (EXIF) segment holds a 160 × 120 thumbnail JPEG, padded
/// to about `len` bytes with seeded APP segments.
pub fn jpeg(w: u16, h: u16, len: usize, seed: u64) -> Vec<u8> {
    let mut thumb = vec![0xFF, 0xD8];
    thumb.extend(sof0(160, 120));
    thumb.extend([0xFF, 0xD9]);
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend(thumb);
    let mut out = vec![0xFF, 0xD8];
    out.extend(segment(0xE1, &exif));
    let mut left = len.saturating_sub(out.len() + 40);
    let mut n = 0;
    while left > 0 {
        let take = left.min(65_000);
        out.extend(segment(0xE2, &noise(seed + n, take)));
        left = left.saturating_sub(take + 4);
        n += 1;
    }
    out.extend(sof0(w, h));
    // A scan: its header, entropy-coded bytes (no 0xFF), the end-of-image marker.
    out.extend(segment(0xDA, &[3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]));
    out.extend(noise(seed ^ 0x5CA1, 32));
    out.extend([0xFF, 0xD9]);
    out
}

/// A PNG of `w` × `h` with a `tEXt` chunk holding `text` (CRCs right, an IDAT, IEND).
pub fn png(w: u32, h: u32, text: &[u8]) -> Vec<u8> {
    if text.is_empty() {
        image_fixtures::png(w, h, &[])
    } else {
        image_fixtures::png(w, h, &[(b"tEXt", text)])
    }
}

/// A small PNG with seeded pixels (distinct per seed).
pub fn small_png(seed: u64) -> Vec<u8> {
    png(64 + (seed % 7) as u32, 48, &noise(seed, 32))
}

/// A GIF of `w` × `h`, one frame.
pub fn gif(w: u16, h: u16) -> Vec<u8> {
    image_fixtures::gif(w, h, 1)
}

/// A WebP (VP8X) canvas of `w` × `h`.
pub fn webp(w: u32, h: u32) -> Vec<u8> {
    image_fixtures::webp_extended(w, h, None, 1)
}

/// A HEIC (what phone cameras write) of `w` × `h`: ftyp, meta with its primary item's
/// ispe (beside a larger thumbnail item), mdat.
pub fn heic(w: u32, h: u32) -> Vec<u8> {
    image_fixtures::heif(&[b"heic", b"mif1"], w, h, &[], 64)
}

/// An image part of `bytes` (checked).
pub fn part(bytes: &[u8]) -> ContentPart {
    ContentPart::image(ImageData::new(bytes.to_vec()).unwrap())
}

/// An image part with `detail`.
pub fn part_with(bytes: &[u8], detail: ImageDetail) -> ContentPart {
    ContentPart::Image(ImagePart::data(ImageData::new(bytes.to_vec()).unwrap(), Some(detail)))
}

/// A user input: `text` then the photos.
pub fn input(text: &str, photos: &[&[u8]]) -> Content {
    let mut parts = vec![ContentPart::text(text)];
    parts.extend(photos.iter().map(|p| part(p)));
    Content::Parts(parts)
}

pub fn b64(data: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(data).unwrap()
}

/// The bytes of a Chat Completions `image_url` part (a data URL) and its MIME type.
pub fn data_url_bytes(part: &Value) -> (String, Vec<u8>) {
    assert_eq!(part["type"], "image_url", "{part}");
    let url = part["image_url"]["url"].as_str().unwrap();
    let rest = url.strip_prefix("data:").expect("a data: URL");
    let (mime, data) = rest.split_once(";base64,").unwrap();
    (mime.to_owned(), b64(data))
}

/// The bytes of an Anthropic `image` block and its media type.
pub fn block_bytes(block: &Value) -> (String, Vec<u8>) {
    assert_eq!(block["type"], "image", "{block}");
    assert_eq!(block["source"]["type"], "base64");
    (block["source"]["media_type"].as_str().unwrap().to_owned(), b64(block["source"]["data"].as_str().unwrap()))
}

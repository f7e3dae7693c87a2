//! Image files built byte by byte for tests, benches and fuzz seeds: each format's header
//! and container as its specification lays them out, with a payload that is not a real
//! picture (the reader never decodes). Not part of the supported API.

use super::png::crc32;

/// A TIFF (EXIF) block, little-endian, whose IFD0 holds orientation `o`.
pub fn tiff_orientation(o: u16) -> Vec<u8> {
    let mut t = b"II*\0".to_vec();
    t.extend(8u32.to_le_bytes());
    t.extend(1u16.to_le_bytes());
    t.extend(0x0112u16.to_le_bytes());
    t.extend(3u16.to_le_bytes());
    t.extend(1u32.to_le_bytes());
    t.extend(u32::from(o).to_le_bytes());
    t.extend(0u32.to_le_bytes());
    t
}

fn segment(out: &mut Vec<u8>, marker: u8, body: &[u8]) {
    out.extend([0xFF, marker]);
    out.extend(u16::try_from(body.len() + 2).unwrap_or(u16::MAX).to_be_bytes());
    out.extend(body);
}

/// A baseline JPEG of `width` × `height`: SOI, an EXIF APP1 with `orientation` (when
/// given), a DQT, SOF0, SOS, entropy data of `scan` bytes (with stuffed `FF 00` and a
/// restart marker), EOI. `fill` puts `FF` fill bytes before each marker.
pub fn jpeg(width: u16, height: u16, orientation: Option<u16>, fill: bool, scan: usize) -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    let pad = |out: &mut Vec<u8>| if fill { out.extend([0xFF, 0xFF]) };
    if let Some(o) = orientation {
        pad(&mut out);
        let mut app1 = b"Exif\0\0".to_vec();
        app1.extend(tiff_orientation(o));
        // An embedded thumbnail's own SOF inside the APP1 must not be read.
        app1.extend([0xFF, 0xD8, 0xFF, 0xC0, 0, 17, 8, 0, 10, 0, 10, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
        segment(&mut out, 0xE1, &app1);
    }
    pad(&mut out);
    segment(&mut out, 0xDB, &[0; 65]);
    pad(&mut out);
    let [h1, h0] = height.to_be_bytes();
    let [w1, w0] = width.to_be_bytes();
    segment(&mut out, 0xC0, &[8, h1, h0, w1, w0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    pad(&mut out);
    segment(&mut out, 0xDA, &[3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]);
    for i in 0..scan {
        out.push((i % 251) as u8);
        if i % 97 == 5 {
            out.extend([0xFF, 0x00]);
        }
        if i % 1000 == 999 {
            out.extend([0xFF, 0xD0]);
        }
    }
    out.extend([0xFF, 0xD9]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend(u32::try_from(data.len()).unwrap_or(u32::MAX).to_be_bytes());
    let start = out.len();
    out.extend(kind);
    out.extend(data);
    let crc = crc32(&out[start..]);
    out.extend(crc.to_be_bytes());
}

/// A PNG of `width` × `height` (RGB, 8 bits), with `extra` chunks before its IDAT.
pub fn png(width: u32, height: u32, extra: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    for (kind, data) in extra {
        chunk(&mut out, kind, data);
    }
    chunk(&mut out, b"IDAT", &[0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A GIF89a of `width` × `height` with `frames` frames (2-colour global table).
pub fn gif(width: u16, height: u16, frames: u32) -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend(width.to_le_bytes());
    out.extend(height.to_le_bytes());
    out.extend([0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    for _ in 0..frames {
        out.extend([0x21, 0xF9, 4, 0, 10, 0, 0, 0]);
        out.push(0x2C);
        out.extend([0, 0, 0, 0]);
        out.extend(width.to_le_bytes());
        out.extend(height.to_le_bytes());
        out.extend([0, 2, 2, 0x4C, 0x01, 0]);
    }
    out.push(0x3B);
    out
}

fn riff(chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    for (kind, data) in chunks {
        body.extend(*kind);
        body.extend(u32::try_from(data.len()).unwrap_or(u32::MAX).to_le_bytes());
        body.extend(data);
        if data.len() % 2 == 1 {
            body.push(0);
        }
    }
    let mut out = b"RIFF".to_vec();
    out.extend(u32::try_from(body.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend(body);
    out
}

/// A lossy WebP (`VP8 `) of `width` × `height`; `scale` goes in the 2 bits above each side.
pub fn webp_lossy(width: u16, height: u16, scale: u16) -> Vec<u8> {
    let mut vp8 = vec![0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A];
    vp8.extend((width | scale << 14).to_le_bytes());
    vp8.extend((height | scale << 14).to_le_bytes());
    vp8.extend([0; 10]);
    riff(&[(b"VP8 ", vp8)])
}

/// A lossless WebP (`VP8L`) of `width` × `height` (each 1..=16384).
pub fn webp_lossless(width: u32, height: u32) -> Vec<u8> {
    let bits = (width - 1) | (height - 1) << 14;
    let mut vp8l = vec![0x2F];
    vp8l.extend(bits.to_le_bytes());
    vp8l.extend([0; 5]);
    riff(&[(b"VP8L", vp8l)])
}

/// An extended WebP (`VP8X`) of `width` × `height` with an EXIF `orientation` (when
/// given) and `frames` ANMF frames (an animation when more than 1).
pub fn webp_extended(width: u32, height: u32, orientation: Option<u16>, frames: u32) -> Vec<u8> {
    let flags = if orientation.is_some() { 0x08 } else { 0 } | if frames > 1 { 0x02 } else { 0 };
    let mut vp8x = vec![flags, 0, 0, 0];
    vp8x.extend(&(width - 1).to_le_bytes()[..3]);
    vp8x.extend(&(height - 1).to_le_bytes()[..3]);
    let mut chunks: Vec<(&[u8; 4], Vec<u8>)> = vec![(b"VP8X", vp8x)];
    if frames > 1 {
        chunks.push((b"ANIM", vec![0; 6]));
        for _ in 0..frames {
            chunks.push((b"ANMF", vec![0; 16]));
        }
    } else {
        let lossless = webp_lossless(width.min(16384), height.min(16384));
        chunks.push((b"VP8L", lossless[20..].to_vec()));
    }
    if let Some(o) = orientation {
        chunks.push((b"EXIF", tiff_orientation(o)));
    }
    riff(&chunks)
}

fn bmff(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(body.len() + 8).unwrap_or(u32::MAX).to_be_bytes().to_vec();
    out.extend(kind);
    out.extend(body);
    out
}

fn full(kind: &[u8; 4], version: u8, flags: u32, body: &[u8]) -> Vec<u8> {
    let mut b = vec![version];
    b.extend(&flags.to_be_bytes()[1..]);
    b.extend(body);
    bmff(kind, &b)
}

fn ispe(width: u32, height: u32) -> Vec<u8> {
    let mut b = width.to_be_bytes().to_vec();
    b.extend(height.to_be_bytes());
    full(b"ispe", 0, 0, &b)
}

/// A HEIF file: `ftyp` of `brands` (the first is the major one), then a `meta` whose
/// primary item (id 1) is `width` × `height` and turned by `transforms` (`irot` angles
/// 0..=3, or `imir` axes as 10 + axis, in association order), a larger thumbnail item
/// (id 2, 8000 × 6000) listed first, and an `mdat` of `payload` bytes.
pub fn heif(brands: &[&[u8; 4]], width: u32, height: u32, transforms: &[u8], payload: usize) -> Vec<u8> {
    let mut ftyp = brands[0].to_vec();
    ftyp.extend(0u32.to_be_bytes());
    for b in brands {
        ftyp.extend(*b);
    }
    let mut out = bmff(b"ftyp", &ftyp);
    let mut ipco = ispe(8000, 6000);
    ipco.extend(ispe(width, height));
    for t in transforms {
        if *t >= 10 {
            ipco.extend(bmff(b"imir", &[t - 10]));
        } else {
            ipco.extend(bmff(b"irot", &[*t]));
        }
    }
    let mut ipma = 2u32.to_be_bytes().to_vec();
    ipma.extend(2u16.to_be_bytes());
    ipma.extend([1, 0x81]);
    ipma.extend(1u16.to_be_bytes());
    ipma.push(u8::try_from(1 + transforms.len()).unwrap_or(u8::MAX));
    ipma.push(0x82);
    for i in 0..transforms.len() {
        ipma.push(u8::try_from(3 + i).unwrap_or(u8::MAX) | 0x80);
    }
    let mut iprp = bmff(b"ipco", &ipco);
    iprp.extend(full(b"ipma", 0, 0, &ipma));
    let mut meta = full(b"hdlr", 0, 0, b"\0\0\0\0pict\0\0\0\0\0\0\0\0\0\0\0\0\0");
    meta.extend(full(b"pitm", 0, 0, &1u16.to_be_bytes()));
    meta.extend(bmff(b"iprp", &iprp));
    out.extend(full(b"meta", 0, 0, &meta));
    out.extend(bmff(b"mdat", &vec![0x5A; payload]));
    out
}

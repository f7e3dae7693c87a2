//! IMG-6, IMG-7: the traps a black-box check and a differential fuzzer found, each with
//! its stable code or its correct size.

use super::fixtures::*;
use super::*;
use crate::error::ErrorCode;

fn door(bytes: &[u8]) -> Result<Header, ErrorCode> {
    read(bytes, Strictness::Door).map_err(|e| e.code())
}

fn size(bytes: &[u8]) -> (u32, u32) {
    let h = door(bytes).unwrap();
    (h.width, h.height)
}

#[test]
fn img_6_jpeg_fill_bytes_before_markers_are_legal() {
    assert_eq!(size(&jpeg(640, 480, None, true, 300)), (640, 480));
    assert_eq!(size(&jpeg(640, 480, Some(1), true, 3000)), (640, 480));
}

#[test]
fn img_6_jpeg_segment_lengths_and_end_of_image_are_checked() {
    // A segment length past the end (50 bytes are no 11,776 × 65,504 image).
    let mut short = jpeg(640, 480, None, false, 10);
    short.truncate(50);
    assert_eq!(door(&short), Err(ErrorCode::ImageInvalid));
    // Cut after its scan header: no end-of-image marker.
    let whole = jpeg(640, 480, None, false, 100);
    let sos = whole.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    let cut_file = &whole[..sos + 12];
    assert_eq!(door(cut_file), Err(ErrorCode::ImageInvalid));
    // Read back from a store, the size stands.
    assert_eq!(read(cut_file, Strictness::Restore).unwrap().width, 640);
    // A scan before any frame header, a segment length under 2.
    assert_eq!(door(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 2, 0xFF, 0xD9]), Err(ErrorCode::ImageInvalid));
    assert_eq!(door(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 1, 0xFF, 0xD9]), Err(ErrorCode::ImageInvalid));
    assert_eq!(door(&[0xFF, 0xD8, 0xFF, 0xD9]), Err(ErrorCode::ImageInvalid));
}

#[test]
fn img_6_png_chunks_are_checked() {
    assert_eq!(size(&png(3024, 4032, &[])), (3024, 4032));
    // A random chunk right after the signature: no size from garbage.
    let mut random = b"\x89PNG\r\n\x1a\n".to_vec();
    random.extend([0xB5, 0xB4, 0x1B, 0x6B, 0x92, 0xC2, 0x89, 0x39, 0x93, 0x7A, 0x3F, 0x29, 0x00, 0x00]);
    random.extend(&png(1, 1, &[])[8..]);
    assert_eq!(door(&random), Err(ErrorCode::ImageInvalid));
    // IHDR's length is not 13.
    let mut wrong = png(10, 10, &[]);
    wrong[11] = 14;
    assert_eq!(door(&wrong), Err(ErrorCode::ImageInvalid));
    // A CRC that does not match.
    let mut crc = png(10, 10, &[]);
    crc[29] ^= 1;
    assert_eq!(door(&crc), Err(ErrorCode::ImageInvalid));
    // Over 2³¹ − 1 a side.
    assert_eq!(door(&png(0x8000_0000, 1, &[])), Err(ErrorCode::ImageInvalid));
    // Cut before IEND.
    let whole = png(10, 10, &[]);
    assert_eq!(door(&whole[..whole.len() - 12]), Err(ErrorCode::ImageInvalid));
    assert_eq!(read(&whole[..whole.len() - 12], Strictness::Restore).unwrap().width, 10);
    // A JPEG behind the 4 bytes \x89PNG is no PNG.
    let mut fake = b"\x89PNG".to_vec();
    fake.extend(jpeg(640, 480, None, false, 10));
    assert_eq!(door(&fake), Err(ErrorCode::ImageInvalid));
    // 65,535 × 65,535 is a valid PNG header; the families' pixel policy refuses it.
    assert_eq!(size(&png(65535, 65535, &[])), (65535, 65535));
}

#[test]
fn img_6_gif_needs_its_version_and_counts_frames() {
    assert_eq!(size(&gif(320, 240, 1)), (320, 240));
    assert_eq!(door(&gif(320, 240, 3)).unwrap().frames, 3);
    let mut any = b"GIF8".to_vec();
    any.extend([0xAA; 40]);
    assert_eq!(door(&any), Err(ErrorCode::ImageInvalid));
    assert_eq!(door(&gif(320, 240, 0)), Err(ErrorCode::ImageInvalid));
}

#[test]
fn img_6_webp_riff_and_first_chunk_are_checked() {
    // The two scale bits above each 14-bit side are masked off.
    assert_eq!(size(&webp_lossy(640, 480, 1)), (640, 480));
    assert_eq!(size(&webp_lossless(640, 480)), (640, 480));
    assert_eq!(size(&webp_extended(4000, 3000, None, 1)), (4000, 3000));
    // A RIFF size past the end of the file.
    let mut over = webp_lossy(640, 480, 0);
    over[4] = over[4].wrapping_add(100);
    assert_eq!(door(&over), Err(ErrorCode::ImageInvalid));
    assert_eq!(read(&over, Strictness::Restore).unwrap().width, 640);
    // VP7X is no VP8X.
    let mut vp7x = webp_extended(640, 480, None, 1);
    vp7x[12..16].copy_from_slice(b"VP7X");
    assert_eq!(door(&vp7x), Err(ErrorCode::ImageInvalid));
    assert_eq!(door(&webp_extended(640, 480, None, 4)).unwrap().frames, 4);
}

#[test]
fn img_6_heif_is_sized_by_its_primary_item_and_other_bmff_brands_are_not_ours() {
    // The primary item is 640 × 480; an 8,000 × 6,000 item sits beside it.
    let h = door(&heif(&[b"heic", b"mif1"], 640, 480, &[], 100)).unwrap();
    assert_eq!((h.mime, h.width, h.height), (ImageMime::Heic, 640, 480));
    assert_eq!(door(&heif(&[b"mif1", b"heic"], 640, 480, &[], 100)).unwrap().mime, ImageMime::Heic);
    assert_eq!(door(&heif(&[b"mif1"], 640, 480, &[], 100)).unwrap().mime, ImageMime::Heif);
    assert_eq!(door(&heif(&[b"avif", b"mif1"], 640, 480, &[], 100)), Err(ErrorCode::ImageUnsupportedType));
    assert_eq!(door(&heif(&[b"isom", b"mp41"], 640, 480, &[], 100)), Err(ErrorCode::ImageUnsupportedType));
    // A box past the end of the file.
    let mut cut_file = heif(&[b"heic"], 640, 480, &[], 100);
    cut_file.truncate(cut_file.len() - 10);
    assert_eq!(door(&cut_file), Err(ErrorCode::ImageInvalid));
    assert_eq!(read(&cut_file, Strictness::Restore).unwrap().width, 640);
}

#[test]
fn img_7_orientation_is_read_alike_on_every_type() {
    for o in 1..=8u16 {
        let swapped = o >= 5;
        for bytes in [jpeg(4032, 3024, Some(o), false, 50), png(4032, 3024, &[(b"eXIf", &tiff_orientation(o))]), webp_extended(4032, 3024, Some(o), 1)] {
            let h = door(&bytes).unwrap();
            assert_eq!((h.width, h.height, h.orientation), (4032, 3024, o as u8));
            assert_eq!(h.displayed(), if swapped { (3024, 4032) } else { (4032, 3024) });
        }
    }
    // HEIF: irot 90° anticlockwise is EXIF 8, 270° is 6, a left-right mirror 2; a mirror
    // after a turn is a transposition.
    for (transforms, exif) in [(&[][..], 1), (&[1][..], 8), (&[2][..], 3), (&[3][..], 6), (&[10][..], 2), (&[11][..], 4), (&[10, 1][..], 5), (&[1, 10][..], 7)] {
        let h = door(&heif(&[b"heic"], 4032, 3024, transforms, 10)).unwrap();
        assert_eq!(h.orientation, exif, "{transforms:?}");
    }
    assert_eq!(door(&heif(&[b"heic"], 4032, 3024, &[3], 10)).unwrap().displayed(), (3024, 4032));
    // A malformed orientation is none.
    let mut bad = tiff_orientation(9);
    assert_eq!(door(&png(10, 20, &[(b"eXIf", &bad)])).unwrap().orientation, 1);
    bad.truncate(12);
    assert_eq!(door(&jpeg(10, 20, None, false, 5)).unwrap().orientation, 1);
}

#[test]
fn img_6_no_bytes_panic_the_reader() {
    let seeds = [jpeg(64, 48, Some(6), true, 200), png(64, 48, &[]), gif(64, 48, 2), webp_extended(64, 48, Some(3), 2), heif(&[b"heic"], 64, 48, &[1], 20)];
    for seed in &seeds {
        for cut_at in 0..seed.len() {
            for strict in [Strictness::Door, Strictness::Restore] {
                let _ = read(&seed[..cut_at], strict);
            }
        }
        for i in 0..seed.len() {
            let mut flipped = seed.clone();
            flipped[i] ^= 0xFF;
            let _ = read(&flipped, Strictness::Door);
        }
    }
}

/// Issue 41's note: read back, a JPEG is read up to its frame header only — the same header
/// as at the door, whatever follows it (here the scans replaced by garbage).
#[test]
fn img_6_a_restored_jpeg_is_read_to_its_frame_header_only() {
    let with_thumbnail = jpeg(64, 48, Some(6), true, 200);
    assert_eq!(read(&with_thumbnail, Strictness::Restore).unwrap(), read(&with_thumbnail, Strictness::Door).unwrap());
    // Without EXIF (and its thumbnail) the first FF C0 is the frame's.
    let whole = jpeg(64, 48, None, false, 200);
    let door_header = read(&whole, Strictness::Door).unwrap();
    assert_eq!(read(&whole, Strictness::Restore).unwrap(), door_header);
    let sof = (2..whole.len() - 1).find(|&i| whole[i] == 0xFF && whole[i + 1] == 0xC0).unwrap();
    let len = usize::from(u16::from_be_bytes([whole[sof + 2], whole[sof + 3]]));
    let mut garbage = whole[..sof + 2 + len].to_vec();
    garbage.extend_from_slice(&[0x12; 64]);
    assert!(read(&garbage, Strictness::Door).is_err(), "the door walks every segment");
    assert_eq!(read(&garbage, Strictness::Restore).unwrap(), door_header);
}
#[test]
fn img_6_a_jpeg_with_a_second_frame_header_is_refused_at_the_door() {
    let one = jpeg(64, 48, None, false, 20);
    let sof = (2..one.len() - 1).find(|&i| one[i] == 0xFF && one[i + 1] == 0xC0).unwrap();
    let frame = one[sof..sof + 19].to_vec();
    let mut two = one[..sof + 19].to_vec();
    two.extend_from_slice(&frame);
    two.extend_from_slice(&one[sof + 19..]);
    assert_eq!(read(&two, Strictness::Door).unwrap_err().code(), ErrorCode::ImageInvalid);
    // Read back, the first frame header decides (it was checked at the door).
    assert_eq!(read(&two, Strictness::Restore).unwrap().width, 64);
}

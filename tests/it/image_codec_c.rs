//! IMG-6..IMG-9 on the C surface: tests/c/image_codec.c against the header and the freshly
//! built library.

#[test]
fn img_8_img_9_c_estimates_in_one_call_and_a_codec_prepares_a_heic_photo() {
    let stdout = crate::c_programs::compile_and_run("image_codec");
    assert!(stdout.contains("image_codec: "), "{stdout}");
}

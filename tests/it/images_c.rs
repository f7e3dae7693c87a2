//! IMG-1, IMG-2, IMG-4, IMG-5 on the C surface: tests/c/images.c against the header and
//! the freshly built library.

#[test]
fn img_1_img_2_img_5_c_photos_round_trip_and_refusals_have_codes() {
    let stdout = crate::c_programs::compile_and_run("images");
    assert!(stdout.contains("images: "), "{stdout}");
}

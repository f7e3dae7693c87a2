//! `--image PATH` (IMG-1): photos read from files, checked by the library, attached to the
//! first message as image parts after its text.

use std::path::PathBuf;

use arkagent::history::{ContentPart, ImageData};
use arkagent::Content;

/// A photo read and checked (type sniffed from the bytes, size from the header), with a
/// line describing it; errors are messages for the user (with the library's code).
pub fn load(path: &PathBuf) -> Result<(ContentPart, String), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--image {}: {e}", path.display()))?;
    let image = ImageData::new(bytes).map_err(|e| format!("--image {}: [{}] {e}", path.display(), e.code()))?;
    let line = format!(
        "photo: {} ({}, {}×{} px, {} bytes) goes with the first message",
        path.display(),
        image.mime(),
        image.width(),
        image.height(),
        image.len()
    );
    Ok((ContentPart::image(image), line))
}

/// `text` with the pending photos after it, or the text alone when there are none.
pub fn with_photos(text: &str, photos: Vec<ContentPart>) -> Content {
    if photos.is_empty() {
        return text.into();
    }
    let mut parts = vec![ContentPart::text(text)];
    parts.extend(photos);
    Content::Parts(parts)
}

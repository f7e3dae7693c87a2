//! IMG-3, IMG-8: an image's tokens from its pixel size (read from the header, never
//! decoded) by its model family's published rule ([`ImageTokenRule`]), with the size the
//! provider's own resize gives it (the coordinates the model answers in, and what a host
//! codec is asked for: IMG-9). Integer arithmetic only: where a rule scales by a real
//! factor, the patch counts are computed exactly (floor and ceiling of square roots and
//! ratios as integers), so no float lands on the wrong side of a patch; Qwen's `round`
//! takes halves to even, as Python's does.

use serde::Serialize;

use crate::error::ArkAgentError;
use crate::history::{ImageDetail, ImagePart, ImageSource, ImageTokenRule};
use crate::llm::{image_rule_of, ModelConfig};

/// IMG-8: what the model's provider makes of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImageEstimate {
    /// The family's rule that counted it (the model's `image_tokens`, else its name's).
    pub rule: ImageTokenRule,
    /// Input tokens the image costs.
    pub tokens: u64,
    /// Width in pixels of the image the provider looks at, after its own resize: the
    /// coordinates the model answers in. The displayed width when it does not resize.
    pub width: u32,
    /// Height in pixels of the image the provider looks at, after its own resize.
    pub height: u32,
}

/// IMG-8: the estimate for `image` sent to `model`, with the checks a run without an
/// image codec makes (the family takes its type, pixels and frames; with a codec:
/// [`estimate_prepared_image_tokens`](crate::runtime::estimate_prepared_image_tokens)). An image by URL, of unknown size, counts as
/// the family's largest (8000 × 8000) and keeps that size. Errors:
/// `image_unsupported_type`, `image_dimensions_unsupported`, `image_animated`.
///
/// ```
/// use arkagent::compress::estimate_image_tokens;
/// use arkagent::history::{ImageData, ImagePart};
/// use arkagent::llm::ModelConfig;
/// let photo = ImagePart::data(ImageData::new(arkagent::history::tiny_png()).unwrap(), None);
/// let estimate = estimate_image_tokens(&ModelConfig::new("https://api.openai.com/v1", "sk-…", "gpt-5"), &photo).unwrap();
/// assert_eq!((estimate.tokens, estimate.width, estimate.height), (70 + 140, 1, 1));
/// ```
pub fn estimate_image_tokens(model: &ModelConfig, image: &ImagePart) -> Result<ImageEstimate, ArkAgentError> {
    let rule = image_rule_of(model);
    match &image.source {
        ImageSource::Data(data) => {
            if !rule.accepts(data.mime()) {
                return Err(ArkAgentError::Image {
                    code: crate::error::ErrorCode::ImageUnsupportedType,
                    message: format!("{} is not taken by {} models", data.mime(), rule.as_str()),
                });
            }
            rule.check(data)?;
            Ok(image_plan(rule, data.width(), data.height(), image.detail))
        }
        ImageSource::Url(_) => Ok(image_plan(rule, 8000, 8000, image.detail)),
    }
}

/// Tokens of `image` under `rule` (an image by URL, of unknown size, counts as the
/// family's largest image).
pub fn image_part_tokens(rule: ImageTokenRule, image: &ImagePart) -> u64 {
    match &image.source {
        ImageSource::Data(data) => image_tokens(rule, data.width(), data.height(), image.detail),
        // The largest image any rule accepts in full: every rule's cap applies.
        ImageSource::Url(_) => image_tokens(rule, 8000, 8000, image.detail),
    }
}

/// Tokens of a `width` × `height` image under `rule` with `detail` (`auto` and none are
/// counted as `high`).
///
/// ```
/// use arkagent::compress::image_tokens;
/// use arkagent::history::{ImageDetail, ImageTokenRule};
/// // OpenAI's worked example: 1024 × 1024 at high detail is 4 tiles, 765 tokens.
/// assert_eq!(image_tokens(ImageTokenRule::OpenAiTiles, 1024, 1024, Some(ImageDetail::High)), 765);
/// assert_eq!(image_tokens(ImageTokenRule::OpenAiTiles, 4096, 8192, Some(ImageDetail::Low)), 85);
/// ```
pub fn image_tokens(rule: ImageTokenRule, width: u32, height: u32, detail: Option<ImageDetail>) -> u64 {
    image_plan(rule, width, height, detail).tokens
}

/// The tokens of a `width` × `height` image under `rule` with `detail`, and the size the
/// provider resizes it to (never larger than the image, except where Qwen's
/// `smart_resize` rounds a side up to its block). Sending an image of that size costs
/// the same tokens (the resize of a resized image changes nothing).
pub fn image_plan(rule: ImageTokenRule, width: u32, height: u32, detail: Option<ImageDetail>) -> ImageEstimate {
    // No real image is a million pixels wide (PNG's limit is 2³¹, but no encoder goes
    // near it); bounding the sides keeps every product below u64::MAX.
    let (w, h) = (u64::from(width.clamp(1, 1_000_000)), u64::from(height.clamp(1, 1_000_000)));
    let low = detail == Some(ImageDetail::Low);
    let (tokens, (rw, rh)) = match rule {
        ImageTokenRule::OpenAiTiles => openai_tiles(w, h, low, 85, 170),
        ImageTokenRule::OpenAiGpt5Tiles => openai_tiles(w, h, low, 70, 140),
        ImageTokenRule::OpenAi4oMiniTiles => openai_tiles(w, h, low, 2833, 5667),
        ImageTokenRule::OpenAiOTiles => openai_tiles(w, h, low, 75, 150),
        ImageTokenRule::OpenAiMiniPatches => scaled(openai_patches(w, h), 1620),
        ImageTokenRule::OpenAiNanoPatches => scaled(openai_patches(w, h), 2460),
        ImageTokenRule::OpenAiO4MiniPatches => scaled(openai_patches(w, h), 1720),
        ImageTokenRule::Anthropic => anthropic(w, h, 1568, 1568),
        ImageTokenRule::AnthropicHighRes => anthropic(w, h, 2576, 4784),
        ImageTokenRule::QwenVl => qwen(w, h, 28, 4, 1280),
        ImageTokenRule::QwenVlHighRes => qwen(w, h, 28, 4, 16384),
        ImageTokenRule::Qwen3Vl => qwen(w, h, 32, 4, 2560),
        ImageTokenRule::Qwen3VlHighRes => qwen(w, h, 32, 4, 16384),
        ImageTokenRule::Gemini => (gemini(w, h), (w, h)),
        ImageTokenRule::Gemini3 => (1120, (w, h)),
    };
    let side = |s: u64| u32::try_from(s.max(1)).unwrap_or(u32::MAX);
    ImageEstimate { rule, tokens, width: side(rw), height: side(rh) }
}

type Counted = (u64, (u64, u64));

/// `patches` × `multiplier / 1000`, rounded up.
fn scaled((patches, size): Counted, multiplier_milli: u64) -> Counted {
    ((patches * multiplier_milli).div_ceil(1000), size)
}

/// OpenAI's tiles: scaled (down only) to fit in 2048 × 2048, then (down only) so the
/// shortest side is 768; `base` + `tile` per 512-px tile. The scaled sides are exact
/// rationals: a tile count is the ceiling of side × num / (den × 512), and the resized
/// side its ceiling (whose tiles are the same). `low`: `base`, the image within 512 × 512.
fn openai_tiles(w: u64, h: u64, low: bool, base: u64, tile: u64) -> Counted {
    if low {
        let long = w.max(h);
        let fit = |side: u64| if long > 512 { (side * 512).div_ceil(long) } else { side };
        return (base, (fit(w), fit(h)));
    }
    // The scale as a fraction num/den, ≤ 1.
    let (mut num, mut den) = (1u64, 1u64);
    let long = w.max(h);
    if long > 2048 {
        (num, den) = (2048, long);
    }
    // The short side after the first step: short × num / den, compared with 768 exactly.
    let short = w.min(h);
    if short * num > 768 * den {
        (num, den) = (768, short);
    }
    let tiles = |side: u64| (side * num).div_ceil(den * 512);
    (base + tile * tiles(w) * tiles(h), ((w * num).div_ceil(den), (h * num).div_ceil(den)))
}

/// OpenAI's 32-px patches: ⌈w/32⌉ × ⌈h/32⌉ when at most 1536; else scaled by
/// √(32²·1536 / (w·h)), then down again so the limiting side is a whole number of
/// patches. In exact terms the limiting side has ⌊√(1536·w/h)⌋ (or ⌊√(1536·h/w)⌋)
/// patches and the other side the ceiling of its share. The resized image: the limiting
/// side exactly its patches × 32, the other side in proportion, rounded up.
fn openai_patches(w: u64, h: u64) -> Counted {
    const MAX: u64 = 1536;
    let raw = w.div_ceil(32) * h.div_ceil(32);
    if raw <= MAX {
        return (raw, (w, h));
    }
    let fx = (MAX * w / h).isqrt().max(1);
    let fy = (MAX * h / w).isqrt().max(1);
    let (px, py, size) = if fx * h <= fy * w {
        (fx, (h * fx).div_ceil(w), (fx * 32, (h * fx * 32).div_ceil(w)))
    } else {
        ((w * fy).div_ceil(h), fy, ((w * fy * 32).div_ceil(h), fy * 32))
    };
    let patches = px.max(1) * py.max(1);
    // A sliver (65535 × 3) still over the limit after the scale: capped, not resized.
    if patches > MAX {
        return (MAX, (w, h));
    }
    (patches, size)
}

/// Claude: 28 × 28-px patches, one token each, after scaling down (aspect kept, sides
/// floored) to the largest size whose long edge is at most `max_edge` and whose
/// patches are at most `max_patches`.
fn anthropic(w: u64, h: u64, max_edge: u64, max_patches: u64) -> Counted {
    let patches = |w: u64, h: u64| w.div_ceil(28) * h.div_ceil(28);
    let long = w.max(h);
    let at = |edge: u64| ((w * edge / long).max(1), (h * edge / long).max(1));
    let edge = long.min(max_edge);
    let (sw, sh) = at(edge);
    if patches(sw, sh) <= max_patches {
        return (patches(sw, sh), (sw, sh));
    }
    // The largest long edge whose patches fit (patch count grows with the edge).
    let (mut lo, mut hi) = (1u64, edge);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let (mw, mh) = at(mid);
        if patches(mw, mh) <= max_patches {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let (fw, fh) = at(lo);
    (patches(fw, fh), (fw, fh))
}

/// Python's `round(n / d)` for integers: halves to even.
fn round_half_even(n: u64, d: u64) -> u64 {
    let (q, r) = (n / d, n % d);
    match (2 * r).cmp(&d) {
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
        std::cmp::Ordering::Less => q,
    }
}

/// ⌈√(n / d)⌉ for integers.
fn ceil_sqrt_ratio(n: u64, d: u64) -> u64 {
    let mut k = (n / d).isqrt();
    while k * k * d < n {
        k += 1;
    }
    k
}

/// Qwen-VL's `smart_resize` (qwen-vl-utils) with `factor`-px blocks, between
/// `min_blocks` and `max_blocks` blocks; tokens = blocks + 2 (vision start and end).
/// Each side rounds to the nearest multiple of `factor` (halves to even); over the limit
/// both sides scale by √(h·w / max_pixels) and floor to the factor, under it by
/// √(min_pixels / (h·w)) and ceil — here as exact integer square roots. The resized
/// image is `wb` × `hb`.
fn qwen(w: u64, h: u64, factor: u64, min_blocks: u64, max_blocks: u64) -> Counted {
    let (max_pixels, min_pixels) = (max_blocks * factor * factor, min_blocks * factor * factor);
    let mut hb = (round_half_even(h, factor) * factor).max(factor);
    let mut wb = (round_half_even(w, factor) * factor).max(factor);
    if hb * wb > max_pixels {
        // floor(h / beta / factor) = ⌊√(h·max_pixels / (w·factor²))⌋.
        hb = ((h * max_pixels / (w * factor * factor)).isqrt() * factor).max(factor);
        wb = ((w * max_pixels / (h * factor * factor)).isqrt() * factor).max(factor);
    } else if hb * wb < min_pixels {
        hb = ceil_sqrt_ratio(h * min_pixels, w * factor * factor) * factor;
        wb = ceil_sqrt_ratio(w * min_pixels, h * factor * factor) * factor;
    }
    ((hb / factor) * (wb / factor) + 2, (wb, hb))
}

/// Gemini 2.x: 258 tokens when both sides are at most 384 px; else 258 per 768 × 768-px
/// tile the image is cut into (Gemini API, "Understand and count tokens").
fn gemini(w: u64, h: u64) -> u64 {
    if w <= 384 && h <= 384 {
        return 258;
    }
    258 * w.div_ceil(768) * h.div_ceil(768)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ImageTokenRule::*;

    const HIGH: Option<ImageDetail> = Some(ImageDetail::High);

    /// OpenAI's worked examples (Images and vision guide, "Calculating costs").
    #[test]
    fn img_3_openai_tiles_match_the_published_examples() {
        assert_eq!(image_tokens(OpenAiTiles, 1024, 1024, HIGH), 765);
        assert_eq!(image_tokens(OpenAiTiles, 2048, 4096, HIGH), 1105);
        assert_eq!(image_tokens(OpenAiTiles, 4096, 8192, Some(ImageDetail::Low)), 85);
        assert_eq!(image_tokens(OpenAiTiles, 1024, 1024, None), 765);
        // Small images are not scaled up: one tile.
        assert_eq!(image_tokens(OpenAiTiles, 300, 200, HIGH), 255);
        assert_eq!(image_tokens(OpenAiOTiles, 1024, 1024, HIGH), 75 + 4 * 150);
    }

    /// OpenAI's patch examples: 1024 × 1024 is 1024 patches; 1800 × 2400 shrinks to
    /// 1056 × 1408, 33 × 44 = 1452 patches.
    #[test]
    fn img_3_openai_patches_match_the_published_examples() {
        assert_eq!(openai_patches(1024, 1024).0, 1024);
        assert_eq!(openai_patches(1800, 2400), (1452, (1056, 1408)));
        assert_eq!(image_tokens(OpenAiMiniPatches, 1024, 1024, HIGH), 1659); // 1024 × 1.62 = 1658.88
        assert_eq!(image_tokens(OpenAiNanoPatches, 1800, 2400, HIGH), 3572); // 1452 × 2.46 = 3571.92
        // Never more than 1536 patches, whatever the shape.
        for (w, h) in [(8000, 8000), (8000, 10), (10, 8000), (4032, 3024), (1537 * 32, 32)] {
            assert!(openai_patches(w, h).0 <= 1536, "{w}×{h}");
        }
    }

    /// Claude: 1000 × 1000 is ⌈1000/28⌉² = 1296 tokens; larger images are capped.
    #[test]
    fn img_3_anthropic_patches_after_the_resize() {
        assert_eq!(image_tokens(Anthropic, 1000, 1000, None), 1296);
        assert_eq!(image_tokens(Anthropic, 1092, 1092, None), 1521);
        assert_eq!(image_tokens(Anthropic, 200, 200, None), 64);
        for (w, h) in [(4032, 3024), (8000, 8000), (3000, 2000)] {
            let t = image_tokens(Anthropic, w, h, None);
            assert!(t <= 1568 && t > 1400, "{w}×{h}: {t}");
            assert!(image_tokens(AnthropicHighRes, w, h, None) <= 4784);
        }
        // The long edge alone: 1568 × 10 px is 56 × 1 patches.
        assert_eq!(image_tokens(Anthropic, 3136, 20, None), 56);
    }

    /// Qwen2.5-VL's `smart_resize` (qwen-vl-utils), values computed with its Python
    /// code: 1024 × 1024 rounds to 1036 × 1036 = 37² blocks, over 1280 blocks, so it
    /// scales to 980 × 980 = 35²; 700 × 500 rounds 500/28 = 17.86 → 18, 700/28 = 25.
    #[test]
    fn img_3_qwen_smart_resize_matches_python() {
        assert_eq!(image_tokens(QwenVl, 1024, 1024, None), 35 * 35 + 2);
        assert_eq!(image_tokens(QwenVl, 700, 500, None), 25 * 18 + 2);
        // Halves go to even: 42/28 = 1.5 → 2; 70/28 = 2.5 → 2.
        assert_eq!(image_tokens(QwenVl, 42, 70, None), 4 + 2);
        assert_eq!(image_tokens(QwenVlHighRes, 1024, 1024, None), 37 * 37 + 2);
        // Tiny images scale up to the minimum of 4 blocks.
        assert_eq!(image_tokens(QwenVl, 10, 10, None), 4 + 2);
        assert_eq!(image_tokens(Qwen3Vl, 1024, 1024, None), 32 * 32 + 2);
    }

    #[test]
    fn img_8_gemini_tiles_of_768_px() {
        assert_eq!(image_tokens(Gemini, 384, 384, None), 258);
        assert_eq!(image_tokens(Gemini, 960, 540, None), 258 * 2);
        assert_eq!(image_tokens(Gemini, 1024, 1024, None), 258 * 2 * 2);
        assert_eq!(image_tokens(Gemini, 4032, 3024, None), 258 * 6 * 4);
        assert_eq!(image_tokens(Gemini3, 4032, 3024, None), 1120);
    }

    /// OpenAI's table: GPT-5 70 + 140 a tile, GPT-4o mini 2,833 + 5,667.
    #[test]
    fn img_8_openai_tile_constants_per_model() {
        assert_eq!(image_tokens(OpenAiGpt5Tiles, 1024, 1024, HIGH), 70 + 4 * 140);
        assert_eq!(image_tokens(OpenAiGpt5Tiles, 1024, 1024, Some(ImageDetail::Low)), 70);
        assert_eq!(image_tokens(OpenAi4oMiniTiles, 1024, 1024, HIGH), 2833 + 4 * 5667);
        assert_eq!(image_tokens(OpenAi4oMiniTiles, 100, 100, Some(ImageDetail::Low)), 2833);
        assert_eq!(image_tokens(Qwen3VlHighRes, 4096, 4096, None), 128 * 128 + 2);
    }

    /// IMG-8, IMG-9: the provider's resized size costs what the original costs, and
    /// resizing it again changes nothing — so a host codec asked for that size keeps the
    /// token count, and the coordinates are the model's.
    #[test]
    fn img_9_the_resized_size_is_a_fixed_point_with_the_same_tokens() {
        let sizes = [(4032, 3024), (3024, 4032), (8000, 10), (10, 8000), (1920, 1080), (700, 500), (12000, 9000), (513, 2049), (1537 * 32, 32), (65535, 3)];
        for rule in ImageTokenRule::ALL {
            for detail in [None, Some(ImageDetail::Low)] {
                for (w, h) in sizes {
                    // Qwen refuses slivers (a side of 10 px or less, over 200:1): IMG-6.
                    let qwen = rule.as_str().starts_with("qwen");
                    if qwen && (w.min(h) <= 10 || w.max(h) > 200 * w.min(h)) {
                        continue;
                    }
                    let plan = image_plan(rule, w, h, detail);
                    let again = image_plan(rule, plan.width, plan.height, detail);
                    assert_eq!(again.tokens, plan.tokens, "{rule:?} {w}×{h} → {}×{}", plan.width, plan.height);
                    assert_eq!((again.width, again.height), (plan.width, plan.height), "{rule:?} {w}×{h}");
                }
            }
        }
        // The published resize: OpenAI 4032 × 3024 → 1024 × 768; Claude → 1568 × 1176.
        let openai = image_plan(OpenAiGpt5Tiles, 4032, 3024, HIGH);
        assert_eq!((openai.width, openai.height, openai.tokens), (1024, 768, 70 + 4 * 140));
        let claude = image_plan(Anthropic, 4032, 3024, None);
        assert!(claude.width <= 1568 && claude.tokens <= 1568, "{claude:?}");
    }

    #[test]
    fn img_3_no_size_overflows_or_panics() {
        for rule in ImageTokenRule::ALL {
            for (w, h) in [(1, 1), (1, u32::MAX), (u32::MAX, 1), (u32::MAX, u32::MAX), (65535, 65535)] {
                let t = image_tokens(rule, w, h, None);
                // Gemini publishes no cap, nor Qwen for an aspect ratio it refuses (over 200).
                assert!(t > 0 && (rule == Gemini || t < 1_000_000), "{rule:?} {w}×{h}: {t}");
            }
        }
    }
}

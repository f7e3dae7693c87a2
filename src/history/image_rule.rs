//! IMG-3, IMG-8's choice: which model family's published rule turns an image's pixel size
//! into tokens (the arithmetic lives in `compress/image_tokens.rs`), and what the family's
//! provider refuses (IMG-6). Set per model (`ModelConfig::image_tokens`); without one, the
//! model's name picks it from a documented table ([`ImageTokenRule::for_model`]), and
//! failing that the wire format's default applies.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::image::ImageData;
use super::image_mime::ImageMime;
use crate::error::{ArkAgentError, ErrorCode};

/// The most pixels any family's decoder takes: Pillow's decompression-bomb limit
/// (2 × 89,478,485), which OpenAI-compatible and Qwen servers decode with.
pub const MAX_IMAGE_PIXELS: u64 = 178_956_970;

/// A model family's image token rule (IMG-3). Its name is the config value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageTokenRule {
    /// `"openai_tiles"`: OpenAI's 512-px tiles — fit in 2048 × 2048, shortest side to
    /// 768, then 85 tokens + 170 per tile (`detail: "low"`: 85). GPT-4o, GPT-4.1, GPT-4.5.
    /// The default of the `openai` wire format.
    OpenAiTiles,
    /// `"openai_gpt5_tiles"`: the same tiles at 70 + 140 per tile (GPT-5, GPT-5.1 and
    /// their chat models).
    OpenAiGpt5Tiles,
    /// `"openai_4o_mini_tiles"`: the same tiles at 2,833 + 5,667 per tile (GPT-4o mini,
    /// priced per token like GPT-4o's images).
    OpenAi4oMiniTiles,
    /// `"openai_o_tiles"`: the same tiles at 75 + 150 per tile (o1, o3).
    OpenAiOTiles,
    /// `"openai_mini_patches"`: OpenAI's 32-px patches (at most 1536, shrunk to fit),
    /// × 1.62 (GPT-4.1-mini, GPT-5-mini).
    OpenAiMiniPatches,
    /// `"openai_nano_patches"`: 32-px patches × 2.46 (GPT-4.1-nano, GPT-5-nano).
    OpenAiNanoPatches,
    /// `"openai_o4_mini_patches"`: 32-px patches × 1.72 (o4-mini).
    OpenAiO4MiniPatches,
    /// `"anthropic"`: Claude's 28 × 28-px patches, one token each, after scaling down
    /// to a long edge of at most 1568 px and at most 1568 patches. The default of the
    /// `anthropic` wire format.
    Anthropic,
    /// `"anthropic_high_res"`: the same with a long edge of at most 2576 px and at most
    /// 4784 patches (Claude models that read images at high resolution).
    AnthropicHighRes,
    /// `"qwen_vl"`: Qwen2.5-VL's 28-px blocks after `smart_resize` (DashScope's default
    /// limit of 1280 blocks), + 2 tokens.
    QwenVl,
    /// `"qwen_vl_high_res"`: Qwen2.5-VL with `vl_high_resolution_images` (16384 blocks).
    QwenVlHighRes,
    /// `"qwen3_vl"`: Qwen3-VL's 32-px blocks (limit 2560 blocks), + 2 tokens.
    Qwen3Vl,
    /// `"qwen3_vl_high_res"`: Qwen3-VL with `vl_high_resolution_images` (16384 blocks).
    Qwen3VlHighRes,
    /// `"gemini"`: Gemini 2.x — 258 tokens for an image within 384 × 384 px, else 258 per
    /// 768 × 768-px tile it is cut into.
    Gemini,
    /// `"gemini_3"`: Gemini 3 at its default `media_resolution` for images (high): 1,120
    /// tokens an image, whatever its size.
    Gemini3,
}

impl ImageTokenRule {
    /// Every rule, in declaration order.
    pub const ALL: [ImageTokenRule; 15] = [
        Self::OpenAiTiles,
        Self::OpenAiGpt5Tiles,
        Self::OpenAi4oMiniTiles,
        Self::OpenAiOTiles,
        Self::OpenAiMiniPatches,
        Self::OpenAiNanoPatches,
        Self::OpenAiO4MiniPatches,
        Self::Anthropic,
        Self::AnthropicHighRes,
        Self::QwenVl,
        Self::QwenVlHighRes,
        Self::Qwen3Vl,
        Self::Qwen3VlHighRes,
        Self::Gemini,
        Self::Gemini3,
    ];

    /// The config name, e.g. `"qwen_vl"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiTiles => "openai_tiles",
            Self::OpenAiGpt5Tiles => "openai_gpt5_tiles",
            Self::OpenAi4oMiniTiles => "openai_4o_mini_tiles",
            Self::OpenAiOTiles => "openai_o_tiles",
            Self::OpenAiMiniPatches => "openai_mini_patches",
            Self::OpenAiNanoPatches => "openai_nano_patches",
            Self::OpenAiO4MiniPatches => "openai_o4_mini_patches",
            Self::Anthropic => "anthropic",
            Self::AnthropicHighRes => "anthropic_high_res",
            Self::QwenVl => "qwen_vl",
            Self::QwenVlHighRes => "qwen_vl_high_res",
            Self::Qwen3Vl => "qwen3_vl",
            Self::Qwen3VlHighRes => "qwen3_vl_high_res",
            Self::Gemini => "gemini",
            Self::Gemini3 => "gemini_3",
        }
    }

    /// The rule named `name`, if any.
    ///
    /// ```
    /// use arkagent::history::ImageTokenRule;
    /// assert_eq!(ImageTokenRule::from_name("gemini"), Some(ImageTokenRule::Gemini));
    /// assert_eq!(ImageTokenRule::from_name("Gemini"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// Whether the family takes images of type `mime`: JPEG, PNG, WebP and GIF always;
    /// HEIC/HEIF only Gemini and Qwen-VL (DashScope).
    pub fn accepts(self, mime: ImageMime) -> bool {
        !mime.is_heif() || self.is_gemini() || self.is_qwen()
    }

    fn is_gemini(self) -> bool {
        matches!(self, Self::Gemini | Self::Gemini3)
    }

    fn is_qwen(self) -> bool {
        matches!(self, Self::QwenVl | Self::QwenVlHighRes | Self::Qwen3Vl | Self::Qwen3VlHighRes)
    }

    /// OpenAI's families, which take still images only.
    pub fn is_openai(self) -> bool {
        matches!(
            self,
            Self::OpenAiTiles | Self::OpenAiGpt5Tiles | Self::OpenAi4oMiniTiles | Self::OpenAiOTiles | Self::OpenAiMiniPatches | Self::OpenAiNanoPatches | Self::OpenAiO4MiniPatches
        )
    }

    /// IMG-8: the family of model `model` by its name (ASCII case-insensitive, a
    /// `provider/` prefix ignored), first match wins:
    ///
    /// | name starts with | rule |
    /// |---|---|
    /// | `gpt-5-mini`, `gpt-4.1-mini` | `openai_mini_patches` |
    /// | `gpt-5-nano`, `gpt-4.1-nano` | `openai_nano_patches` |
    /// | `gpt-5` | `openai_gpt5_tiles` |
    /// | `gpt-4o-mini` | `openai_4o_mini_tiles` |
    /// | `gpt-4o`, `chatgpt-4o`, `gpt-4.1`, `gpt-4.5` | `openai_tiles` |
    /// | `o4-mini` | `openai_o4_mini_patches` |
    /// | `o1`, `o3` | `openai_o_tiles` |
    /// | `claude` | `anthropic` |
    /// | `qwen3-vl`, `qwen3.5`, `qwen3.6` | `qwen3_vl` (`qwen3_vl_high_res` with `vl_high_resolution_images`) |
    /// | `qwen-vl`, `qwen2.5-vl`, `qwen2-vl`, `qvq` | `qwen_vl` (`qwen_vl_high_res` likewise) |
    /// | `gemini-3` | `gemini_3` |
    /// | `gemini` | `gemini` |
    ///
    /// `high_res` is the request's `vl_high_resolution_images` (Qwen's high-resolution
    /// mode, set through `extra_body`). `None` for any other name: the wire format's
    /// default applies. A model's `image_tokens` overrides this table.
    ///
    /// ```
    /// use arkagent::history::ImageTokenRule;
    /// assert_eq!(ImageTokenRule::for_model("gpt-5-2025-08-07", false), Some(ImageTokenRule::OpenAiGpt5Tiles));
    /// assert_eq!(ImageTokenRule::for_model("openai/gpt-4o-mini", false), Some(ImageTokenRule::OpenAi4oMiniTiles));
    /// assert_eq!(ImageTokenRule::for_model("qwen3-vl-plus", true), Some(ImageTokenRule::Qwen3VlHighRes));
    /// assert_eq!(ImageTokenRule::for_model("deepseek-v4-flash", false), None);
    /// ```
    pub fn for_model(model: &str, high_res: bool) -> Option<Self> {
        let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| name.starts_with(p));
        let (qwen3, qwen) = if high_res { (Self::Qwen3VlHighRes, Self::QwenVlHighRes) } else { (Self::Qwen3Vl, Self::QwenVl) };
        let table: [(&[&str], Self); 12] = [
            (&["gpt-5-mini", "gpt-4.1-mini"], Self::OpenAiMiniPatches),
            (&["gpt-5-nano", "gpt-4.1-nano"], Self::OpenAiNanoPatches),
            (&["gpt-5"], Self::OpenAiGpt5Tiles),
            (&["gpt-4o-mini"], Self::OpenAi4oMiniTiles),
            (&["gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5"], Self::OpenAiTiles),
            (&["o4-mini"], Self::OpenAiO4MiniPatches),
            (&["o1", "o3"], Self::OpenAiOTiles),
            (&["claude"], Self::Anthropic),
            (&["qwen3-vl", "qwen3.5", "qwen3.6"], qwen3),
            (&["qwen-vl", "qwen2.5-vl", "qwen2-vl", "qvq"], qwen),
            (&["gemini-3"], Self::Gemini3),
            (&["gemini"], Self::Gemini),
        ];
        table.into_iter().find(|(prefixes, _)| starts(prefixes)).map(|(_, rule)| rule)
    }

    /// IMG-6: whether the family's provider takes `image`'s pixels and frames. Errors:
    /// `image_dimensions_unsupported` (over [`MAX_IMAGE_PIXELS`] for every family; over
    /// 8,000 px a side for Claude; a side under 11 px or an aspect ratio over 200:1 for
    /// Qwen-VL), `image_animated` (an animation for OpenAI's families).
    pub fn check(self, image: &ImageData) -> Result<(), ArkAgentError> {
        self.check_size(image.width(), image.height())?;
        if self.is_openai() && image.frames() > 1 {
            let message = format!("an animated {} ({} frames): {} models take still images only", image.mime(), image.frames(), self.as_str());
            return Err(ArkAgentError::Image { code: ErrorCode::ImageAnimated, message });
        }
        Ok(())
    }

    /// The pixel checks of [`check`](Self::check) for a still image of `width` × `height`
    /// (displayed): `image_dimensions_unsupported`.
    pub fn check_size(self, width: u32, height: u32) -> Result<(), ArkAgentError> {
        let (w, h) = (u64::from(width), u64::from(height));
        let refuse = |why: String| Err(ArkAgentError::Image { code: ErrorCode::ImageDimensionsUnsupported, message: format!("a {w}×{h} image: {why}") });
        if w * h > MAX_IMAGE_PIXELS {
            return refuse(format!("over {MAX_IMAGE_PIXELS} pixels, which no provider decodes"));
        }
        if matches!(self, Self::Anthropic | Self::AnthropicHighRes) && w.max(h) > 8000 {
            return refuse("Claude takes at most 8000 px a side".into());
        }
        if self.is_qwen() && (w.min(h) <= 10 || w.max(h) > 200 * w.min(h)) {
            return refuse("Qwen-VL takes sides over 10 px and an aspect ratio up to 200:1".into());
        }
        Ok(())
    }
}

impl Serialize for ImageTokenRule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ImageTokenRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|r| r.as_str()).collect();
            serde::de::Error::custom(format!("unknown image_tokens {name:?} (known: {})", known.join(", ")))
        })
    }
}

/// BND-2: a rule is one of [`ImageTokenRule::ALL`]'s names.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for ImageTokenRule {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ImageTokenRule".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ImageTokenRule::ALL.iter().map(|r| r.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

#[cfg(test)]
mod tests {
    use super::ImageTokenRule::{self, *};

    /// IMG-8: every row of the model-name table (README, "Photos in the conversation").
    #[test]
    fn img_8_every_row_of_the_model_name_table() {
        let rows: [(&str, bool, Option<ImageTokenRule>); 22] = [
            ("gpt-5-mini", false, Some(OpenAiMiniPatches)),
            ("gpt-4.1-mini-2025-04-14", false, Some(OpenAiMiniPatches)),
            ("gpt-5-nano", false, Some(OpenAiNanoPatches)),
            ("gpt-4.1-nano", false, Some(OpenAiNanoPatches)),
            ("gpt-5.1", false, Some(OpenAiGpt5Tiles)),
            ("gpt-4o-mini", false, Some(OpenAi4oMiniTiles)),
            ("gpt-4o-2024-08-06", false, Some(OpenAiTiles)),
            ("chatgpt-4o-latest", false, Some(OpenAiTiles)),
            ("gpt-4.1", false, Some(OpenAiTiles)),
            ("gpt-4.5-preview", false, Some(OpenAiTiles)),
            ("o4-mini", false, Some(OpenAiO4MiniPatches)),
            ("o1", false, Some(OpenAiOTiles)),
            ("o3-pro", false, Some(OpenAiOTiles)),
            ("Claude-Sonnet-4-5", false, Some(Anthropic)),
            ("qwen3.5-plus", false, Some(Qwen3Vl)),
            ("qwen3.6-flash", true, Some(Qwen3VlHighRes)),
            ("qwen-vl-max", false, Some(QwenVl)),
            ("qwen2.5-vl-72b-instruct", true, Some(QwenVlHighRes)),
            ("qvq-max", false, Some(QwenVl)),
            ("google/gemini-3-pro-preview", false, Some(Gemini3)),
            ("gemini-2.5-flash", false, Some(Gemini)),
            ("glm-4.6", false, None),
        ];
        for (name, high_res, rule) in rows {
            assert_eq!(ImageTokenRule::for_model(name, high_res), rule, "{name}");
        }
    }
}

//! IMG-3's choice: which model family's published rule turns an image's pixel size into
//! tokens (the arithmetic lives in `compress/image_tokens.rs`). Set per model
//! (`ModelConfig::image_tokens`); without one, the wire format's default applies.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::image::ImageMime;

/// A model family's image token rule (IMG-3). Its name is the config value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageTokenRule {
    /// `"openai_tiles"`: OpenAI's 512-px tiles — fit in 2048 × 2048, shortest side to
    /// 768, then 85 tokens + 170 per tile (`detail: "low"`: 85). GPT-4o, GPT-4.1, GPT-5.
    /// The default of the `openai` wire format.
    OpenAiTiles,
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
    /// `"gemini"`: 258 tokens for an image within 384 × 384, else 258 per crop tile.
    Gemini,
}

impl ImageTokenRule {
    /// Every rule, in declaration order.
    pub const ALL: [ImageTokenRule; 11] = [
        Self::OpenAiTiles,
        Self::OpenAiOTiles,
        Self::OpenAiMiniPatches,
        Self::OpenAiNanoPatches,
        Self::OpenAiO4MiniPatches,
        Self::Anthropic,
        Self::AnthropicHighRes,
        Self::QwenVl,
        Self::QwenVlHighRes,
        Self::Qwen3Vl,
        Self::Gemini,
    ];

    /// The config name, e.g. `"qwen_vl"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiTiles => "openai_tiles",
            Self::OpenAiOTiles => "openai_o_tiles",
            Self::OpenAiMiniPatches => "openai_mini_patches",
            Self::OpenAiNanoPatches => "openai_nano_patches",
            Self::OpenAiO4MiniPatches => "openai_o4_mini_patches",
            Self::Anthropic => "anthropic",
            Self::AnthropicHighRes => "anthropic_high_res",
            Self::QwenVl => "qwen_vl",
            Self::QwenVlHighRes => "qwen_vl_high_res",
            Self::Qwen3Vl => "qwen3_vl",
            Self::Gemini => "gemini",
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
        !mime.is_heif() || matches!(self, Self::Gemini | Self::QwenVl | Self::QwenVlHighRes | Self::Qwen3Vl)
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

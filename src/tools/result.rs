use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::history::{Content, ContentPart, ImagePart};

/// The result of a tool call as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text given to the model.
    pub content: String,
    /// True when the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// Stable error code when the runtime produced the error (e.g. `unknown_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Structured data for the host (not shown to the model), e.g. child usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// IMG-1: images the model sees after the text (a screenshot, a rendered chart).
    /// Each is checked like the user's (IMG-5); a result with a refused image reaches
    /// the model as a tool error naming the code instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self { content: content.into(), is_error: false, error_code: None, metadata: None, images: Vec::new() }
    }

    /// A failed result written by the host tool itself.
    pub fn failure(content: impl Into<String>) -> Self {
        Self { content: content.into(), is_error: true, error_code: None, metadata: None, images: Vec::new() }
    }

    /// A failed result with the tool's own stable code: the model sees
    /// `{"error":{"code":…,"message":…}}`, like a runtime error.
    pub fn failure_with_code(code: &str, message: &str) -> Self {
        Self::error(code, message)
    }

    /// This result with `images` after its text (IMG-1).
    pub fn with_images(mut self, images: Vec<ImagePart>) -> Self {
        self.images = images;
        self
    }

    /// What the model sees: [`into_model_content`](Self::into_model_content)'s text,
    /// followed by the images as parts when there are any.
    pub fn into_model_parts(mut self) -> Content {
        let images = std::mem::take(&mut self.images);
        let text = self.into_model_content();
        if images.is_empty() {
            return Content::Text(text);
        }
        let text = (!text.is_empty()).then(|| ContentPart::Text { text });
        Content::Parts(text.into_iter().chain(images.into_iter().map(ContentPart::Image)).collect())
    }

    /// The text the model sees (CORE-2): the content, except that a failure carrying an
    /// error code always shows that code with its message as
    /// `{"error":{"code":…,"message":…}}` — however the executor built it.
    pub fn into_model_content(self) -> String {
        match (&self.error_code, self.is_error) {
            (Some(code), true) if !self.shows_code(code) => json!({"error": {"code": code, "message": self.content}}).to_string(),
            _ => self.content,
        }
    }

    fn shows_code(&self, code: &str) -> bool {
        serde_json::from_str::<Value>(&self.content).is_ok_and(|v| v["error"]["code"].as_str() == Some(code))
    }

    /// A runtime-produced error: the model sees `{"error":{"code":…,"message":…}}`.
    pub fn error(code: &str, message: &str) -> Self {
        Self {
            content: json!({"error": {"code": code, "message": message}}).to_string(),
            is_error: true,
            error_code: Some(code.to_owned()),
            metadata: None,
            images: Vec::new(),
        }
    }
}

//! IMG-2 for Chat Completions: a message's content parts in the wire shape, and what
//! happens to a tool result's images, which a `tool` message cannot carry.
//!
//! - User content: a string stays a string; parts are an array of `{"type":"text"}` and
//!   `{"type":"image_url","image_url":{"url","detail"?}}` parts, bytes as a `data:` URL
//!   (its base64 written straight into the body, once: the encoding cache keeps it).
//! - A tool result with images: the `tool` message carries its text and a line saying
//!   how many images follow (`tool_images_notice.md`); the images go in ONE `user`
//!   message after the LAST tool message of that turn (so every tool call is still
//!   answered before anything else, as the API requires), each result's images after a
//!   line naming its tool call (`tool_images_intro.md`). A turn's images are flushed
//!   there, or before the next message that is not a tool result (an imported history
//!   whose results are not contiguous).

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

use crate::history::{Content, ContentPart, ImageDetail, ImagePart, ImageSource, Message};

fn intro(id: &str) -> String {
    include_str!("tool_images_intro.md").trim_end().replace("{id}", id)
}

fn notice(count: usize) -> String {
    include_str!("tool_images_notice.md").trim_end().replace("{count}", &count.to_string())
}

/// A user message's content on the wire.
pub(super) struct WireContent<'a>(pub(super) &'a Content);

impl Serialize for WireContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Content::Text(text) => serializer.serialize_str(text),
            Content::Parts(parts) => serializer.collect_seq(parts.iter().map(WirePart)),
        }
    }
}

struct WirePart<'a>(&'a ContentPart);

impl Serialize for WirePart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ContentPart::Text { text } => WireText(text).serialize(serializer),
            ContentPart::Image(image) => WireImage(image).serialize(serializer),
        }
    }
}

struct WireText<'a>(&'a str);

impl Serialize for WireText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "text")?;
        map.serialize_entry("text", self.0)?;
        map.end()
    }
}

struct WireImage<'a>(&'a ImagePart);

impl Serialize for WireImage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "image_url")?;
        map.serialize_entry("image_url", &ImageUrl { source: &self.0.source, detail: self.0.detail })?;
        map.end()
    }
}

struct ImageUrl<'a> {
    source: &'a ImageSource,
    detail: Option<ImageDetail>,
}

/// The URL written without an intermediate string (`collect_str`).
struct Url<'a>(&'a ImageSource);

impl Serialize for Url<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ImageSource::Data(image) => serializer.collect_str(&image.data_url()),
            ImageSource::Url(url) => serializer.serialize_str(url),
        }
    }
}

impl Serialize for ImageUrl<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("url", &Url(self.source))?;
        if let Some(detail) = self.detail {
            map.serialize_entry("detail", detail.as_str())?;
        }
        map.end()
    }
}

/// A tool message's content: its text, and the notice when it had images.
pub(super) struct ToolText<'a>(pub(super) &'a Content);

impl Serialize for ToolText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let images = self.0.images().count();
        if images == 0 {
            return serializer.serialize_str(&self.0.text());
        }
        let text = self.0.text();
        let notice = notice(images);
        if text.is_empty() {
            serializer.serialize_str(&notice)
        } else {
            serializer.serialize_str(&format!("{text}\n{notice}"))
        }
    }
}

/// The user message that carries a turn's tool images (owned: cheap, images are shared).
pub(super) struct CarriedImages(Vec<(String, ImagePart)>);

impl Serialize for CarriedImages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", "user")?;
        map.serialize_entry("content", &CarriedParts(&self.0))?;
        map.end()
    }
}

struct CarriedParts<'a>(&'a [(String, ImagePart)]);

impl Serialize for CarriedParts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        let mut last: Option<&str> = None;
        for (id, image) in self.0 {
            if last != Some(id.as_str()) {
                seq.serialize_element(&WireText(&intro(id)))?;
                last = Some(id);
            }
            seq.serialize_element(&WireImage(image))?;
        }
        seq.end()
    }
}

/// Follows the history message by message (the from-scratch encoder and the incremental
/// writer both run one, so their bodies agree byte for byte) and says where the tool
/// images go.
#[derive(Default, Clone)]
pub(crate) struct ToolImageCarrier {
    /// The latest tool-calling answer's calls not answered yet.
    open_calls: Vec<String>,
    /// Images of this turn's results, waiting for the turn's last result.
    pending: Vec<(String, ImagePart)>,
}

impl ToolImageCarrier {
    /// What goes before `message`: the pending images when it is not a tool result.
    pub(super) fn before(&mut self, message: &Message) -> Option<CarriedImages> {
        if let Message::Assistant { tool_calls, .. } = message {
            self.open_calls = tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        if matches!(message, Message::Tool { .. }) {
            return None;
        }
        self.flush()
    }

    /// What goes after `message`: for a tool result, the turn's images once every call
    /// of the turn is answered.
    pub(super) fn after(&mut self, message: &Message) -> Option<CarriedImages> {
        let Message::Tool { tool_call_id, content, .. } = message else { return None };
        self.open_calls.retain(|id| id != tool_call_id);
        self.pending.extend(content.images().map(|i| (tool_call_id.clone(), i.clone())));
        if self.open_calls.is_empty() {
            self.flush()
        } else {
            None
        }
    }

    fn flush(&mut self) -> Option<CarriedImages> {
        (!self.pending.is_empty()).then(|| CarriedImages(std::mem::take(&mut self.pending)))
    }
}

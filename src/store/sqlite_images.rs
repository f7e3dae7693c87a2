//! IMG-1, IMG-4 in the SQLite store: a photo's bytes are stored once per file, content
//! addressed (`images`, keyed by SHA-256), whatever number of messages, archived
//! originals or sessions carry it; a message row names its images by id
//! (`{"type":"image","image_id",…}` instead of `"data"`). `image_refs` says which
//! session holds which image: deleting (or replacing) a session drops its references
//! and the images nobody references any more. A message without image bytes is written
//! exactly as before images existed, so rows of earlier versions read unchanged.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::history::{Content, ContentPart, ImageData, ImageDetail, ImagePart, ImageSource, Message};

/// Migration 4 (IMG-1, IMG-4): the image tables.
pub(super) const MIGRATION_4: &str = "CREATE TABLE images(id TEXT PRIMARY KEY NOT NULL, mime TEXT NOT NULL, bytes BLOB NOT NULL);
     CREATE TABLE image_refs(session_id TEXT NOT NULL, image_id TEXT NOT NULL,
        PRIMARY KEY(session_id, image_id)) WITHOUT ROWID;";

/// A user message or tool result whose images are stored apart.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum Detached {
    User {
        content: Vec<DetachedPart>,
    },
    Tool {
        tool_call_id: String,
        content: Vec<DetachedPart>,
        #[serde(default)]
        is_error: bool,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum DetachedPart {
    Text {
        text: String,
    },
    Image {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<ImageDetail>,
    },
}

/// [`Detached`] read back in one pass (a flat record: no buffering of the tagged forms,
/// PERF-9).
#[derive(Deserialize)]
struct DetachedIn {
    role: DetachedRole,
    content: Vec<DetachedPartIn>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    is_error: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum DetachedRole {
    User,
    Tool,
}

/// [`DetachedPart`] read back (its `mime_type` is the stored image's own).
#[derive(Deserialize)]
struct DetachedPartIn {
    #[serde(rename = "type")]
    kind: PartKind,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    image_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    detail: Option<ImageDetail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum PartKind {
    Text,
    Image,
}

fn detach_part(part: &ContentPart, images: &mut Vec<ImageData>) -> DetachedPart {
    match part {
        ContentPart::Text { text } => DetachedPart::Text { text: text.clone() },
        ContentPart::Image(ImagePart { source: ImageSource::Data(data), detail }) => {
            images.push(data.clone());
            DetachedPart::Image { image_id: Some(data.id().to_owned()), mime_type: Some(data.mime().as_str().to_owned()), url: None, detail: *detail }
        }
        ContentPart::Image(ImagePart { source: ImageSource::Url(url), detail }) => {
            DetachedPart::Image { image_id: None, mime_type: None, url: Some(url.clone()), detail: *detail }
        }
    }
}

/// A message's row JSON, its image bytes pushed to `images` (the same message JSON as
/// ever when it carries no bytes).
pub(super) fn message_row(message: &Message, images: &mut Vec<ImageData>) -> Result<String, StoreError> {
    let carried = message.images().any(|i| i.image().is_some());
    let json = match message {
        Message::User { content: Content::Parts(parts) } if carried => {
            serde_json::to_string(&Detached::User { content: parts.iter().map(|p| detach_part(p, images)).collect() })
        }
        Message::Tool { tool_call_id, content: Content::Parts(parts), is_error } if carried => serde_json::to_string(&Detached::Tool {
            tool_call_id: tool_call_id.clone(),
            content: parts.iter().map(|p| detach_part(p, images)).collect(),
            is_error: *is_error,
        }),
        _ => serde_json::to_string(message),
    };
    json.map_err(|e| StoreError::Io(format!("serialize: {e}")))
}

/// Writes `images` (each once: an image already stored is not written again) and this
/// session's references to them.
pub(super) fn write_images(tx: &Transaction<'_>, session_id: &str, images: &[ImageData]) -> Result<(), rusqlite::Error> {
    for image in images {
        let id = image.id();
        let stored: Option<i64> = tx.prepare_cached("SELECT 1 FROM images WHERE id = ?1")?.query_row([id], |r| r.get(0)).optional()?;
        if stored.is_none() {
            tx.prepare_cached("INSERT INTO images(id, mime, bytes) VALUES (?1, ?2, ?3)")?
                .execute(params![id, image.mime().as_str(), image.bytes().as_ref()])?;
        }
        tx.prepare_cached("INSERT OR IGNORE INTO image_refs(session_id, image_id) VALUES (?1, ?2)")?.execute(params![session_id, id])?;
    }
    Ok(())
}

/// Drops `session_id`'s image references and every image no session references.
pub(super) fn drop_session_images(tx: &Transaction<'_>, session_id: &str) -> Result<(), rusqlite::Error> {
    tx.execute("DELETE FROM image_refs WHERE session_id = ?1", [session_id])?;
    tx.execute("DELETE FROM images WHERE id NOT IN (SELECT image_id FROM image_refs)", [])?;
    Ok(())
}

/// A session's stored images by id: type and bytes.
type StoredImages = HashMap<String, (String, Arc<[u8]>)>;

/// Reads a session's message rows, loading its images (once, on the first row that
/// names one) to put their bytes back.
pub(super) struct RowReader<'c> {
    conn: &'c Connection,
    session_id: &'c str,
    images: Option<StoredImages>,
}

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("stored record does not parse: {what}"))
}

impl<'c> RowReader<'c> {
    pub(super) fn new(conn: &'c Connection, session_id: &'c str) -> Self {
        Self { conn, session_id, images: None }
    }

    /// The message of one row.
    pub(super) fn message(&mut self, json: &str) -> Result<Message, StoreError> {
        match serde_json::from_str::<Message>(json) {
            Ok(message) => Ok(message),
            Err(plain) => match serde_json::from_str::<DetachedIn>(json) {
                Ok(detached) => self.attach(detached),
                Err(_) => Err(corrupt(plain)),
            },
        }
    }

    fn attach(&mut self, detached: DetachedIn) -> Result<Message, StoreError> {
        let content = Content::Parts(self.parts(detached.content)?);
        Ok(match (detached.role, detached.tool_call_id) {
            (DetachedRole::User, _) => Message::User { content },
            (DetachedRole::Tool, Some(tool_call_id)) => Message::Tool { tool_call_id, content, is_error: detached.is_error },
            (DetachedRole::Tool, None) => return Err(corrupt("a tool result without its tool_call_id")),
        })
    }

    fn parts(&mut self, parts: Vec<DetachedPartIn>) -> Result<Vec<ContentPart>, StoreError> {
        parts.into_iter().map(|p| self.part(p)).collect()
    }

    fn part(&mut self, part: DetachedPartIn) -> Result<ContentPart, StoreError> {
        let DetachedPartIn { kind, text, image_id, url, detail } = part;
        if let PartKind::Text = kind {
            return text.map(|text| ContentPart::Text { text }).ok_or_else(|| corrupt("a text part without its text"));
        }
        if let Some(url) = url {
            return ImagePart::url(&url, detail).map(ContentPart::Image).map_err(corrupt);
        }
        let id = image_id.ok_or_else(|| corrupt("an image part names no image"))?;
        let (mime, bytes) = self.image(&id)?;
        let data = ImageData::restored(&mime, bytes).map_err(corrupt)?;
        if data.id() != id {
            return Err(StoreError::Corrupt(format!("image {id} does not hash to its id")));
        }
        Ok(ContentPart::Image(ImagePart::data(data, detail)))
    }

    fn image(&mut self, id: &str) -> Result<(String, Arc<[u8]>), StoreError> {
        if self.images.is_none() {
            self.images = Some(self.load().map_err(|e| StoreError::Io(e.to_string()))?);
        }
        let found = self.images.as_ref().and_then(|m| m.get(id)).cloned();
        found.ok_or_else(|| StoreError::Corrupt(format!("image {id} is missing from the store")))
    }

    fn load(&self) -> Result<StoredImages, rusqlite::Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT i.id, i.mime, i.bytes FROM images i JOIN image_refs r ON r.image_id = i.id WHERE r.session_id = ?1",
        )?;
        let rows = stmt.query_map([self.session_id], |r| {
            let bytes: Vec<u8> = r.get(2)?;
            Ok((r.get::<_, String>(0)?, (r.get::<_, String>(1)?, Arc::<[u8]>::from(bytes))))
        })?;
        rows.collect()
    }
}

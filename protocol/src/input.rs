//! User input (`turn/start.input`, `turn/steer.input`, `userMessage.content`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A byte range inside a text input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct ByteRange {
    /// Start offset (inclusive), in bytes.
    pub start: usize,
    /// End offset (exclusive), in bytes.
    pub end: usize,
}

/// A UI span inside a text input (e.g. a placeholder for a pasted blob).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextElement {
    /// Byte range of the span inside `text`.
    pub byte_range: ByteRange,
    /// Placeholder text shown for the span.
    #[serde(default)]
    pub placeholder: Option<String>,
}

/// Image detail level requested from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageDetail {
    /// Let the model decide.
    Auto,
    /// Low detail.
    Low,
    /// High detail.
    High,
    /// Original resolution.
    Original,
}

/// One piece of user input. Tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// UI spans inside `text` (snake_case key on the wire; defaults to `[]`).
        #[serde(default)]
        text_elements: Vec<TextElement>,
    },
    /// An image by URL or uploaded file id (exactly one of `url` / `fileId` must be set; the
    /// server checks it). The unset one is omitted on the wire.
    #[serde(rename_all = "camelCase")]
    Image {
        /// Image URL (may be a `data:` URL).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// Uploaded file id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_id: Option<String>,
        /// Requested detail level.
        #[serde(default)]
        detail: Option<ImageDetail>,
    },
    /// An image read from a local path.
    LocalImage {
        /// Path of the image file.
        path: String,
        /// Requested detail level.
        #[serde(default)]
        detail: Option<ImageDetail>,
    },
    /// Audio by URL or uploaded file id (exactly one of `url` / `fileId`); not yet supported by
    /// Weft.
    #[serde(rename_all = "camelCase")]
    Audio {
        /// Audio URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// Uploaded file id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_id: Option<String>,
    },
    /// Audio read from a local path; not yet supported by Weft.
    LocalAudio {
        /// Path of the audio file.
        path: String,
    },
    /// A skill reference.
    Skill {
        /// Skill name.
        name: String,
        /// Path of the skill.
        path: String,
    },
    /// A mention of an app or plugin (`app://…`, `plugin://name@marketplace`).
    Mention {
        /// Display name.
        name: String,
        /// Target path.
        path: String,
    },
}

impl UserInput {
    /// A text input without UI spans.
    pub fn text(text: impl Into<String>) -> Self {
        UserInput::Text {
            text: text.into(),
            text_elements: Vec::new(),
        }
    }
}

//! Params and results of the file-system methods `fs/readFile`, `fs/writeFile`,
//! `fs/readDirectory`, `fs/getMetadata`, `fs/createDirectory`, `fs/remove`, `fs/copy`,
//! `fs/watch`, `fs/unwatch`, and the `fs/changed` notification (docs/protocol.md §7.31).
//!
//! Every path is an [`AbsolutePathBuf`]: a relative one is refused while decoding, with the
//! reference's wording, and `.` and `..` are resolved lexically (no file-system access).

use std::borrow::Cow;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::thread_api::empty_response;

/// The error text of a relative (or empty) path, as the reference words it.
pub const RELATIVE_PATH_ERROR: &str = "AbsolutePathBuf deserialized without a base path";

/// An absolute path, normalized lexically (`.` dropped, `..` pops a component, never above
/// `/`). It is not canonicalized: symbolic links are left as they are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AbsolutePathBuf(PathBuf);

impl AbsolutePathBuf {
    /// `path` normalized, or `None` when it is not absolute.
    pub fn new(path: impl AsRef<Path>) -> Option<AbsolutePathBuf> {
        let path = path.as_ref();
        if !path.is_absolute() {
            return None;
        }
        let mut normalized = PathBuf::from("/");
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
                Component::ParentDir => {
                    normalized.pop();
                }
                Component::Normal(name) => normalized.push(name),
            }
        }
        Some(AbsolutePathBuf(normalized))
    }

    /// The path.
    pub fn as_path(&self) -> &Path {
        &self.0
    }

    /// The path, owned.
    pub fn into_path_buf(self) -> PathBuf {
        self.0
    }
}

impl AsRef<Path> for AbsolutePathBuf {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl fmt::Display for AbsolutePathBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.display().fmt(f)
    }
}

impl Serialize for AbsolutePathBuf {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0.to_string_lossy())
    }
}

impl<'de> Deserialize<'de> for AbsolutePathBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = PathBuf::deserialize(deserializer)?;
        AbsolutePathBuf::new(&raw).ok_or_else(|| de::Error::custom(RELATIVE_PATH_ERROR))
    }
}

impl JsonSchema for AbsolutePathBuf {
    fn schema_name() -> Cow<'static, str> {
        "AbsolutePathBuf".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A path that is guaranteed to be absolute and normalized (though it \
                is not guaranteed to be canonicalized or exist on the filesystem).",
            "type": "string"
        })
    }
}

/// Read a file from the host filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadFileParams {
    /// Absolute path to read.
    pub path: AbsolutePathBuf,
}

/// Base64-encoded file contents returned by `fs/readFile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadFileResponse {
    /// File contents encoded as base64.
    pub data_base64: String,
}

/// Write a file on the host filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsWriteFileParams {
    /// Absolute path to write.
    pub path: AbsolutePathBuf,
    /// File contents encoded as base64.
    pub data_base64: String,
}

/// List direct child names for a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadDirectoryParams {
    /// Absolute directory path to read.
    pub path: AbsolutePathBuf,
}

/// A directory entry returned by `fs/readDirectory`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadDirectoryEntry {
    /// Direct child entry name only, not an absolute or relative path.
    pub file_name: String,
    /// Whether this entry resolves to a directory.
    pub is_directory: bool,
    /// Whether this entry resolves to a regular file.
    pub is_file: bool,
}

/// Directory entries returned by `fs/readDirectory`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsReadDirectoryResponse {
    /// Direct child entries in the requested directory.
    pub entries: Vec<FsReadDirectoryEntry>,
}

/// Request metadata for an absolute path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsGetMetadataParams {
    /// Absolute path to inspect.
    pub path: AbsolutePathBuf,
}

/// Metadata returned by `fs/getMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsGetMetadataResponse {
    /// Whether the path resolves to a directory.
    pub is_directory: bool,
    /// Whether the path resolves to a regular file.
    pub is_file: bool,
    /// Whether the path itself is a symbolic link.
    pub is_symlink: bool,
    /// File creation time in Unix milliseconds when available, otherwise `0`.
    pub created_at_ms: i64,
    /// File modification time in Unix milliseconds when available, otherwise `0`.
    pub modified_at_ms: i64,
}

/// Create a directory on the host filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsCreateDirectoryParams {
    /// Absolute directory path to create.
    pub path: AbsolutePathBuf,
    /// Whether parent directories should also be created. Defaults to `true`.
    #[serde(default)]
    pub recursive: Option<bool>,
}

/// Remove a file or directory tree from the host filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsRemoveParams {
    /// Absolute path to remove.
    pub path: AbsolutePathBuf,
    /// Whether directory removal should recurse. Defaults to `true`.
    #[serde(default)]
    pub recursive: Option<bool>,
    /// Whether missing paths should be ignored. Defaults to `true`.
    #[serde(default)]
    pub force: Option<bool>,
}

/// Copy a file or directory tree on the host filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsCopyParams {
    /// Absolute source path.
    pub source_path: AbsolutePathBuf,
    /// Absolute destination path.
    pub destination_path: AbsolutePathBuf,
    /// Required for directory copies; ignored for file copies.
    #[serde(default)]
    pub recursive: bool,
}

/// Start filesystem watch notifications for an absolute path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsWatchParams {
    /// Connection-scoped watch identifier used for `fs/unwatch` and `fs/changed`.
    pub watch_id: String,
    /// Absolute file or directory path to watch.
    pub path: AbsolutePathBuf,
}

/// Successful response for `fs/watch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsWatchResponse {
    /// Canonicalized path associated with the watch.
    pub path: AbsolutePathBuf,
}

/// Stop filesystem watch notifications for a prior `fs/watch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsUnwatchParams {
    /// Watch identifier previously provided to `fs/watch`.
    pub watch_id: String,
}

/// Filesystem watch notification emitted for `fs/watch` subscribers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsChangedNotification {
    /// Watch identifier previously provided to `fs/watch`.
    pub watch_id: String,
    /// File or directory paths associated with this event.
    pub changed_paths: Vec<AbsolutePathBuf>,
}

empty_response! {
    /// Successful response for `fs/writeFile`.
    FsWriteFileResponse;
    /// Successful response for `fs/createDirectory`.
    FsCreateDirectoryResponse;
    /// Successful response for `fs/remove`.
    FsRemoveResponse;
    /// Successful response for `fs/copy`.
    FsCopyResponse;
    /// Successful response for `fs/unwatch`.
    FsUnwatchResponse;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_must_be_absolute_and_are_normalized() {
        for raw in ["rel/a.txt", "", "./a"] {
            let err = serde_json::from_value::<FsReadFileParams>(json!({"path": raw})).unwrap_err();
            assert_eq!(err.to_string(), RELATIVE_PATH_ERROR);
        }
        let params: FsReadFileParams =
            serde_json::from_value(json!({"path": "/a/./b/../c/"})).unwrap();
        assert_eq!(params.path.as_path(), Path::new("/a/c"));
        assert_eq!(
            AbsolutePathBuf::new("/../..").unwrap().as_path(),
            Path::new("/")
        );
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({"path": "/a/c"})
        );
    }

    #[test]
    fn optional_flags_default() {
        let params: FsRemoveParams = serde_json::from_value(json!({"path": "/x"})).unwrap();
        assert_eq!((params.recursive, params.force), (None, None));
        let params: FsCopyParams =
            serde_json::from_value(json!({"sourcePath": "/a", "destinationPath": "/b"})).unwrap();
        assert!(!params.recursive);
        let params: FsCreateDirectoryParams =
            serde_json::from_value(json!({"path": "/x", "recursive": null})).unwrap();
        assert_eq!(params.recursive, None);
    }
}

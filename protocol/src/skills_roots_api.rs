//! `skills/extraRoots/set` and `skills/changed`: skill roots a client adds for the daemon's
//! life, and the notification that the skills a client lists may have changed
//! (docs/protocol.md §7.23).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fs_api::AbsolutePathBuf;

/// `skills/extraRoots/set` params: the extra roots, each a directory holding skill
/// directories (`<root>/<name>/SKILL.md`), replacing the ones set before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsExtraRootsSetParams {
    /// The extra roots (absolute; `[]` clears them).
    pub extra_roots: Vec<AbsolutePathBuf>,
}

/// `skills/extraRoots/set` result: `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsExtraRootsSetResponse {}

/// `skills/changed` params: `{}`; a client that shows skills lists them again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsChangedNotification {}

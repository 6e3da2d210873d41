//! `permissionProfile/list` (docs/protocol.md §7.34): the permission profiles a client may
//! select (`permissions` on `thread/start`, `turn/start`, `thread/settings/update`). Weft
//! knows the reference's three built-in ones and reads no `[permissions]` table, so the list is
//! the same for every `cwd`; each is allowed (Weft imposes no requirements).

use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    PermissionProfileListParams, PermissionProfileListResponse, PermissionProfileSummary,
};

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::page;

/// The built-in profiles, in the reference's order (`weft_core::permissions`).
const BUILTIN_PROFILES: &[&str] = &[":read-only", ":workspace", ":danger-full-access"];

/// `permissionProfile/list`: a page of profiles (all of them without `limit`), the cursor an
/// offset.
pub async fn list(
    _cx: Context<'_>,
    params: PermissionProfileListParams,
) -> HandlerResult<PermissionProfileListResponse> {
    let start = match params.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
    };
    if start > BUILTIN_PROFILES.len() {
        return Err(JsonRpcError::invalid_request(format!(
            "cursor {start} exceeds total permission profiles {}",
            BUILTIN_PROFILES.len()
        )));
    }
    let (items, more) = page(BUILTIN_PROFILES, start, params.limit);
    Ok(PermissionProfileListResponse {
        data: items
            .iter()
            .map(|id| PermissionProfileSummary {
                id: (*id).to_string(),
                description: None,
                allowed: true,
            })
            .collect(),
        next_cursor: more.then(|| (start + items.len()).to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_profile_is_one_weft_can_select() {
        for id in BUILTIN_PROFILES {
            assert!(weft_core::permissions::profile_sandbox(id).is_ok(), "{id}");
        }
    }
}

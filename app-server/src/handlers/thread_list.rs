//! `thread/list`: every sort key and filter the Codex TUI sends, served from the state DB's
//! indexes (docs/protocol.md §7.5).

use std::path::PathBuf;

use weft_core::state::{Lineage, ListQuery, ListSortKey, check_search_term};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::thread_api::{ThreadListParams, ThreadListResponse};
use weft_protocol::{ThreadSortKey, wire_name};

use crate::dispatch::{Context, HandlerResult};

/// Most ids `includedThreadIds` / `excludedThreadIds` may carry.
const MAX_LISTED_IDS: usize = 100;

/// JSON-RPC "invalid params", which the reference uses for bad filter values.
const INVALID_PARAMS: i64 = -32602;

/// `thread/list`.
pub async fn list(cx: Context<'_>, params: ThreadListParams) -> HandlerResult<ThreadListResponse> {
    if params.originators.as_ref().is_some_and(|o| !o.is_empty()) {
        return Err(JsonRpcError::new(
            INVALID_PARAMS,
            "originator filtering is not supported by the local app-server",
        ));
    }
    // A term SQLite cannot search for (a control character) is the client's mistake.
    if let Some(term) = &params.search_term
        && let Err(err) = check_search_term(term)
    {
        return Err(JsonRpcError::new(INVALID_PARAMS, err.to_string()));
    }
    let included_ids = params
        .included_thread_ids
        .as_deref()
        .map(|ids| checked_ids(ids, "included"))
        .transpose()?;
    let excluded_ids = params
        .excluded_thread_ids
        .as_deref()
        .map(|ids| checked_ids(ids, "excluded"))
        .transpose()?
        .unwrap_or_default();
    let lineage = match (
        &params.parent_thread_id,
        &params.ancestor_thread_id,
        &params.attached_to_thread_id,
    ) {
        (Some(_), Some(_), _) => {
            return Err(JsonRpcError::invalid_request(
                "parentThreadId and ancestorThreadId are mutually exclusive",
            ));
        }
        // Weft attaches no thread to another.
        (_, _, Some(_)) => Some(Lineage::Nothing),
        (Some(parent), None, None) => Some(Lineage::Parent(parent.clone())),
        (None, Some(ancestor), None) => Some(Lineage::Ancestor(ancestor.clone())),
        (None, None, None) => None,
    };
    let sort_key = match params.sort_key.unwrap_or_default() {
        ThreadSortKey::CreatedAt => ListSortKey::CreatedAt,
        ThreadSortKey::UpdatedAt => ListSortKey::UpdatedAt,
        ThreadSortKey::RecencyAt => ListSortKey::RecencyAt,
        ThreadSortKey::SectionPosition => {
            // Only a section has positions (docs/protocol.md §7.36).
            if !matches!(params.section_id, Some(Some(_))) {
                return Err(JsonRpcError::invalid_request(
                    "section-position sorting requires a section filter",
                ));
            }
            ListSortKey::SectionPosition
        }
    };
    // A section filter (docs/protocol.md §7.36) takes the place of a lineage one, as the
    // reference's section pages do.
    let lineage = match params.section_id {
        Some(Some(section)) => Some(Lineage::Section(section)),
        Some(None) => Some(Lineage::Unsectioned),
        None => lineage,
    };
    // The section's own order, whichever direction is asked, as the reference lists it.
    let direction = match sort_key {
        ListSortKey::SectionPosition => weft_protocol::SortDirection::Asc,
        _ => params.sort_direction.unwrap_or_default(),
    };
    let cwd = params.cwd.as_ref().map(|filter| {
        filter
            .paths()
            .into_iter()
            .map(|p| {
                let path = PathBuf::from(p);
                if path.is_absolute() {
                    p.to_string()
                } else {
                    std::env::current_dir()
                        .map(|d| d.join(&path).display().to_string())
                        .unwrap_or_else(|_| p.to_string())
                }
            })
            .collect()
    });
    let query = ListQuery {
        limit: params.limit.unwrap_or(0),
        cursor: params.cursor,
        sort_key,
        direction,
        model_providers: params.model_providers,
        source_kinds: params
            .source_kinds
            .map(|kinds| kinds.iter().filter_map(wire_name).collect()),
        archived: params.archived.unwrap_or(false),
        cwd,
        search_term: params.search_term,
        included_ids,
        excluded_ids,
        lineage,
    };
    let page = cx.state.threads.list_threads(&query).await?;
    Ok(ThreadListResponse {
        data: page.threads,
        next_cursor: page.next_cursor,
        backwards_cursor: page.backwards_cursor,
        read_states: Some(page.read_states),
    })
}

/// Thread ids of an id filter: UUIDs, at most [`MAX_LISTED_IDS`]; `which` is `included` or
/// `excluded`.
fn checked_ids(ids: &[String], which: &str) -> Result<Vec<String>, JsonRpcError> {
    if ids.len() > MAX_LISTED_IDS {
        return Err(JsonRpcError::new(
            INVALID_PARAMS,
            format!("{which}ThreadIds accepts at most {MAX_LISTED_IDS} ids"),
        ));
    }
    ids.iter()
        .map(|id| {
            uuid::Uuid::parse_str(id)
                .map(|_| id.clone())
                .map_err(|err| {
                    JsonRpcError::new(INVALID_PARAMS, format!("invalid {which} thread id: {err}"))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_filters_are_checked() {
        let ok = checked_ids(&["01a2343d-cc4c-7e63-8fc3-7ff644dd788b".into()], "included");
        assert_eq!(ok.unwrap().len(), 1);
        let err = checked_ids(&["nope".into()], "included").unwrap_err();
        assert_eq!(err.code, INVALID_PARAMS);
        assert!(err.message.starts_with("invalid included thread id: "));
        let many = vec!["01a2343d-cc4c-7e63-8fc3-7ff644dd788b".to_string(); 101];
        assert_eq!(
            checked_ids(&many, "excluded").unwrap_err().code,
            INVALID_PARAMS
        );
    }
}

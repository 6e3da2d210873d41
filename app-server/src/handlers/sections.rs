//! Thread sections (docs/protocol.md §7.36): `threadSection/list`, `/create`, `/update`,
//! `/delete` and `thread/section/move` with its `thread/section/changed` broadcast. Kept in the
//! state DB (`weft_core::state`); the section of each thread is laid over every thread the
//! manager answers with.

use weft_core::state::{
    DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, PINNED_SECTION_ID, SectionError, StateDb,
};
use weft_protocol::jsonrpc::{INVALID_PARAMS, JsonRpcError};
use weft_protocol::{
    ThreadSectionAppearance, ThreadSectionChangedNotification, ThreadSectionCreateParams,
    ThreadSectionCreateResponse, ThreadSectionDeleteParams, ThreadSectionDeleteResponse,
    ThreadSectionListParams, ThreadSectionListResponse, ThreadSectionMoveParams,
    ThreadSectionMoveResponse, ThreadSectionUpdateParams, ThreadSectionUpdateResponse,
};

use crate::dispatch::{Answer, Context, HandlerResult};
use crate::state::AppState;

/// Longest `icon` or `color` of an appearance, in bytes (the reference's bound).
const MAX_APPEARANCE_FIELD_BYTES: usize = 64;

/// `threadSection/list`: a page of sections in their order, the built-in `Pinned` first.
pub async fn list(
    cx: Context<'_>,
    params: ThreadSectionListParams,
) -> HandlerResult<ThreadSectionListResponse> {
    let limit = params
        .limit
        .unwrap_or(DEFAULT_LIST_LIMIT)
        .clamp(1, MAX_LIST_LIMIT) as usize;
    let (data, next_cursor) = store(cx.state, "threadSection/list")?
        .list_sections(params.cursor.as_deref(), limit)
        .await
        .map_err(|err| section_error(SectionError::State(err)))?;
    Ok(ThreadSectionListResponse { data, next_cursor })
}

/// `threadSection/create`: a new section, last in the order (names need not be unique).
pub async fn create(
    cx: Context<'_>,
    params: ThreadSectionCreateParams,
) -> HandlerResult<ThreadSectionCreateResponse> {
    let name = checked_name(cx.state, &params.name)?;
    if let Some(appearance) = &params.appearance {
        checked_appearance(appearance)?;
    }
    let max = cx
        .state
        .threads
        .services()
        .config
        .limits
        .max_thread_sections;
    let section = store(cx.state, "threadSection/create")?
        .create_section(name, params.appearance.as_ref(), max)
        .await
        .map_err(section_error)?;
    Ok(ThreadSectionCreateResponse { section })
}

/// `threadSection/update`: rename a section and replace, clear or keep its appearance.
pub async fn update(
    cx: Context<'_>,
    params: ThreadSectionUpdateParams,
) -> HandlerResult<ThreadSectionUpdateResponse> {
    let name = checked_name(cx.state, &params.name)?;
    let id = checked_id(&params.section_id)?;
    if id == PINNED_SECTION_ID {
        return Err(invalid_params(
            "the built-in pinned section cannot be renamed",
        ));
    }
    if let Some(Some(appearance)) = &params.appearance {
        checked_appearance(appearance)?;
    }
    let section = store(cx.state, "threadSection/update")?
        .update_section(id, name, params.appearance.as_ref().map(Option::as_ref))
        .await
        .map_err(section_error)?;
    Ok(ThreadSectionUpdateResponse { section })
}

/// `threadSection/delete`: the section goes and its threads become unsectioned (no
/// notification, as in the reference).
pub async fn delete(
    cx: Context<'_>,
    params: ThreadSectionDeleteParams,
) -> HandlerResult<ThreadSectionDeleteResponse> {
    let id = checked_id(&params.section_id)?;
    if id == PINNED_SECTION_ID {
        return Err(invalid_params(
            "the built-in pinned section cannot be deleted",
        ));
    }
    store(cx.state, "threadSection/delete")?
        .delete_section(id)
        .await
        .map_err(section_error)?;
    Ok(ThreadSectionDeleteResponse {})
}

/// `thread/section/move`: into a section (before a thread of it, or last), or out of its
/// section (`sectionId: null`); `thread/section/changed` to everyone after the response, also
/// when nothing moved. Refusals are `-32600`, in the reference's order.
pub async fn move_thread(
    cx: Context<'_>,
    params: ThreadSectionMoveParams,
) -> HandlerResult<Answer<ThreadSectionMoveResponse>> {
    let ThreadSectionMoveParams {
        thread_id,
        section_id,
        before_thread_id,
    } = params;
    cx.state.threads.check_section_move(&thread_id).await?;
    let store = store(cx.state, "thread/section/move")?;
    let indexed = store
        .get(&thread_id)
        .await
        .map_err(|err| section_error(SectionError::State(err)))?;
    if indexed.is_none() {
        return Err(JsonRpcError::invalid_request(format!(
            "thread not found: {thread_id}"
        )));
    }
    if section_id.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(JsonRpcError::invalid_request("sectionId must not be empty"));
    }
    if section_id.is_none() && before_thread_id.is_some() {
        return Err(JsonRpcError::invalid_request(
            "beforeThreadId requires a non-null sectionId",
        ));
    }
    if before_thread_id.as_ref() == Some(&thread_id) {
        return Err(JsonRpcError::invalid_request(format!(
            "thread {thread_id} cannot be moved before itself"
        )));
    }
    store
        .move_to_section(
            &thread_id,
            section_id.as_deref(),
            before_thread_id.as_ref(),
            weft_core::time::now_secs(),
        )
        .await
        .map_err(|err| match err {
            SectionError::State(err) => section_error(SectionError::State(err)),
            other => JsonRpcError::invalid_request(other.to_string()),
        })?;
    Ok(
        Answer::new(ThreadSectionMoveResponse {}).then_broadcast(
            ThreadSectionChangedNotification {
                thread_id,
                section_id,
            },
        ),
    )
}

/// The state DB, or the reference's refusal when there is none.
fn store<'a>(state: &'a AppState, method: &str) -> Result<&'a StateDb, JsonRpcError> {
    state.threads.services().state.as_ref().ok_or_else(|| {
        JsonRpcError::new(
            weft_protocol::jsonrpc::METHOD_NOT_FOUND,
            format!("{method} is unavailable without sqlite state"),
        )
    })
}

/// A section name, trimmed: not empty, within `[limits] max_section_name_bytes`.
fn checked_name<'a>(state: &AppState, name: &'a str) -> Result<&'a str, JsonRpcError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(invalid_params("section name must not be empty"));
    }
    let max = state
        .threads
        .services()
        .config
        .limits
        .max_section_name_bytes;
    if name.len() > max {
        return Err(invalid_params(format!(
            "section name must not exceed {max} bytes"
        )));
    }
    Ok(name)
}

/// A `sectionId` that is not blank.
fn checked_id(id: &str) -> Result<&str, JsonRpcError> {
    if id.trim().is_empty() {
        return Err(invalid_params("sectionId must not be empty"));
    }
    Ok(id)
}

/// An appearance whose fields are within the reference's bound.
fn checked_appearance(appearance: &ThreadSectionAppearance) -> Result<(), JsonRpcError> {
    for (field, value) in [("icon", &appearance.icon), ("color", &appearance.color)] {
        if value
            .as_ref()
            .is_some_and(|v| v.len() > MAX_APPEARANCE_FIELD_BYTES)
        {
            return Err(invalid_params(format!(
                "section appearance {field} must not exceed {MAX_APPEARANCE_FIELD_BYTES} bytes"
            )));
        }
    }
    Ok(())
}

fn invalid_params(message: impl Into<String>) -> JsonRpcError {
    JsonRpcError::new(INVALID_PARAMS, message)
}

/// A section store refusal: `-32602` with its text (the DB's failure keeps its generic text).
fn section_error(err: SectionError) -> JsonRpcError {
    match err {
        SectionError::State(err) => {
            JsonRpcError::new(weft_protocol::jsonrpc::INTERNAL_ERROR, err.to_string())
        }
        other => invalid_params(other.to_string()),
    }
}

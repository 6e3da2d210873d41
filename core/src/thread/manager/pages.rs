//! Paginated history of stored and loaded threads: `thread/turns/list`, `thread/items/list`
//! and the cursors of `thread/resume`, served from the rollout's index (docs/protocol.md
//! §7.24).

use std::path::PathBuf;

use weft_protocol::history_api::{
    ThreadItemsListAnchor, ThreadItemsListCursor, ThreadItemsListParams, ThreadItemsListResponse,
    ThreadResumeInitialTurnsPageParams, ThreadTurnsListParams, TurnsPage,
};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{SortDirection, ThreadId, TurnId, TurnItemsView};

use super::ThreadManager;
use crate::rollout::index::RolloutIndex;
use crate::rollout::pages::{
    Cursor, CursorScope, ItemScope, Position, find_item, items_page, page_limit, resume_cursors,
    turns_page,
};
use crate::rollout::{RolloutError, find_rollout};
use crate::thread::error::{CoreError, StorageError};
use crate::thread::handle::Op;

/// Why a history page cannot be served. `Display` is the reference's error text; see
/// [`PageError::code`] for the JSON-RPC code.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// A cursor that is not one of this thread's (for this method).
    #[error("invalid cursor: {0}")]
    InvalidCursor(String),
    /// An item anchor without `turnId`.
    #[error("turnId is required when cursor is an item anchor")]
    AnchorWithoutTurn,
    /// An item anchor that is not an item of the turn.
    #[error("cursor.itemId does not identify an item in the requested history scope")]
    UnknownAnchor,
    /// `thread/turns/list` of a thread that has no turn yet.
    #[error(
        "thread {0} is not materialized yet; thread/turns/list is unavailable before first user message"
    )]
    NotMaterialized(ThreadId),
    /// `thread/turns/list` of an ephemeral thread.
    #[error("ephemeral threads do not support thread/turns/list")]
    EphemeralTurns,
    /// `thread/items/list` of a thread with no stored turn (fresh or ephemeral).
    #[error("thread/items/list is not supported yet")]
    ItemsUnavailable,
    /// The thread cannot be found, or its rollout cannot be read.
    #[error(transparent)]
    Core(#[from] CoreError),
}

impl PageError {
    /// The JSON-RPC error code the reference answers with.
    pub fn code(&self) -> i64 {
        match self {
            PageError::AnchorWithoutTurn | PageError::UnknownAnchor => -32602,
            PageError::ItemsUnavailable => -32601,
            PageError::Core(CoreError::Overloaded) => -32001,
            _ => -32600,
        }
    }
}

impl From<PageError> for JsonRpcError {
    /// The reference's code ([`PageError::code`]) and text.
    fn from(err: PageError) -> JsonRpcError {
        match err {
            PageError::Core(err) => err.into(),
            other => JsonRpcError::new(other.code(), other.to_string()),
        }
    }
}

impl PageError {
    /// Whether this is [`RolloutError::NotHeld`]: a partial index could not answer.
    fn is_not_held(&self) -> bool {
        matches!(
            self,
            PageError::Core(CoreError::Storage(StorageError::Rollout(
                RolloutError::NotHeld
            )))
        )
    }
}

impl From<RolloutError> for PageError {
    fn from(err: RolloutError) -> PageError {
        PageError::Core(err.into())
    }
}

/// What `thread/resume` adds to its result for paginated clients.
#[derive(Debug, Default)]
pub struct ResumePages {
    /// The page `initialTurnsPage` asked for.
    pub initial_turns_page: Option<TurnsPage>,
    /// The latest turn, anchor included.
    pub turns_backwards_cursor: Option<String>,
    /// The latest item, anchor included.
    pub items_backwards_cursor: Option<String>,
}

/// Where a thread's pages come from.
enum Source {
    /// Its rollout; `live` when the thread is loaded and running a turn.
    Rollout { path: PathBuf, live: bool },
    /// A loaded thread without a rollout.
    Ephemeral,
}

impl ThreadManager {
    /// The rollout to page, after making sure a loaded thread's records are on disk.
    async fn page_source(&self, id: &ThreadId) -> Result<Source, PageError> {
        let found = find_rollout(&self.services.config.home, id).map_err(CoreError::from)?;
        let handle = self.get(id);
        let Some(found) = found else {
            return match handle {
                Some(_) => Ok(Source::Ephemeral),
                None => Err(CoreError::NotLoaded(id.to_string()).into()),
            };
        };
        let live = match handle {
            None => false,
            Some(handle) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                if handle.send(Op::Flush { reply: tx }).await.is_ok() {
                    let _ = rx.await;
                }
                self.idle_since(id).await.is_none() && self.get(id).is_some()
            }
        };
        Ok(Source::Rollout {
            path: found.path,
            live,
        })
    }

    /// Run `f` on the index of `path` on the blocking pool: a partial one (the last turns,
    /// read back from a small file) when it will do, else the whole index (`f` runs again
    /// when it answers [`RolloutError::NotHeld`]).
    async fn with_recent_index<T: Send + 'static>(
        &self,
        path: PathBuf,
        mut f: impl FnMut(&RolloutIndex) -> Result<T, PageError> + Send + 'static,
    ) -> Result<T, PageError> {
        let cache = self.services.history_index.clone();
        let owned = path.clone();
        tokio::task::spawn_blocking(move || {
            let mut out = None;
            cache.with_recent(&owned, |index| match f(index) {
                Err(err) if err.is_not_held() => Err(RolloutError::NotHeld),
                answer => {
                    out = Some(answer);
                    Ok(())
                }
            })?;
            out.unwrap_or_else(|| Err(PageError::ItemsUnavailable))
        })
        .await
        .map_err(|err| PageError::from(RolloutError::io(&path, std::io::Error::other(err))))?
    }

    /// `thread/turns/list`.
    pub async fn list_turns(&self, params: ThreadTurnsListParams) -> Result<TurnsPage, PageError> {
        let id = params.thread_id.clone();
        let (path, live) = match self.page_source(&id).await? {
            Source::Ephemeral => return Err(PageError::EphemeralTurns),
            Source::Rollout { path, live } => (path, live),
        };
        let from = match &params.cursor {
            None => None,
            Some(text) => Some(
                Cursor::decode(text, &id, CursorScope::Turns)
                    .ok_or_else(|| PageError::InvalidCursor(text.clone()))?
                    .position(),
            ),
        };
        self.with_recent_index(path, move |index| {
            if index.turns().is_empty() {
                return Err(PageError::NotMaterialized(id.clone()));
            }
            // The same three keys as `thread/resume`'s `initialTurnsPage`.
            let asked = ThreadResumeInitialTurnsPageParams {
                limit: params.limit,
                sort_direction: params.sort_direction,
                items_view: params.items_view,
            };
            Ok(asked_turns(index, &id, from, &asked, live)?)
        })
        .await
    }

    /// `thread/items/list`.
    pub async fn list_items(
        &self,
        params: ThreadItemsListParams,
    ) -> Result<ThreadItemsListResponse, PageError> {
        let id = params.thread_id.clone();
        if matches!(params.cursor, Some(ThreadItemsListCursor::Anchor(_)))
            && params.turn_id.as_deref().is_none_or(str::is_empty)
        {
            return Err(PageError::AnchorWithoutTurn);
        }
        let path = match self.page_source(&id).await? {
            Source::Ephemeral => return Err(PageError::ItemsUnavailable),
            Source::Rollout { path, .. } => path,
        };
        let opaque = match &params.cursor {
            Some(ThreadItemsListCursor::Opaque(text)) => Some(
                Cursor::decode(text, &id, CursorScope::ItemsByCreatedAtOrdinal)
                    .ok_or_else(|| PageError::InvalidCursor(text.clone()))?
                    .position(),
            ),
            _ => None,
        };
        self.with_recent_index(path, move |index| {
            if index.turns().is_empty() {
                return Err(PageError::ItemsUnavailable);
            }
            let empty = ThreadItemsListResponse {
                data: Vec::new(),
                next_cursor: None,
                backwards_cursor: None,
            };
            let scope = match params.turn_id.as_deref().filter(|t| !t.is_empty()) {
                None => ItemScope::Thread,
                Some(turn) => match index.find_turn(&TurnId::from(turn.to_string()))? {
                    Some(at) => ItemScope::Turn(at),
                    None if matches!(params.cursor, Some(ThreadItemsListCursor::Anchor(_))) => {
                        return Err(PageError::UnknownAnchor);
                    }
                    None => return Ok(empty),
                },
            };
            let from: Option<Position> = match (&params.cursor, scope) {
                (
                    Some(ThreadItemsListCursor::Anchor(ThreadItemsListAnchor::Item { item_id })),
                    ItemScope::Turn(at),
                ) => Some(find_item(index, at, item_id)?.ok_or(PageError::UnknownAnchor)?),
                _ => opaque,
            };
            Ok(items_page(
                index,
                &id,
                scope,
                from,
                params.sort_direction.unwrap_or(SortDirection::Asc),
                page_limit(params.limit),
            )?)
        })
        .await
    }

    /// What `thread/resume` adds for paginated clients: the `initialTurnsPage` when asked
    /// for (an empty page for a thread without turns), and the two backwards cursors. An
    /// ephemeral thread has neither.
    pub async fn resume_pages(
        &self,
        id: &ThreadId,
        initial: Option<ThreadResumeInitialTurnsPageParams>,
    ) -> Result<ResumePages, PageError> {
        let (path, live) = match self.page_source(id).await? {
            Source::Ephemeral => return Ok(ResumePages::default()),
            Source::Rollout { path, live } => (path, live),
        };
        let id = id.clone();
        self.with_recent_index(path, move |index| {
            let (turns_cursor, items_cursor) = resume_cursors(index, &id)?;
            let page = match &initial {
                None => None,
                Some(initial) => Some(asked_turns(index, &id, None, initial, live)?),
            };
            Ok(ResumePages {
                initial_turns_page: page,
                turns_backwards_cursor: turns_cursor,
                items_backwards_cursor: items_cursor,
            })
        })
        .await
    }
}

/// The page of turns `asked` for, from `from` on: newest first, of the default size and with
/// summarized items unless it says otherwise.
fn asked_turns(
    index: &RolloutIndex,
    id: &ThreadId,
    from: Option<Position>,
    asked: &ThreadResumeInitialTurnsPageParams,
    live: bool,
) -> Result<TurnsPage, RolloutError> {
    turns_page(
        index,
        id,
        from,
        asked.sort_direction.unwrap_or(SortDirection::Desc),
        page_limit(asked.limit),
        asked.items_view.unwrap_or(TurnItemsView::Summary),
        live,
    )
}

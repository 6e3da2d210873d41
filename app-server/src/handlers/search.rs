//! `fuzzyFileSearch` (stable) and `thread/search` (experimental), docs/protocol.md §7.33.
//! The sessions of the file search are in [`super::search_sessions`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use weft_core::file_search;
use weft_core::state::{ListQuery, ListSortKey, MAX_LIST_LIMIT, check_search_term};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::search_api::{
    FuzzyFileSearchParams, FuzzyFileSearchResponse, ThreadSearchParams, ThreadSearchResponse,
    ThreadSearchResult, ThreadSearchSortKey,
};
use weft_protocol::{Thread, ThreadItemDetails, UserInput, wire_name};

use super::search_sessions::{checked_query, checked_roots, wire_result};
use crate::dispatch::{Context, HandlerResult, ThreadReply};
use crate::state::AppState;

/// JSON-RPC "invalid params".
const INVALID_PARAMS: i64 = -32602;
/// `thread/search`'s page size when the request names none.
const DEFAULT_THREAD_SEARCH_LIMIT: u32 = 25;
/// Longest search term, in bytes after trimming (the reference's bound for its stream).
const MAX_SEARCH_TERM_BYTES: usize = 65_536;
/// Chars of a snippet either side of its match.
const SNIPPET_CONTEXT_CHARS: usize = 60;

/// Sets a search's cancellation flag when dropped, so a search whose request task ends early
/// (its connection closed) stops its walk too.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `fuzzyFileSearch`: the best matches of `query` under `roots`, ranked as the reference
/// ranks. An empty query, or no roots, answers no files. A later search on the same connection
/// with the same `cancellationToken` cancels this one, which then answers what it had ranked.
///
/// Run in the processing loop (`deferred`), so the token is taken in the order the requests
/// came; the search itself runs on a blocking thread and answers through `reply`.
pub fn fuzzy_file_search(
    cx: Context<'_>,
    params: FuzzyFileSearchParams,
    reply: ThreadReply<FuzzyFileSearchResponse>,
) -> HandlerResult<()> {
    let config = cx.state.config.file_search;
    checked_query(&params.query, &config)?;
    let roots = checked_roots(&params.roots, &config)?;
    let reply = reply.into_core(|response: FuzzyFileSearchResponse| response);
    if params.query.is_empty() || roots.is_empty() {
        tokio::spawn(reply.send(Ok::<_, JsonRpcError>(FuzzyFileSearchResponse {
            files: Vec::new(),
        })));
        return Ok(());
    }
    let searches = Arc::clone(&cx.state.searches);
    let connection = cx.connection.id;
    let flag = match &params.cancellation_token {
        Some(token) => searches.begin_search(connection, token),
        None => Arc::new(AtomicBool::new(false)),
    };
    let closed = Arc::clone(cx.connection);
    tokio::spawn(async move {
        let guard = CancelOnDrop(flag.clone());
        let query = params.query;
        let walked = Arc::clone(&flag);
        let search =
            tokio::task::spawn_blocking(move || file_search::run(&query, roots, config, &walked));
        let outcome = tokio::select! {
            outcome = search => Some(outcome),
            () = closed.closed.cancelled() => None,
        };
        if let Some(token) = &params.cancellation_token {
            searches.end_search(connection, token, &flag);
        }
        drop(guard);
        let Some(outcome) = outcome else {
            return;
        };
        let snapshot = match outcome {
            Ok(Ok(snapshot)) => snapshot,
            Ok(Err(err)) => {
                tracing::warn!(%err, "fuzzy file search failed");
                file_search::Snapshot::default()
            }
            Err(err) => {
                tracing::warn!(%err, "fuzzy file search task failed");
                file_search::Snapshot::default()
            }
        };
        reply
            .send(Ok::<_, JsonRpcError>(FuzzyFileSearchResponse {
                files: snapshot.matches.into_iter().map(wire_result).collect(),
            }))
            .await;
    });
    Ok(())
}

/// `thread/search`: stored threads whose name, preview or messages (the user's and the
/// agent's) hold `searchTerm` (case ignored), in the order and with the filters of
/// `thread/list`. Threads past `[file_search] max_threads_scanned` are not searched.
pub async fn thread_search(
    cx: Context<'_>,
    params: ThreadSearchParams,
) -> HandlerResult<ThreadSearchResponse> {
    let term = params.search_term.trim();
    if term.is_empty() {
        return Err(JsonRpcError::invalid_request(
            "thread/search requires a non-empty searchTerm",
        ));
    }
    if term.len() > MAX_SEARCH_TERM_BYTES {
        return Err(JsonRpcError::invalid_request(format!(
            "thread/search searchTerm must be at most {MAX_SEARCH_TERM_BYTES} bytes"
        )));
    }
    check_search_term(term).map_err(|err| JsonRpcError::new(INVALID_PARAMS, err.to_string()))?;
    let offset = match &params.cursor {
        None => 0,
        Some(cursor) => parse_cursor(cursor)
            .ok_or_else(|| JsonRpcError::invalid_request(format!("invalid cursor: {cursor}")))?,
    };
    let limit = params
        .limit
        .filter(|limit| *limit > 0)
        .unwrap_or(DEFAULT_THREAD_SEARCH_LIMIT)
        .min(MAX_LIST_LIMIT) as usize;
    let needle = term.to_lowercase();
    let budget = cx.state.config.file_search.max_threads_scanned;
    let mut query = ListQuery {
        limit: MAX_LIST_LIMIT,
        cursor: None,
        sort_key: match params.sort_key.unwrap_or_default() {
            ThreadSearchSortKey::CreatedAt => ListSortKey::CreatedAt,
            ThreadSearchSortKey::UpdatedAt => ListSortKey::UpdatedAt,
            ThreadSearchSortKey::RecencyAt => ListSortKey::RecencyAt,
        },
        direction: params.sort_direction.unwrap_or_default(),
        model_providers: None,
        source_kinds: params
            .source_kinds
            .map(|kinds| kinds.iter().filter_map(wire_name).collect()),
        archived: params.archived.unwrap_or(false),
        cwd: None,
        search_term: None,
        included_ids: None,
        excluded_ids: Vec::new(),
        lineage: None,
    };
    let wanted = offset.saturating_add(limit).saturating_add(1);
    let mut found: Vec<ThreadSearchResult> = Vec::new();
    let mut scanned = 0usize;
    'pages: loop {
        let page = cx.state.threads.list_threads(&query).await?;
        for thread in page.threads {
            if scanned >= budget {
                break 'pages;
            }
            scanned += 1;
            if let Some(snippet) = snippet_of_meta(&thread, &needle) {
                found.push(ThreadSearchResult { thread, snippet });
            } else if let Some(snippet) = snippet_of_content(cx.state, &thread, &needle).await {
                found.push(ThreadSearchResult { thread, snippet });
            }
            if found.len() >= wanted {
                break 'pages;
            }
        }
        match page.next_cursor {
            Some(next) => query.cursor = Some(next),
            None => break,
        }
    }
    let more = found.len() > offset.saturating_add(limit);
    let data: Vec<ThreadSearchResult> = found.into_iter().skip(offset).take(limit).collect();
    Ok(ThreadSearchResponse {
        next_cursor: more.then(|| format!("search:{}", offset + limit)),
        backwards_cursor: None,
        data,
    })
}

/// The offset a `thread/search` cursor stands for.
fn parse_cursor(cursor: &str) -> Option<usize> {
    cursor.strip_prefix("search:")?.parse().ok()
}

/// A snippet from the thread's name or preview, when either holds `needle` (lowercase).
fn snippet_of_meta(thread: &Thread, needle: &str) -> Option<String> {
    thread
        .name
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(thread.preview.as_str()))
        .find_map(|text| snippet(text, needle))
}

/// A snippet from the thread's messages, read from its rollout.
async fn snippet_of_content(state: &AppState, thread: &Thread, needle: &str) -> Option<String> {
    let stored = state.threads.read_thread(&thread.id, true).await.ok()?;
    stored
        .turns
        .iter()
        .flat_map(|turn| turn.items.iter())
        .find_map(|item| match &item.details {
            ThreadItemDetails::UserMessage(message) => {
                message.content.iter().find_map(|input| match input {
                    UserInput::Text { text, .. } => snippet(text, needle),
                    _ => None,
                })
            }
            ThreadItemDetails::AgentMessage(message) => snippet(&message.text, needle),
            _ => None,
        })
}

/// The text around the first occurrence of `needle` (lowercase) in `text`, case ignored: up to
/// [`SNIPPET_CONTEXT_CHARS`] chars either side, on one line.
fn snippet(text: &str, needle: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let at = lower.find(needle)?;
    // Lowercasing can change lengths; map the offset back through char counts.
    let chars_before = lower[..at].chars().count();
    let needle_chars = needle.chars().count();
    let chars: Vec<char> = text.chars().collect();
    let start = chars_before.saturating_sub(SNIPPET_CONTEXT_CHARS);
    let end = (chars_before + needle_chars + SNIPPET_CONTEXT_CHARS).min(chars.len());
    let piece: String = chars[start.min(chars.len())..end].iter().collect();
    Some(piece.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_around_the_match_case_ignored() {
        assert_eq!(
            snippet("Fix the Parser bug", "parser").as_deref(),
            Some("Fix the Parser bug")
        );
        assert_eq!(snippet("nothing here", "parser"), None);
        let long = format!("{}NEEDLE{}", "a".repeat(200), "b".repeat(200));
        let piece = snippet(&long, "needle").unwrap();
        assert_eq!(piece.chars().count(), 60 + 6 + 60);
        assert!(piece.contains("NEEDLE"));
        assert_eq!(
            snippet("line one\nthe needle\n", "needle").as_deref(),
            Some("line one the needle")
        );
    }

    #[test]
    fn cursors_are_offsets() {
        assert_eq!(parse_cursor("search:25"), Some(25));
        assert_eq!(parse_cursor("garbage"), None);
        assert_eq!(parse_cursor("search:-1"), None);
    }
}

//! `fuzzyFileSearch/sessionStart`, `/sessionUpdate`, `/sessionStop` (experimental,
//! docs/protocol.md §7.33): search sessions held per connection, each a core
//! [`Session`] whose snapshots become `fuzzyFileSearch/sessionUpdated` and whose completions
//! become `fuzzyFileSearch/sessionCompleted`, sent to the connection that started it. A session
//! ends with `sessionStop`, with a new start under its id, or with its connection.
//!
//! Also the cancellation tokens of the stable `fuzzyFileSearch`: per connection, a later search
//! with the same token cancels the earlier one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use weft_core::config::FileSearchConfig;
use weft_core::file_search::{FileMatch, MatchType, Reporter, Session, Snapshot};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::search_api::{
    FuzzyFileSearchMatchType, FuzzyFileSearchResult, FuzzyFileSearchSessionStartParams,
    FuzzyFileSearchSessionStartResponse, FuzzyFileSearchSessionStopParams,
    FuzzyFileSearchSessionStopResponse, FuzzyFileSearchSessionUpdateParams,
    FuzzyFileSearchSessionUpdateResponse,
};
use weft_protocol::{
    FuzzyFileSearchSessionCompletedNotification, FuzzyFileSearchSessionUpdatedNotification,
    ServerNotification,
};

use crate::connection::{Connection, ConnectionId};
use crate::dispatch::{Context, HandlerResult};
use crate::outgoing;

/// Every connection's search sessions and search cancellation tokens.
#[derive(Default)]
pub struct SearchSessions {
    sessions: Mutex<HashMap<(ConnectionId, String), Session>>,
    tokens: Mutex<HashMap<(ConnectionId, String), Arc<AtomicBool>>>,
}

impl SearchSessions {
    /// Ends a closed connection's sessions and cancels its searches.
    pub fn connection_closed(&self, connection: ConnectionId) {
        let ended: Vec<Session> = {
            let mut sessions = self.sessions.lock();
            let keys: Vec<_> = sessions
                .keys()
                .filter(|(owner, _)| *owner == connection)
                .cloned()
                .collect();
            keys.iter().filter_map(|key| sessions.remove(key)).collect()
        };
        drop(ended);
        self.tokens.lock().retain(|(owner, _), flag| {
            if *owner == connection {
                flag.store(true, Ordering::Relaxed);
            }
            *owner != connection
        });
    }

    /// The sessions `connection` holds.
    pub fn count(&self, connection: ConnectionId) -> usize {
        self.sessions
            .lock()
            .keys()
            .filter(|(owner, _)| *owner == connection)
            .count()
    }

    /// The cancellation flag of a search under `token`: an earlier search with the same token
    /// on the same connection is cancelled.
    pub fn begin_search(&self, connection: ConnectionId, token: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        if let Some(earlier) = self
            .tokens
            .lock()
            .insert((connection, token.to_owned()), flag.clone())
        {
            earlier.store(true, Ordering::Relaxed);
        }
        flag
    }

    /// A search under `token` is over: its token is forgotten unless a later search took it.
    pub fn end_search(&self, connection: ConnectionId, token: &str, flag: &Arc<AtomicBool>) {
        let mut tokens = self.tokens.lock();
        let key = (connection, token.to_owned());
        if tokens
            .get(&key)
            .is_some_and(|current| Arc::ptr_eq(current, flag))
        {
            tokens.remove(&key);
        }
    }
}

/// The roots of a request as paths, bounded by `[file_search] max_roots`.
pub fn checked_roots(
    roots: &[String],
    config: &FileSearchConfig,
) -> Result<Vec<PathBuf>, JsonRpcError> {
    if roots.len() > config.max_roots {
        return Err(JsonRpcError::invalid_request(format!(
            "at most {} roots may be searched",
            config.max_roots
        )));
    }
    Ok(roots.iter().map(PathBuf::from).collect())
}

/// A query bounded by `[file_search] max_query_bytes`.
pub fn checked_query(query: &str, config: &FileSearchConfig) -> Result<(), JsonRpcError> {
    if query.len() > config.max_query_bytes {
        return Err(JsonRpcError::invalid_request(format!(
            "query is longer than {} bytes",
            config.max_query_bytes
        )));
    }
    Ok(())
}

/// A core match as the wire's result.
pub fn wire_result(found: FileMatch) -> FuzzyFileSearchResult {
    FuzzyFileSearchResult {
        root: found.root.to_string_lossy().into_owned(),
        file_name: found.file_name().to_owned(),
        match_type: match found.match_type {
            MatchType::File => FuzzyFileSearchMatchType::File,
            MatchType::Directory => FuzzyFileSearchMatchType::Directory,
        },
        score: found.score,
        indices: Some(found.indices),
        path: found.path,
    }
}

/// `fuzzyFileSearch/sessionStart`: a new session under `sessionId` (replacing the
/// connection's session of that id, which stops).
pub async fn start(
    cx: Context<'_>,
    params: FuzzyFileSearchSessionStartParams,
) -> HandlerResult<FuzzyFileSearchSessionStartResponse> {
    if params.session_id.is_empty() {
        return Err(JsonRpcError::invalid_request("sessionId must not be empty"));
    }
    let config = cx.state.config.file_search;
    let roots = checked_roots(&params.roots, &config)?;
    let connection = cx.connection.id;
    let sessions = &cx.state.searches;
    let key = (connection, params.session_id.clone());
    let replacing = sessions.sessions.lock().contains_key(&key);
    if !replacing && sessions.count(connection) >= config.max_sessions_per_connection {
        return Err(JsonRpcError::invalid_request(format!(
            "at most {} fuzzy file search sessions may be open on one connection",
            config.max_sessions_per_connection
        )));
    }
    let reporter = Arc::new(SessionReporter {
        session_id: params.session_id,
        connection: Arc::downgrade(cx.connection),
    });
    let session = Session::start(roots, config, reporter).map_err(|err| {
        JsonRpcError::internal(format!("failed to start fuzzy file search session: {err}"))
    })?;
    let replaced = sessions.sessions.lock().insert(key, session);
    drop(replaced);
    Ok(FuzzyFileSearchSessionStartResponse {})
}

/// `fuzzyFileSearch/sessionUpdate`: the session's new query.
pub async fn update(
    cx: Context<'_>,
    params: FuzzyFileSearchSessionUpdateParams,
) -> HandlerResult<FuzzyFileSearchSessionUpdateResponse> {
    checked_query(&params.query, &cx.state.config.file_search)?;
    let sessions = cx.state.searches.sessions.lock();
    let Some(session) = sessions.get(&(cx.connection.id, params.session_id.clone())) else {
        return Err(JsonRpcError::invalid_request(format!(
            "fuzzy file search session not found: {}",
            params.session_id
        )));
    };
    session.update_query(&params.query);
    Ok(FuzzyFileSearchSessionUpdateResponse {})
}

/// `fuzzyFileSearch/sessionStop`: the session ends (an unknown id is no error, as in the
/// reference).
pub async fn stop(
    cx: Context<'_>,
    params: FuzzyFileSearchSessionStopParams,
) -> HandlerResult<FuzzyFileSearchSessionStopResponse> {
    let stopped = cx
        .state
        .searches
        .sessions
        .lock()
        .remove(&(cx.connection.id, params.session_id));
    drop(stopped);
    Ok(FuzzyFileSearchSessionStopResponse {})
}

/// Sends a session's snapshots and completions to its connection.
struct SessionReporter {
    session_id: String,
    connection: Weak<Connection>,
}

impl SessionReporter {
    fn send(&self, notification: ServerNotification) {
        let Some(connection) = self.connection.upgrade() else {
            return;
        };
        if connection.wants_notification(notification.method()) {
            connection
                .send_notification(&outgoing::notification(&notification), Some(&notification));
        }
    }
}

impl Reporter for SessionReporter {
    fn update(&self, snapshot: Snapshot) {
        let files = if snapshot.query.is_empty() {
            Vec::new()
        } else {
            snapshot.matches.into_iter().map(wire_result).collect()
        };
        self.send(ServerNotification::FuzzyFileSearchSessionUpdated(
            FuzzyFileSearchSessionUpdatedNotification {
                session_id: self.session_id.clone(),
                query: snapshot.query,
                files,
            },
        ));
    }

    fn complete(&self, _query: &str) {
        self.send(ServerNotification::FuzzyFileSearchSessionCompleted(
            FuzzyFileSearchSessionCompletedNotification {
                session_id: self.session_id.clone(),
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_search_with_the_token_cancels_the_earlier() {
        let sessions = SearchSessions::default();
        let first = sessions.begin_search(1, "t");
        let other_connection = sessions.begin_search(2, "t");
        let second = sessions.begin_search(1, "t");
        assert!(first.load(Ordering::Relaxed));
        assert!(!second.load(Ordering::Relaxed));
        assert!(!other_connection.load(Ordering::Relaxed));
        sessions.end_search(1, "t", &first);
        assert_eq!(
            sessions.tokens.lock().len(),
            2,
            "the later search keeps its token"
        );
        sessions.end_search(1, "t", &second);
        sessions.connection_closed(2);
        assert!(other_connection.load(Ordering::Relaxed));
        assert!(sessions.tokens.lock().is_empty());
    }

    #[test]
    fn limits_are_checked() {
        let config = FileSearchConfig {
            max_roots: 1,
            max_query_bytes: 3,
            ..FileSearchConfig::default()
        };
        assert!(checked_roots(&["/a".into()], &config).is_ok());
        let err = checked_roots(&["/a".into(), "/b".into()], &config).unwrap_err();
        assert_eq!(err.message, "at most 1 roots may be searched");
        assert!(checked_query("abc", &config).is_ok());
        assert!(checked_query("abcd", &config).is_err());
    }
}

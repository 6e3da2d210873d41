//! [`AppState`]: what every connection and handler shares, and the registry of who subscribes
//! to which loaded thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use weft_core::config::Config;
use weft_core::skills::Skills;
use weft_core::thread::ThreadManager;
use weft_protocol::{ThreadId, ThreadUnsubscribeStatus};

use crate::command_exec::CommandExecs;
use crate::connection::ConnectionId;
use crate::subscriptions::{Connections, PendingRequests, Subscriptions, ThreadSubscribers};

/// State shared by every connection and handler.
pub struct AppState {
    /// The daemon's configuration.
    pub config: Arc<Config>,
    /// Absolute path of `$WEFT_HOME`.
    pub home: PathBuf,
    /// Every open connection.
    pub connections: Arc<Connections>,
    /// Loaded threads.
    pub threads: Arc<ThreadManager>,
    /// Server → client requests waiting for an answer.
    pub pending_requests: Arc<PendingRequests>,
    /// The skills found per cwd (`skills/list`), cached.
    pub skills: Arc<Skills>,
    /// What the `fs/*` methods may reach (docs/protocol.md §7.31).
    pub fs: Arc<weft_core::fs::FsAccess>,
    /// Every connection's `fs/watch` subscriptions.
    pub fs_watches: Arc<weft_core::fs::FsWatches>,
    /// Every connection's running `command/exec` processes (docs/protocol.md §7.32).
    pub command_execs: Arc<CommandExecs>,
    /// Every connection's fuzzy file search sessions and search cancellation tokens
    /// (docs/protocol.md §7.33).
    pub searches: Arc<crate::handlers::search_sessions::SearchSessions>,
    /// The subscription registry: each loaded thread's subscribers, kept in step by the
    /// manager's load and unload reports (also the manager's child sinks).
    subscriptions: Arc<Subscriptions>,
}

impl AppState {
    /// The state of a daemon with this configuration, thread manager and subscription
    /// registry (the one the manager was opened with).
    pub fn new(
        config: Arc<Config>,
        threads: Arc<ThreadManager>,
        subscriptions: Arc<Subscriptions>,
    ) -> AppState {
        let user_home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from);
        AppState {
            skills: Arc::new(Skills::new(config.home.clone(), user_home)),
            fs: Arc::new(weft_core::fs::FsAccess::new(&config)),
            fs_watches: Arc::new(weft_core::fs::FsWatches::new(&config.fs)),
            command_execs: Arc::default(),
            searches: Arc::default(),
            home: config.home.clone(),
            threads,
            config,
            connections: subscriptions.connections().clone(),
            pending_requests: subscriptions.pending().clone(),
            subscriptions,
        }
    }

    /// The subscribers of a loaded thread.
    pub fn subscribers_of(&self, id: &ThreadId) -> Option<Arc<ThreadSubscribers>> {
        self.subscriptions.get(id)
    }

    /// `thread/unsubscribe` for one connection.
    pub fn unsubscribe(&self, id: &ThreadId, connection: ConnectionId) -> ThreadUnsubscribeStatus {
        match self.subscribers_of(id) {
            None => ThreadUnsubscribeStatus::NotLoaded,
            Some(subscribers) => {
                if subscribers.unsubscribe(connection) {
                    if subscribers.is_empty() {
                        self.pending_requests.cancel_thread(id);
                    }
                    ThreadUnsubscribeStatus::Unsubscribed
                } else {
                    ThreadUnsubscribeStatus::NotSubscribed
                }
            }
        }
    }

    /// Unload every loaded thread that has had no subscriber and no activity for `idle`
    /// (the manager's rules, [`ThreadManager::unload_idle_threads`]):
    /// `thread/status/changed {notLoaded}` and `thread/closed` go to everyone.
    pub async fn unload_idle_threads(&self, idle: Duration) {
        self.threads.unload_idle_threads(idle).await;
    }

    /// A new subscriber list for a thread about to be loaded: handed to the manager as its
    /// sink, it is the thread's list in the registry once the manager reports it loaded (and
    /// until it reports the unload).
    pub fn new_subscribers(&self) -> Arc<ThreadSubscribers> {
        self.subscriptions.new_subscribers()
    }

    /// A closed connection is no one's subscriber any more; requests only it was asked, and
    /// requests of threads left with no subscriber, are cancelled, so no turn waits for an
    /// answer that cannot come.
    pub fn connection_closed(&self, id: ConnectionId) {
        self.connections.remove(id);
        self.pending_requests.connection_closed(id);
        self.subscriptions.connection_closed(id);
        self.searches.connection_closed(id);
        self.fs_watches.connection_closed(id);
    }
}

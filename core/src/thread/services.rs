//! What every thread shares, handed to each actor by the manager.

use std::sync::Arc;

use crate::config::Config;
use crate::hooks::StopHookConfig;
use crate::http_client::{HttpClientError, HttpUse, LazyClient};
use crate::mcp::McpPool;
use crate::rollout::index::{IndexCache, ROLLOUT_INDEX_DIR, SIDECAR_MIN_BYTES};
use crate::state::StateDb;

/// What every thread shares: immutable config, the HTTP client, the hooks, the state DB.
#[derive(Debug)]
pub struct Services {
    /// The daemon's configuration.
    pub config: Arc<Config>,
    /// The config as clients last wrote it, and the runtime feature switches: new threads'
    /// defaults and what a turn reads at its start (docs/protocol.md §7.34).
    pub live: Arc<crate::config::live::LiveConfig>,
    /// One HTTP client (connection pool) for every model request, built from `[http]` on
    /// first use.
    http: LazyClient,
    /// `[[hooks.stop]]`.
    pub stop_hooks: Arc<Vec<StopHookConfig>>,
    /// The thread index (`$WEFT_HOME/state.sqlite`); `None` only in unit tests of the actor.
    pub state: Option<StateDb>,
    /// The daemon's one pool of MCP servers (docs/mcp.md §3).
    pub mcp: Arc<McpPool>,
    /// Sub-agent trees: their control planes and the roots of their sub-agents
    /// (docs/agents.md §3).
    pub agents: Arc<crate::agents::Agents>,
    /// The indexes of the rollouts paged most recently, and their copies on disk in
    /// `$WEFT_HOME/rollout-index/` (docs/architecture.md §10.3).
    pub history_index: Arc<IndexCache>,
    /// The tool lists of the turns in flight, one copy of each.
    pub tool_specs: crate::tools::shared_specs::SharedSpecs,
}

/// How many rollout indexes stay in memory.
const HISTORY_INDEXES: usize = 64;

impl Services {
    /// The services of a daemon with this config and state DB; the sub-agent trees reach
    /// threads through `agent_host` (the manager that makes these services).
    pub fn new(
        config: Arc<Config>,
        state: Option<StateDb>,
        agent_host: Option<std::sync::Weak<dyn crate::agents::AgentHost>>,
    ) -> Services {
        let stop_hooks = Arc::new(config.stop_hooks.clone());
        let mcp = McpPool::new(
            config.mcp_servers.clone(),
            config.shell_environment_policy.environment(),
            &config.limits,
            &config.http,
            Some(&config.home),
        );
        let agents = Arc::new(crate::agents::Agents::new(
            &config,
            state.clone(),
            agent_host,
        ));
        let http = LazyClient::new(&config.http, HttpUse::Model);
        let history_index = Arc::new(IndexCache::with_sidecars(
            HISTORY_INDEXES,
            config.home.join(ROLLOUT_INDEX_DIR),
            SIDECAR_MIN_BYTES,
        ));
        Services {
            history_index,
            tool_specs: Default::default(),
            live: Arc::new(crate::config::live::LiveConfig::new(config.clone())),
            config,
            http,
            stop_hooks,
            state,
            mcp,
            agents,
        }
    }

    /// The shared HTTP client for model requests (see [`LazyClient`]).
    pub fn http(&self) -> Result<reqwest::Client, HttpClientError> {
        self.http.get()
    }
}

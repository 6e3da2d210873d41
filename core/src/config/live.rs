//! The daemon's config as it is now (docs/protocol.md §7.34): the one loaded at start until a
//! client writes `config.toml` (`config/value/write`, `config/batchWrite`), then the one
//! loaded from the written file. `config/read` reports it and new threads take their defaults
//! from it; loaded threads keep their own settings. The runtime feature enablement
//! (`experimentalFeature/enablement/set`) lives here too, for the daemon's life.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::Config;

/// The features a client may switch at runtime: the ones a loaded thread reads at each turn.
pub const RUNTIME_FEATURES: &[&str] = &["tool_search"];

/// The current config, the runtime feature switches, and the lock that makes config writes
/// one at a time.
#[derive(Debug)]
pub struct LiveConfig {
    current: RwLock<Arc<Config>>,
    enablement: RwLock<BTreeMap<String, bool>>,
    writes: tokio::sync::Mutex<()>,
}

impl LiveConfig {
    /// Starting from the config loaded at start.
    pub fn new(config: Arc<Config>) -> LiveConfig {
        LiveConfig {
            current: RwLock::new(config),
            enablement: RwLock::new(BTreeMap::new()),
            writes: tokio::sync::Mutex::new(()),
        }
    }

    /// The config now.
    pub fn current(&self) -> Arc<Config> {
        match self.current.read() {
            Ok(config) => config.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The config loaded after a write.
    pub fn replace(&self, config: Config) {
        let config = Arc::new(config);
        match self.current.write() {
            Ok(mut current) => *current = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
    }

    /// Held for the whole of a write (read, check, replace), so two clients' writes never
    /// interleave.
    pub async fn lock_writes(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writes.lock().await
    }

    /// Set runtime switches of [`RUNTIME_FEATURES`]; a feature the config's `[features]` sets
    /// is left to the config (the file and `--enable` win, as in the reference). Returns the
    /// entries applied.
    pub fn set_enablement(&self, requested: &BTreeMap<String, bool>) -> BTreeMap<String, bool> {
        let config = self.current();
        let protected = config
            .layers
            .merged
            .get("features")
            .and_then(toml::Value::as_table);
        let applied: BTreeMap<String, bool> = requested
            .iter()
            .filter(|(name, _)| RUNTIME_FEATURES.contains(&name.as_str()))
            .filter(|(name, _)| !protected.is_some_and(|features| features.contains_key(*name)))
            .map(|(name, enabled)| (name.clone(), *enabled))
            .collect();
        let mut enablement = match self.enablement.write() {
            Ok(enablement) => enablement,
            Err(poisoned) => poisoned.into_inner(),
        };
        enablement.extend(applied.clone());
        applied
    }

    /// A runtime feature's switch, when a client set it (`experimentalFeature/enablement/set`).
    fn runtime_switch(&self, name: &str) -> Option<bool> {
        match self.enablement.read() {
            Ok(enablement) => enablement.get(name).copied(),
            Err(poisoned) => poisoned.into_inner().get(name).copied(),
        }
    }

    /// What a client switched `tool_search` to at runtime, if it did: per model, it wins over
    /// the catalog (and loses to `[features]`, which a client cannot switch).
    pub fn tool_search_switch(&self) -> Option<bool> {
        self.runtime_switch("tool_search")
    }

    /// `tool_search`, as a turn starting now sees it.
    pub fn tool_search(&self) -> bool {
        self.runtime_switch("tool_search")
            .unwrap_or_else(|| self.current().features.tool_search)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
        let (config, _) = Config::load(dir.path(), &[]).unwrap();
        (dir, config)
    }

    #[test]
    fn runtime_switches_yield_to_the_config() {
        let (_dir, plain) = config("");
        let live = LiveConfig::new(Arc::new(plain));
        assert!(!live.tool_search());
        let asked = BTreeMap::from([
            ("tool_search".to_string(), true),
            ("goals".to_string(), false),
            ("nope".to_string(), true),
        ]);
        assert_eq!(
            live.set_enablement(&asked),
            BTreeMap::from([("tool_search".to_string(), true)])
        );
        assert!(live.tool_search());
        let (_dir, set) = config("[features]\ntool_search = false\n");
        let live = LiveConfig::new(Arc::new(set));
        assert!(live.set_enablement(&asked).is_empty());
        assert!(!live.tool_search());
    }
}

//! Reading `[[hooks.stop]]` from the config entry by entry: an entry that does not parse (no
//! command, a bad timeout, an unknown key) is skipped with a warning instead of stopping the
//! daemon, and `hooks/list` reports what was skipped (docs/protocol.md §7.22).

use super::StopHookConfig;
use crate::config_base::{LayerSource, one_line};

/// Where the stop hooks were configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksOrigin {
    /// The layer.
    pub source: LayerSource,
    /// The file: the user's `config.toml`, or `/<session-flags>/config.toml` (the reference's
    /// name for the command line) when `-c` set the hooks.
    pub path: String,
}

/// The command line's stand-in path.
pub const SESSION_FLAGS_PATH: &str = "/<session-flags>/config.toml";

/// One hook that runs, with its index in the `hooks.stop` array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredStopHook {
    /// Index in the array, skipped entries counted.
    pub index: usize,
    /// The hook.
    pub hook: StopHookConfig,
}

/// A hooks table that could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksError {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The stop hooks as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHooks {
    /// Where they were configured.
    pub origin: HooksOrigin,
    /// The hooks that run, in config order.
    pub hooks: Vec<ConfiguredStopHook>,
    /// Entries skipped, and why.
    pub warnings: Vec<String>,
    /// Tables that could not be read.
    pub errors: Vec<HooksError>,
}

impl StopHooks {
    /// Reads the merged config's `hooks` value.
    pub fn read(hooks: Option<&toml::Value>, origin: HooksOrigin) -> StopHooks {
        let mut read = StopHooks {
            origin,
            hooks: Vec::new(),
            warnings: Vec::new(),
            errors: Vec::new(),
        };
        let Some(hooks) = hooks else {
            return read;
        };
        let path = read.origin.path.clone();
        let Some(table) = hooks.as_table() else {
            read.errors.push(HooksError {
                path,
                message: "`hooks` must be a table".into(),
            });
            return read;
        };
        for (key, value) in table {
            if key != "stop" {
                read.warnings.push(format!(
                    "skipping hooks.{key} in {path}: Weft runs only stop hooks ([[hooks.stop]])"
                ));
                continue;
            }
            let Some(entries) = value.as_array() else {
                read.errors.push(HooksError {
                    path: path.clone(),
                    message: "`hooks.stop` must be an array of tables ([[hooks.stop]])".into(),
                });
                continue;
            };
            for (index, entry) in entries.iter().enumerate() {
                match entry.clone().try_into::<StopHookConfig>() {
                    Ok(hook) => read.hooks.push(ConfiguredStopHook { index, hook }),
                    Err(err) => read.warnings.push(format!(
                        "skipping stop hook {index} in {path}: {}",
                        one_line(&err.to_string())
                    )),
                }
            }
        }
        read
    }

    /// The hooks that run.
    pub fn configs(&self) -> Vec<StopHookConfig> {
        self.hooks.iter().map(|entry| entry.hook.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::HookCommand;

    fn origin() -> HooksOrigin {
        HooksOrigin {
            source: LayerSource::User,
            path: "/h/config.toml".into(),
        }
    }

    fn read(text: &str) -> StopHooks {
        let table: toml::Table = toml::from_str(text).unwrap();
        StopHooks::read(table.get("hooks"), origin())
    }

    #[test]
    fn bad_entries_are_skipped_with_a_warning() {
        let hooks = read(
            "[[hooks.stop]]\ncommand = \"ok\"\n[[hooks.stop]]\ntimeout = 5\n[[hooks.stop]]\ncommand = \"x\"\ntimeout = \"soon\"\n[[hooks.stop]]\ncommand = [\"a\", \"b\"]\ntimeout = 3\n[[hooks.Stop]]\n",
        );
        assert_eq!(hooks.hooks.len(), 2);
        assert_eq!(hooks.hooks[0].index, 0);
        assert_eq!(hooks.hooks[1].index, 3);
        assert_eq!(
            hooks.hooks[1].hook.command,
            HookCommand::Argv(vec!["a".into(), "b".into()])
        );
        assert_eq!(hooks.warnings.len(), 3, "{:?}", hooks.warnings);
        assert!(
            hooks.warnings[0].contains("hooks.Stop"),
            "{:?}",
            hooks.warnings
        );
        assert!(
            hooks.warnings[1]
                .starts_with("skipping stop hook 1 in /h/config.toml: missing field `command`"),
            "{:?}",
            hooks.warnings
        );
        assert!(hooks.warnings[2].starts_with("skipping stop hook 2 in /h/config.toml: "));
        assert!(hooks.errors.is_empty());
    }

    #[test]
    fn tables_of_the_wrong_shape_are_errors() {
        let hooks = read("hooks = 3\n");
        assert_eq!(
            hooks.errors,
            vec![HooksError {
                path: "/h/config.toml".into(),
                message: "`hooks` must be a table".into()
            }]
        );
        let hooks = read("[hooks]\nstop = \"x\"\n");
        assert_eq!(hooks.errors.len(), 1);
        assert!(hooks.hooks.is_empty());
        assert!(read("").hooks.is_empty());
    }
}

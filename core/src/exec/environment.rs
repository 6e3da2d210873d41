//! What environment the model's commands get: `[shell_environment_policy]` (the reference's
//! keys and order), applied to the daemon's own environment for every command.
//!
//! 1. `inherit`: `all` (the daemon's environment), `core` (only [`CORE_VARS`]) or `none`;
//! 2. unless `ignore_default_excludes`, drop names matching `*KEY*`, `*SECRET*`, `*TOKEN*`;
//! 3. drop names matching any `exclude` pattern;
//! 4. insert `set`;
//! 5. when `include_only` is not empty, keep only names matching one of its patterns.
//!
//! Patterns are globs (`*` any run, `?` one character) matched case-insensitively against the
//! whole name. Above all of this, the model providers' `env_key`s (the API keys Weft itself
//! uses) are always removed, whatever the policy says.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The variables `inherit = "core"` keeps.
pub const CORE_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
];

/// Removed unless `ignore_default_excludes = true`.
pub const DEFAULT_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*"];

/// Where a command's environment starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inherit {
    /// The daemon's whole environment.
    #[default]
    All,
    /// Only [`CORE_VARS`].
    Core,
    /// Nothing.
    None,
}

/// `[shell_environment_policy]` as written in `config.toml` (every key optional).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ShellEnvironmentPolicyToml {
    inherit: Option<Inherit>,
    ignore_default_excludes: Option<bool>,
    exclude: Option<Vec<String>>,
    set: Option<BTreeMap<String, String>>,
    include_only: Option<Vec<String>>,
}

/// The resolved policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEnvironmentPolicy {
    /// Where the environment starts from.
    pub inherit: Inherit,
    /// Keep names matching [`DEFAULT_EXCLUDES`].
    pub ignore_default_excludes: bool,
    /// Names matching one of these are removed.
    pub exclude: Vec<String>,
    /// Set (after the excludes).
    pub set: BTreeMap<String, String>,
    /// When not empty, only names matching one of these are kept.
    pub include_only: Vec<String>,
    /// Always removed, after everything else (the providers' `env_key`s).
    pub always_exclude: Vec<String>,
}

impl ShellEnvironmentPolicy {
    /// The policy from its TOML table, with `always_exclude` (exact names) removed last.
    pub fn from_toml(toml: ShellEnvironmentPolicyToml, always_exclude: Vec<String>) -> Self {
        ShellEnvironmentPolicy {
            inherit: toml.inherit.unwrap_or_default(),
            ignore_default_excludes: toml.ignore_default_excludes.unwrap_or(false),
            exclude: toml.exclude.unwrap_or_default(),
            set: toml.set.unwrap_or_default(),
            include_only: toml.include_only.unwrap_or_default(),
            always_exclude,
        }
    }

    /// The environment of a command, from the daemon's variables `vars`.
    pub fn apply(&self, vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
        let matches_any =
            |name: &str, patterns: &[String]| patterns.iter().any(|p| glob_matches(p, name));
        let mut env: BTreeMap<String, String> = match self.inherit {
            Inherit::All => vars.into_iter().collect(),
            Inherit::Core => vars
                .into_iter()
                .filter(|(name, _)| CORE_VARS.contains(&name.as_str()))
                .collect(),
            Inherit::None => BTreeMap::new(),
        };
        if !self.ignore_default_excludes {
            env.retain(|name, _| !DEFAULT_EXCLUDES.iter().any(|p| glob_matches(p, name)));
        }
        env.retain(|name, _| !matches_any(name, &self.exclude));
        env.extend(self.set.iter().map(|(k, v)| (k.clone(), v.clone())));
        if !self.include_only.is_empty() {
            env.retain(|name, _| matches_any(name, &self.include_only));
        }
        env.retain(|name, _| !self.always_exclude.iter().any(|key| key == name));
        env.into_iter().collect()
    }

    /// [`Self::apply`] to the daemon's own environment (variables that are not UTF-8 are
    /// left out).
    pub fn environment(&self) -> Vec<(String, String)> {
        self.apply(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }
}

/// Whether `name` matches the glob `pattern` (`*`, `?`), ignoring ASCII case.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().map(|c| c.to_ascii_uppercase()).collect();
    let name: Vec<char> = name.chars().map(|c| c.to_ascii_uppercase()).collect();
    // Iterative matching with one backtrack point (the last `*`): linear in practice.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(env: &[(String, String)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.as_str()).collect()
    }

    fn daemon() -> Vec<(String, String)> {
        vars(&[
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("OPENAI_API_KEY", "sk-1"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("GITHUB_TOKEN", "t"),
            ("github_token_lower", "t"),
            ("MY_VAR", "1"),
            ("LANG", "C.UTF-8"),
            ("PROVIDER_CREDENTIAL", "c"),
        ])
    }

    fn policy(toml: &str) -> ShellEnvironmentPolicy {
        let toml: ShellEnvironmentPolicyToml = toml::from_str(toml).expect("policy toml");
        ShellEnvironmentPolicy::from_toml(toml, vec!["PROVIDER_CREDENTIAL".to_string()])
    }

    #[test]
    fn the_default_keeps_everything_but_secrets() {
        let env = policy("").apply(daemon());
        assert_eq!(names(&env), ["HOME", "LANG", "MY_VAR", "PATH"]);
    }

    #[test]
    fn inherit_core_and_none() {
        let env = policy("inherit = \"core\"").apply(daemon());
        assert_eq!(names(&env), ["HOME", "PATH"]);
        let env = policy("inherit = \"none\"\nset = { A = \"b\" }").apply(daemon());
        assert_eq!(env, vars(&[("A", "b")]));
        assert!(toml::from_str::<ShellEnvironmentPolicyToml>("inherit = \"some\"").is_err());
    }

    #[test]
    fn the_steps_apply_in_the_reference_order() {
        // Default excludes off: secrets come back, but never the provider's key.
        let env = policy("ignore_default_excludes = true").apply(daemon());
        assert!(names(&env).contains(&"GITHUB_TOKEN"));
        assert!(!names(&env).contains(&"PROVIDER_CREDENTIAL"));
        // `exclude` before `set`: a set variable survives a matching exclude.
        let env =
            policy("exclude = [\"my_*\", \"LANG\"]\nset = { MY_OTHER = \"x\" }").apply(daemon());
        assert_eq!(names(&env), ["HOME", "MY_OTHER", "PATH"]);
        // `include_only` last: it filters `set` too.
        let env =
            policy("include_only = [\"PATH\", \"*_VAR\"]\nset = { A = \"b\", B_VAR = \"c\" }")
                .apply(daemon());
        assert_eq!(names(&env), ["B_VAR", "MY_VAR", "PATH"]);
        // `set` cannot bring back the provider's key either.
        let env = policy("set = { PROVIDER_CREDENTIAL = \"x\" }").apply(daemon());
        assert!(!names(&env).contains(&"PROVIDER_CREDENTIAL"));
    }

    #[test]
    fn globs_match_whole_names_without_case() {
        assert!(glob_matches("*KEY*", "openai_api_key"));
        assert!(glob_matches("*KEY*", "KEY"));
        assert!(!glob_matches("*KEY*", "KE"));
        assert!(glob_matches("A?C", "abc"));
        assert!(!glob_matches("A?C", "abcd"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("a*b*c", "aXbYbZc"));
        assert!(!glob_matches("a*b*c", "aXbYbZ"));
        assert!(!glob_matches("PATH", "PATHS"));
    }
}

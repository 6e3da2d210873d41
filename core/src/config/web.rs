//! `[web]`: the browser side of the WebSocket listener — whether it serves the web client,
//! and which pages besides its own may open the socket (docs/web.md).

use std::path::Path;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[web]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// Whether `--listen ws://…` also serves the web client and admits browsers (`--no-web`
    /// turns it off for one run).
    pub enabled: bool,
    /// Origins of pages served elsewhere (a dev server, a reverse proxy's public name) that
    /// may open the socket, as `scheme://host[:port]`; kept normalised (lower case, no
    /// default port, no trailing slash).
    pub allowed_origins: Vec<String>,
    /// Signed-in browser sessions kept at once; signing in past it ends the oldest.
    pub max_sessions: usize,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            enabled: true,
            allowed_origins: Vec::new(),
            max_sessions: 64,
        }
    }
}

impl WebConfig {
    pub(super) fn validated(mut self, path: &Path) -> Result<WebConfig, ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: key.into(),
            message,
        };
        if self.max_sessions == 0 {
            return Err(invalid("web.max_sessions", "must be at least 1".into()));
        }
        let mut origins = Vec::with_capacity(self.allowed_origins.len());
        for origin in &self.allowed_origins {
            let normal = normalize_origin(origin)
                .ok_or_else(|| invalid("web.allowed_origins", format!(
                    "`{origin}` is not an origin: expected http://host[:port] or https://host[:port], \
                     with no path"
                )))?;
            origins.push(normal);
        }
        self.allowed_origins = origins;
        Ok(self)
    }
}

/// An origin as browsers send it in `Origin`: `scheme://host[:port]` in lower case, without
/// the scheme's default port or a trailing slash; `None` for anything else (a path, a query,
/// another scheme, `null`).
pub fn normalize_origin(origin: &str) -> Option<String> {
    let origin = origin.trim().to_ascii_lowercase();
    let (scheme, rest) = origin.split_once("://")?;
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    if host.is_empty() || !host.chars().all(valid) || host.starts_with(':') {
        return None;
    }
    let host = host.strip_suffix(default_port).unwrap_or(host);
    Some(format!("{scheme}://{host}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalised_as_browsers_send_them() {
        for (given, normal) in [
            ("http://localhost:3000", "http://localhost:3000"),
            ("HTTP://LocalHost:3000/", "http://localhost:3000"),
            ("https://weft.example.com:443", "https://weft.example.com"),
            ("http://127.0.0.1:80", "http://127.0.0.1"),
            ("http://[::1]:4500", "http://[::1]:4500"),
        ] {
            assert_eq!(normalize_origin(given).as_deref(), Some(normal), "{given}");
        }
        for bad in [
            "localhost:3000",
            "ftp://host",
            "http://",
            "http://host/path",
            "http://host?x=1",
            "null",
            "http://:80",
        ] {
            assert_eq!(normalize_origin(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_bad_origin_or_no_sessions_is_a_config_error() {
        let path = Path::new("config.toml");
        let web = WebConfig {
            allowed_origins: vec!["http://localhost:3000/app".into()],
            ..WebConfig::default()
        };
        let err = web.validated(path).unwrap_err().to_string();
        assert!(err.contains("web.allowed_origins"), "{err}");
        let web = WebConfig {
            max_sessions: 0,
            ..WebConfig::default()
        };
        assert!(web.validated(path).is_err());
        let web = WebConfig {
            allowed_origins: vec!["HTTP://Dev.Local:3000/".into()],
            ..WebConfig::default()
        };
        assert_eq!(
            web.validated(path).unwrap().allowed_origins,
            ["http://dev.local:3000"]
        );
    }
}

//! The `weft` command line: its flags, and where `--listen` points.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Weft: an open agent runtime that speaks the Codex app-server protocol v2.
#[derive(Debug, Parser)]
#[command(name = "weft", version, about, propagate_version = true)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the JSON-RPC daemon (the Codex app-server protocol v2).
    AppServer(AppServerArgs),
    /// Write Weft's JSON Schema of the protocol into a directory.
    GenerateJsonSchema {
        /// Output directory (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// `weft app-server` flags. They mirror `codex app-server`, so clients written for it can
/// launch Weft unchanged.
#[derive(Debug, Args)]
pub struct AppServerArgs {
    /// Transport: `stdio://` (one JSON message per line), `ws://IP:PORT` (one message per
    /// text frame; port 0 picks a free port) or `off` (no transport; wait for a signal).
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    pub listen: String,
    /// Override a config key: `-c dotted.key=value` (the value is parsed as TOML, else taken
    /// as a string). Unknown keys are ignored with a warning.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Enable a feature (same as `-c features.NAME=true`).
    #[arg(long = "enable", value_name = "FEATURE")]
    pub enable: Vec<String>,
    /// Disable a feature (same as `-c features.NAME=false`).
    #[arg(long = "disable", value_name = "FEATURE")]
    pub disable: Vec<String>,
    /// WebSocket authentication mode. Required to listen on a non-loopback address.
    #[arg(long = "ws-auth", value_enum, value_name = "MODE")]
    pub ws_auth: Option<WsAuthMode>,
    /// File holding the capability token (for `--ws-auth capability-token`).
    #[arg(long = "ws-token-file", value_name = "PATH")]
    pub ws_token_file: Option<PathBuf>,
    /// Do not serve the web client on the WebSocket port, and refuse every browser (same as
    /// `-c web.enabled=false`).
    #[arg(long = "no-web")]
    pub no_web: bool,
}

/// WebSocket authentication modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WsAuthMode {
    /// Clients send `Authorization: Bearer <token>`, compared with the token file.
    CapabilityToken,
}

/// Where the daemon listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// One connection over stdin/stdout.
    Stdio,
    /// A WebSocket listener.
    Ws(SocketAddr),
    /// No transport.
    Off,
}

/// A `--listen` URL that is not one of the supported forms.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Neither `stdio://`, `ws://…` nor `off`.
    #[error("unsupported --listen URL `{url}`: expected stdio://, ws://IP:PORT or off")]
    Unsupported {
        /// The URL as given.
        url: String,
    },
    /// `ws://` followed by something that is not `IP:PORT`.
    #[error("invalid --listen address `{addr}`: {source} (expected ws://IP:PORT)")]
    BadAddress {
        /// The part after `ws://`.
        addr: String,
        /// Why it does not parse.
        source: std::net::AddrParseError,
    },
}

impl Listen {
    /// Parse the `--listen` URL.
    pub fn parse(url: &str) -> Result<Listen, ListenError> {
        match url {
            "stdio://" | "stdio" => Ok(Listen::Stdio),
            "off" => Ok(Listen::Off),
            _ => {
                let Some(addr) = url.strip_prefix("ws://") else {
                    return Err(ListenError::Unsupported {
                        url: url.to_string(),
                    });
                };
                let addr = addr.trim_end_matches('/');
                addr.parse::<SocketAddr>()
                    .map(Listen::Ws)
                    .map_err(|source| ListenError::BadAddress {
                        addr: addr.to_string(),
                        source,
                    })
            }
        }
    }
}

impl AppServerArgs {
    /// All config overrides: `-c` first, then `--enable` / `--disable` as `features.X`.
    pub fn overrides(&self) -> Vec<String> {
        let mut all = self.config.clone();
        all.extend(self.enable.iter().map(|f| format!("features.{f}=true")));
        all.extend(self.disable.iter().map(|f| format!("features.{f}=false")));
        if self.no_web {
            all.push("web.enabled=false".into());
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_urls() {
        assert_eq!(Listen::parse("stdio://").unwrap(), Listen::Stdio);
        assert_eq!(Listen::parse("off").unwrap(), Listen::Off);
        assert_eq!(
            Listen::parse("ws://127.0.0.1:4500").unwrap(),
            Listen::Ws("127.0.0.1:4500".parse().unwrap())
        );
        assert!(Listen::parse("unix:///tmp/x").is_err());
        assert!(Listen::parse("ws://localhost").is_err());
    }

    #[test]
    fn reference_client_flags_are_accepted() {
        let cli = Cli::try_parse_from([
            "weft",
            "app-server",
            "--listen",
            "stdio://",
            "-c",
            "web_search=\"live\"",
            "--enable",
            "guardian_approval",
            "--disable",
            "plugins",
        ])
        .unwrap();
        let Command::AppServer(args) = cli.command else {
            panic!("expected app-server");
        };
        assert_eq!(
            args.overrides(),
            vec![
                "web_search=\"live\"".to_string(),
                "features.guardian_approval=true".to_string(),
                "features.plugins=false".to_string()
            ]
        );
    }
}

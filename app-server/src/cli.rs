//! The `weft` command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::transport::ws::{WsAuth, WsOptions};

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

impl Listen {
    /// Parse the `--listen` URL.
    pub fn parse(url: &str) -> Result<Listen, String> {
        match url {
            "stdio://" | "stdio" => Ok(Listen::Stdio),
            "off" => Ok(Listen::Off),
            _ => {
                let Some(addr) = url.strip_prefix("ws://") else {
                    return Err(format!(
                        "unsupported --listen URL `{url}`: expected stdio://, ws://IP:PORT or off"
                    ));
                };
                let addr = addr.trim_end_matches('/');
                addr.parse::<SocketAddr>().map(Listen::Ws).map_err(|err| {
                    format!("invalid --listen address `{addr}`: {err} (expected ws://IP:PORT)")
                })
            }
        }
    }
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::GenerateJsonSchema { out } => generate_schema(&out),
        Command::AppServer(args) => {
            crate::logging::init();
            match crate::processor::run_app_server(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("weft: error: {err}");
                    ExitCode::from(err.exit_code())
                }
            }
        }
    }
}

fn generate_schema(out: &Path) -> ExitCode {
    match weft_protocol::schema::write_schema(out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "weft: error: cannot write schema to {}: {err}",
                out.display()
            );
            ExitCode::FAILURE
        }
    }
}

/// A failure to start the daemon; printed as one line.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Bad flags or config: exit code 2.
    #[error("{0}")]
    Usage(String),
    /// Anything else (cannot bind, cannot create the home…): exit code 1.
    #[error("{0}")]
    Runtime(String),
}

impl StartError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            StartError::Usage(_) => 2,
            StartError::Runtime(_) => 1,
        }
    }
}

impl AppServerArgs {
    /// All config overrides: `-c` first, then `--enable` / `--disable` as `features.X`.
    pub fn overrides(&self) -> Vec<String> {
        let mut all = self.config.clone();
        all.extend(self.enable.iter().map(|f| format!("features.{f}=true")));
        all.extend(self.disable.iter().map(|f| format!("features.{f}=false")));
        all
    }

    /// Resolve the WebSocket options for `addr`, refusing a non-loopback bind without auth.
    pub fn ws_options(&self, addr: SocketAddr) -> Result<WsOptions, StartError> {
        let auth = match self.ws_auth {
            None => {
                if self.ws_token_file.is_some() {
                    return Err(StartError::Usage(
                        "--ws-token-file needs --ws-auth capability-token".into(),
                    ));
                }
                if !addr.ip().is_loopback() {
                    return Err(StartError::Usage(format!(
                        "refusing to listen on non-loopback address {addr} without authentication: \
                         pass --ws-auth capability-token --ws-token-file PATH"
                    )));
                }
                WsAuth::None
            }
            Some(WsAuthMode::CapabilityToken) => {
                let Some(path) = &self.ws_token_file else {
                    return Err(StartError::Usage(
                        "--ws-auth capability-token needs --ws-token-file PATH".into(),
                    ));
                };
                let token = std::fs::read_to_string(path).map_err(|err| {
                    StartError::Usage(format!(
                        "cannot read --ws-token-file {}: {err}",
                        path.display()
                    ))
                })?;
                let token = token.trim().to_string();
                if token.is_empty() {
                    return Err(StartError::Usage(format!(
                        "--ws-token-file {} is empty",
                        path.display()
                    )));
                }
                WsAuth::CapabilityToken(token)
            }
        };
        Ok(WsOptions { addr, auth })
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

    #[test]
    fn non_loopback_needs_auth() {
        let cli = Cli::try_parse_from(["weft", "app-server"]).unwrap();
        let Command::AppServer(args) = cli.command else {
            panic!("expected app-server");
        };
        let err = args
            .ws_options("0.0.0.0:4500".parse().unwrap())
            .unwrap_err();
        assert!(err.to_string().contains("--ws-auth"));
        assert!(args.ws_options("127.0.0.1:0".parse().unwrap()).is_ok());
    }
}

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
// Parsed once at start and matched at once; boxing the flags would only add noise.
#[allow(clippy::large_enum_variant)]
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
    /// A tool instead of the daemon.
    #[command(subcommand)]
    pub command: Option<AppServerCommand>,
    /// Transport: `stdio://` (one JSON message per line), `unix://` or `unix://PATH` (the
    /// control socket, default `$WEFT_HOME/app-server-control/app-server-control.sock`; one
    /// message per WebSocket text frame), `ws://IP:PORT` (one message per text frame; port 0
    /// picks a free port) or `off` (no transport; wait for a signal).
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    pub listen: String,
    /// Use stdio as the transport (the same as `--listen stdio://`).
    #[arg(long, conflicts_with = "listen")]
    pub stdio: bool,
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
    /// Absolute path of the file holding the capability token (`--ws-auth capability-token`).
    #[arg(long = "ws-token-file", value_name = "PATH")]
    pub ws_token_file: Option<PathBuf>,
    /// Hex SHA-256 digest of the capability token, instead of its file.
    #[arg(long = "ws-token-sha256", value_name = "HEX")]
    pub ws_token_sha256: Option<String>,
    /// Absolute path of the shared secret (at least 32 bytes) that signs JWT bearer tokens
    /// (`--ws-auth signed-bearer-token`, HS256).
    #[arg(long = "ws-shared-secret-file", value_name = "PATH")]
    pub ws_shared_secret_file: Option<PathBuf>,
    /// The issuer (`iss`) signed bearer tokens must name.
    #[arg(long = "ws-issuer", value_name = "ISSUER")]
    pub ws_issuer: Option<String>,
    /// The audience (`aud`) signed bearer tokens must include.
    #[arg(long = "ws-audience", value_name = "AUDIENCE")]
    pub ws_audience: Option<String>,
    /// Clock skew allowed on `exp` and `nbf` of signed bearer tokens (default 30).
    #[arg(long = "ws-max-clock-skew-seconds", value_name = "SECONDS")]
    pub ws_max_clock_skew_seconds: Option<u64>,
    /// Refuse to start when config.toml has a key Weft does not know.
    #[arg(long = "strict-config")]
    pub strict_config: bool,
    /// Check the config and print the start-up requirements as JSON, without serving.
    #[arg(long = "print-startup-config")]
    pub print_startup_config: bool,
    /// The `ClientInfo` JSON of the client launching the daemon; checked, and logged.
    #[arg(long = "startup-client-info", value_name = "JSON")]
    pub startup_client_info: Option<String>,
    /// Accepted for `codex app-server` launchers: Weft has no managed sign-in, so there is
    /// nothing to sign out of.
    #[arg(long = "startup-sign-out")]
    pub startup_sign_out: bool,
    /// Accepted for `codex app-server` launchers: Weft sends no analytics.
    #[arg(long = "analytics-default-enabled")]
    pub analytics_default_enabled: bool,
    /// Accepted for `codex app-server` launchers and ignored with a warning: Weft has no cloud
    /// skill service (its skills are files, docs/protocol.md §7.23).
    #[arg(long = "cloud-skills-snapshot", value_name = "PATH")]
    pub cloud_skills_snapshot: Option<PathBuf>,
    /// Accepted for `codex app-server` launchers and ignored with a warning: Weft has no
    /// code-mode host.
    #[arg(long = "code-mode-host", value_name = "URL")]
    pub code_mode_host: Option<String>,
    /// Do not serve the web client on the WebSocket port, and refuse every browser (same as
    /// `-c web.enabled=false`).
    #[arg(long = "no-web")]
    pub no_web: bool,
}

/// The subcommands of `weft app-server`, as `codex app-server` has them.
#[derive(Debug, Subcommand)]
pub enum AppServerCommand {
    /// Manage the local app-server daemon (a background `weft app-server --listen unix://`).
    Daemon(DaemonArgs),
    /// Proxy stdio bytes to the running app-server control socket.
    Proxy(ProxyArgs),
    /// Write Weft's JSON Schema of the protocol (the files of `schema/`) into a directory.
    GenerateJsonSchema(SchemaArgs),
}

/// `weft app-server daemon` flags.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: DaemonCommand,
    /// Config overrides for the daemon `start` launches (`-c dotted.key=value`).
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", global = true)]
    pub config: Vec<String>,
    /// Enable a feature in the daemon `start` launches.
    #[arg(long = "enable", value_name = "FEATURE", global = true)]
    pub enable: Vec<String>,
    /// Disable a feature in the daemon `start` launches.
    #[arg(long = "disable", value_name = "FEATURE", global = true)]
    pub disable: Vec<String>,
}

impl DaemonArgs {
    /// The overrides `start` passes on, as `-c` values.
    pub fn overrides(&self) -> Vec<String> {
        let mut all = self.config.clone();
        all.extend(self.enable.iter().map(|f| format!("features.{f}=true")));
        all.extend(self.disable.iter().map(|f| format!("features.{f}=false")));
        all
    }
}

/// The `daemon` subcommands Weft has (the reference's `pid` backend).
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum DaemonCommand {
    /// Start the local app server daemon if it is not already running.
    Start,
    /// Stop the local app server daemon.
    Stop,
    /// Print the local CLI and running app-server versions as JSON.
    Version,
}

/// `weft app-server proxy` flags.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Path to the app-server Unix domain socket to connect to (default: the `unix://` one
    /// under `$WEFT_HOME`).
    #[arg(long = "sock", value_name = "SOCKET_PATH")]
    pub sock: Option<PathBuf>,
    /// Accepted as `codex app-server proxy` does; the proxy reads no config.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Accepted as `codex app-server proxy` does; the proxy reads no config.
    #[arg(long = "enable", value_name = "FEATURE")]
    pub enable: Vec<String>,
    /// Accepted as `codex app-server proxy` does; the proxy reads no config.
    #[arg(long = "disable", value_name = "FEATURE")]
    pub disable: Vec<String>,
}

/// `weft app-server generate-json-schema` flags.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Output directory where the schema bundle will be written (created if missing).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Accepted as `codex app-server generate-json-schema` has it: Weft's schema is one set,
    /// the methods and fields it serves, experimental ones included.
    #[arg(long)]
    pub experimental: bool,
    /// Accepted as the reference does; the schema does not depend on the config.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Accepted as the reference does; the schema does not depend on the config.
    #[arg(long = "enable", value_name = "FEATURE")]
    pub enable: Vec<String>,
    /// Accepted as the reference does; the schema does not depend on the config.
    #[arg(long = "disable", value_name = "FEATURE")]
    pub disable: Vec<String>,
}

/// WebSocket authentication modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WsAuthMode {
    /// Clients send `Authorization: Bearer <token>`, checked against the token's digest.
    CapabilityToken,
    /// Clients send `Authorization: Bearer <jwt>`, an HS256 JWT signed with the shared secret.
    SignedBearerToken,
}

/// Where the daemon listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// One connection over stdin/stdout.
    Stdio,
    /// A WebSocket listener.
    Ws(SocketAddr),
    /// The control socket: at this path, or (`None`) the default one under the home.
    Unix(Option<PathBuf>),
    /// No transport.
    Off,
}

/// A `--listen` URL that is not one of the supported forms.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Neither `stdio://`, `unix://…`, `ws://…` nor `off`.
    #[error(
        "unsupported --listen URL `{url}`: expected stdio://, unix://, unix://PATH, ws://IP:PORT or off"
    )]
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
            "unix://" => Ok(Listen::Unix(None)),
            _ if url.starts_with("unix://") => {
                Ok(Listen::Unix(Some(PathBuf::from(&url["unix://".len()..]))))
            }
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
    /// The `--listen` URL in effect (`--stdio` is `stdio://`).
    pub fn listen_url(&self) -> &str {
        if self.stdio { "stdio://" } else { &self.listen }
    }

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
        assert_eq!(Listen::parse("unix://").unwrap(), Listen::Unix(None));
        assert_eq!(
            Listen::parse("unix:///tmp/x.sock").unwrap(),
            Listen::Unix(Some(PathBuf::from("/tmp/x.sock")))
        );
        assert!(Listen::parse("unix:/tmp/x").is_err());
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
        assert_eq!(args.listen_url(), "stdio://");
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
    fn the_subcommands_of_the_reference_parse() {
        let cli = Cli::try_parse_from(["weft", "app-server", "proxy", "--sock", "/tmp/s"]).unwrap();
        let Command::AppServer(args) = cli.command else {
            panic!("expected app-server");
        };
        let Some(AppServerCommand::Proxy(proxy)) = args.command else {
            panic!("expected proxy");
        };
        assert_eq!(proxy.sock, Some(PathBuf::from("/tmp/s")));
        let cli = Cli::try_parse_from([
            "weft",
            "app-server",
            "generate-json-schema",
            "-o",
            "/tmp/out",
            "--experimental",
        ])
        .unwrap();
        let Command::AppServer(args) = cli.command else {
            panic!("expected app-server");
        };
        let Some(AppServerCommand::GenerateJsonSchema(schema)) = args.command else {
            panic!("expected generate-json-schema");
        };
        assert_eq!(schema.out, PathBuf::from("/tmp/out"));
        assert!(schema.experimental);
    }

    #[test]
    fn every_flag_of_the_reference_parses() {
        let cli = Cli::try_parse_from([
            "weft",
            "app-server",
            "--stdio",
            "--strict-config",
            "--print-startup-config",
            "--startup-sign-out",
            "--analytics-default-enabled",
            "--startup-client-info",
            r#"{"name":"x","version":"1"}"#,
            "--cloud-skills-snapshot",
            "/tmp/skills.json",
            "--code-mode-host",
            "http://127.0.0.1:1",
            "--ws-auth",
            "signed-bearer-token",
            "--ws-shared-secret-file",
            "/tmp/secret",
            "--ws-issuer",
            "i",
            "--ws-audience",
            "a",
            "--ws-max-clock-skew-seconds",
            "9",
        ])
        .unwrap();
        let Command::AppServer(args) = cli.command else {
            panic!("expected app-server");
        };
        assert!(args.stdio && args.strict_config && args.print_startup_config);
        assert_eq!(args.ws_auth, Some(WsAuthMode::SignedBearerToken));
        assert_eq!(args.ws_max_clock_skew_seconds, Some(9));
        let both = Cli::try_parse_from(["weft", "app-server", "--stdio", "--listen", "off"]);
        assert!(
            both.is_err(),
            "--stdio and --listen conflict, as in the reference"
        );
    }
}

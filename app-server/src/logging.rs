//! Logs go to stderr through `tracing`: `RUST_LOG` filters, `LOG_FORMAT=json` gives one JSON
//! object per line.

use tracing_subscriber::EnvFilter;

/// Install the global subscriber. Safe to call once; later calls are ignored.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

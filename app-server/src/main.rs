//! The `weft` binary: see `weft --help`.
#![deny(clippy::print_stdout)]

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use weft_app_server::cli::{AppServerCommand, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::GenerateJsonSchema { out } => generate_schema(&out),
        Command::AppServer(args) => match args.command {
            Some(AppServerCommand::GenerateJsonSchema(schema)) => generate_schema(&schema.out),
            Some(AppServerCommand::Proxy(proxy)) => weft_app_server::proxy::main(proxy),
            Some(AppServerCommand::Daemon(daemon)) => {
                weft_app_server::daemon::main(daemon.command, &daemon.overrides())
            }
            None => serve(args),
        },
    }
}

fn serve(args: weft_app_server::cli::AppServerArgs) -> ExitCode {
    weft_app_server::logging::init();
    match weft_app_server::server::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft: error: {err}");
            ExitCode::from(err.exit_code())
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

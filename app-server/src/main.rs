//! The `weft` binary: see `weft --help`.

fn main() -> std::process::ExitCode {
    weft_app_server::cli::main()
}

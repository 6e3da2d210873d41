//! Writes Weft's JSON Schema: `cargo run -p weft-protocol --example gen-schema -- [OUT_DIR]`
//! (default: the workspace's `schema/` directory).

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schema"));
    weft_protocol::write_schema(&out)?;
    println!("wrote {}", out.display());
    Ok(())
}

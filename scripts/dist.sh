#!/usr/bin/env bash
# Build the shipped daemon: `cargo build --release` (whole-program LTO, one codegen unit, line
# tables; Cargo.toml's [profile.release]), then split its debug info off:
#
#   <out>/weft        stripped (no symbols, no DWARF), with a .gnu_debuglink to weft.debug
#   <out>/weft.debug  the symbols and line tables, for backtraces and debuggers
#
# Rust's backtraces and gdb find weft.debug beside the binary, in a `.debug/` directory beside
# it, or under /usr/lib/debug/<the binary's directory>/ (the Dockerfile uses the last one).
# A binary without its weft.debug still runs; its backtraces then show addresses only.
#
# Usage: scripts/dist.sh [OUT_DIR]   (default: target/dist)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/dist}
cargo build --release --locked -p weft-app-server --bin weft
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
scripts/split-debuginfo.sh "$target_dir/release/weft" "$out"
ls -l "$out/weft" "$out/weft.debug"

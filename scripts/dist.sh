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
command -v objcopy >/dev/null || {
    echo "scripts/dist.sh: objcopy is missing (Debian: apt-get install binutils)" >&2
    exit 1
}
cargo build --release --locked -p weft-app-server --bin weft
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
built="$target_dir/release/weft"
mkdir -p "$out"
rm -f "$out/weft" "$out/weft.debug"
objcopy --only-keep-debug "$built" "$out/weft.debug"
# The debuglink names the file and holds its CRC, so a stale weft.debug is never used.
(cd "$out" && objcopy --strip-all --add-gnu-debuglink=weft.debug "$built" weft)
chmod 0644 "$out/weft.debug"
ls -l "$out/weft" "$out/weft.debug"

#!/usr/bin/env bash
# Split a built `weft` into what is shipped (scripts/dist.sh; README "Release binary"):
#
#   OUT_DIR/weft        stripped (no symbols, no DWARF), with a .gnu_debuglink to weft.debug
#   OUT_DIR/weft.debug  the symbols and line tables, for backtraces and debuggers
#
# Usage: scripts/split-debuginfo.sh BINARY OUT_DIR
set -euo pipefail
(($# == 2)) || {
    echo "usage: scripts/split-debuginfo.sh BINARY OUT_DIR" >&2
    exit 2
}
command -v objcopy >/dev/null || {
    echo "scripts/split-debuginfo.sh: objcopy is missing (Debian: apt-get install binutils)" >&2
    exit 1
}
built=$(realpath "$1")
out=$2
mkdir -p "$out"
rm -f "$out/weft" "$out/weft.debug"
objcopy --only-keep-debug "$built" "$out/weft.debug"
# The debuglink names the file and holds its CRC, so a stale weft.debug is never used.
(cd "$out" && objcopy --strip-all --add-gnu-debuglink=weft.debug "$built" weft)
chmod 0644 "$out/weft.debug"

#!/usr/bin/env bash
# Installs the pinned Codex client (npm package @openai/codex, the version locked in
# tests/reference/npm/package-lock.json) into target/codex-client/, for the TUI end-to-end tests
# (docs/tui-tests.md). tests/install.sh, the install step of the README's test command, runs it.
# Idempotent: when the installed lockfile matches the pinned one and the native binary is there,
# it does nothing.
#
#   tests/tui/install.sh           install if needed; prints the path of the native binary
#   tests/tui/install.sh --path    only print where the binary is (or would be)
#
# `npm ci --ignore-scripts` installs exactly the tarballs of the lockfile (integrity-checked);
# no install script runs. The binary is never run here. Needs node + npm and, for a fresh
# install, access to the npm registry.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pin="$root/tests/reference/npm"
dest="${WEFT_CODEX_CLIENT_DIR:-$root/target/codex-client}"

# shellcheck source=../reference/platform.sh
. "$root/tests/reference/platform.sh" \
    "install.sh: the Codex client is installed for Linux x86_64 or aarch64 only"
codex="$dest/node_modules/@openai/codex-$platform/vendor/$triple/bin/codex"

if [[ "${1:-}" == --path ]]; then
    echo "$codex"
    exit 0
fi

# Already installed from this very lockfile?
if [[ -x "$codex" ]] && cmp -s "$pin/package-lock.json" "$dest/package-lock.json" &&
    cmp -s "$pin/package.json" "$dest/package.json"; then
    echo "$codex"
    exit 0
fi

for tool in node npm; do
    command -v "$tool" >/dev/null || {
        echo "install.sh: $tool not found (needed to install the Codex client)" >&2
        exit 2
    }
done

mkdir -p "$dest"
rm -rf "$dest/node_modules"
cp "$pin/package.json" "$pin/package-lock.json" "$dest/"
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
[[ -x "$codex" ]] || {
    echo "install.sh: the package did not provide $codex" >&2
    exit 1
}
echo "$codex"

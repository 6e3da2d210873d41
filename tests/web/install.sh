#!/usr/bin/env bash
# Installs the browser driver of the web client's tests (tests/suite/web/browser.rs):
# playwright-core at the version pinned in tests/web/package-lock.json, into
# target/web-tests/ (where tests/suite/web/browser.rs looks), with `npm ci --ignore-scripts` (integrity-checked,
# no install script runs, and no browser is downloaded: the tests drive Debian's chromium,
# which tests/install.sh installs). Idempotent: with the same lockfile installed it does
# nothing and needs no network.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pins="$root/tests/web"
dest="$root/target/web-tests"

[[ $# -eq 0 ]] || {
    echo "usage: tests/web/install.sh" >&2
    exit 2
}

if cmp -s "$pins/package-lock.json" "$dest/weft-package-lock.json" &&
    [[ -f "$dest/node_modules/playwright-core/index.mjs" ]]; then
    exit 0
fi
command -v npm >/dev/null || {
    echo "tests/web/install.sh: npm not found (needed to install playwright-core)" >&2
    exit 2
}
echo "tests/web/install.sh: installing playwright-core into $dest" >&2
rm -rf "$dest"
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
(cd "$dest" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund >&2)
cp "$pins/package-lock.json" "$dest/weft-package-lock.json"

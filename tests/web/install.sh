#!/usr/bin/env bash
# Installs what the web client's tests need from npm, each from its lockfile with
# `npm ci --ignore-scripts` (integrity-checked, no install script runs):
#   - the client's build (esbuild) and its libraries (web/package-lock.json) into
#     web/node_modules, for `node web/build.mjs --check` (tests/suite/web.rs);
#   - the browser driver playwright-core (tests/web/package-lock.json) into target/web-tests/
#     (where tests/suite/web/browser.rs looks). No browser is downloaded: the tests drive
#     Debian's chromium, which tests/install.sh installs.
# Idempotent: with the same lockfiles installed it does nothing and needs no network.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pins="$root/tests/web"
dest="$root/target/web-tests"

[[ $# -eq 0 ]] || {
    echo "usage: tests/web/install.sh" >&2
    exit 2
}

command -v npm >/dev/null || {
    echo "tests/web/install.sh: npm not found (needed for the web client's tests)" >&2
    exit 2
}

# npm_ci DIR LOCK: `npm ci` in DIR from its package files unless LOCK is what it last installed.
npm_ci() {
    local dir="$1" lock="$2" stamp="$1/node_modules/.weft-package-lock.json"
    cmp -s "$lock" "$stamp" && return 0
    echo "tests/web/install.sh: npm ci in $dir" >&2
    rm -rf "$dir/node_modules"
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund >&2)
    cp "$lock" "$stamp"
}

npm_ci "$root/web" "$root/web/package-lock.json"
if ! cmp -s "$pins/package-lock.json" "$dest/package-lock.json"; then
    rm -rf "$dest"
    mkdir -p "$dest"
    cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
fi
npm_ci "$dest" "$pins/package-lock.json"

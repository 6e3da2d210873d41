#!/usr/bin/env bash
# Installs the MCP servers that Weft's MCP client end-to-end tests talk to (tests/mcp/README.md)
# into target/mcp-servers/ (or $WEFT_MCP_SERVERS_DIR). Both come from their registries at pinned
# versions, so the client is tested against servers that nobody on the project wrote (run by
# tests/install.sh, the install step of the README's test command):
#
#   venv/  a Python virtualenv with the official MCP Python SDK (mcp, the version pinned in
#          tests/mcp/python/requirements.lock), which runs tests/mcp/servers/weft_test_server.py
#   npm/   @modelcontextprotocol/server-everything, the version pinned in
#          tests/mcp/npm/package-lock.json
#
#   tests/mcp/install.sh           install what is missing or stale; prints the paths below
#   tests/mcp/install.sh --paths   only print them (KEY=value, one a line), install nothing
#
# Idempotent: a part whose lockfile is the one it was last installed from, and whose files are
# there, is left alone, so this is cheap to run before every test run. Python packages are
# installed with `pip install --require-hashes --no-deps --only-binary=:all:`: exactly the
# lockfile's wheels, each checked against its sha256, and no package's build code runs. npm
# packages are installed with `npm ci --ignore-scripts` (integrity-checked, no install script
# runs); server-everything's tarball ships its compiled dist/, so its own `prepare` (a tsc
# build) is not needed. Needs python3 (with venv), node and npm, and for a fresh install PyPI
# and the npm registry. No server is started here.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pins="$root/tests/mcp"
dest="${WEFT_MCP_SERVERS_DIR:-$root/target/mcp-servers}"
venv="$dest/venv"
npm_dir="$dest/npm"
lock="$pins/python/requirements.lock"
python="$venv/bin/python"
everything_js="$npm_dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

print_paths() {
    local node
    node="$(command -v node || echo node)"
    echo "WEFT_MCP_PYTHON=$python"
    echo "WEFT_MCP_TEST_SERVER=$pins/servers/weft_test_server.py"
    echo "WEFT_MCP_NODE=$node"
    echo "WEFT_MCP_EVERYTHING_JS=$everything_js"
    echo "WEFT_MCP_EVERYTHING_STDIO=$node $everything_js stdio"
    # Listens on $PORT (default 3001), path /mcp; see tests/mcp/README.md.
    echo "WEFT_MCP_EVERYTHING_HTTP=$node $everything_js streamableHttp"
}

if [[ "${1:-}" == --paths ]]; then
    print_paths
    exit 0
fi
if [[ $# -gt 0 ]]; then
    echo "usage: tests/mcp/install.sh [--paths]" >&2
    exit 2
fi

need() {
    command -v "$1" >/dev/null || {
        echo "install.sh: $1 not found (needed to install the MCP test servers)" >&2
        exit 2
    }
}

# --- the Python SDK ------------------------------------------------------------------------
# Stamp: a copy of the lockfile, written only after a complete install.
if [[ -x "$python" ]] && cmp -s "$lock" "$venv/weft-requirements.lock" &&
    "$python" -c 'import sys' 2>/dev/null; then
    :
else
    need python3
    # The real interpreter rather than a pyenv shim (a shim can hang on its own lock file).
    base="$(python3 -c 'import sys; print(sys.executable)')"
    echo "install.sh: creating $venv with $base" >&2
    rm -rf "$venv"
    mkdir -p "$dest"
    "$base" -m venv "$venv"
    # The lockfile holds PyPI's hashes; a local wheel folder from the machine's pip settings
    # could only offer files that fail them.
    env -u PIP_FIND_LINKS "$venv/bin/pip" install --quiet --no-input --disable-pip-version-check \
        --require-hashes --no-deps --only-binary=:all: -r "$lock" >&2
    "$venv/bin/pip" check --disable-pip-version-check >&2
    "$python" -c 'import mcp.server.fastmcp, mcp.client.stdio' || {
        echo "install.sh: the virtualenv at $venv cannot import the MCP SDK" >&2
        exit 1
    }
    cp "$lock" "$venv/weft-requirements.lock"
fi

# --- server-everything ---------------------------------------------------------------------
if [[ -f "$everything_js" ]] && cmp -s "$pins/npm/package-lock.json" "$npm_dir/weft-package-lock.json" &&
    cmp -s "$pins/npm/package.json" "$npm_dir/package.json"; then
    :
else
    need node
    need npm
    echo "install.sh: installing server-everything into $npm_dir" >&2
    mkdir -p "$npm_dir"
    rm -rf "$npm_dir/node_modules" "$npm_dir/weft-package-lock.json"
    cp "$pins/npm/package.json" "$pins/npm/package-lock.json" "$npm_dir/"
    (cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    [[ -f "$everything_js" ]] || {
        echo "install.sh: the package did not provide $everything_js" >&2
        exit 1
    }
    cp "$pins/npm/package-lock.json" "$npm_dir/weft-package-lock.json"
fi

print_paths

#!/usr/bin/env bash
# Regenerates requirements.lock from requirements.in: every package the MCP Python SDK needs,
# each pinned to one version with the sha256 hash of every file PyPI has for that version, so
# tests/mcp/install.sh can install with `pip install --require-hashes --no-deps`.
#
#   tests/mcp/python/lock.sh    rewrite requirements.lock (needs python3 and PyPI)
#
# The resolver (pip-tools, at the versions below) runs in a throwaway virtualenv that is removed
# afterwards; nothing of it is kept in the tree. The resolution is for CPython 3.11 on Linux (the
# project's machines, docs/tui-tests.md describes the same kind of pinned install for npm):
# dependencies behind markers for other platforms (pywin32 on Windows) are left out.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The real interpreter, not a pyenv shim (a shim can hang on its own lock).
python="$(python3 -c 'import sys; print(sys.executable)')"
pip_version=26.3
pip_tools_version=7.6.2

# Hashes are of PyPI's files only: no local wheel folder from the machine's pip settings.
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check \
    "pip==$pip_version" "pip-tools==$pip_tools_version"

{
    cat <<HEADER
# Lockfile of the MCP Python SDK for Weft's MCP test servers (tests/mcp/README.md).
# Generated from tests/mcp/python/requirements.in by tests/mcp/python/lock.sh, which runs
#   pip-compile --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --no-header
# (pip-tools $pip_tools_version, pip $pip_version, $("$python" -c 'import platform; print("CPython", platform.python_version())') on Linux) in a throwaway virtualenv.
# Do not edit by hand: change requirements.in and run lock.sh again.
# tests/mcp/install.sh installs it with: pip install --require-hashes --no-deps --only-binary=:all: -r requirements.lock
HEADER
    # pip-compile names the input by the path it was given; run it from here so the "via"
    # comments say requirements.in.
    (cd "$here" && "$tmp/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe \
        --strip-extras --no-emit-index-url --no-emit-find-links --no-header \
        --output-file "$tmp/requirements.lock" requirements.in >&2)
    cat "$tmp/requirements.lock"
} >"$tmp/out"
mv "$tmp/out" "$here/requirements.lock"
echo "wrote $here/requirements.lock" >&2

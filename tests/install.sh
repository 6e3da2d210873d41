#!/usr/bin/env bash
# Everything the test suite needs beyond a Rust toolchain, in one place: the README's test
# command (`tests/install.sh && cargo test --workspace`) runs this first, and `.ci/run` runs
# exactly that command, installing nothing of its own. A later need of the suite (another
# system package, another pinned client) is added here, in the section it belongs to.
#
#   1. System packages, installed with apt-get when missing (as root, or through sudo):
#      tmux (drives the Codex TUI, docs/tui-tests.md), bubblewrap (`bwrap`: without it the
#      TUI warns on its screen at start-up, and the TUI tests fail on that warning) and
#      chromium (the browser the web client's tests drive, docs/web.md).
#   2. Tools this script does not install, only checks: node + npm (node 20 or newer, for the
#      pinned npm packages) and python3 (3.10 or newer, with venv and ensurepip).
#   3. The pinned packages: the Codex client (tests/tui/install.sh, docs/tui-tests.md), the
#      MCP test servers (tests/mcp/install.sh, tests/mcp/README.md), and the web client's
#      build and browser driver playwright-core (tests/web/install.sh), from their lockfiles.
#
# When something is missing and cannot be installed, it stops at once with a message naming
# what is missing and how to install it. Idempotent: with everything there it installs
# nothing (and needs no network), so it is cheap to run before every test run.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

fail() {
    echo "tests/install.sh: $*" >&2
    exit 2
}

# --- 1. system packages (apt) --------------------------------------------------------------
# One line per package: the command that shows it is installed, the Debian/Ubuntu package.
# tmux drives the Codex TUI (docs/tui-tests.md); bubblewrap: without `bwrap` on PATH the TUI
# warns on its screen at start-up, and the TUI tests fail on that warning. objcopy and readelf
# (binutils) split and check the shipped binary (scripts/split-debuginfo.sh).
system_packages=(
    "tmux tmux"
    "objcopy binutils"
    "readelf binutils"
    "bwrap bubblewrap"
    "chromium chromium"
)

missing=()
for entry in "${system_packages[@]}"; do
    read -r cmd pkg <<<"$entry"
    command -v "$cmd" >/dev/null || missing+=("$pkg")
done

# apt-get as root, or through sudo; with an `apt-get update` (retried) when the first install
# fails, as on a fresh machine whose package lists are empty or stale.
apt_install() {
    local how="apt-get install -y $*" what="$* (needed by the tests, see tests/install.sh)"
    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null ||
            fail "missing: $what; this is not root and sudo is not installed: install as root with \`$how\`"
        sudo=(sudo)
        how="sudo $how"
    fi
    command -v apt-get >/dev/null ||
        fail "missing: $what; apt-get is not available here: install the package(s) $* with this system's package manager"
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
    echo "tests/install.sh: installing $* ($how)" >&2
    "${apt[@]}" install -y --no-install-recommends "$@" >&2 && return 0
    local attempt
    for attempt in 1 2 3; do
        "${apt[@]}" update >&2 && break
        ((attempt < 3)) || fail "missing: $what; \`apt-get update\` failed three times: install with \`$how\`"
        sleep $((attempt * 5))
    done
    "${apt[@]}" install -y --no-install-recommends "$@" >&2 ||
        fail "missing: $what; apt-get could not install it: install with \`$how\`"
}

if ((${#missing[@]})); then
    apt_install "${missing[@]}"
    for entry in "${system_packages[@]}"; do
        read -r cmd pkg <<<"$entry"
        command -v "$cmd" >/dev/null ||
            fail "missing: $pkg (\`$cmd\` is not on PATH after installing it with apt-get)"
    done
fi

# --- 2. tools checked, not installed ---------------------------------------------------------
for cmd in node npm; do
    command -v "$cmd" >/dev/null ||
        fail "missing: $cmd (node 20 or newer with npm, for the pinned Codex client and MCP test servers): install Node.js 20+ (https://nodejs.org, or a distribution package such as \`apt-get install -y nodejs npm\` where that is 20+)"
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 20)) ||
    fail "node $(node --version) is too old: the pinned MCP test servers need node 20 or newer (tests/mcp/npm/package-lock.json): install Node.js 20+"

command -v python3 >/dev/null ||
    fail "missing: python3 (3.10 or newer with venv, for the MCP test servers, tests/mcp/README.md): install it, e.g. \`apt-get install -y python3 python3-venv\`"
# The real interpreter rather than a shim (as tests/mcp/install.sh does).
python="$(python3 -c 'import sys; print(sys.executable)')"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    fail "python3 $("$python" -c 'import platform; print(platform.python_version())') is too old: the MCP Python SDK needs 3.10 or newer: install a newer python3"
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
    fail "missing: python3's venv (the modules venv and ensurepip, for the MCP test servers' virtualenv): install it, e.g. \`apt-get install -y python3-venv\`"

# --- 3. pinned packages, from their lockfiles ------------------------------------------------
"$root/tests/tui/install.sh"
"$root/tests/mcp/install.sh"
"$root/tests/web/install.sh"

#!/usr/bin/env bash
# Regenerates the reference JSON Schema that Weft's conformance tests validate against, from the
# pinned OpenAI Codex release (npm package @openai/codex, Apache-2.0). See README.md beside this
# script.
#
#   tests/reference/update.sh           rewrite codex-app-server-schema{,-experimental}/
#   tests/reference/update.sh --check   regenerate into a scratch directory and compare only
#
# The package is installed with `npm ci` from the package-lock.json in npm/ (so the tarballs are
# pinned by their integrity hashes) into a scratch directory that is removed afterwards. The
# native `codex` binary is then run only inside a new network namespace (`unshare -n`: loopback
# only, and down), with an empty scratch HOME and CODEX_HOME and a minimal environment, so it can
# neither reach the network nor read or write any user's configuration.
#
# Needs: bash, node + npm (network access to the npm registry for the install only), unshare
# (util-linux; as non-root the kernel must allow unprivileged user namespaces), diff. Linux
# x86_64 or aarch64.
set -euo pipefail

VERSION=0.171.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

check=false
case "${1:-}" in
    "") ;;
    --check) check=true ;;
    -h | --help)
        sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [--check]" >&2
        exit 2
        ;;
esac

# shellcheck source=platform.sh
. "$here/platform.sh" "update.sh: needs Linux on x86_64 or aarch64 (unshare)"

for tool in node npm unshare diff; do
    command -v "$tool" >/dev/null || {
        echo "update.sh: $tool not found" >&2
        exit 2
    }
done

scratch="$(mktemp -d "${TMPDIR:-/tmp}/weft-reference.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

# 1. Install the pinned package (no install scripts run; the platform binary comes as an
#    optional dependency of the same version).
mkdir -p "$scratch/npm"
cp "$here/npm/package.json" "$scratch/npm/"
if [[ -f "$here/npm/package-lock.json" ]]; then
    cp "$here/npm/package-lock.json" "$scratch/npm/"
    (cd "$scratch/npm" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
else
    echo "update.sh: no npm/package-lock.json yet; resolving it once with npm install" >&2
    (cd "$scratch/npm" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$scratch/npm/package-lock.json" "$here/npm/package-lock.json"
fi

codex="$scratch/npm/node_modules/@openai/codex-$platform/vendor/$triple/bin/codex"
[[ -x "$codex" ]] || {
    echo "update.sh: the package did not provide $codex" >&2
    exit 1
}

# 2. Run it offline, with nothing of the user's.
mkdir -p "$scratch/home" "$scratch/codex-home"
if [[ "$(id -u)" == 0 ]]; then
    isolate=(unshare --net)
else
    isolate=(unshare --map-root-user --net)
fi
run_codex() {
    env -i PATH=/usr/bin:/bin HOME="$scratch/home" CODEX_HOME="$scratch/codex-home" \
        LANG=C.UTF-8 "${isolate[@]}" "$codex" "$@"
}

reported="$(run_codex --version 2>/dev/null)"
if [[ "$reported" != *" $VERSION" ]]; then
    echo "update.sh: expected codex $VERSION, the binary says: $reported" >&2
    exit 1
fi

status=0
for variant in stable experimental; do
    if [[ $variant == stable ]]; then
        name=codex-app-server-schema
        flags=()
    else
        name=codex-app-server-schema-experimental
        flags=(--experimental)
    fi
    out="$scratch/out/$name"
    mkdir -p "$out"
    # The binary warns on stderr that it will not create PATH helpers under a temporary
    # CODEX_HOME; that is expected and harmless here.
    run_codex app-server generate-json-schema --out "$out" "${flags[@]}" 2>"$scratch/$name.stderr" || {
        cat "$scratch/$name.stderr" >&2
        exit 1
    }
    if $check; then
        if diff -r -q "$here/$name" "$out" >&2; then
            echo "update.sh: $name is up to date ($reported)"
        else
            echo "update.sh: $name differs from what $reported generates" >&2
            status=1
        fi
    else
        rm -rf "${here:?}/$name"
        cp -R "$out" "$here/$name"
        echo "update.sh: wrote $here/$name ($(find "$here/$name" -type f | wc -l) files, $reported)"
    fi
done
exit "$status"

# Sourced by update.sh (beside it) and tests/tui/install.sh: sets `triple` and `platform`, the
# Rust target triple and the npm platform suffix of the pinned Codex package's native binary on
# this machine. Elsewhere it prints its first argument (the caller's name and what it needs),
# then what this machine is, and exits 2.
#
#   . platform.sh "update.sh: needs Linux on x86_64 or aarch64 (unshare)"
case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) triple=x86_64-unknown-linux-musl platform=linux-x64 ;;
    Linux/aarch64 | Linux/arm64) triple=aarch64-unknown-linux-musl platform=linux-arm64 ;;
    *)
        echo "$1; this is $(uname -sm)" >&2
        exit 2
        ;;
esac

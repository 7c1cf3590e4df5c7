#!/usr/bin/env bash
# The README's test command: every test, on a bare machine.
# Installs what the tests need, starts any servers, runs all tests
# (ignored ones included), and stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
if ((${#need_apt[@]})); then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
    else
        echo "scripts/test.sh: missing ${need_apt[*]}; install them (apt-get install -y ${need_apt[*]})" >&2
        exit 2
    fi
fi

cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --release -- --include-ignored

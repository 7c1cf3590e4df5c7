#!/usr/bin/env bash
# A throwaway MariaDB server on 127.0.0.1, in a temporary folder.
#
# Sourced:   . scripts/start-mariadb.sh
#            -> starts it, exports BLOBBENCH_MYSQL_URL, and stops it (removing
#               the folder) when the calling script exits, or on `stop_mariadb`.
# Run:       scripts/start-mariadb.sh
#            -> starts it, prints the URL, and keeps it running until Ctrl-C.
#
# Restart:   scripts/start-mariadb.sh --restart DIR
#            -> restarts the server this script started in DIR (shutdown, wait
#               until it has exited, start with the same options, wait until it
#               answers) and prints "restarted MariaDB: pid OLD -> NEW".
#               Sourcing exports that command line as BLOBBENCH_MYSQL_RESTART,
#               which is how `blobbench suite lob --cold` learns it may restart
#               this server (and only this one: the one at BLOBBENCH_MYSQL_URL),
#               and that it may change its global settings.
#
# MariaDB from Debian (apt-get install mariadb-server if missing), started
# with --no-defaults so the machine's configuration does not leak in, with
# the ARCHIVE engine's plugin loaded. MYSQL_PORT picks where the search for a
# free port starts (default: 23306, below Linux's ephemeral range, where an
# outgoing connection's local port could hold the port without listening).

_my_fail() { echo "start-mariadb: $*" >&2; return 1; }
# One word for sh -c, whatever it holds: single-quoted, ' as '\''.
_my_quote() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }
# This script's absolute path, for the restart command it exports.
_my_script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

_my_daemon() {
    if command -v mariadbd >/dev/null 2>&1; then command -v mariadbd; else echo /usr/sbin/mariadbd; fi
}

# Whether process $1 runs (a zombie left for its parent to reap does not).
_my_alive() {
    [ -n "$1" ] && [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# Starts the server of folder $1 on port $2 in the background, detached from
# the caller's output, and waits until it answers; sets _my_pid.
_my_launch() {
    local dir=$1 port=$2 user i
    user=$(id -un)
    "$(_my_daemon)" --no-defaults --user="$user" --datadir="$dir/data" \
        --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" \
        --port="$port" --bind-address=127.0.0.1 --plugin-load-add=ha_archive.so \
        --max-allowed-packet=64M --log-error="$dir/server.log" </dev/null >/dev/null 2>&1 &
    _my_pid=$!
    for i in $(seq 120); do
        mariadb-admin --no-defaults --socket="$dir/mysqld.sock" -uroot ping >/dev/null 2>&1 && return 0
        kill -0 "$_my_pid" 2>/dev/null || { cat "$dir/server.log" >&2; _my_fail "the server exited"; return 1; }
        sleep 0.5
    done
    _my_fail "the server did not answer within 60 s"
}

_my_free_port() {
    local p=${MYSQL_PORT:-23306}
    # ss, when present, also sees sockets bound or connected on the port.
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null \
        || { command -v ss >/dev/null && [ -n "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; }; do
        p=$((p + 1))
    done
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
    local daemon
    daemon=$(_my_daemon)
    BLOBBENCH_MYSQL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-mariadb.XXXXXX")
    local port user
    port=$(_my_free_port)
    user=$(id -un)
    mariadb-install-db --no-defaults --datadir="$BLOBBENCH_MYSQL_DIR/data" --user="$user" \
        --auth-root-authentication-method=normal --skip-test-db >"$BLOBBENCH_MYSQL_DIR/install.log" 2>&1 \
        || { cat "$BLOBBENCH_MYSQL_DIR/install.log" >&2; _my_fail "mariadb-install-db failed"; return 1; }
    # Another server may take the port between the probe and the bind (two
    # test runs starting at once): then try the next free port, a few times.
    local try
    for try in 1 2 3 4 5; do
        # The port, for a restart.
        echo "$port" >"$BLOBBENCH_MYSQL_DIR/port"
        : >"$BLOBBENCH_MYSQL_DIR/server.log"
        _my_launch "$BLOBBENCH_MYSQL_DIR" "$port" && break
        grep -q "Address already in use" "$BLOBBENCH_MYSQL_DIR/server.log" && [ "$try" -lt 5 ] || return 1
        echo "start-mariadb: port $port was taken meanwhile; trying the next free one" >&2
        port=$(MYSQL_PORT=$((port + 1)) _my_free_port)
    done
    BLOBBENCH_MYSQL_PID=$_my_pid
    mariadb --no-defaults --socket="$BLOBBENCH_MYSQL_DIR/mysqld.sock" -uroot -e "CREATE DATABASE blobbench" \
        || { _my_fail "cannot create database blobbench"; return 1; }
    export BLOBBENCH_MYSQL_URL="mysql://root@127.0.0.1:$port/blobbench"
    BLOBBENCH_MYSQL_RESTART="$(_my_quote "$_my_script") --restart $(_my_quote "$BLOBBENCH_MYSQL_DIR")"
    export BLOBBENCH_MYSQL_DIR BLOBBENCH_MYSQL_PID BLOBBENCH_MYSQL_RESTART
    echo "MariaDB $("$daemon" --version | awk '{print $3}') running: $BLOBBENCH_MYSQL_URL (data in $BLOBBENCH_MYSQL_DIR)" >&2
}

# Shuts down the server of folder $1 and waits until its process is gone.
_my_shutdown() {
    local dir=$1 pid i
    # From the pid file: after a restart the server is no child of this shell.
    pid=$(cat "$dir/mysqld.pid" 2>/dev/null || true)
    mariadb-admin --no-defaults --socket="$dir/mysqld.sock" -uroot shutdown >/dev/null 2>&1 \
        || { [ -n "$pid" ] && kill "$pid" 2>/dev/null; }
    for i in $(seq 120); do
        _my_alive "$pid" || return 0
        sleep 0.25
    done
    _my_fail "the server (pid $pid) did not exit within 30 s"
}

# Restarts the server started in folder $1 on the port it had.
restart_mariadb() {
    local dir=$1 port old
    port=$(cat "$dir/port" 2>/dev/null) || { _my_fail "no server of this script in $dir"; return 1; }
    old=$(cat "$dir/mysqld.pid" 2>/dev/null || echo "?")
    _my_shutdown "$dir" || return 1
    _my_launch "$dir" "$port" || return 1
    echo "restarted MariaDB: pid $old -> $_my_pid"
}

stop_mariadb() {
    [ -n "${BLOBBENCH_MYSQL_DIR:-}" ] && [ -d "$BLOBBENCH_MYSQL_DIR" ] || return 0
    [ -f "$BLOBBENCH_MYSQL_DIR/mysqld.pid" ] || echo "$BLOBBENCH_MYSQL_PID" >"$BLOBBENCH_MYSQL_DIR/mysqld.pid"
    _my_shutdown "$BLOBBENCH_MYSQL_DIR"
    rm -rf "$BLOBBENCH_MYSQL_DIR"
    unset BLOBBENCH_MYSQL_DIR BLOBBENCH_MYSQL_URL BLOBBENCH_MYSQL_RESTART
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = "--restart" ]; then
    set -euo pipefail
    [ -n "${2:-}" ] || { _my_fail "--restart needs the server's folder"; exit 2; }
    restart_mariadb "$2"
elif [ "${BASH_SOURCE[0]}" = "$0" ]; then
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

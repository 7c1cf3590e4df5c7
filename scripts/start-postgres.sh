#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1, in a temporary folder.
#
# Sourced:   . scripts/start-postgres.sh
#            -> starts it, exports BLOBBENCH_PG_URL, and stops it (removing the
#               folder) when the calling script exits, or on `stop_postgres`.
# Run:       scripts/start-postgres.sh
#            -> starts it, prints the URL, and keeps it running until Ctrl-C.
#
# Restart:   scripts/start-postgres.sh --restart DIR
#            -> restarts the server this script started in DIR (fast shutdown,
#               start, wait until it accepts connections) and prints
#               "restarted PostgreSQL: pid OLD -> NEW". Sourcing exports that
#               command line as BLOBBENCH_PG_RESTART, which is how
#               `blobbench suite lob --cold` learns it may restart this server
#               (and only this one: the server at BLOBBENCH_PG_URL).
#
# PostgreSQL 15 from Debian (installed with apt-get if missing). initdb
# refuses to run as root, so the cluster belongs to the postgres user.
# PG_PORT picks where the search for a free port starts (default: 25432,
# below Linux's ephemeral range, where an outgoing connection's local port
# could hold the port without listening on it).

# This script's absolute path, for the restart command it exports.
_pg_script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

_pg_fail() { echo "start-postgres: $*" >&2; return 1; }
# One word for sh -c, whatever it holds: single-quoted, ' as '\''.
_pg_quote() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }

_pg_bindir() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return 0; }
    done
    return 1
}

# A port from $1 (default PG_PORT, else 25432) up that nothing listens on
# and no socket holds (ss, when present, also sees bound or connected ones).
_pg_free_port() {
    local p=${1:-${PG_PORT:-25432}}
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null \
        || { command -v ss >/dev/null && [ -n "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; }; do
        p=$((p + 1))
    done
    echo "$p"
}

# Starts the cluster of folder $1 on port $2 (pg_ctl waits until it accepts),
# as start_postgres's runas and bin.
_pg_launch() {
    "${runas[@]}" "$bin/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $2 -k $1" start >/dev/null 2>&1
}

start_postgres() {
    local bin
    if ! bin=$(_pg_bindir); then
        echo "start-postgres: installing postgresql with apt-get" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
            || { _pg_fail "apt-get install postgresql failed"; return 1; }
        bin=$(_pg_bindir) || { _pg_fail "no initdb after installing postgresql"; return 1; }
    fi
    local runas=()
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --home /var/lib/postgresql postgres
        runas=(runuser -u postgres --)
    fi
    BLOBBENCH_PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-pg.XXXXXX")
    chmod 755 "$BLOBBENCH_PG_DIR"
    [ "$(id -u)" = 0 ] && chown postgres "$BLOBBENCH_PG_DIR"
    local port
    port=$(_pg_free_port)
    "${runas[@]}" "$bin/initdb" -D "$BLOBBENCH_PG_DIR/data" -U postgres --auth=trust \
        --encoding=UTF8 --locale=C >"$BLOBBENCH_PG_DIR/initdb.log" 2>&1 \
        || { cat "$BLOBBENCH_PG_DIR/initdb.log" >&2; _pg_fail "initdb failed"; return 1; }
    # Another process may take the port between the probe and the bind (two
    # test runs starting at once): then try the next free port, a few times.
    local try
    for try in 1 2 3 4 5; do
        : >"$BLOBBENCH_PG_DIR/server.log"
        [ "$(id -u)" = 0 ] && chown postgres "$BLOBBENCH_PG_DIR/server.log"
        _pg_launch "$BLOBBENCH_PG_DIR" "$port" && break
        if ! grep -q "Address already in use" "$BLOBBENCH_PG_DIR/server.log" || [ "$try" = 5 ]; then
            cat "$BLOBBENCH_PG_DIR/server.log" >&2
            _pg_fail "the server did not start"
            return 1
        fi
        echo "start-postgres: port $port was taken meanwhile; trying the next free one" >&2
        port=$(_pg_free_port $((port + 1)))
    done
    BLOBBENCH_PG_BIN=$bin
    local i
    for i in $(seq 60); do
        "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
        sleep 0.5
    done
    "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE blobbench" >/dev/null \
        || { _pg_fail "cannot create database blobbench"; return 1; }
    export BLOBBENCH_PG_URL="postgres://postgres@127.0.0.1:$port/blobbench"
    # Single-quoted words: blobbench runs it with sh -c.
    BLOBBENCH_PG_RESTART="$(_pg_quote "$_pg_script") --restart $(_pg_quote "$BLOBBENCH_PG_DIR")"
    export BLOBBENCH_PG_DIR BLOBBENCH_PG_BIN BLOBBENCH_PG_RESTART
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') running: $BLOBBENCH_PG_URL (data in $BLOBBENCH_PG_DIR)" >&2
}

# Restarts the server started in folder $1: pg_ctl restart reuses the
# options of the last start (port, socket folder, listen address).
restart_postgres() {
    local dir=$1 bin old new
    local runas=()
    bin=$(_pg_bindir) || { _pg_fail "no PostgreSQL binaries"; return 1; }
    [ -f "$dir/data/postmaster.pid" ] || { _pg_fail "no server of this script runs in $dir"; return 1; }
    [ "$(id -u)" = 0 ] && runas=(runuser -u postgres --)
    old=$(head -1 "$dir/data/postmaster.pid")
    "${runas[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart \
        </dev/null >/dev/null 2>&1 \
        || { tail -5 "$dir/server.log" >&2; _pg_fail "the server did not restart"; return 1; }
    new=$(head -1 "$dir/data/postmaster.pid")
    echo "restarted PostgreSQL: pid $old -> $new"
}

stop_postgres() {
    [ -n "${BLOBBENCH_PG_DIR:-}" ] && [ -d "$BLOBBENCH_PG_DIR/data" ] || return 0
    local runas=()
    [ "$(id -u)" = 0 ] && runas=(runuser -u postgres --)
    "${runas[@]}" "$BLOBBENCH_PG_BIN/pg_ctl" -D "$BLOBBENCH_PG_DIR/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$BLOBBENCH_PG_DIR"
    unset BLOBBENCH_PG_DIR BLOBBENCH_PG_URL BLOBBENCH_PG_RESTART
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = "--restart" ]; then
    set -euo pipefail
    [ -n "${2:-}" ] || { _pg_fail "--restart needs the server's folder"; exit 2; }
    restart_postgres "$2"
elif [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    start_postgres
    trap 'stop_postgres; exit 0' INT TERM
    trap stop_postgres EXIT
    echo "$BLOBBENCH_PG_URL"
    echo "Ctrl-C stops the server and removes its folder." >&2
    while true; do sleep 3600 & wait $!; done
else
    start_postgres || return 1
    # Keep whatever EXIT trap the caller already has (e.g. the MariaDB one).
    _pg_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "stop_postgres; ${_pg_prev_trap}" EXIT
fi

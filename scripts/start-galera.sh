#!/usr/bin/env bash
# A throwaway 3-node MariaDB Galera cluster on loopback addresses, in a
# temporary folder.
#
# Sourced:   . scripts/start-galera.sh
#            -> starts it, exports BLOBBENCH_GALERA_URL (node 1),
#               BLOBBENCH_GALERA_NODES (all three, "127.0.0.1:PORT,127.0.0.2:PORT,
#               127.0.0.3:PORT", for a multi-node target) and
#               BLOBBENCH_GALERA_DIR (the folder), and stops all three nodes
#               (removing the folder) when the calling script exits, or on
#               `stop_galera`.
# Run:       scripts/start-galera.sh
#            -> starts it, prints the URL, and keeps it running until Ctrl-C.
#
# Faults, for tests (N = 1, 2 or 3; DIR = BLOBBENCH_GALERA_DIR):
#   scripts/start-galera.sh --kill N DIR      kill -9 node N; returns once its
#                                             process is gone (at most 10 s)
#   scripts/start-galera.sh --freeze N DIR    SIGSTOP node N (--thaw: SIGCONT)
#   scripts/start-galera.sh --restart N DIR [--sst]
#            -> shuts node N down if it runs (a frozen one is thawed first),
#               starts it again with the command it was started with
#               (DIR/nodeN/start.sh) and waits until it is Synced in a cluster
#               of 3 again: at most 120 s, which covers the others evicting a
#               killed node's old incarnation first (evs.suspect_timeout, 30 s
#               here) and a state transfer; prints "restarted Galera node N:
#               pid OLD -> NEW, state transfer SST|IST|none, in S s". --sst
#               makes it rejoin with a full state transfer (rsync), as a node
#               whose state is lost does. Exit status 1, with the end of the
#               node's log, when it is not Synced in time.
#   Each node's pid is in DIR/nodeN/mysqld.pid, its log in DIR/nodeN/server.log.
#   The others notice a killed node only after evs.suspect_timeout (30 s):
#   until then wsrep_cluster_size still counts it; a client sees at once that
#   it does not answer.
#
# Node N is a `mariadbd --no-defaults` process on 127.0.0.N (N = 1, 2, 3), all
# three on the same SQL port, Galera (gcomm) port, IST port and SST port, so
# mysql://root@127.0.0.2:PORT/blobbench reaches node 2. Galera 4 from Debian
# (galera-4), with the settings Galera requires: binlog_format=ROW, InnoDB as
# the default engine, innodb_autoinc_lock_mode=2; max_allowed_packet=64M as
# start-mariadb.sh. Node 1 bootstraps the cluster (--wsrep-new-cluster) and
# the others join it with a state transfer (SST) by rsync; the script waits
# until wsrep_cluster_size is 3 and every node is Synced, then creates the
# database blobbench. GALERA_PORT picks where the search for a free SQL port
# starts (default: a random port, as for the Galera, IST and SST ports).
#
# The joiner's end of an rsync SST is an rsync daemon that, started by root,
# writes as the user nobody: every node's data folder is given to nobody
# before the node starts (and again before each restart, since the server,
# running as root, makes files of its own there), so any node can rejoin,
# however it left.

_gl_fail() { echo "start-galera: $*" >&2; return 1; }

# This script's absolute path, for the restart scripts it writes.
_gl_script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
_gl_provider=/usr/lib/galera/libgalera_smm.so
# The nodes' addresses; node N is ${_gl_nodes[N-1]}.
_gl_nodes=(127.0.0.1 127.0.0.2 127.0.0.3)

# Installs what is missing: the server, the Galera library, rsync for the
# state transfer, and ss or lsof (wsrep_sst_rsync checks its port with one).
_gl_install() {
    local need=()
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
    [ -e "$_gl_provider" ] || need+=(galera-4)
    command -v rsync >/dev/null 2>&1 || need+=(rsync)
    command -v ss >/dev/null 2>&1 || command -v lsof >/dev/null 2>&1 || need+=(iproute2)
    ((${#need[@]})) || return 0
    echo "start-galera: installing ${need[*]} with apt-get" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null) \
        || { _gl_fail "apt-get install ${need[*]} failed"; return 1; }
    # Debian starts the packaged server; this script runs its own.
    (service mariadb stop || true) >/dev/null 2>&1
    return 0
}

_gl_daemon() {
    if command -v mariadbd >/dev/null 2>&1; then command -v mariadbd; else echo /usr/sbin/mariadbd; fi
}

# Whether something listens on address $1, port $2.
_gl_busy() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# A port from $1 up free on every node's address, and not in $2 (a list).
_gl_free_port() {
    local p=$1 a busy
    while :; do
        busy=
        case " $2 " in *" $p "*) busy=1 ;; esac
        for a in "${_gl_nodes[@]}"; do
            [ -z "$busy" ] && _gl_busy "$a" "$p" && busy=1
        done
        [ -z "$busy" ] && break
        p=$((p + 1))
    done
    echo "$p"
}

# Whether process $1 runs (a zombie left for its parent to reap does not).
_gl_alive() {
    [ -n "$1" ] && [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# Group membership timeouts for a machine that may be starved of CPU (the
# tests run beside two CPU hogs): by default a node silent for 5 s is
# suspected and one silent for 15 s is evicted, which a starved node can be.
# Raised together, as Galera requires: keepalive_period (1 s, the default)
# at most a third of suspect_timeout, inactive_timeout above
# suspect_timeout, install_timeout (a new view's agreement; by default half
# of inactive_timeout) at most inactive_timeout. A node that stops cleanly
# still leaves at once (it says so); these only delay evicting a silent one.
_gl_evs="evs.keepalive_period=PT1S;evs.suspect_timeout=PT30S;evs.inactive_timeout=PT60S;evs.install_timeout=PT30S"

# A query $2 on node $1 (1, 2 or 3) through its socket; prints the result.
_gl_sql() {
    mariadb --no-defaults --connect-timeout=5 --socket="$BLOBBENCH_GALERA_DIR/node$1/mysqld.sock" -uroot -N -B -e "$2"
}

# Writes node $1's start command to its folder (start.sh, which takes extra
# server options): the same command starts it first and restarts it.
_gl_write_start() {
    local n=$1 dir="$BLOBBENCH_GALERA_DIR/node$1" addr=${_gl_nodes[$1 - 1]} peers a
    peers=
    for a in "${_gl_nodes[@]}"; do peers="$peers${peers:+,}$a:$_gl_gcomm"; done
    local cmd=(
        "$(_gl_daemon)" --no-defaults --user=root --datadir="$dir/data"
        --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/server.log"
        --port="$_gl_port" --bind-address="$addr" --max-allowed-packet=64M
        --binlog-format=ROW --default-storage-engine=InnoDB --innodb-autoinc-lock-mode=2
        --wsrep-on=ON --wsrep-provider="$_gl_provider" --wsrep-cluster-name="$_gl_name"
        --wsrep-cluster-address="gcomm://$peers" --wsrep-node-name="node$n"
        --wsrep-node-address="$addr:$_gl_gcomm" --wsrep-node-incoming-address="$addr:$_gl_port"
        --wsrep-sst-method=rsync --wsrep-sst-receive-address="$addr:$_gl_sst"
        --wsrep-provider-options="gmcast.listen_addr=tcp://$addr:$_gl_gcomm;ist.recv_addr=$addr:$_gl_ist;gcache.size=64M;$_gl_evs"
    )
    {
        echo '#!/usr/bin/env bash'
        echo "# Starts Galera node $n of the cluster in $BLOBBENCH_GALERA_DIR (written by"
        echo "# $_gl_script; restart it with: $_gl_script --restart $n DIR)."
        printf 'exec'
        printf ' %q' "${cmd[@]}"
        printf ' "$@" </dev/null >/dev/null 2>&1\n'
    } >"$dir/start.sh"
    chmod +x "$dir/start.sh"
}

# Gives the data folders of the nodes $@ to nobody, the user the joiner's
# rsync daemon writes as, and lets it through the folders above them.
_gl_own() {
    local n
    [ "$(id -u)" = 0 ] || return 0
    chmod 711 "$BLOBBENCH_GALERA_DIR"
    for n in "$@"; do
        chmod 711 "$BLOBBENCH_GALERA_DIR/node$n"
        chown -R nobody "$BLOBBENCH_GALERA_DIR/node$n/data"
    done
}

# Starts node $1 in the background; $2... are extra server options.
_gl_launch() {
    local n=$1
    shift
    "$BLOBBENCH_GALERA_DIR/node$n/start.sh" "$@" &
    _gl_pids[n - 1]=$!
}

# The pid of node $1 from its pid file (empty when there is none).
_gl_pid() { cat "$BLOBBENCH_GALERA_DIR/node$1/mysqld.pid" 2>/dev/null || true; }

# Waits (up to $2 s) until node $1 answers and is Synced in a cluster of $3
# nodes (3 unless given).
_gl_wait_synced() {
    local n=$1 end=$((SECONDS + $2)) want=${3:-3} state size
    while [ "$SECONDS" -lt "$end" ]; do
        state=$(_gl_sql "$n" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | cut -f2 || true)
        size=$(_gl_sql "$n" "SHOW STATUS LIKE 'wsrep_cluster_size'" 2>/dev/null | cut -f2 || true)
        [ "$state" = Synced ] && [ "$size" = "$want" ] && return 0
        _gl_alive "${_gl_pids[n - 1]:-$(_gl_pid "$n")}" || {
            tail -30 "$BLOBBENCH_GALERA_DIR/node$n/server.log" >&2
            _gl_fail "node $n exited"
            return 1
        }
        sleep 0.25
    done
    tail -30 "$BLOBBENCH_GALERA_DIR/node$n/server.log" >&2
    _gl_fail "node $n is not Synced in a cluster of $want after $2 s (state ${state:-none}, size ${size:-none})"
}

# Starts joiner $1 and waits until it is Synced in a cluster of $2 nodes. A
# joiner that exits or has not joined within 60 s (seen once in CI: the third
# node dropped out of the group and never came back) is killed, its data
# folder emptied (a joiner receives everything by SST) and started once more,
# with 120 s for the others to evict its old incarnation first.
_gl_join() {
    local n=$1 size=$2 dir="$BLOBBENCH_GALERA_DIR/node$1" pid
    _gl_launch "$n"
    _gl_wait_synced "$n" 60 "$size" && return 0
    echo "start-galera: starting node $n again with an empty data folder" >&2
    pid=$(_gl_pid "$n")
    kill -9 "${_gl_pids[n - 1]}" $pid 2>/dev/null || true
    wait "${_gl_pids[n - 1]}" 2>/dev/null || true
    rm -rf "$dir/data" && mkdir "$dir/data" && rm -f "$dir/mysqld.pid"
    _gl_own "$n"
    _gl_launch "$n"
    _gl_wait_synced "$n" 120 "$size"
}

start_galera() {
    _gl_install || return 1
    BLOBBENCH_GALERA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-galera.XXXXXX")
    local dir=$BLOBBENCH_GALERA_DIR n i
    # Random starting points: two test runs starting at once would otherwise
    # probe the same ports, and one's joiners could reach the other's nodes.
    _gl_port=$(_gl_free_port "${GALERA_PORT:-$((10000 + RANDOM % 20000))}" "")
    _gl_gcomm=$(_gl_free_port $((10000 + RANDOM % 20000)) "$_gl_port")
    _gl_ist=$(_gl_free_port $((_gl_gcomm + 1)) "$_gl_port $_gl_gcomm")
    _gl_sst=$(_gl_free_port $((10000 + RANDOM % 20000)) "$_gl_port $_gl_gcomm $_gl_ist")
    # A cluster name of its own: a node of another cluster is refused.
    _gl_name="blobbench-${dir##*.}"
    _gl_pids=()
    for n in 1 2 3; do mkdir -p "$dir/node$n/data"; done
    # Only node 1 gets system tables: the others receive everything by SST.
    mariadb-install-db --no-defaults --datadir="$dir/node1/data" --user=root \
        --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
        || { cat "$dir/install.log" >&2; _gl_fail "mariadb-install-db failed"; return 1; }
    _gl_own 1 2 3
    for n in 1 2 3; do _gl_write_start "$n"; done
    _gl_launch 1 --wsrep-new-cluster
    for i in $(seq 240); do
        [ "$(_gl_sql 1 "SHOW STATUS LIKE 'wsrep_ready'" 2>/dev/null | cut -f2)" = ON ] && break
        _gl_alive "${_gl_pids[0]}" || { tail -30 "$dir/node1/server.log" >&2; _gl_fail "node 1 exited"; stop_galera; return 1; }
        sleep 0.25
    done
    # One joiner at a time: each is Synced, its SST done, before the next
    # starts, so a failure names the node that failed.
    _gl_join 2 2 && _gl_join 3 3 || { stop_galera; return 1; }
    for n in 1 2 3; do
        _gl_wait_synced "$n" 60 || { stop_galera; return 1; }
    done
    _gl_sql 1 "CREATE DATABASE blobbench" || { _gl_fail "cannot create database blobbench"; stop_galera; return 1; }
    export BLOBBENCH_GALERA_URL="mysql://root@127.0.0.1:$_gl_port/blobbench"
    BLOBBENCH_GALERA_NODES="${_gl_nodes[0]}:$_gl_port,${_gl_nodes[1]}:$_gl_port,${_gl_nodes[2]}:$_gl_port"
    BLOBBENCH_GALERA_PIDS="${_gl_pids[*]}"
    export BLOBBENCH_GALERA_DIR BLOBBENCH_GALERA_PIDS BLOBBENCH_GALERA_NODES
    echo "MariaDB $("$(_gl_daemon)" --version | awk '{print $3}') Galera" \
        "$(_gl_sql 1 "SHOW STATUS LIKE 'wsrep_provider_version'" | cut -f2) cluster of 3 running:" \
        "$BLOBBENCH_GALERA_URL, nodes ${_gl_nodes[*]} port $_gl_port (data in $dir)" >&2
}

# Shuts node $1 down and waits until its process is gone; kills it after 30 s.
_gl_shutdown() {
    local n=$1 pid i
    pid=$(cat "$BLOBBENCH_GALERA_DIR/node$n/mysqld.pid" 2>/dev/null || echo "${_gl_pids[n - 1]:-}")
    [ -n "$pid" ] || return 0
    _gl_alive "$pid" || return 0
    # A frozen node answers nothing, not even a shutdown.
    kill -CONT "$pid" 2>/dev/null || true
    # mariadb-admin waits for the server to end (an hour by default): a
    # Galera node can hang in its shutdown (a frozen node's, seen), so it
    # waits 20 s, and the process is killed 10 s later.
    mariadb-admin --no-defaults --connect-timeout=5 --shutdown-timeout=20 \
        --socket="$BLOBBENCH_GALERA_DIR/node$n/mysqld.sock" -uroot shutdown >/dev/null 2>&1 \
        || kill "$pid" 2>/dev/null || true
    for i in $(seq 40); do
        _gl_alive "$pid" || return 0
        sleep 0.25
    done
    kill -9 "$pid" 2>/dev/null || true
    _gl_fail "node $n (pid $pid) did not exit within 30 s; killed"
}

stop_galera() {
    [ -n "${BLOBBENCH_GALERA_DIR:-}" ] && [ -d "$BLOBBENCH_GALERA_DIR" ] || return 0
    local n
    [ -n "${BLOBBENCH_GALERA_PIDS:-}" ] && read -r -a _gl_pids <<<"$BLOBBENCH_GALERA_PIDS"
    # The joiners first, the node that bootstrapped last.
    for n in 3 2 1; do _gl_shutdown "$n" || true; done
    rm -rf "$BLOBBENCH_GALERA_DIR"
    unset BLOBBENCH_GALERA_DIR BLOBBENCH_GALERA_URL BLOBBENCH_GALERA_PIDS BLOBBENCH_GALERA_NODES
}

# kill -9 node $1 and wait (10 s at most) until its process is gone.
kill_galera_node() {
    local n=$1 pid i
    pid=$(_gl_pid "$n")
    _gl_alive "$pid" || { _gl_fail "node $n does not run"; return 1; }
    kill -9 "$pid"
    for i in $(seq 40); do
        _gl_alive "$pid" || { echo "killed Galera node $n (pid $pid)"; return 0; }
        sleep 0.25
    done
    _gl_fail "node $n (pid $pid) still runs 10 s after kill -9"
}

# SIGSTOP ($2 = STOP) or SIGCONT ($2 = CONT) node $1.
signal_galera_node() {
    local pid
    pid=$(_gl_pid "$1")
    _gl_alive "$pid" || { _gl_fail "node $1 does not run"; return 1; }
    kill -"$2" "$pid"
}

# Restarts node $1 with its own start command and waits until it is Synced
# in a cluster of 3 (120 s at most); $2 = --sst forces a full state transfer.
restart_galera_node() {
    local n=$1 sst=${2:-} dir="$BLOBBENCH_GALERA_DIR/node$1" old lines started kind
    [ -x "$dir/start.sh" ] || { _gl_fail "no node $n of this script in $BLOBBENCH_GALERA_DIR"; return 1; }
    old=$(_gl_pid "$n")
    _gl_pids=()
    _gl_alive "$old" && { _gl_shutdown "$n" || return 1; }
    # No saved state: the node asks its donor for everything. Removing only
    # grastate.dat is not enough: MariaDB recovers the position InnoDB
    # recorded and asks for an IST (seen in CI), so the folder is emptied.
    if [ "$sst" = --sst ]; then
        rm -rf "$dir/data" && mkdir "$dir/data" && rm -f "$dir/mysqld.pid"
    fi
    _gl_own "$n"
    lines=$(wc -l <"$dir/server.log" 2>/dev/null || echo 0)
    started=$SECONDS
    _gl_launch "$n"
    _gl_wait_synced "$n" 120 || return 1
    kind=none
    if tail -n +"$((lines + 1))" "$dir/server.log" | grep -q "SST received"; then
        kind=SST
    elif tail -n +"$((lines + 1))" "$dir/server.log" | grep -q "IST received"; then
        kind=IST
    fi
    echo "restarted Galera node $n: pid ${old:-none} -> $(_gl_pid "$n"), state transfer $kind, in $((SECONDS - started)) s"
}

# The control commands (see the header): --kill|--freeze|--thaw|--restart N DIR.
_gl_control() {
    local what=$1 n=${2:-} dir=${3:-}
    case "$n" in 1 | 2 | 3) ;; *) _gl_fail "$what needs a node number, 1, 2 or 3 (got \"$n\")"; return 2 ;; esac
    [ -n "$dir" ] && [ -d "$dir/node$n" ] || { _gl_fail "$what $n needs the cluster's folder (BLOBBENCH_GALERA_DIR), got \"$dir\""; return 2; }
    BLOBBENCH_GALERA_DIR=$dir
    case "$what" in
        --kill) kill_galera_node "$n" ;;
        --freeze) signal_galera_node "$n" STOP ;;
        --thaw) signal_galera_node "$n" CONT ;;
        --restart) restart_galera_node "$n" "${4:-}" ;;
    esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        --kill | --freeze | --thaw | --restart)
            set -uo pipefail
            _gl_control "$@"
            exit $?
            ;;
    esac
    set -euo pipefail
    start_galera
    trap 'stop_galera; exit 0' INT TERM
    trap stop_galera EXIT
    echo "$BLOBBENCH_GALERA_URL"
    echo "Ctrl-C stops the cluster and removes its folder." >&2
    while true; do sleep 3600 & wait $!; done
else
    start_galera || return 1
    # Keep whatever EXIT trap the caller already has (e.g. the MariaDB one).
    _gl_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "stop_galera; ${_gl_prev_trap}" EXIT
fi

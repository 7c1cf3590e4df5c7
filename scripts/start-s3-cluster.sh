#!/usr/bin/env bash
# A throwaway distributed S3 store (SeaweedFS) on loopback addresses, in a
# temporary folder: every object is stored on 3 volume servers.
#
# Sourced:   . scripts/start-s3-cluster.sh
#            -> starts it, exports BLOBBENCH_S3_CLUSTER_URL,
#               BLOBBENCH_S3_CLUSTER_TOPOLOGY and AWS_ACCESS_KEY_ID,
#               AWS_SECRET_ACCESS_KEY, AWS_REGION, and stops it (removing the
#               folder) when the calling script exits, or on
#               `stop_s3_cluster`.
# Run:       scripts/start-s3-cluster.sh
#            -> starts it, prints the URL (the topology URL and the
#               credentials on stderr), and keeps it running until Ctrl-C.
#
# Six processes, each a `weed` of its own:
#   master         127.0.0.1  -defaultReplication=002
#   volume 1, 2, 3 127.0.0.2, 127.0.0.3, 127.0.0.4 (the same port), one rack
#   filer          127.0.0.1
#   S3 gateway     127.0.0.1, in front of the filer
# Replication 002 is SeaweedFS's "xyz" code: x copies in other data centers,
# y on other racks, z on other servers of the same rack; 002 is the original
# plus 2 copies on 2 other servers of its rack, so every volume (and so every
# object) lives on all 3 volume servers, and a write returns once all 3 have
# it. BLOBBENCH_S3_CLUSTER_TOPOLOGY is the master's /dir/status: JSON with
# each data node and its volumes, and each layout's "replication".
#
# Faults, for tests (NAME = master, volume1, volume2, volume3, filer or s3;
# DIR = BLOBBENCH_S3_CLUSTER_DIR):
#   scripts/start-s3-cluster.sh --kill NAME DIR     kill -9 that process; returns
#                                                   once it is gone (at most 10 s)
#   scripts/start-s3-cluster.sh --freeze NAME DIR   SIGSTOP it (--thaw: SIGCONT)
#   scripts/start-s3-cluster.sh --restart NAME DIR
#            -> stops it if it runs (kill -9, a frozen one too), starts it again
#               with the command it was started with (DIR/NAME.sh) and waits,
#               at most 60 s, until it listens on its port again and answers
#               HTTP there (any status); prints "restarted NAME: pid OLD -> NEW,
#               in S s". Exit status 1, with the end of its log, when not.
#   Each process's pid is in DIR/NAME.pid (kept current by --restart), its
#   log in DIR/NAME.log. The master keeps listing a killed volume server in
#   /dir/status until it has missed its heartbeats for a while (see
#   docs/TARGETS.md); the server itself stops answering at once.
#
# The credentials are those of start-s3.sh (both may run at once). The S3
# endpoint refuses unsigned requests. S3_CLUSTER_PORT picks where the search
# for a free S3 port starts (default: a random port, as for the other ports).
# Telemetry is off.

_sw_name=start-s3-cluster
# shellcheck source=scripts/seaweedfs-common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/seaweedfs-common.sh"

# The volume servers' addresses.
_swc_nodes=(127.0.0.2 127.0.0.3 127.0.0.4)
# This script's absolute path, for the start scripts it writes.
_swc_script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

# Writes process $1's start command to DIR/$1.sh (its output appended to
# DIR/$1.log, TMPDIR the folder so its own log files go there too), starts
# it in the background and records its pid in DIR/$1.pid; $2... is the
# weed command line.
_swc_start() {
    local name=$1 dir=$BLOBBENCH_S3_CLUSTER_DIR
    shift
    {
        echo '#!/usr/bin/env bash'
        echo "# Starts $name of the SeaweedFS cluster in $dir (written by"
        echo "# $_swc_script; restart it with: $_swc_script --restart $name DIR)."
        printf 'export TMPDIR=%q\n' "$dir"
        printf 'exec'
        printf ' %q' "$@"
        printf ' </dev/null >>%q 2>&1\n' "$dir/$name.log"
    } >"$dir/$name.sh"
    chmod +x "$dir/$name.sh"
    "$dir/$name.sh" &
    echo $! >"$dir/$name.pid"
}

# The pid of process $1 (from DIR/$1.pid).
_swc_pid() { cat "$BLOBBENCH_S3_CLUSTER_DIR/$1.pid" 2>/dev/null || true; }

# Picks free ports, starts the six processes in a new folder and waits
# until the S3 endpoint answers and each process holds its own port; sets
# BLOBBENCH_S3_CLUSTER_DIR, _PIDS, _PORTS, _swc_endpoint and _swc_master.
_swc_launch() {
    local weed=$1 s3 master volume filer node n code
    BLOBBENCH_S3_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-s3-cluster.XXXXXX")
    local dir=$BLOBBENCH_S3_CLUSTER_DIR
    _sw_free_port "$(_sw_start_port "${S3_CLUSTER_PORT:-}")" 127.0.0.1 && s3=$_sw_port
    _sw_free_port "$(_sw_start_port)" 127.0.0.1 && master=$_sw_port
    _sw_free_port "$(_sw_start_port)" "${_swc_nodes[@]}" && volume=$_sw_port
    _sw_free_port "$(_sw_start_port)" 127.0.0.1 && filer=$_sw_port
    BLOBBENCH_S3_CLUSTER_PORTS="$s3 $master $volume $filer"
    echo "$BLOBBENCH_S3_CLUSTER_PORTS" >"$dir/ports"
    _sw_s3_config "$dir/s3.json"
    mkdir -p "$dir/master" "$dir/filer"
    _swc_start master "$weed" master -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$master" \
        -mdir="$dir/master" -defaultReplication=002 -volumeSizeLimitMB=1024 -telemetry=false
    n=0
    for node in "${_swc_nodes[@]}"; do
        n=$((n + 1))
        mkdir -p "$dir/volume$n"
        _swc_start "volume$n" "$weed" volume -ip="$node" -ip.bind="$node" -port="$volume" \
            -dir="$dir/volume$n" -max=0 -preStopSeconds=0 -master="127.0.0.1:$master" \
            -dataCenter=dc1 -rack=rack1
    done
    _swc_start filer "$weed" filer -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$filer" \
        -master="127.0.0.1:$master" -defaultStoreDir="$dir/filer" -localSocket="$dir/filer.sock"
    _swc_start s3 "$weed" s3 -ip.bind=127.0.0.1 -port="$s3" -filer="127.0.0.1:$filer" \
        -config="$dir/s3.json" -localSocket="$dir/s3.sock" -port.iceberg=0 -port.lance=0
    local pids=()
    for n in master volume1 volume2 volume3 filer s3; do pids+=("$(_swc_pid "$n")"); done
    BLOBBENCH_S3_CLUSTER_PIDS="${pids[*]}"
    _swc_endpoint="http://127.0.0.1:$s3"
    _swc_master="127.0.0.1:$master"
    code=$(_sw_wait_answer "$_swc_endpoint" "${pids[@]}") || { _swc_logs; return 1; }
    # Each process on its own port: no other server took one meanwhile.
    _sw_owned "${pids[0]}" 127.0.0.1 "$master" && _sw_owned "${pids[1]}" 127.0.0.2 "$volume" \
        && _sw_owned "${pids[2]}" 127.0.0.3 "$volume" && _sw_owned "${pids[3]}" 127.0.0.4 "$volume" \
        && _sw_owned "${pids[4]}" 127.0.0.1 "$filer" && _sw_owned "${pids[5]}" 127.0.0.1 "$s3" \
        || { _sw_fail "another server took one of the ports $BLOBBENCH_S3_CLUSTER_PORTS meanwhile"; return 1; }
    [ "$code" = 403 ] || { _sw_fail "an unsigned request got HTTP $code, not 403"; return 2; }
}

start_s3_cluster() {
    local weed try rc
    weed=$(_sw_weed) || return 1
    # Another server may take a port between the probe and the bind (two
    # test runs starting at once): then try other ports, a few times.
    for try in 1 2 3; do
        _swc_launch "$weed" && break
        rc=$?
        stop_s3_cluster
        [ "$rc" = 1 ] && [ "$try" -lt 3 ] || return 1
        echo "start-s3-cluster: trying other ports" >&2
    done
    # The first write waits until all 3 volume servers have joined: with
    # replication 002 the master grows no volume with fewer.
    _sw_make_bucket "$_swc_endpoint" blobbench || { _swc_logs; stop_s3_cluster; return 1; }
    export BLOBBENCH_S3_CLUSTER_URL="s3://blobbench/?endpoint=$_swc_endpoint&region=$BLOBBENCH_S3_REGION"
    export BLOBBENCH_S3_CLUSTER_TOPOLOGY="http://$_swc_master/dir/status"
    export AWS_ACCESS_KEY_ID=$BLOBBENCH_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$BLOBBENCH_S3_SECRET_KEY
    export AWS_REGION=$BLOBBENCH_S3_REGION
    export BLOBBENCH_S3_CLUSTER_DIR BLOBBENCH_S3_CLUSTER_PIDS
    echo "SeaweedFS $("$weed" version 2>/dev/null | sed 's/^version //') cluster running:" \
        "$BLOBBENCH_S3_CLUSTER_URL, volume servers ${_swc_nodes[*]}, replication 002," \
        "topology $BLOBBENCH_S3_CLUSTER_TOPOLOGY (data in $BLOBBENCH_S3_CLUSTER_DIR)" >&2
}

# The end of every process's log, for a start that failed.
_swc_logs() {
    local f
    for f in "$BLOBBENCH_S3_CLUSTER_DIR"/*.log; do
        echo "== $f" >&2
        tail -8 "$f" >&2
    done
}

stop_s3_cluster() {
    [ -n "${BLOBBENCH_S3_CLUSTER_DIR:-}" ] && [ -d "$BLOBBENCH_S3_CLUSTER_DIR" ] || return 0
    local p pids=()
    # The pid files: a process --restart started is no child of this shell.
    for p in "$BLOBBENCH_S3_CLUSTER_DIR"/*.pid; do [ -f "$p" ] && pids+=("$(cat "$p")"); done
    # A frozen process takes no SIGTERM until it is thawed.
    for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
    # shellcheck disable=SC2086 # lists of pids and ports, one word each
    _sw_stop $BLOBBENCH_S3_CLUSTER_PIDS "${pids[@]}"
    # shellcheck disable=SC2086
    _sw_clean_sockets $BLOBBENCH_S3_CLUSTER_PORTS
    rm -rf "$BLOBBENCH_S3_CLUSTER_DIR"
    unset BLOBBENCH_S3_CLUSTER_DIR BLOBBENCH_S3_CLUSTER_URL BLOBBENCH_S3_CLUSTER_TOPOLOGY \
        BLOBBENCH_S3_CLUSTER_PIDS
}

# The address and port process $1 listens on ("127.0.0.3 18080").
_swc_listen() {
    local s3 master volume filer
    read -r s3 master volume filer <"$BLOBBENCH_S3_CLUSTER_DIR/ports"
    case "$1" in
        master) echo "127.0.0.1 $master" ;;
        volume[123]) echo "${_swc_nodes[${1#volume} - 1]} $volume" ;;
        filer) echo "127.0.0.1 $filer" ;;
        s3) echo "127.0.0.1 $s3" ;;
    esac
}

# kill -9 process $1 (thawed first) and wait (10 s at most) until it is gone.
kill_s3_cluster_process() {
    local pid i
    pid=$(_swc_pid "$1")
    _sw_alive "$pid" || { _sw_fail "$1 does not run"; return 1; }
    kill -CONT "$pid" 2>/dev/null || true
    kill -9 "$pid"
    for i in $(seq 40); do
        _sw_alive "$pid" || { echo "killed $1 (pid $pid)"; return 0; }
        sleep 0.25
    done
    _sw_fail "$1 (pid $pid) still runs 10 s after kill -9"
}

# Restarts process $1 with its own start command and waits (60 s at most)
# until it serves again.
restart_s3_cluster_process() {
    local name=$1 dir=$BLOBBENCH_S3_CLUSTER_DIR old pid addr port started end path=/
    old=$(_swc_pid "$name")
    _sw_alive "$old" && { kill_s3_cluster_process "$name" >/dev/null || return 1; }
    read -r addr port <<<"$(_swc_listen "$name")"
    case "$name" in master) path=/cluster/status ;; volume[123]) path=/status ;; esac
    started=$SECONDS
    end=$((SECONDS + 60))
    "$dir/$name.sh" &
    pid=$!
    echo "$pid" >"$dir/$name.pid"
    while :; do
        # Any HTTP answer: the S3 gateway refuses an unsigned request.
        _sw_alive "$pid" && _sw_owned "$pid" "$addr" "$port" \
            && [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$addr:$port$path" || true)" != 000 ] \
            && break
        if ! _sw_alive "$pid" || [ "$SECONDS" -ge "$end" ]; then
            tail -20 "$dir/$name.log" >&2
            _sw_fail "$name did not serve again within 60 s of its restart"
            return 1
        fi
        sleep 0.2
    done
    echo "restarted $name: pid ${old:-none} -> $pid, in $((SECONDS - started)) s"
}

# The control commands (see the header): --kill|--freeze|--thaw|--restart NAME DIR.
_swc_control() {
    local what=$1 name=${2:-} dir=${3:-} pid
    case "$name" in master | volume1 | volume2 | volume3 | filer | s3) ;;
        *) _sw_fail "$what needs a process: master, volume1, volume2, volume3, filer or s3 (got \"$name\")"; return 2 ;;
    esac
    [ -n "$dir" ] && [ -x "$dir/$name.sh" ] || { _sw_fail "$what $name needs the cluster's folder (BLOBBENCH_S3_CLUSTER_DIR), got \"$dir\""; return 2; }
    BLOBBENCH_S3_CLUSTER_DIR=$dir
    case "$what" in
        --kill) kill_s3_cluster_process "$name" ;;
        --restart) restart_s3_cluster_process "$name" ;;
        --freeze | --thaw)
            pid=$(_swc_pid "$name")
            _sw_alive "$pid" || { _sw_fail "$name does not run"; return 1; }
            if [ "$what" = --freeze ]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi
            ;;
    esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        --kill | --freeze | --thaw | --restart)
            set -uo pipefail
            _swc_control "$@"
            exit $?
            ;;
    esac
    set -euo pipefail
    start_s3_cluster
    trap 'stop_s3_cluster; exit 0' INT TERM
    trap stop_s3_cluster EXIT
    echo "$BLOBBENCH_S3_CLUSTER_URL"
    echo "topology: $BLOBBENCH_S3_CLUSTER_TOPOLOGY" >&2
    echo "export AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY AWS_REGION=$AWS_REGION" >&2
    echo "Ctrl-C stops the cluster and removes its folder." >&2
    while true; do sleep 3600 & wait $!; done
else
    start_s3_cluster || return 1
    # Keep whatever EXIT trap the caller already has (e.g. start-s3.sh's).
    _s3c_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "stop_s3_cluster; ${_s3c_prev_trap}" EXIT
fi

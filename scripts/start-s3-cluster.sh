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
# The credentials are those of start-s3.sh (both may run at once). The S3
# endpoint refuses unsigned requests. S3_CLUSTER_PORT picks the S3 port
# (default: a free one from 8333 up). Telemetry is off.

_sw_name=start-s3-cluster
# shellcheck source=scripts/seaweedfs-common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/seaweedfs-common.sh"

# The volume servers' addresses.
_swc_nodes=(127.0.0.2 127.0.0.3 127.0.0.4)

start_s3_cluster() {
    local weed
    weed=$(_sw_weed) || return 1
    BLOBBENCH_S3_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-s3-cluster.XXXXXX")
    local dir=$BLOBBENCH_S3_CLUSTER_DIR s3 master volume filer node n
    _sw_free_port "${S3_CLUSTER_PORT:-8333}" 127.0.0.1 && s3=$_sw_port
    _sw_free_port 9333 127.0.0.1 && master=$_sw_port
    _sw_free_port 8080 "${_swc_nodes[@]}" && volume=$_sw_port
    _sw_free_port 8888 127.0.0.1 && filer=$_sw_port
    BLOBBENCH_S3_CLUSTER_PORTS="$s3 $master $volume $filer"
    BLOBBENCH_S3_CLUSTER_PIDS=""
    _sw_s3_config "$dir/s3.json"
    mkdir -p "$dir/master" "$dir/filer"
    # TMPDIR: each weed's own log files go to the folder too.
    TMPDIR=$dir "$weed" master -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$master" \
        -mdir="$dir/master" -defaultReplication=002 -volumeSizeLimitMB=1024 -telemetry=false \
        </dev/null >"$dir/master.log" 2>&1 &
    BLOBBENCH_S3_CLUSTER_PIDS="$!"
    n=0
    for node in "${_swc_nodes[@]}"; do
        n=$((n + 1))
        mkdir -p "$dir/volume$n"
        TMPDIR=$dir "$weed" volume -ip="$node" -ip.bind="$node" -port="$volume" \
            -dir="$dir/volume$n" -max=0 -preStopSeconds=0 -master="127.0.0.1:$master" \
            -dataCenter=dc1 -rack=rack1 \
            </dev/null >"$dir/volume$n.log" 2>&1 &
        BLOBBENCH_S3_CLUSTER_PIDS="$BLOBBENCH_S3_CLUSTER_PIDS $!"
    done
    TMPDIR=$dir "$weed" filer -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$filer" \
        -master="127.0.0.1:$master" -defaultStoreDir="$dir/filer" -localSocket="$dir/filer.sock" \
        </dev/null >"$dir/filer.log" 2>&1 &
    BLOBBENCH_S3_CLUSTER_PIDS="$BLOBBENCH_S3_CLUSTER_PIDS $!"
    TMPDIR=$dir "$weed" s3 -ip.bind=127.0.0.1 -port="$s3" -filer="127.0.0.1:$filer" \
        -config="$dir/s3.json" -localSocket="$dir/s3.sock" -port.iceberg=0 -port.lance=0 \
        </dev/null >"$dir/s3.log" 2>&1 &
    BLOBBENCH_S3_CLUSTER_PIDS="$BLOBBENCH_S3_CLUSTER_PIDS $!"
    local endpoint="http://127.0.0.1:$s3" code
    # shellcheck disable=SC2086 # the list of pids, one word each
    code=$(_sw_wait_answer "$endpoint" $BLOBBENCH_S3_CLUSTER_PIDS) \
        || { _swc_logs; stop_s3_cluster; return 1; }
    [ "$code" = 403 ] || { _sw_fail "an unsigned request got HTTP $code, not 403"; stop_s3_cluster; return 1; }
    # The first write waits until all 3 volume servers have joined: with
    # replication 002 the master grows no volume with fewer.
    _sw_make_bucket "$endpoint" blobbench || { _swc_logs; stop_s3_cluster; return 1; }
    export BLOBBENCH_S3_CLUSTER_URL="s3://blobbench/?endpoint=$endpoint&region=$BLOBBENCH_S3_REGION"
    export BLOBBENCH_S3_CLUSTER_TOPOLOGY="http://127.0.0.1:$master/dir/status"
    export AWS_ACCESS_KEY_ID=$BLOBBENCH_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$BLOBBENCH_S3_SECRET_KEY
    export AWS_REGION=$BLOBBENCH_S3_REGION
    export BLOBBENCH_S3_CLUSTER_DIR BLOBBENCH_S3_CLUSTER_PIDS
    echo "SeaweedFS $("$weed" version 2>/dev/null | sed 's/^version //') cluster running:" \
        "$BLOBBENCH_S3_CLUSTER_URL, volume servers ${_swc_nodes[*]} port $volume, replication 002," \
        "topology $BLOBBENCH_S3_CLUSTER_TOPOLOGY (data in $dir)" >&2
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
    # shellcheck disable=SC2086 # lists of pids and ports, one word each
    _sw_stop $BLOBBENCH_S3_CLUSTER_PIDS
    # shellcheck disable=SC2086
    _sw_clean_sockets $BLOBBENCH_S3_CLUSTER_PORTS
    rm -rf "$BLOBBENCH_S3_CLUSTER_DIR"
    unset BLOBBENCH_S3_CLUSTER_DIR BLOBBENCH_S3_CLUSTER_URL BLOBBENCH_S3_CLUSTER_TOPOLOGY \
        BLOBBENCH_S3_CLUSTER_PIDS
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
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

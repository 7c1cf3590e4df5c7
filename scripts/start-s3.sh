#!/usr/bin/env bash
# A throwaway single-node S3 server (SeaweedFS) on 127.0.0.1, in a temporary
# folder.
#
# Sourced:   . scripts/start-s3.sh
#            -> starts it, exports BLOBBENCH_S3_URL and AWS_ACCESS_KEY_ID,
#               AWS_SECRET_ACCESS_KEY, AWS_REGION, and stops it (removing the
#               folder) when the calling script exits, or on `stop_s3`.
# Run:       scripts/start-s3.sh
#            -> starts it, prints the URL (and the credentials on stderr), and
#               keeps it running until Ctrl-C.
#
# One `weed server` process: master, volume server, filer and S3 gateway,
# everything on 127.0.0.1. The S3 gateway refuses unsigned requests: it knows
# one identity (see seaweedfs-common.sh), the one the AWS_* variables name.
# The bucket `blobbench` exists and has written an object once (so its
# volumes are grown before anything is timed). S3_PORT picks where the
# search for a free S3 port starts (default: a random port, as for the
# server's other ports). Telemetry is off: nothing leaves the machine.

_sw_name=start-s3
# shellcheck source=scripts/seaweedfs-common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/seaweedfs-common.sh"

# Picks free ports, starts the server in a new folder and waits until its
# S3 endpoint answers from this very process; sets BLOBBENCH_S3_DIR,
# BLOBBENCH_S3_PID, BLOBBENCH_S3_PORTS and _s3_endpoint.
_s3_launch() {
    local weed=$1
    BLOBBENCH_S3_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-s3.XXXXXX")
    local dir=$BLOBBENCH_S3_DIR s3 master volume filer code
    _sw_free_port "$(_sw_start_port "${S3_PORT:-}")" 127.0.0.1 && s3=$_sw_port
    _sw_free_port "$(_sw_start_port)" 127.0.0.1 && master=$_sw_port
    _sw_free_port "$(_sw_start_port)" 127.0.0.1 && volume=$_sw_port
    _sw_free_port "$(_sw_start_port)" 127.0.0.1 && filer=$_sw_port
    BLOBBENCH_S3_PORTS="$s3 $master $volume $filer"
    _sw_s3_config "$dir/s3.json"
    mkdir -p "$dir/data"
    # TMPDIR: weed's own log files go to the folder too.
    TMPDIR=$dir "$weed" server -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
        -master.port="$master" -master.telemetry=false -master.volumeSizeLimitMB=1024 \
        -volume.port="$volume" -volume.max=0 -volume.preStopSeconds=0 \
        -filer -filer.port="$filer" -filer.localSocket="$dir/filer.sock" \
        -s3 -s3.port="$s3" -s3.config="$dir/s3.json" -s3.localSocket="$dir/s3.sock" \
        -s3.port.iceberg=0 -s3.port.lance=0 \
        </dev/null >"$dir/server.log" 2>&1 &
    BLOBBENCH_S3_PID=$!
    _s3_endpoint="http://127.0.0.1:$s3"
    code=$(_sw_wait_answer "$_s3_endpoint" "$BLOBBENCH_S3_PID") || { tail -5 "$dir/server.log" >&2; return 1; }
    # shellcheck disable=SC2086 # the list of ports, one word each
    _sw_owned "$BLOBBENCH_S3_PID" 127.0.0.1 $BLOBBENCH_S3_PORTS \
        || { _sw_fail "another server took one of the ports $BLOBBENCH_S3_PORTS meanwhile"; return 1; }
    [ "$code" = 403 ] || { _sw_fail "an unsigned request got HTTP $code, not 403"; return 2; }
}

start_s3() {
    local weed try rc
    weed=$(_sw_weed) || return 1
    # Another server may take a port between the probe and the bind (two
    # test runs starting at once): then try other ports, a few times.
    for try in 1 2 3; do
        _s3_launch "$weed" && break
        rc=$?
        stop_s3
        [ "$rc" = 1 ] && [ "$try" -lt 3 ] || return 1
        echo "start-s3: trying other ports" >&2
    done
    _sw_make_bucket "$_s3_endpoint" blobbench \
        || { tail -20 "$BLOBBENCH_S3_DIR/server.log" >&2; stop_s3; return 1; }
    export BLOBBENCH_S3_URL="s3://blobbench/?endpoint=$_s3_endpoint&region=$BLOBBENCH_S3_REGION"
    export AWS_ACCESS_KEY_ID=$BLOBBENCH_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$BLOBBENCH_S3_SECRET_KEY
    export AWS_REGION=$BLOBBENCH_S3_REGION
    export BLOBBENCH_S3_DIR BLOBBENCH_S3_PID
    echo "SeaweedFS $("$weed" version 2>/dev/null | sed 's/^version //') running: $BLOBBENCH_S3_URL" \
        "(data in $BLOBBENCH_S3_DIR)" >&2
}

stop_s3() {
    [ -n "${BLOBBENCH_S3_DIR:-}" ] && [ -d "$BLOBBENCH_S3_DIR" ] || return 0
    _sw_stop "$BLOBBENCH_S3_PID"
    # shellcheck disable=SC2086 # the list of ports, one word each
    _sw_clean_sockets $BLOBBENCH_S3_PORTS
    rm -rf "$BLOBBENCH_S3_DIR"
    unset BLOBBENCH_S3_DIR BLOBBENCH_S3_URL BLOBBENCH_S3_PID
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    start_s3
    trap 'stop_s3; exit 0' INT TERM
    trap stop_s3 EXIT
    echo "$BLOBBENCH_S3_URL"
    echo "export AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY AWS_REGION=$AWS_REGION" >&2
    echo "Ctrl-C stops the server and removes its folder." >&2
    while true; do sleep 3600 & wait $!; done
else
    start_s3 || return 1
    # Keep whatever EXIT trap the caller already has (e.g. the MariaDB one).
    _s3_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
    trap "stop_s3; ${_s3_prev_trap}" EXIT
fi

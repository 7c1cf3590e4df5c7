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
# volumes are grown before anything is timed). S3_PORT picks the S3 port
# (default: a free one from 8333 up). Telemetry is off: nothing leaves the
# machine.

_sw_name=start-s3
# shellcheck source=scripts/seaweedfs-common.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/seaweedfs-common.sh"

start_s3() {
    local weed
    weed=$(_sw_weed) || return 1
    BLOBBENCH_S3_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-s3.XXXXXX")
    local dir=$BLOBBENCH_S3_DIR s3 master volume filer
    _sw_free_port "${S3_PORT:-8333}" 127.0.0.1 && s3=$_sw_port
    _sw_free_port 9333 127.0.0.1 && master=$_sw_port
    _sw_free_port 8080 127.0.0.1 && volume=$_sw_port
    _sw_free_port 8888 127.0.0.1 && filer=$_sw_port
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
    local endpoint="http://127.0.0.1:$s3" code
    code=$(_sw_wait_answer "$endpoint" "$BLOBBENCH_S3_PID") \
        || { tail -20 "$dir/server.log" >&2; stop_s3; return 1; }
    [ "$code" = 403 ] || { _sw_fail "an unsigned request got HTTP $code, not 403"; stop_s3; return 1; }
    _sw_make_bucket "$endpoint" blobbench || { tail -20 "$dir/server.log" >&2; stop_s3; return 1; }
    export BLOBBENCH_S3_URL="s3://blobbench/?endpoint=$endpoint&region=$BLOBBENCH_S3_REGION"
    export AWS_ACCESS_KEY_ID=$BLOBBENCH_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$BLOBBENCH_S3_SECRET_KEY
    export AWS_REGION=$BLOBBENCH_S3_REGION
    export BLOBBENCH_S3_DIR BLOBBENCH_S3_PID
    echo "SeaweedFS $("$weed" version 2>/dev/null | sed 's/^version //') running: $BLOBBENCH_S3_URL (data in $dir)" >&2
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

#!/usr/bin/env bash
# blobbench serve and blobbench load against nginx and wrk, on the same blobs.
#
# For each blob size (10k and 1M by default): one dataset in a database and
# exported as files; nginx (Debian) serves the files, `blobbench serve`
# serves the database. Then, PAIRS times in rotating order:
#   A  wrk             -> nginx
#   B  wrk             -> blobbench serve (sqlite)
#   C  blobbench load  -> nginx
# and prints requests/s with the ratios the issue sets as targets:
#   B/A >= 1.00 at 10k  (serve from sqlite at least as fast as nginx from files)
#   C/A >= 0.90         (blobbench load drives nginx at least 0.9x as hard as wrk)
# Every URL is /blobs/NNNNNN (the exported file names; serve reads the
# leading zeros as the same key), requested in random order over keep-alive
# connections.
#
# Usage: bench/http-vs-nginx.sh           (SIZES="10k 1M" CONNS=16 DURATION=10 PAIRS=3)
#        SERVE_OPTS="?locking_mode=exclusive&mmap_size=2000M" bench/http-vs-nginx.sh   (the fast read-only setting)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"10k 1M"}
CONNS=${CONNS:-16}
DURATION=${DURATION:-10}
PAIRS=${PAIRS:-3}
THREADS=${THREADS:-2}

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
if ((${#need[@]})); then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Debian starts its own nginx on port 80; this script runs its own.
(service nginx stop || true) >/dev/null 2>&1
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

cargo build --release --quiet
BB=$PWD/target/release/blobbench
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/http-vs-nginx.XXXXXX")
# nginx's workers run as an unprivileged user: they must be able to read the files.
chmod 755 "$WORK"
cleanup() {
    [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    [ -n "${SERVE_PID:-}" ] && kill "$SERVE_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for size in $SIZES; do
    case $size in
        10k) count=10000 ;;
        1M) count=300 ;;
        *) count=${COUNT:-1000} ;;
    esac
    db=$WORK/b-$size.db
    dir=$WORK/b-$size.dir
    "$BB" init "$db" --count "$count" --size "$size" >/dev/null
    "$BB" export "$db" "$dir" >/dev/null
    chmod -R a+rX "$dir"

    ng_port=$(free_port)
    mkdir -p "$WORK/nginx"
    cat >"$WORK/nginx.conf" <<EOF
worker_processes auto;
pid $WORK/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    client_body_temp_path $WORK/nginx;
    proxy_temp_path $WORK/nginx;
    fastcgi_temp_path $WORK/nginx;
    uwsgi_temp_path $WORK/nginx;
    scgi_temp_path $WORK/nginx;
    server {
        listen 127.0.0.1:$ng_port;
        location /blobs/ { alias $dir/; }
    }
}
EOF
    rm -f "$WORK/nginx.pid"
    "$NGINX" -c "$WORK/nginx.conf" -p "$WORK/nginx"
    bb_port=$(free_port)
    "$BB" serve "sqlite:$db${SERVE_OPTS:-}" --listen "127.0.0.1:$bb_port" 2>"$WORK/serve.log" &
    SERVE_PID=$!
    for _ in $(seq 50); do
        curl -sf "http://127.0.0.1:$bb_port/healthz" >/dev/null 2>&1 && \
            curl -sf "http://127.0.0.1:$ng_port/blobs/000001" -o /dev/null 2>&1 && break
        sleep 0.2
    done

    cat >"$WORK/random.lua" <<EOF
local n = $count
math.randomseed(42)
request = function()
  return wrk.format("GET", string.format("/blobs/%06d", math.random(n)))
end
EOF
    : >"$WORK/urls-nginx.txt"
    for k in $(seq "$count"); do printf 'http://127.0.0.1:%s/blobs/%06d\n' "$ng_port" "$k"; done >"$WORK/urls-nginx.txt"
    # Warm both: every blob once through each server.
    "$BB" load --urls "$WORK/urls-nginx.txt" --order sequential -c 4 -n "$count" >/dev/null
    sed "s/:$ng_port\//:$bb_port\//" "$WORK/urls-nginx.txt" >"$WORK/urls-bb.txt"
    "$BB" load --urls "$WORK/urls-bb.txt" --order sequential -c 4 -n "$count" >/dev/null

    wrk_rps() {
        local out
        out=$(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" -s "$WORK/random.lua" "http://127.0.0.1:$1")
        # Errors would make the figure meaningless: stop rather than compare them.
        if grep -q "Non-2xx\|Socket errors" <<<"$out"; then echo "wrk saw errors: $out" >&2; exit 1; fi
        awk '/^Requests\/sec/ {print $2}' <<<"$out"
    }
    load_rps() {
        "$BB" load --urls "$WORK/urls-nginx.txt" -c "$CONNS" -t "${DURATION}s" --json "$WORK/load.json" >/dev/null
        python3 -c "
import json, sys
l = json.load(open('$WORK/load.json'))['tables']['levels'][0]
if sum(l['errors'].values()): sys.exit('blobbench load saw errors: %s' % l['errors'])
print(l['requests_per_s'])"
    }
    for pair in $(seq "$PAIRS"); do
        # Rotate the order: A B C, B C A, C A B, ...
        for step in 0 1 2; do
            case $(((pair + step) % 3)) in
                0) a=$(wrk_rps "$ng_port"); printf '%s\t%s\tA\t%s\n' "$size" "$pair" "$a" >>"$RESULTS" ;;
                1) b=$(wrk_rps "$bb_port"); printf '%s\t%s\tB\t%s\n' "$size" "$pair" "$b" >>"$RESULTS" ;;
                2) c=$(load_rps); printf '%s\t%s\tC\t%s\n' "$size" "$pair" "$c" >>"$RESULTS" ;;
            esac
        done
        echo "size $size pair $pair done" >&2
    done
    kill "$(cat "$WORK/nginx.pid")"; rm -f "$WORK/nginx.pid"
    kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=
done

python3 - "$RESULTS" "$CONNS" "$DURATION" "$PAIRS" <<'PY'
import sys, statistics as st
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines() if l]
conns, dur, pairs = sys.argv[2:5]
print(f"HTTP on 127.0.0.1, {conns} keep-alive connections, {dur} s per run, median of {pairs} rotations (requests/s)")
print(f"{'size':6} {'A wrk->nginx':>13} {'B wrk->serve':>13} {'C load->nginx':>14} {'B/A serve/nginx':>16} {'C/A load/wrk':>13}")
for size in dict.fromkeys(r[0] for r in rows):
    m = {k: st.median(float(r[3]) for r in rows if r[0] == size and r[2] == k) for k in "ABC"}
    print(f"{size:6} {m['A']:13.0f} {m['B']:13.0f} {m['C']:14.0f} {m['B']/m['A']:16.2f} {m['C']/m['A']:13.2f}")
print("targets: B/A >= 1.00 at 10k; C/A >= 0.90")
PY

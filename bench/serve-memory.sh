#!/usr/bin/env bash
# blobbench serve's memory and descriptors under load (issue 29, items 1-2):
# for each store (a rollback-journal database, a WAL database, a folder of
# files; COUNT blobs of SIZE), `blobbench serve` is started fresh, then
# BURSTS bursts of `blobbench load -c CONNS -t DURATION` over every blob
# each, with SETTLE seconds after each (serve's idle blocking threads end
# after 2 s, closing their sessions). Printed per store: the descriptors
# (/proc/PID/fd) and RSS (VmRSS) before the first burst and after each,
# and the peak RSS (VmHWM) over the whole run. The goals: peak under
# 200 MB on every store at 1000 connections; after each burst, descriptors
# and RSS back within a fixed margin of their level before the first (see
# tests/http/resources.rs for the margins the test asserts).
#
# Usage: bench/serve-memory.sh     (CONNS=1000 DURATION=5 BURSTS=3 SETTLE=4 COUNT=100 SIZE=2M)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
CONNS=${CONNS:-1000}
DURATION=${DURATION:-5}
BURSTS=${BURSTS:-3}
SETTLE=${SETTLE:-4}
COUNT=${COUNT:-100}
SIZE=${SIZE:-2M}
cargo build --release --quiet
bin=$PWD/target/release/blobbench
work=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
cd "$work"
"$bin" init r.db --count "$COUNT" --size "$SIZE" >/dev/null
"$bin" init w.db --count "$COUNT" --size "$SIZE" --jmode wal >/dev/null
"$bin" export r.db files >/dev/null

# One line of the server's state: descriptors, RSS and peak RSS (MB).
state() {
    local fds rss hwm
    fds=$(find "/proc/$server/fd" -mindepth 1 -maxdepth 1 | wc -l)
    rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$server/status")
    hwm=$(awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
    printf '%-22s %5s fds  RSS %4s MB  peak %4s MB\n' "$1" "$fds" "$rss" "$hwm"
}

for target in sqlite:r.db sqlite:w.db dir:files; do
    echo "== $target: $BURSTS bursts of -c $CONNS for ${DURATION}s over $COUNT x $SIZE"
    "$bin" serve "$target" --listen 127.0.0.1:0 2>serve.err &
    server=$!
    for _ in $(seq 100); do grep -q 'http://' serve.err && break; sleep 0.1; done
    addr=$(grep -o 'on http://[0-9.:]*' serve.err | head -1 | cut -c4-)
    seq 1 "$COUNT" | sed "s|^|$addr/blobs/|" >urls.txt
    state "before"
    for burst in $(seq "$BURSTS"); do
        "$bin" load --urls urls.txt -c "$CONNS" -t "${DURATION}s" >load.out 2>&1 \
            || { cat load.out; exit 1; }
        state "burst $burst"
        sleep "$SETTLE"
        state "burst $burst +${SETTLE}s"
    done
    grep -E '^-c' load.out
    kill "$server"
    wait "$server" || true
    server=
done

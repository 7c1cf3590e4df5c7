#!/usr/bin/env bash
# blobbench serve and blobbench load against nginx, wrk and the seed blog's Go
# server, on the same blobs (issue 14, "As fast as nginx").
#
# For each blob size (2000 x 10 KB and 300 x 2 MB by default; decimal units,
# as `blobbench init` reads them): one dataset in a database, exported as
# files (000001, 000002, ...). nginx (Debian, sendfile) serves the files,
# `blobbench serve` serves the database and, separately, the folder, and the
# seed blog's Go server (bench/seed-go-server: net/http + sqlx + go-sqlite3)
# serves a copy of the database in the blog's table files(id, data) under
# /sqlite/NNNNNN and the folder under /dir/NNNNNN. Then, PAIRS times, every
# column once, in an order rotated by one per pair so drift is shared:
#   A  wrk             -> nginx                    /blobs/NNNNNN (files, sendfile,
#                         open_file_cache max=4000 as static sites set it)
#   B  wrk             -> blobbench serve sqlite:DB  (default settings, + SERVE_OPTS)
#   E  wrk             -> blobbench serve sqlite:DB?locking_mode=exclusive  (the
#                         setting for a database nothing else writes: the server
#                         keeps writers out, and sends large blobs uncopied)
#   D  wrk             -> blobbench serve dir:DIR    (the exported folder)
#   R  wrk             -> bench/page-send-server.c range: the least a server
#                         can do per reply, the blob's bytes as one range of
#                         the database file by sendfile (as nginx sends a file)
#   F  wrk             -> bench/page-send-server.c runs: the same, but the
#                         bytes as SQLite's overflow pages hold them (a run
#                         after each page's 4-byte link) by vmsplice and
#                         splice, uncopied: the fastest any server of SQLite
#                         blobs can be here; F/A is the ceiling for B/A and
#                         E/A (R and F only when gcc is found)
#   G  wrk             -> Go server /sqlite/NNNNNN   (only when go is found)
#   H  wrk             -> Go server /dir/NNNNNN      (only when go is found)
#   C  blobbench load  -> nginx
# Each column is the median requests/s of its runs; the table gives the ratios
# to A and the targets (issues 14 and 31). A second table gives each server's
# own CPU time per request (utime + stime from /proc, its processes' only),
# the cost a server adds apart from wrk's, which shares the same cores:
#   10k: B/A >= 1.0, D/A >= 0.9      2M: D/A >= 1.0, B/A and E/A >= 0.95      C/A >= 1.0 at 10k
# Before any server starts, every file is dropped from the page cache and
# read back once (see `recache`), so all servers' data is cached the same
# way, as after a restart; CACHE=as-written keeps it as init and export left
# it. After each size's runs, bench/page-send-floor.c (when gcc is found)
# measures on the same database the kernel's own CPU to hand one blob over
# as SQLite's pages hold it (copied, by page reference, spliced per page)
# against one file range as sendfile does: the part of a SQLite server's
# extra cost per reply that no server can avoid, printed as a third table.
# Keys are random, over keep-alive connections. A run with any error (wrk's
# non-2xx or socket errors, a response shorter than the blob, blobbench
# load's error counts) stops the bench rather than being compared.
#
# The Go server is built once (cgo: go-sqlite3 compiles SQLite, about a
# minute) into ${XDG_CACHE_HOME:-~/.cache}/blobbench/ and reused while its
# sources and the go version stay the same. GO=/path/to/go picks the go;
# without one on PATH (or /usr/local/go/bin/go) columns G and H are skipped.
#
# Usage: bench/http-vs-nginx.sh    (SIZES="10k 2M" CONNS=32 THREADS=2 DURATION=10 PAIRS=3)
#        SERVE_OPTS="?mmap_size=2000M" bench/http-vs-nginx.sh                         (B with SQLite's own memory-mapped I/O)
#        DURATION=2 PAIRS=1 SIZES=10k bench/http-vs-nginx.sh                           (a quick check of the script)
#        CACHE=as-written SIZES=2M bench/http-vs-nginx.sh                             (the database's pages as SQLite wrote them)
#        PAGESIZE=65536 SIZES=2M bench/http-vs-nginx.sh                               (a database of 64 KiB pages: 16 times fewer per blob)
set -euo pipefail
# A failure inside $(...) stops the bench too.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"10k 2M"}
PAGESIZE=${PAGESIZE:-4096}
CONNS=${CONNS:-32}
DURATION=${DURATION:-10}
PAIRS=${PAIRS:-3}
THREADS=${THREADS:-2}
CACHE=${CACHE:-read}
case $CACHE in read | as-written) ;; *) echo "CACHE=$CACHE: say read (the default) or as-written" >&2; exit 2 ;; esac

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
PIDS=()
cleanup() {
    if [ -f "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
# The machine's floor under a SQLite server's cost per reply
# (bench/page-send-floor.c), built when a C compiler is found.
SEND_FLOOR=
SEND_SERVER=
if command -v gcc >/dev/null 2>&1; then
    gcc -O2 bench/page-send-floor.c -o "$WORK/page-send-floor"
    SEND_FLOOR=$WORK/page-send-floor
    # Columns R and F: the least a server can do per reply (page-send-server.c).
    gcc -O2 -pthread bench/page-send-server.c -o "$WORK/page-send-server"
    SEND_SERVER=$WORK/page-send-server
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Wait until URL answers 200 (at most 10 s), else show LOG and stop.
wait_for() {
    local _
    for _ in $(seq 50); do
        curl -sf "$1" -o /dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "no answer from $1" >&2
    if [ -n "${2:-}" ]; then cat "$2" >&2; fi
    exit 1
}

# --- The seed blog's Go server (columns G and H) ---
GO=${GO:-$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)}
GOSERVER=
GO_SKIP=
if [ -z "$GO" ]; then
    GO_SKIP="go not found (set GO=/path/to/go or put go on PATH)"
elif ! "$GO" version >/dev/null 2>&1; then
    GO_SKIP="$GO does not run"
else
    src=$PWD/bench/seed-go-server
    key=$({ cat "$src/main.go" "$src/go.mod" "$src/go.sum"; "$GO" version; } | sha256sum | cut -c1-16)
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/blobbench
    GOSERVER=$cache/seed-go-server-$key
    cc=$("$GO" env CC 2>/dev/null || true)
    cc=${cc%% *}
    if [ -x "$GOSERVER" ]; then
        :
    elif ! command -v "${cc:-gcc}" >/dev/null 2>&1; then
        GO_SKIP="no C compiler (${cc:-gcc}) for cgo: go-sqlite3 needs one"
        GOSERVER=
    else
        mkdir -p "$cache"
        echo "building the seed's Go server into $GOSERVER (cgo compiles SQLite: about a minute, once)" >&2
        t0=$(date +%s)
        if (cd "$src" && CGO_ENABLED=1 "$GO" build -o "$GOSERVER.tmp.$$" .) >"$WORK/go-build.log" 2>&1; then
            mv "$GOSERVER.tmp.$$" "$GOSERVER"
            echo "built in $(($(date +%s) - t0)) s" >&2
        else
            rm -f "$GOSERVER.tmp.$$"
            GO_SKIP="go build failed: $(tail -n 3 "$WORK/go-build.log" | tr '\n' ' ')"
            GOSERVER=
        fi
    fi
fi
COLS=(A B E D)
if [ -n "$SEND_SERVER" ]; then COLS+=(R F); fi
if [ -n "$GOSERVER" ]; then COLS+=(G H); fi
COLS+=(C)
if [ -n "$GO_SKIP" ]; then echo "columns G and H skipped: $GO_SKIP" >&2; fi

nsizes=$(wc -w <<<"$SIZES")
runs=$((nsizes * PAIRS * ${#COLS[@]}))
echo "$runs runs of ${DURATION} s (${#COLS[@]} columns x $PAIRS pairs x $nsizes sizes): about $(((runs * (DURATION + 1) + 59) / 60)) min, plus about 20 s per size to set up and warm" >&2

# One wrk run: requests/s to stdout. $1 port, $2 URL prefix, $3 the blob size
# (every response must carry at least that many bytes: the Go /sqlite handler
# answers 200 with an empty body when it finds nothing).
wrk_rps() {
    local out bytes=0 reqs=0
    out=$(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" -s "$WORK/random${2//\//_}.lua" "http://127.0.0.1:$1")
    # Errors would make the figure meaningless: stop rather than compare them.
    if grep -q "Non-2xx\|Socket errors" <<<"$out"; then echo "wrk saw errors on :$1$2: $out" >&2; exit 1; fi
    read -r bytes reqs < <(awk '/^summary / {print $2, $3}' <<<"$out") || true
    if ((reqs == 0 || bytes / reqs < $3)); then
        echo "wrk on :$1$2: $reqs responses of $((bytes / (reqs ? reqs : 1))) bytes on average, less than the blob ($3 bytes): $out" >&2
        exit 1
    fi
    awk '/^Requests\/sec/ {print $2}' <<<"$out"
}
# CPU time (clock ticks) the processes $@ have used so far.
cpu_ticks() {
    local p sum=0 t
    for p in "$@"; do
        # Fields 14 and 15 (utime, stime) after the ")" that ends the name.
        t=$(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')
        sum=$((sum + t))
    done
    echo "$sum"
}
TICK=$(getconf CLK_TCK)
# blobbench init/export/load, quiet unless it fails (it warns of a busy
# machine, which wrk and the servers beside it make every run here).
bb_quiet() {
    "$BB" "$@" >/dev/null 2>"$WORK/bb.err" || { cat "$WORK/bb.err" >&2; exit 1; }
}
# Every server's files enter the page cache the same way, as a server's data
# is after a restart: each dropped from the cache (posix_fadvise DONTNEED,
# which only forgets clean cached pages, it writes nothing), then read once
# from start to end. Left as written, the database's pages stay in the 4 KiB
# pieces SQLite wrote them in, while the exported files were written in large
# writes, and a read from disk brings either in as 2 MiB folios here
# (read_ahead_kb 8192). serve maps a blob's pages: mapping 4 KiB pages costs
# about ten times what mapping 2 MiB folios does (touching a 600 MB map: 55 ms
# against 5 ms), and serving the same 300 x 2 MB database cached as written
# gave about a tenth fewer requests/s than cached as read back (median of 5
# pairs, wrk -t2 -c32). CACHE=as-written skips this, to see that state.
recache() {
    python3 - "$@" <<'PY'
import os, sys
for top in sys.argv[1:]:
    paths = [top] if os.path.isfile(top) else [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs]
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        while os.read(fd, 1 << 22):
            pass
        os.close(fd)
PY
}
load_rps() {
    bb_quiet load --urls "$WORK/urls-A.txt" -c "$CONNS" -t "${DURATION}s" --json "$WORK/load.json"
    python3 -c "
import json, sys
l = json.load(open('$WORK/load.json'))['tables']['levels'][0]
if sum(l['errors'].values()): sys.exit('blobbench load saw errors: %s' % l['errors'])
print(l['requests_per_s'])"
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for size in $SIZES; do
    case $size in
        10k) count=2000 ;;
        2M) count=300 ;;
        *) count=${COUNT:-1000} ;;
    esac
    echo "size $size: $count blobs" >&2
    db=$WORK/b-$size.db
    dir=$WORK/b-$size.dir
    bb_quiet init "$db" --count "$count" --size "$size" --pagesize "$PAGESIZE"
    bb_quiet export "$db" "$dir"
    chmod -R a+rX "$dir"
    minlen=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT min(length(v)) FROM kv').fetchone()[0])" "$db")

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
    # nginx as people run it for static files: open descriptors, sizes and
    # mtimes kept (serve keeps descriptors too, see --open-file-valid).
    open_file_cache max=4000 inactive=20s;
    open_file_cache_valid 30s;
    open_file_cache_min_uses 2;
    open_file_cache_errors on;
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
    godb=
    if [ -n "$GOSERVER" ]; then
        # The blog's table, filled from blobbench's kv(k, v) with the exported file names as ids.
        godb=$WORK/files-$size.db
        python3 - "$godb" "$db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("CREATE TABLE files( id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL )")
con.execute("ATTACH DATABASE ? AS bb", (sys.argv[2],))
con.execute("INSERT INTO files(id, data) SELECT printf('%06d', k), v FROM bb.kv ORDER BY k")
con.commit()
PY
    fi
    if [ "$CACHE" = read ]; then recache "$db" "$dir" ${godb:+"$godb"}; fi
    rm -f "$WORK/nginx.pid"
    "$NGINX" -c "$WORK/nginx.conf" -p "$WORK/nginx"
    bb_port=$(free_port)
    "$BB" serve "sqlite:$db${SERVE_OPTS:-}" --listen "127.0.0.1:$bb_port" 2>"$WORK/serve-sqlite.log" &
    bb_pid=$!
    PIDS+=("$bb_pid")
    be_port=$(free_port)
    "$BB" serve "sqlite:$db?locking_mode=exclusive" --listen "127.0.0.1:$be_port" 2>"$WORK/serve-exclusive.log" &
    be_pid=$!
    PIDS+=("$be_pid")
    bd_port=$(free_port)
    "$BB" serve "dir:$dir" --listen "127.0.0.1:$bd_port" 2>"$WORK/serve-dir.log" &
    bd_pid=$!
    PIDS+=("$bd_pid")
    # Column -> "port URL-prefix" of its server.
    declare -A url=([A]="$ng_port /blobs/" [B]="$bb_port /blobs/" [E]="$be_port /blobs/" [D]="$bd_port /blobs/")
    declare -A procs=()
    if [ -n "$SEND_SERVER" ]; then
        for col in R F; do
            port=$(free_port)
            "$SEND_SERVER" "$db" "$minlen" "$port" "$([ "$col" = R ] && echo range || echo runs)" &
            procs[$col]=$!
            PIDS+=("${procs[$col]}")
            url[$col]="$port /blobs/"
            wait_for "http://127.0.0.1:$port/blobs/000001"
        done
    fi
    go_pid=
    if [ -n "$GOSERVER" ]; then
        go_port=$(free_port)
        "$GOSERVER" -db "$godb" -static "$dir" -listen "127.0.0.1:$go_port" 2>"$WORK/go.log" &
        go_pid=$!
        PIDS+=("$go_pid")
        url[G]="$go_port /sqlite/"
        url[H]="$go_port /dir/"
    fi
    wait_for "http://127.0.0.1:$ng_port/blobs/000001" "$WORK/nginx/error.log"
    wait_for "http://127.0.0.1:$bb_port/healthz" "$WORK/serve-sqlite.log"
    wait_for "http://127.0.0.1:$be_port/healthz" "$WORK/serve-exclusive.log"
    wait_for "http://127.0.0.1:$bd_port/healthz" "$WORK/serve-dir.log"
    # Column -> the processes whose CPU time is its server's.
    procs+=([A]="$(pgrep -P "$(cat "$WORK/nginx.pid")" | tr '\n' ' ')" [B]=$bb_pid [E]=$be_pid [D]=$bd_pid)
    if [ -n "$go_pid" ]; then procs[G]=$go_pid; procs[H]=$go_pid; fi
    if [ -n "$go_pid" ]; then wait_for "http://127.0.0.1:$go_port/dir/000001" "$WORK/go.log"; fi

    for col in "${COLS[@]}"; do
        [ "$col" = C ] && continue
        read -r port prefix <<<"${url[$col]}"
        # The same blob from every server: the first and the last key (the
        # floor servers send other bytes of the database, of the same length).
        for k in 000001 "$(printf %06d "$count")"; do
            if [ "$col" = R ] || [ "$col" = F ]; then
                len=$(curl -sf "http://127.0.0.1:$port$prefix$k" | wc -c)
                if [ "$len" != "$minlen" ]; then echo "column $col: $len bytes for $prefix$k, not $minlen" >&2; exit 1; fi
                continue
            fi
            curl -sf "http://127.0.0.1:$port$prefix$k" -o "$WORK/got"
            if ! cmp -s "$WORK/got" "$dir/$k"; then echo "column $col: $prefix$k differs from the exported file" >&2; exit 1; fi
        done
        [ -f "$WORK/random${prefix//\//_}.lua" ] || cat >"$WORK/random${prefix//\//_}.lua" <<EOF
local n = $count
math.randomseed(42)
request = function()
  return wrk.format("GET", string.format("$prefix%06d", math.random(n)))
end
done = function(summary, latency, requests)
  io.write(string.format("summary %d %d\n", summary.bytes, summary.requests))
end
EOF
        for k in $(seq "$count"); do printf 'http://127.0.0.1:%s%s%06d\n' "$port" "$prefix" "$k"; done >"$WORK/urls-$col.txt"
        # Warm: every blob once through each server.
        bb_quiet load --urls "$WORK/urls-$col.txt" --order sequential -c 4 -n "$count"
    done

    for pair in $(seq "$PAIRS"); do
        # Rotate the order: A B D G H C, then B D G H C A, ...
        line=
        for step in $(seq 0 $((${#COLS[@]} - 1))); do
            col=${COLS[$(((pair - 1 + step) % ${#COLS[@]}))]}
            cpu=-
            if [ "$col" = C ]; then
                r=$(load_rps)
            else
                read -r port prefix <<<"${url[$col]}"
                # shellcheck disable=SC2086 # a list of pids
                t0=$(cpu_ticks ${procs[$col]})
                r=$(wrk_rps "$port" "$prefix" "$minlen")
                # shellcheck disable=SC2086
                t1=$(cpu_ticks ${procs[$col]})
                # Milliseconds of the server's CPU per request.
                cpu=$(awk -v t="$((t1 - t0))" -v hz="$TICK" -v r="$r" -v d="$DURATION" 'BEGIN {printf "%.4f", t * 1000 / hz / (r * d)}')
            fi
            printf '%s\t%s\t%s\t%s\t%s\n' "$size" "$pair" "$col" "$r" "$cpu" >>"$RESULTS"
            line+=" $col=${r%.*}"
        done
        echo "size $size pair $pair:$line" >&2
    done
    kill "$(cat "$WORK/nginx.pid")"; rm -f "$WORK/nginx.pid"
    for p in $bb_pid $be_pid $bd_pid $go_pid ${procs[R]:-} ${procs[F]:-}; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    if [ -n "$SEND_FLOOR" ]; then
        # About 2 GB handed over per way and round, within 1,000 to 20,000
        # blobs (a 10 KB size hands over 200 MB).
        blobs=$((2000000000 / minlen)); blobs=$((blobs < 1000 ? 1000 : blobs > 20000 ? 20000 : blobs))
        { echo "size $size:"; "$SEND_FLOOR" "$db" "$minlen" "$blobs"; } >>"$WORK/send-floor.txt"
    fi
    PIDS=()
    unset url procs
    rm -rf "$db" "$dir" "${godb:-}" "$WORK"/urls-*.txt "$WORK"/random*.lua
done

echo
echo "versions: $("$NGINX" -v 2>&1); $(wrk -v 2>&1 | head -n 1 | sed 's/ Copyright.*//' || true); $(if [ -n "$GO" ]; then "$GO" version; else echo "go: none"; fi); blobbench $(git describe --always --dirty 2>/dev/null || echo unknown)"
python3 - "$RESULTS" "$CONNS" "$THREADS" "$DURATION" "$PAIRS" "${SERVE_OPTS:-}" "$GO_SKIP" "$CACHE" "$PAGESIZE" <<'PY'
import sys, statistics as st
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines() if l]
conns, threads, dur, pairs, opts, go_skip, cache, pagesize = sys.argv[2:10]
cols = [c for c in "ABEDRFGHC" if any(r[2] == c for r in rows)]
names = {"A": "A nginx", "B": "B serve db", "E": "E db exclusive", "D": "D serve dir", "R": "R floor range",
         "F": "F floor runs", "G": "G Go /sqlite", "H": "H Go /dir", "C": "C load>nginx"}
print(f"HTTP on 127.0.0.1: wrk -t{threads} -c{conns} (blobbench load -c{conns} for C), {dur} s per run, "
      f"median of {pairs} rotations, requests/s; B = sqlite:DB{opts}, pages of {pagesize} bytes; files cached: "
      + ("dropped and read back before the servers start" if cache == "read" else "as init and export wrote them"))
print(f"{'size':5}" + "".join(f" {names[c]:>12}" for c in cols)
      + "".join(f" {c + '/A':>5}" for c in cols if c != "A"))
med = {}
for size in dict.fromkeys(r[0] for r in rows):
    m = {c: st.median(float(r[3]) for r in rows if r[0] == size and r[2] == c) for c in cols}
    med[size] = m
    print(f"{size:5}" + "".join(f" {m[c]:12.0f}" for c in cols)
          + "".join(f" {m[c] / m['A']:5.2f}" for c in cols if c != "A"))
# Each column's ratio to A pair by pair (same rotation), and the median's
# sign-test interval over the pairs with its exact coverage (3 pairs: min..max, 75%).
sys.path.insert(0, "bench")  # the scripts run from the repository's root
from sign_test import sign_test
print("ratio to A paired by rotation: median [sign-test interval, coverage]")
for size in med:
    cells = []
    for c in cols:
        if c == "A":
            continue
        by_pair = {r[1]: float(r[3]) for r in rows if r[0] == size and r[2] == c}
        a = {r[1]: float(r[3]) for r in rows if r[0] == size and r[2] == "A"}
        ratios = [by_pair[p] / a[p] for p in by_pair if p in a]
        if len(ratios) > 1:
            lo, hi, cover = sign_test(ratios)
            cells.append(f"{c}/A {st.median(ratios):.2f} [{lo:.2f}-{hi:.2f}, {cover:.0%}]")
    print(f"{size:5} " + "  ".join(cells))
print("server CPU per request, ms: median over the pairs (ratio to A's)")
for size in med:
    cells = []
    for c in cols:
        cpu = [float(r[4]) for r in rows if r[0] == size and r[2] == c and r[4] != "-"]
        if cpu:
            cells.append((c, st.median(cpu)))
    a = dict(cells).get("A")
    print(f"{size:5} " + "  ".join(f"{c} {v:.3f}" + (f" ({v / a:.2f}x)" if a and c != "A" else "") for c, v in cells))
import os
floor = os.path.join(os.path.dirname(sys.argv[1]), "send-floor.txt")
if os.path.exists(floor):
    print("floor (bench/page-send-floor.c, same database, pipe to /dev/null, no socket): kernel CPU to hand one "
          "blob's bytes over, as SQLite's pages hold them, against one file range as nginx's sendfile does")
    print(open(floor).read().rstrip())
else:
    print("floor: not measured (no gcc)")
if go_skip:
    print(f"G, H skipped: {go_skip}")
targets = [("10k", "B", 1.0), ("10k", "D", 0.9), ("2M", "D", 1.0), ("2M", "B", 0.95), ("2M", "E", 0.95),
           ("10k", "C", 1.0)]
print("targets: 10k: B/A >= 1.0, D/A >= 0.9; 2M: D/A >= 1.0, B/A and E/A >= 0.95; C/A >= 1.0 at 10k  ->  "
      + ", ".join(f"{s} {c}/A {med[s][c] / med[s]['A']:.2f} {'met' if med[s][c] / med[s]['A'] >= t else 'NOT met'}"
                  for s, c, t in targets if s in med))
PY

#!/usr/bin/env bash
# How blobbench's costs grow with the number of blobs: sqlite (x.db), dir
# (dir:) and tree (tree:) datasets at each scale, each as time per blob and
# in total, with every process's peak RSS (/usr/bin/time):
#   init; export sqlite -> dir/tree and back (dir/tree -> sqlite);
#   a warm random-read run (blobbench warms the run's keys right before each
#   repetition): its median time per read and its start-up cost (the
#   result's `startup`: process start to the first timed read, cache
#   preparation left out);
#   serve: from exec until it answers its first GET, and its RSS then;
#   kvtest's own init and export of the same count and size, and its warm
#   random read of blobbench's database, the peers;
#   the machine's floor: a random 4 KiB pread of the same warm database file
#   (bench/page-read-floor.c, row "pread"), the read SQLite's pager makes.
# Then a table of how each grows: the per-blob time at N over the per-blob
# time at the smallest scale (1.00 = grows exactly with N), and RSS as
# bytes per added blob.
#
# Usage: bench/scale.sh                         (SCALES="10k 100k 1M 10M")
#        SCALES="10k 100k 1M" LOCK=/path/bench.lock bench/scale.sh
#        SMOKE=1 bench/scale.sh                  (tiny scales, a check of the script)
# SIZE: blob bytes (default 1000); SIZE_10M: at 10M and above (default 100,
#   so 10M fits the disk). FILES_UPTO: the largest scale dir and tree run at
#   (default 1M: 10M files of 100 B take ~40 GB of 4 KB blocks and 20M inodes
#   for both, more than this machine's 16M; sqlite runs every scale).
# READS: reads per repetition of the read run (default 100k, or N if fewer).
# READ_PAIRS: rounds of the paired read growth, smallest scale against the
#   largest (default 5). EXPORT_PAIRS: rounds of blobbench's export to a
#   folder against kvtest's, at each scale (default 2; with KVTEST).
# KVTEST: a kvtest binary (built as bench/vs-kvtest.sh builds it); without
#   one the kvtest rows are skipped and the table says so.
# LOCK: a lock file; each timed command runs under `flock LOCK`, so only one
#   process on the machine times at a time.
# WORK: where the datasets go (default a new folder under /var/tmp, removed
#   at the end unless KEEP=1).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${SMOKE:-}" ]; then
    SCALES=${SCALES:-"1k 3k"}
    READS=${READS:-500}
fi
SCALES=${SCALES:-"10k 100k 1M 10M"}
SIZE=${SIZE:-1000}
SIZE_10M=${SIZE_10M:-100}
FILES_UPTO=${FILES_UPTO:-1M}
READS=${READS:-100k}
READ_PAIRS=${READ_PAIRS:-5}
EXPORT_PAIRS=${EXPORT_PAIRS:-2}
PORT=${PORT:-18931}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/var/tmp}/scale.XXXXXX")}
mkdir -p "$WORK"
echo "work folder: $WORK" >&2
BB=${BB:-}
if [ -z "$BB" ]; then
    cargo build --release --quiet
    BB=$PWD/target/release/blobbench
fi
# The machine's floor under SQLite's read (bench/page-read-floor.c), built
# when a C compiler is found.
FLOOR=
if command -v gcc >/dev/null 2>&1; then
    gcc -O2 bench/page-read-floor.c -o "$WORK/page-read-floor"
    FLOOR=$WORK/page-read-floor
else
    echo "no gcc: the pread floor rows are skipped" >&2
fi
ROWS=$WORK/rows.tsv
: >"$ROWS"
# Paired measures: store, measure, one side, the other (ratio = one/other).
PAIRS_FILE=$WORK/pairs.tsv
: >"$PAIRS_FILE"
SERVER=
cleanup() {
    if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; fi
    if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# A count with k/M suffix as a number.
number() {
    case $1 in
        *k) echo $((${1%k} * 1000)) ;;
        *M) echo $((${1%M} * 1000000)) ;;
        *) echo "$1" ;;
    esac
}

# One row: store, scale (blobs), measure, value.
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$ROWS"; }

# Runs a command under `flock LOCK` when LOCK is set, else as it is.
locked() {
    if [ -n "${LOCK:-}" ]; then flock "$LOCK" "$@"; else "$@"; fi
}

# Reads per repetition at a scale of $1 blobs: READS, or every blob if fewer.
reads_at() {
    local reads
    reads=$(number "$READS")
    if [ "$reads" -gt "$1" ]; then reads=$1; fi
    echo "$reads"
}

# Runs a command under the lock (if any) and /usr/bin/time; records its wall
# seconds and peak RSS as STORE N NAME. Its output goes to $WORK/last.out.
timed() {
    local store=$1 n=$2 name=$3
    shift 3
    # Each step starts with no step's dirty pages still being written: the
    # files an init or export leaves unflushed (a million of them) would
    # otherwise be written back during the next step and charged to it.
    sync
    locked /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$@" >"$WORK/last.out" 2>&1 || {
        echo "failed: $* (see below)" >&2
        cat "$WORK/last.out" >&2
        exit 1
    }
    read -r wall rss <"$WORK/time.txt"
    row "$store" "$n" "$name s" "$wall"
    row "$store" "$n" "$name peak RSS KB" "$rss"
}

# The warm random-read run of a target: per-read median and start-up cost.
read_run() {
    local store=$1 n=$2 target=$3
    local reads
    reads=$(reads_at "$n")
    timed "$store" "$n" "run" "$BB" run "$target" --count "$reads" --random --repeat 3 \
        --json "$WORK/run.json"
    python3 - "$WORK/run.json" "$store" "$n" >>"$ROWS" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
run = doc["runs"][0]
store, n = sys.argv[2], sys.argv[3]
print(f"{store}\t{n}\tread us\t{run['summary']['time_per_op_ns']['median'] / 1000:.3f}")
print(f"{store}\t{n}\trun start-up s\t{run['startup']['ns'] / 1e9:.4f}")
# SQLite's pager: pages it had to read (from the kernel's page cache) per
# blob read; what its own 1000-page cache holds makes this grow with N.
misses = [r["engine"]["page_cache_misses"] / r["ops"] for r in run["repetitions"]
          if (r.get("engine") or {}).get("page_cache_misses") is not None and r["ops"]]
if misses:
    print(f"{store}\t{n}\tpager reads per read\t{sorted(misses)[len(misses) // 2]:.3f}")
EOF
}

# kvtest's own warm random read of the same database, the peer for the read
# run's growth: as many reads as blobbench's run, once to warm the pages they
# touch, then three times; the median of kvtest's "Microseconds per BLOB read".
kvtest_read() {
    local n=$1 db=$2 reads times=()
    reads=$(reads_at "$n")
    local i us
    for i in 0 1 2 3; do
        us=$(locked "$KVTEST" run "$db" --count "$reads" --random | awk '/Microseconds per BLOB read/ {print $5}')
        if [ -z "$us" ]; then echo "kvtest run $db printed no time per read" >&2; exit 1; fi
        if [ "$i" -gt 0 ]; then times+=("$us"); fi
    done
    row kvtest "$n" "read us" "$(printf '%s\n' "${times[@]}" | sort -g | sed -n 2p)"
}

# The median per-read time (us) of one warm random-read run of target $2
# holding $1 blobs, for the paired growth.
read_median() {
    locked "$BB" run "$2" --count "$(reads_at "$1")" --random --repeat 3 -q \
        --json "$WORK/pair.json" >/dev/null 2>&1 || {
        echo "failed: $BB run $2" >&2
        exit 1
    }
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["summary"]["time_per_op_ns"]["median"] / 1000)' "$WORK/pair.json"
}

# blobbench's export of database $3 ($1 blobs) to a flat folder against
# kvtest's, side by side: EXPORT_PAIRS rounds of one of each, back to back,
# in alternating order (each filesystem's state after a million new files
# differs: the later of two exports can be the faster or the slower). The
# first blobbench export goes to $4, which the export back reads. Each
# pair's ratio goes to PAIRS_FILE; the rows hold the medians.
export_pairs() {
    local n=$1 scale=$2 db=$3 first=$4 p bb kv flushed
    for p in $(seq "$EXPORT_PAIRS"); do
        local to=$first
        [ "$p" = 1 ] || to=$first-$p
        mkdir -p "$WORK/kv-dir-$scale-$p"
        if [ $((p % 2)) = 1 ]; then
            timed dir "$n" "export from sqlite" "$BB" export "$db" "dir:$to"
            bb=$wall
            timed kvtest "$n" "export from sqlite" "$KVTEST" export "$db" "$WORK/kv-dir-$scale-$p"
        else
            timed kvtest "$n" "export from sqlite" "$KVTEST" export "$db" "$WORK/kv-dir-$scale-$p"
        fi
        # blobbench's export ends with syncfs (the copy is on disk when
        # it returns); kvtest's does not: its time with the sync that
        # makes it as durable is the like-for-like figure.
        # (timed leaves the step's wall seconds in $wall.)
        flushed=$( { /usr/bin/time -f '%e' sync; } 2>&1 )
        kv=$(echo "$wall + $flushed" | bc -l)
        row kvtest "$n" "export from sqlite + sync s" "$kv"
        if [ $((p % 2)) = 0 ]; then
            timed dir "$n" "export from sqlite" "$BB" export "$db" "dir:$to"
            bb=$wall
        fi
        printf '%s\texport %s blobbench/kvtest+sync\t%s\t%s\n' dir "$scale" "$bb" "$kv" >>"$PAIRS_FILE"
    done
}

# serve's start-up: from exec until GET /blobs/1 answers 200, and its RSS
# (and peak RSS) then.
serve_start() {
    local store=$1 n=$2 target=$3
    locked python3 - "$BB" "$target" "$PORT" >>"$ROWS" "$store" "$n" <<'EOF'
import subprocess, sys, time, urllib.request
bb, target, port = sys.argv[1], sys.argv[2], sys.argv[3]
store, n = sys.argv[4], sys.argv[5]
started = time.monotonic()
server = subprocess.Popen([bb, "serve", target, "--listen", f"127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while True:
        if server.poll() is not None:
            sys.exit(f"serve {target} exited with {server.returncode} before answering")
        if time.monotonic() - started > 120:
            sys.exit(f"serve {target} did not answer within 120 s")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/blobs/1", timeout=5) as r:
                if r.status == 200:
                    r.read()
                    break
        except OSError:
            time.sleep(0.005)
    answered = time.monotonic() - started
    status = dict(line.split(":", 1) for line in open(f"/proc/{server.pid}/status"))
    kb = lambda field: int(status[field].split()[0])
    print(f"{store}\t{n}\tserve start-up s\t{answered:.4f}")
    print(f"{store}\t{n}\tserve RSS KB\t{kb('VmRSS')}")
    print(f"{store}\t{n}\tserve peak RSS KB\t{kb('VmHWM')}")
finally:
    server.terminate()
    server.wait()
EOF
}

# Nothing is removed until the end (the EXIT trap removes WORK): on a
# filesystem mounted with online discard (this VM's root is), deleting a
# million files keeps the journal busy with discards for minutes, and every
# step timed after it (an export creating as many files) would pay for that
# instead of for its own work. Each step writes into a name of its own.

for scale in $SCALES; do
    n=$(number "$scale")
    size=$SIZE
    if [ "$n" -ge 10000000 ]; then size=$SIZE_10M; fi
    files=1
    if [ "$n" -gt "$(number "$FILES_UPTO")" ]; then files=; fi
    echo "== $scale blobs of $size bytes$([ -z "$files" ] && echo ', sqlite only')" >&2
    row all "$n" "blob bytes" "$size"
    db=$WORK/x-$scale.db
    timed sqlite "$n" init "$BB" init "$db" --count "$n" --size "$size"
    read_run sqlite "$n" "$db"
    if [ -n "$FLOOR" ]; then
        floor_us=$(locked "$FLOOR" "$db" "$(number "$READS")")
        row pread "$n" "read us" "$floor_us"
    fi
    serve_start sqlite "$n" "$db"
    if [ -n "${KVTEST:-}" ]; then
        timed kvtest "$n" init "$KVTEST" init "$WORK/kv-$scale.db" --count "$n" --size "$size"
        kvtest_read "$n" "$db"
    fi
    if [ -n "$files" ]; then
        for kind in dir tree; do
            folder=$WORK/$kind-$scale
            timed "$kind" "$n" init "$BB" init "$kind:$folder" --count "$n" --size "$size"
            read_run "$kind" "$n" "$kind:$folder"
            serve_start "$kind" "$n" "$kind:$folder"
            if [ "$kind" = dir ] && [ -n "${KVTEST:-}" ]; then
                export_pairs "$n" "$scale" "$db" "$folder-exported"
            else
                timed "$kind" "$n" "export from sqlite" "$BB" export "$db" "$kind:$folder-exported"
            fi
            timed "$kind" "$n" "export to sqlite" "$BB" export "$kind:$folder-exported" "$WORK/back-$kind-$scale.db"
        done
    fi
    # The first and last scales, for the paired growth below.
    SMALLEST=${SMALLEST:-$n}
    SMALLEST_NAME=${SMALLEST_NAME:-$scale}
    LARGEST=$n
    LARGEST_NAME=$scale
    LARGEST_FILES=${files:+$n}
done

# The warm read's growth from the smallest scale to the largest, paired:
# READ_PAIRS rounds of one run at each, in alternating order, one right
# after the other, so a change in the machine's speed between scales (seen
# here: the same run's per-read time moving 1.6x within minutes) falls on
# both sides of a ratio.
if [ "$LARGEST" != "$SMALLEST" ]; then
    for store in sqlite dir tree; do
        small=$WORK/x-$SMALLEST_NAME.db
        large=$WORK/x-$LARGEST_NAME.db
        if [ "$store" != sqlite ]; then
            [ "${LARGEST_FILES:-}" = "$LARGEST" ] || continue
            small=$store:$WORK/$store-$SMALLEST_NAME
            large=$store:$WORK/$store-$LARGEST_NAME
        fi
        for p in $(seq "$READ_PAIRS"); do
            if [ $((p % 2)) = 1 ]; then
                a=$(read_median "$SMALLEST" "$small")
                b=$(read_median "$LARGEST" "$large")
            else
                b=$(read_median "$LARGEST" "$large")
                a=$(read_median "$SMALLEST" "$small")
            fi
            printf '%s\tread us %s/%s\t%s\t%s\n' "$store" "$LARGEST_NAME" "$SMALLEST_NAME" \
                "$b" "$a" >>"$PAIRS_FILE"
        done
    done
fi

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$ROWS" "${KVTEST:+kvtest}" "$PAIRS_FILE" <<'EOF'
import collections, statistics, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    store, n, measure, value = line.rstrip("\n").split("\t")
    rows[(store, measure)].setdefault(int(n), []).append(float(value))
# A measure taken more than once at a scale (the paired exports) is its median.
for cells in rows.values():
    for n, values in cells.items():
        cells[n] = statistics.median(values)
if not sys.argv[2]:
    print("kvtest: not run (set KVTEST to a kvtest binary built as bench/vs-kvtest.sh builds it)")
scales = sorted({n for cells in rows.values() for n in cells})
label = lambda n: f"{n // 1000000}M" if n % 1000000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)
print(f"{'store':7} {'measure':22}" + "".join(f"{label(n):>20}" for n in scales) + "   growth")
per_blob = lambda measure: measure.endswith(" s") and not measure.endswith("start-up s")
for (store, measure), cells in sorted(rows.items()):
    if store == "all":
        continue
    out = []
    for n in scales:
        v = cells.get(n)
        if v is None:
            out.append("-")
        elif per_blob(measure):
            out.append(f"{v:.2f}s {v / n * 1e6:.2f}us")
        else:
            out.append(f"{v:g}")
    ns = [n for n in scales if n in cells]
    growth = ""
    if len(ns) >= 2:
        a, b = ns[0], ns[-1]
        if per_blob(measure):
            growth = f"per blob {label(b)}/{label(a)}: {(cells[b] / b) / (cells[a] / a):.2f}x"
        elif measure in ("read us", "pager reads per read"):
            growth = f"{label(b)}/{label(a)}: {cells[b] / cells[a]:.2f}x"
        elif measure.endswith("KB"):
            growth = f"{(cells[b] - cells[a]) * 1024 / (b - a):.1f} B per added blob"
        else:
            growth = f"{label(b)}/{label(a)}: {cells[b] / max(cells[a], 1e-9):.2f}x"
    print(f"{store:7} {measure:22}" + "".join(f"{c:>20}" for c in out) + f"   {growth}")
# SQLite's read grows for reasons of its own as the database outgrows the
# caches (its page cache, then the CPU's): the part of blobbench's growth
# that is blobbench's is its growth over kvtest's on the same databases.
ours, peer = rows.get(("sqlite", "read us"), {}), rows.get(("kvtest", "read us"), {})
both = [n for n in scales if n in ours and n in peer]
if len(both) >= 2:
    a, b = both[0], both[-1]
    g_ours, g_peer = ours[b] / ours[a], peer[b] / peer[a]
    print(f"sqlite read growth {label(b)}/{label(a)}: blobbench {g_ours:.2f}x, kvtest {g_peer:.2f}x "
          f"on the same databases; blobbench's beyond kvtest's {g_ours / g_peer:.2f}x")
floor = rows.get(("pread", "read us"), {})
if len(floor) >= 2:
    a, b = min(floor), max(floor)
    print(f"floor: a random 4 KiB pread of the warm database file grows {floor[b] / floor[a]:.2f}x "
          f"from {label(a)} to {label(b)} ({floor[a]:.2f} -> {floor[b]:.2f} us), "
          f"adding {floor[b] - floor[a]:.2f} us a read that no SQLite reader avoids")
pairs = collections.defaultdict(list)
for line in open(sys.argv[3]):
    store, measure, one, other = line.rstrip("\n").split("\t")
    pairs[(store, measure)].append(float(one) / float(other))
for (store, measure), ratios in pairs.items():
    print(f"{store} {measure}, paired ({len(ratios)} rounds side by side, alternating order): "
          f"median {statistics.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f} "
          f"(each: {' '.join(f'{r:.2f}' for r in ratios)})")
EOF

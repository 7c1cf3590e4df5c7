#!/usr/bin/env bash
# blobbench vs kvtest, side by side on one dataset.
#
# Builds kvtest.c (Debian's sqlite3 source package, test/kvtest.c) against the
# very SQLite amalgamation blobbench bundles (libsqlite3-sys's sqlite3.c) with
# the same -D flags and -O3 that libsqlite3-sys's build uses, then on one
# COUNT x SIZE dataset runs both tools for SQL, blob API, mmap + blob API and
# dir reads, random and ascending, PAIRS times in A B, B A order (who goes
# first alternates), warming the target's page cache right before every run.
#
# Both read the same key sequence: for random order blobbench runs with
# --random-draws (kvtest's own generator, keys drawn with replacement) rather
# than its default permutation; ascending is the same in both.
#
# kvtest's "Microseconds per BLOB read" is its whole-run time (open, pragmas,
# reads, commit, close) divided by the count, so it is compared with
# blobbench's whole-run time (whole_run_ns) over the same count. blobbench's
# own per-operation median is printed beside it.
#
# Usage: bench/vs-kvtest.sh            (COUNT=100k SIZE=10k VARIANCE=2k PAIRS=5)
#        WORK=/var/tmp/x PAIRS=11 PIN=1 bench/vs-kvtest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-100k}
SIZE=${SIZE:-10k}
VARIANCE=${VARIANCE:-2k}
PAIRS=${PAIRS:-5}
MMAP=${MMAP:-2000M}
# PIN=1 runs both tools on CPU 1 only (taskset), which removes scheduler
# migrations from the noise; both get the same treatment.
RUNNER=()
if [ -n "${PIN:-}" ]; then RUNNER=(taskset -c "$PIN"); fi
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/var/tmp}/vs-kvtest.XXXXXX")}
mkdir -p "$WORK"
echo "work folder: $WORK" >&2

cargo build --release --quiet
BB=$PWD/target/release/blobbench

# --- kvtest.c from Debian's sqlite3 source package -------------------------
if [ ! -f "$WORK/kvtest.c" ]; then
    if ! grep -rqs 'deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        # Reuse the machine's own Debian source entries, adding deb-src.
        sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
            > /etc/apt/sources.list.d/blobbench-deb-src.sources
    fi
    apt-get update -qq
    (cd "$WORK" && apt-get source --download-only -qq sqlite3 >/dev/null 2>&1)
    orig=$(ls "$WORK"/sqlite3_*.orig.tar.xz | head -1)
    tar -C "$WORK" -xf "$orig" --wildcards '*/test/kvtest.c'
    cp "$WORK"/sqlite3-*/test/kvtest.c "$WORK/kvtest.c"
fi

# --- built against the amalgamation blobbench bundles, with its flags ------
# shellcheck source=bench/sqlite-amalgamation.sh
. bench/sqlite-amalgamation.sh
build_against_sqlite "$WORK/kvtest" "$WORK/kvtest.c"
KV=$WORK/kvtest

# --- one dataset, read by both ------------------------------------------------
DB=$WORK/test1.db
DIR=$WORK/test1.dir
if [ ! -f "$DB" ]; then
    "$BB" init "$DB" --count "$COUNT" --size "$SIZE" --variance "$VARIANCE"
    "$BB" export "$DB" "$DIR"
fi
# And the other way round: a database made by kvtest, read and verified-by-scan by blobbench.
if [ ! -f "$WORK/kv-made.db" ]; then
    "$KV" init "$WORK/kv-made.db" --count 2000 --size 10000 --variance 2000
fi
echo "blobbench reads the kvtest database: $("$BB" run "$WORK/kv-made.db" --random --blob-api --repeat 1 | grep 'per BLOB')" >&2

N=$(python3 -c "import sqlite3; print(sqlite3.connect('file:$DB?mode=ro', uri=True).execute('select count(*) from kv').fetchone()[0])")
echo "kvtest reads the blobbench database: $("$KV" stat "$DB" | tr '\n' ' ')" >&2

warm() { if [ -d "$1" ]; then find "$1" -type f -print0 | xargs -0 cat > /dev/null; else cat "$1"* > /dev/null; fi; }

RESULTS=$WORK/results.tsv
: > "$RESULTS"
for order in random asc; do
    for mode in sql blob-api mmap dir; do
        case $mode in
            sql) target=$DB; opts=() ;;
            blob-api) target=$DB; opts=(--blob-api) ;;
            mmap) target=$DB; opts=(--blob-api --mmap "$MMAP") ;;
            dir) target=$DIR; opts=() ;;
        esac
        bb_order=--$order
        [ "$order" = random ] && bb_order=--random-draws
        run_kvtest() {
            warm "$target"
            kv=$("${RUNNER[@]}" "$KV" run "$target" --count "$N" "--$order" "${opts[@]}" | awk '/Microseconds per BLOB read/ {print $5}')
        }
        run_blobbench() {
            # blobbench warms the target itself right before timing. The last
            # pair's result goes first: blobbench would keep it beside the new
            # one under a dated name, a file per run left in $WORK.
            rm -f "$WORK/bb.json"
            "${RUNNER[@]}" "$BB" run "$target" --count "$N" "$bb_order" "${opts[@]}" --repeat 1 --json "$WORK/bb.json" > /dev/null
            read -r whole perop < <(python3 -c "
import json; r = json.load(open('$WORK/bb.json'))['runs'][0]; rep = r['repetitions'][0]
print(rep['whole_run_ns'] / rep['ops'] / 1000, r['summary']['time_per_op_ns']['median'] / 1000)")
        }
        for pair in $(seq "$PAIRS"); do
            # A B, B A, A B, ...: whichever runs second in a pair alternates, so
            # drift within a pair cancels out over the pairs.
            if [ $((pair % 2)) = 1 ]; then run_kvtest; run_blobbench; else run_blobbench; run_kvtest; fi
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$order" "$mode" "$pair" "$kv" "$whole" "$perop" >> "$RESULTS"
            echo "$order $mode pair $pair: kvtest $kv µs, blobbench $whole µs (per-op $perop µs)" >&2
        done
    done
done

python3 - "$RESULTS" "$N" "$SIZE" "$PAIRS" <<'PY'
import sys, statistics as st
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
n, size, pairs = sys.argv[2], sys.argv[3], sys.argv[4]
print(f"blobbench vs kvtest: {n} blobs of {size}, warm cache, {pairs} pairs run A B, B A, ...")
print("ratio = kvtest time per blob / blobbench time per blob, per pair; >= 1.00 means blobbench is no slower")
print("(µs/blob columns: median over pairs; best ratio = kvtest's fastest run / blobbench's fastest run)")
print("(interval: the median ratio's sign-test interval over the pairs, its exact coverage beside it;")
print(" verdict: slower/faster only when the whole interval lies below/above 1, else within noise)")
print(f"{'order':8} {'mode':10} {'kvtest µs/blob':>15} {'blobbench µs/blob':>18} {'median ratio':>13} {'interval':>17} {'verdict':>13} {'best ratio':>11} {'bb per-op µs':>13}")
sys.path.insert(0, "bench")  # the scripts run from the repository's root
from sign_test import sign_test
worst, slower = None, 0
for order in ("random", "asc"):
    for mode in ("sql", "blob-api", "mmap", "dir"):
        sel = [r for r in rows if r[0] == order and r[1] == mode]
        if not sel:
            continue
        kv = st.median(float(r[3]) for r in sel)
        bb = st.median(float(r[4]) for r in sel)
        po = st.median(float(r[5]) for r in sel)
        ratios = [float(r[3]) / float(r[4]) for r in sel]
        ratio = st.median(ratios)
        worst = ratio if worst is None else min(worst, ratio)
        lo, hi, cover = sign_test(ratios) if len(ratios) > 1 else (ratio, ratio, 0.0)
        spread = f"{lo:.2f}..{hi:.2f} {cover:.0%}"
        verdict = "slower" if hi < 1 else "faster" if lo > 1 else "within noise"
        slower += verdict == "slower"
        best = min(float(r[3]) for r in sel) / min(float(r[4]) for r in sel)
        print(f"{order:8} {mode:10} {kv:15.3f} {bb:18.3f} {ratio:13.2f} {spread:>17} {verdict:>13} {best:11.2f} {po:13.3f}")
print(f"lowest median ratio: {worst:.2f} (target >= 1.00: blobbench per blob no slower than kvtest); "
      f"modes where blobbench is slower beyond the noise: {slower}")
PY

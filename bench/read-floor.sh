#!/usr/bin/env bash
# blobbench's reads against the floor: a plain C loop (bench/read-floor.c,
# built against the very SQLite amalgamation blobbench bundles, with its
# flags and -O3) reading the same dataset, the same keys in the same order.
#
# Cases: the folder (open, fstat, read, close), and the database by a
# prepared SELECT and by the blob API, each with every read of the pass in
# one transaction (batched, quick's and kvtest's default) and with a
# transaction per read (per-read: kvtest --multitrans, blobbench run
# --multitrans). Keys are kvtest's draws (blobbench run --random-draws), so
# both read the very same sequence.
#
# Each pair runs both sides right after each other, who goes first
# alternating (A B, B A, ...), with the target's pages read into the page
# cache right before each run. The figure is each side's time per read over
# the timed loop only (blobbench: its repetition's timed operations; the
# floor: its read loop); the ratio is blobbench / floor per pair, its median
# with the sign-test interval over the pairs. Target: at most 1.05.
#
# Usage: bench/read-floor.sh          (COUNT=20k SIZE=10k VARIANCE=2k PAIRS=7)
#        WORK=/var/tmp/x PAIRS=11 CASES="dir sql-batched" bench/read-floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-20k}
SIZE=${SIZE:-10k}
VARIANCE=${VARIANCE:-2k}
PAIRS=${PAIRS:-7}
CASES=${CASES:-dir sql-batched blob-batched sql-per-read blob-per-read}
for c in $CASES; do
    case $c in
        dir | sql-batched | blob-batched | sql-per-read | blob-per-read) ;;
        *) echo "read-floor.sh: CASES holds '$c'; use dir, sql-batched, blob-batched, sql-per-read or blob-per-read" >&2; exit 2 ;;
    esac
done
case $PAIRS in '' | *[!0-9]* | 0) echo "read-floor.sh: PAIRS=$PAIRS is not a count of 1 or more" >&2; exit 2 ;; esac
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/var/tmp}/read-floor.XXXXXX")}
mkdir -p "$WORK"
echo "work folder: $WORK" >&2

cargo build --release --quiet
BB=$PWD/target/release/blobbench
# shellcheck source=bench/sqlite-amalgamation.sh
. bench/sqlite-amalgamation.sh
FLOOR=$WORK/read-floor
build_against_sqlite "$FLOOR" bench/read-floor.c

DB=$WORK/floor.db
DIR=$WORK/floor.dir
if [ ! -f "$DB" ]; then
    "$BB" init "$DB" --count "$COUNT" --size "$SIZE" --variance "$VARIANCE" >/dev/null
    "$BB" export "$DB" "$DIR" >/dev/null
fi
N=$(python3 -c "import sqlite3; print(sqlite3.connect('file:$DB?mode=ro', uri=True).execute('select count(*) from kv').fetchone()[0])")

warm() { if [ -d "$1" ]; then find "$1" -type f -print0 | xargs -0 cat >/dev/null; else cat "$1"* >/dev/null; fi; }

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for c in $CASES; do
    case $c in
        dir) target=$DIR; floor=(dir "$DIR" "$N" random); opts=() ;;
        sql-batched) target=$DB; floor=(sql "$DB" "$N" random batched); opts=() ;;
        blob-batched) target=$DB; floor=(blob "$DB" "$N" random batched); opts=(--blob-api) ;;
        sql-per-read) target=$DB; floor=(sql "$DB" "$N" random per-read); opts=(--multitrans) ;;
        blob-per-read) target=$DB; floor=(blob "$DB" "$N" random per-read); opts=(--blob-api --multitrans) ;;
    esac
    run_floor() {
        warm "$target"
        fl=$("$FLOOR" "${floor[@]}" | awk '{print $(NF-3)}')
    }
    run_blobbench() {
        rm -f "$WORK/bb.json"
        "$BB" run "$target" --count "$N" --random-draws "${opts[@]}" --repeat 1 --warmup 0 \
            --json "$WORK/bb.json" >/dev/null
        bb=$(python3 -c "
import json; rep = json.load(open('$WORK/bb.json'))['runs'][0]['repetitions'][0]
print(rep['elapsed_ns'] / rep['ops'] / 1000)")
    }
    for pair in $(seq "$PAIRS"); do
        if [ $((pair % 2)) = 1 ]; then run_floor; run_blobbench; else run_blobbench; run_floor; fi
        printf '%s\t%s\t%s\t%s\n' "$c" "$pair" "$fl" "$bb" >>"$RESULTS"
        echo "$c pair $pair: floor $fl µs, blobbench $bb µs" >&2
    done
done

python3 - "$RESULTS" "$N" "$SIZE" "$PAIRS" "$("$BB" --version)" <<'PY'
import sys, statistics as st
sys.path.insert(0, "bench")
from sign_test import sign_test
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
n, size, pairs, version = sys.argv[2:6]
print(f"{version}: reads against a plain C loop (bench/read-floor.c, same SQLite amalgamation),")
print(f"{n} blobs of {size}, kvtest's random draws, warm cache, {pairs} pairs run A B, B A, ...")
print("time per read over the timed loop only; ratio = blobbench / floor per pair, median [sign-test interval, coverage]")
print(f"{'case':14} {'floor µs':>9} {'blobbench µs':>13} {'ratio':>6} {'interval':>18}  target <= 1.05")
for case in dict.fromkeys(r[0] for r in rows):
    sel = [r for r in rows if r[0] == case]
    ratios = [float(r[3]) / float(r[2]) for r in sel]
    ratio = st.median(ratios)
    lo, hi, cover = sign_test(ratios) if len(ratios) > 1 else (ratio, ratio, 0.0)
    met = "met" if ratio <= 1.05 else "NOT met"
    print(f"{case:14} {st.median(float(r[2]) for r in sel):9.3f} {st.median(float(r[3]) for r in sel):13.3f} "
          f"{ratio:6.2f} {f'[{lo:.2f}-{hi:.2f}, {cover:.0%}]':>18}  {met}")
PY

#!/usr/bin/env bash
# Read-only throughput at 2 threads against 1 (issue 16: ">= 1.7x on this
# 2-core machine for sqlite (WAL, mmap) and dir").
#
# One dataset of COUNT x SIZE blobs (20k x 10 KB by default) in an SQLite
# database in WAL mode and, exported, in a folder. Then, PAIRS times, each
# target once at 1 thread and once at 2 (the order alternating per pair, so
# drift is shared): `blobbench run TARGET --threads N --mix read=100 --keys
# uniform -t SECONDS`, every read checked. Each pair's own ratio (2 threads
# over 1, the two runs side by side) is printed; the verdict is on the
# median ratio and the range of the pairs is shown beside it.
#
#   bench/concurrency-scaling.sh                 (5 pairs of 5 s runs)
#   PAIRS=9 SECONDS_PER_RUN=10 bench/concurrency-scaling.sh
#   BLOBBENCH=target/release/blobbench DIR=/mnt/ssd bench/concurrency-scaling.sh
set -euo pipefail

COUNT=${COUNT:-20k}
SIZE=${SIZE:-10k}
PAIRS=${PAIRS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
MMAP=${MMAP:-1G}
BLOBBENCH=${BLOBBENCH:-$(dirname "$0")/../target/release/blobbench}
if [ ! -x "$BLOBBENCH" ]; then
    echo "build first: cargo build --release (or set BLOBBENCH)" >&2
    exit 2
fi
WORK=$(mktemp -d "${DIR:-${TMPDIR:-/tmp}}/blobbench-scaling.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

"$BLOBBENCH" init "sqlite:$WORK/s.db?journal_mode=wal" --count "$COUNT" --size "$SIZE" >/dev/null
"$BLOBBENCH" export "$WORK/s.db" "$WORK/s.dir" >/dev/null
declare -A TARGETS=(
    [sqlite]="sqlite:$WORK/s.db?mmap_size=$MMAP"
    [dir]="dir:$WORK/s.dir"
)

# Operations per second of one run.
rate() {
    rm -f "$WORK/r.json"
    "$BLOBBENCH" run "$1" --threads "$2" --mix read=100 --keys uniform -t "${SECONDS_PER_RUN}s" \
        --json "$WORK/r.json" >/dev/null
    python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["tables"]
ops = sum(k["ops"] for k in t["kinds"] if k["kind"])
print(ops / (t["elapsed_ns"] / 1e9))' "$WORK/r.json"
}

echo "read-only throughput, $COUNT x $SIZE, ${SECONDS_PER_RUN}s per run, $(nproc) cores"
for name in sqlite dir; do
    ratios=()
    for pair in $(seq 1 "$PAIRS"); do
        if (( pair % 2 )); then
            one=$(rate "${TARGETS[$name]}" 1); two=$(rate "${TARGETS[$name]}" 2)
        else
            two=$(rate "${TARGETS[$name]}" 2); one=$(rate "${TARGETS[$name]}" 1)
        fi
        r=$(python3 -c "print(f'{$two / $one:.2f}')")
        printf '  %-6s pair %d: 1 thread %8.0f/s  2 threads %8.0f/s  ratio %s\n' "$name" "$pair" "$one" "$two" "$r"
        ratios+=("$r")
    done
    python3 - "$name" "${ratios[@]}" <<'EOF'
import statistics, sys
name, ratios = sys.argv[1], sorted(float(r) for r in sys.argv[2:])
median = statistics.median(ratios)
verdict = "meets" if median >= 1.7 else "misses"
print(f"{name}: 2 threads / 1 thread = {median:.2f}x (pairs {ratios[0]:.2f}-{ratios[-1]:.2f}); {verdict} the 1.7x target")
EOF
done

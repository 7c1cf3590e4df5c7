#!/usr/bin/env bash
# blobbench's S3 client beside rclone, in one run, on one SeaweedFS server
# (scripts/start-s3.sh): 1 MB objects, 16 requests at once.
#
#   bench/s3-harness.sh [SECONDS] [OBJECTS]     (defaults: 10 s, 400 objects)
#   ROUNDS=5 bench/s3-harness.sh                (paired rounds per phase, default 3)
#
# 1. Harness cost: 16 threads of whole-object GETs (`blobbench run --threads
#    16 --mix read=100`), with and without checking every byte read;
#    blobbench's CPU time (user + system, /usr/bin/time) against the server
#    process's over the same run (/proc/PID/stat). Target: below 30%.
# 2. Download: the same GETs against `rclone copy --transfers 16` of the
#    same objects into a tmpfs folder; MB/s of each, and each one's CPU.
# 3. Upload: 16 threads of PUTs (`--mix insert=100`, new keys) against
#    `rclone copy --transfers 16` of as many 1 MB files from tmpfs.
#
# The two clients alternate in each phase, ROUNDS times, so drift on a
# shared machine falls on both; each phase ends with the median ratio and
# its range over the rounds. Needs rclone (apt-get install rclone) and a built
# blobbench (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}
OBJECTS=${2:-400}
ROUNDS=${ROUNDS:-3}
BB=${BLOBBENCH:-target/release/blobbench}
unset AWS_CA_BUNDLE  # rclone refuses a CA bundle with its own transport
command -v rclone >/dev/null || { echo "needs rclone: apt-get install -y rclone" >&2; exit 2; }
[ -x "$BB" ] || { echo "needs $BB: cargo build --release" >&2; exit 2; }

. scripts/start-s3.sh >/dev/null
endpoint=${BLOBBENCH_S3_URL#*endpoint=}
endpoint=${endpoint%%&*}
query=${BLOBBENCH_S3_URL#*\?}
target="s3://blobbench/harness?$query"
shm=$(mktemp -d /dev/shm/blobbench-harness.XXXXXX)
# Keep start-s3.sh's EXIT trap (it stops the server) beside ours.
trap "rm -rf '$shm'; $(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")" EXIT

# rclone's remote "s3" from the environment: the same server and key.
export RCLONE_CONFIG_S3_TYPE=s3 RCLONE_CONFIG_S3_PROVIDER=SeaweedFS \
    RCLONE_CONFIG_S3_ENDPOINT="$endpoint" RCLONE_CONFIG_S3_REGION="$AWS_REGION" \
    RCLONE_CONFIG_S3_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
    RCLONE_CONFIG_S3_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY"

# CPU seconds (user + system) the server process has used so far.
server_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$BLOBBENCH_S3_PID/stat"
}

# Runs a command; prints "wall_s client_cpu_s server_cpu_s".
measure() {
    local before after t0 t1 cpu
    before=$(server_cpu)
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$shm/time" "$@" >"$shm/out" 2>&1 || { cat "$shm/out" >&2; return 1; }
    t1=$(date +%s.%N)
    after=$(server_cpu)
    cpu=$(awk '{print $1 + $2}' "$shm/time")
    echo "$(echo "$t1 - $t0" | bc -l) $cpu $(echo "$after - $before" | bc -l)"
}

# "median [min-max]" of the numbers given.
# DIGITS (default 2) after the point.
spread() {
    printf '%s\n' "$@" | sort -g | awk -v d="${DIGITS:-2}" '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; f = "%." d "f"; printf f "x [" f "-" f "] over %d rounds", m, v[1], v[NR], NR}'
}

# MB/s of a concurrent run's operations of kind $2 in result $1.
run_mb_per_s() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); k=[k for k in d['tables']['kinds'] if k.get('kind')==sys.argv[2]][0]; print(k['bytes']/ (d['tables']['elapsed_ns']/1e9) / 1e6)" "$1" "$2"
}

echo "blobbench $("$BB" --version 2>/dev/null | head -1) vs $(rclone version | head -1), SeaweedFS at $endpoint, $OBJECTS x 1 MB, 16 at once, ${SECONDS_PER_RUN}s per blobbench run"
"$BB" init "$target" --count "$OBJECTS" --size 1M >/dev/null
rclone copy "s3:blobbench/harness" "$shm/warm" --transfers 16 -q && rm -rf "$shm/warm"

echo
echo "1. harness cost: blobbench CPU / server CPU over the same 16-thread GET run"
for verify in "" --no-verify; do
    shares=()
    for round in $(seq 1 "$ROUNDS"); do
        read -r wall cpu server < <(measure "$BB" run "$target" --threads 16 --mix read=100 -t "${SECONDS_PER_RUN}s" $verify --json "$shm/r.json")
        printf "   %-12s blobbench %.2f s CPU, server %.2f s CPU: %.1f%%  (%.0f MB/s)\n" \
            "${verify:-verify}" "$cpu" "$server" "$(echo "100 * $cpu / $server" | bc -l)" "$(run_mb_per_s "$shm/r.json" read)"
        shares+=("$(echo "$cpu / $server" | bc -l)")
    done
    echo "   ${verify:-verify}: blobbench CPU / server CPU $(DIGITS=3 spread "${shares[@]}" | sed 's/x / /')"
done

echo
echo "2. download, 16 at once: MB/s (client CPU s, server CPU s)"
ratios=()
for round in $(seq 1 "$ROUNDS"); do
    read -r wall cpu server < <(measure "$BB" run "$target" --threads 16 --mix read=100 -t "${SECONDS_PER_RUN}s" --no-verify --json "$shm/r.json")
    bb=$(run_mb_per_s "$shm/r.json" read)
    rm -rf "$shm/dl"
    read -r wall rcpu rserver < <(measure rclone copy "s3:blobbench/harness" "$shm/dl" --transfers 16 --checkers 16)
    rc=$(echo "$OBJECTS * 1000000 / $wall / 1000000" | bc -l)
    printf "   round %d: blobbench %.0f MB/s (%.2f, %.2f)   rclone %.0f MB/s (%.2f, %.2f)   blobbench/rclone %.2fx\n" \
        "$round" "$bb" "$cpu" "$server" "$rc" "$rcpu" "$rserver" "$(echo "$bb / $rc" | bc -l)"
    ratios+=("$(echo "$bb / $rc" | bc -l)")
done
echo "   download blobbench/rclone: $(spread "${ratios[@]}")"
rm -rf "$shm/dl"

echo
echo "3. upload, 16 at once: MB/s (client CPU s, server CPU s)"
mkdir -p "$shm/up"
for i in $(seq -w 1 "$OBJECTS"); do head -c 1000000 /dev/urandom >"$shm/up/$i"; done
ratios=()
for round in $(seq 1 "$ROUNDS"); do
    read -r wall cpu server < <(measure "$BB" run "$target" --threads 16 --mix insert=100 -t "${SECONDS_PER_RUN}s" --json "$shm/r.json")
    bb=$(run_mb_per_s "$shm/r.json" insert)
    read -r wall rcpu rserver < <(measure rclone copy "$shm/up" "s3:blobbench/harness-up-$round" --transfers 16 --checkers 16)
    rc=$(echo "$OBJECTS * 1000000 / $wall / 1000000" | bc -l)
    printf "   round %d: blobbench %.0f MB/s (%.2f, %.2f)   rclone %.0f MB/s (%.2f, %.2f)   blobbench/rclone %.2fx\n" \
        "$round" "$bb" "$cpu" "$server" "$rc" "$rcpu" "$rserver" "$(echo "$bb / $rc" | bc -l)"
    ratios+=("$(echo "$bb / $rc" | bc -l)")
    rclone purge "s3:blobbench/harness-up-$round" -q || true
done
echo "   upload blobbench/rclone: $(spread "${ratios[@]}")"

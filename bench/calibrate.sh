#!/usr/bin/env bash
# The instrument checks itself (issue 27): how often `compare` raises a false
# alarm, how often it finds a known slowdown, and how often one run's interval
# holds a rerun's median, measured with real runs on this machine.
#
# After WARMUP discarded runs (1 by default: the first run after a rest
# can meet a faster disk), PAIRS times, four runs of SUITE back to back
# (quick by default, at its default settings except COUNT), in an order
# rotated by one each pair so a drifting machine favours none of them:
#   A    as is
#   A'   as is again
#   B1   with a known cost injected into one case (INJECT_CASE, SIZES' first
#        factor, e.g. x1.10: that case's every operation spins 10% longer)
#   B2   the same with SIZES' second factor (x1.25)
# then, at compare's defaults:
#   compare A A'    A/A: every case flagged is a false alarm. Counted twice:
#                   by the uncorrected verdict and by the drift-corrected one
#                   where a case has it (--allow-drift), i.e. with and
#                   without the drift probes.
#   compare A B1    A/B: the injected case called slower is a detection;
#   compare A' B2   any other case flagged is a false alarm.
# and, from every A/A pair, each case: does A's interval (this run's rounds)
# hold A''s median? (the rerun coverage docs/METHODS.md states). Then every run
# is also compared with itself: its rounds 1, 2, 5, 6, ... against 3, 4,
# 7, 8, ... (within-run A/A). Both halves span the whole run, so whatever
# the machine did between runs is not in that comparison: its false alarms
# are compare's own statistics, where the between-run A/A's are also the
# machine's.
#
# Prints the tables, what each injection delivered (the injected case's
# ratio) and the load each pair ran under: a pair whose runs saw a 1-minute
# load above the machine's cores is marked LOADED (an injected cost is a
# spin, and a loaded machine stretches what it measures). Writes every
# count as JSON to OUT.
#
#   bench/calibrate.sh                               (20 pairs of quick, +10% and +25%)
#   PAIRS=3 SIZES="3" COUNT=5k bench/calibrate.sh    (the small version CI runs)
#   SUITE=fasterthanfs COUNT=2000 bench/calibrate.sh (a suite with many cases)
#   SUITE=internal-external bench/calibrate.sh       (2 sizes x 2 page sizes of 20M
#                                                     each: IE_ARGS for others)
#   SUITE=http bench/calibrate.sh                    (suite http, 200 blobs of 100k,
#                                                     -c 4, 10 rounds; HTTP_ARGS for
#                                                     others; INJECT_CASE a system)
#   SUITE=run bench/calibrate.sh                     (blobbench run: one case, its
#                                                     repetitions the samples; ARGS
#                                                     for its options, e.g. "--random")
#   ARGS="--rounds 15" bench/calibrate.sh            (the power more rounds buy)
#   WARMUP=0 bench/calibrate.sh                      (no discarded run first)
#   ARGS="--runs 6" CMP_ARGS="--threshold 5" SIZES=1.10 bench/calibrate.sh
#                                                    (a recipe for small changes: K
#                                                     runs a side, a lower threshold)
#   BLOBBENCH=target/release/blobbench DIR=/mnt/ssd OUT=cal.json KEEP=1 bench/calibrate.sh
set -euo pipefail
shopt -s inherit_errexit

PAIRS=${PAIRS:-20}
SUITE=${SUITE:-quick}
SIZES=${SIZES:-"1.10 1.25"}
OUT=${OUT:-calibrate.json}
case "$SUITE" in
quick)
    COUNT=${COUNT:-20k}
    INJECT_CASE=${INJECT_CASE:-read:db}
    ;;
fasterthanfs)
    COUNT=${COUNT:-2000}
    INJECT_CASE=${INJECT_CASE:-read:db}
    ;;
internal-external)
    # A small matrix: each of its cells is a section of two cases to compare.
    read -r -a IE <<<"${IE_ARGS:---sizes 10k,100k --page-sizes 4096,16384 --total 20M}"
    INJECT_CASE=${INJECT_CASE:-100000-page-4096:internal}
    ;;
http)
    # Small blobs, one level, two systems (SQLite's kv table and the
    # folder), ten rounds: every system at one level is a section of cases.
    # The injection waits inside each request of the system (no spin: the
    # load generator takes no core from the servers).
    read -r -a HTTP <<<"${HTTP_ARGS:---count 200 --size 100k --variance 0 -c 4 -t 5s --rounds 10 --layout kv}"
    INJECT_CASE=${INJECT_CASE:-dir}
    ;;
run)
    # One dataset, made once; every run reads (or, with ARGS="--update",
    # updates) it, and the injection goes on the target (?inject=xF).
    COUNT=${COUNT:-20k}
    INJECT_CASE=${INJECT_CASE:-run}
    ;;
*)
    echo "SUITE=$SUITE: quick, fasterthanfs, internal-external, http or run" >&2
    exit 2
    ;;
esac
read -r -a FACTORS <<<"$SIZES"
# ARGS: more options for every run of the suite, e.g. ARGS="--rounds 15".
read -r -a EXTRA <<<"${ARGS:-}"
# CMP_ARGS: options for every compare, e.g. CMP_ARGS="--threshold 5".
read -r -a CMP <<<"${CMP_ARGS:-}"
if [ "${#FACTORS[@]}" -lt 1 ] || [ "${#FACTORS[@]}" -gt 2 ]; then
    echo "SIZES=\"$SIZES\": one or two factors, e.g. SIZES=\"1.10 1.25\"" >&2
    exit 2
fi
WARMUP=${WARMUP:-1}
if ! [[ "$WARMUP" =~ ^[0-9]+$ ]]; then
    echo "WARMUP=$WARMUP: a whole number of discarded runs, 0 or more" >&2
    exit 2
fi
if ! [[ "$PAIRS" =~ ^[1-9][0-9]*$ ]]; then
    echo "PAIRS=$PAIRS: a whole number of pairs, 1 or more" >&2
    exit 2
fi
BLOBBENCH=${BLOBBENCH:-$(dirname "$0")/../target/release/blobbench}
if [ ! -x "$BLOBBENCH" ]; then
    echo "build first: cargo build --release (or set BLOBBENCH)" >&2
    exit 2
fi
command -v python3 >/dev/null || {
    echo "python3 is needed to tally the comparisons (apt-get install python3)" >&2
    exit 2
}
# Everything the runs need is checked before the first one, not after an
# hour of them: each factor, the result file's place, the injected case.
for f in "${FACTORS[@]}"; do
    if ! [[ "$f" =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 1 else 1)" "$f"; then
        echo "SIZES=\"$SIZES\": $f is not a factor above 1 (e.g. SIZES=\"1.10 1.25\")" >&2
        exit 2
    fi
done
OUT_DIR=$(dirname "$OUT")
if [ -d "$OUT" ] || [ ! -d "$OUT_DIR" ] || [ ! -w "$OUT_DIR" ]; then
    echo "OUT=$OUT: not a file that can be written (its folder must exist and be writable)" >&2
    exit 2
fi
case "$SUITE" in
quick) PROBE=(quick) ;;
fasterthanfs) PROBE=(suite fasterthanfs) ;;
internal-external) PROBE=(suite internal-external "${IE[@]}") ;;
http) PROBE=(suite http "${HTTP[@]}") ;;
run) PROBE=() ;;
esac
# The suite's cases, from its own refusal of one it does not have (it
# refuses before it makes anything). A run has one case: the run.
if [ "${#PROBE[@]}" -gt 0 ]; then
    KNOWN=$({ "$BLOBBENCH" "${PROBE[@]}" --inject "no-such-case=x1.10" 2>&1 >/dev/null || true; } | sed -n 's/.*use one of: //p')
    if [[ ", $KNOWN, " != *", $INJECT_CASE, "* ]]; then
        echo "INJECT_CASE=$INJECT_CASE: $SUITE has no such case; use one of: $KNOWN" >&2
        exit 2
    fi
elif [ "$INJECT_CASE" != run ]; then
    echo "INJECT_CASE=$INJECT_CASE: SUITE=run has one case, the run itself; leave INJECT_CASE unset" >&2
    exit 2
fi
WORK=$(mktemp -d "${DIR:-${TMPDIR:-/tmp}}/blobbench-calibrate.XXXXXX")
# KEEP=1 keeps every result and comparison (their folder is printed).
if [ "${KEEP:-0}" = 1 ]; then
    echo "results and comparisons kept in $WORK" >&2
else
    trap 'rm -rf "$WORK"' EXIT
fi

# One run of the suite into $1, with the injection $2 (a factor) if given.
measure() {
    local out=$1 factor=${2:-}
    local inject=()
    [ -n "$factor" ] && inject=(--inject "$INJECT_CASE=x$factor")
    local began
    began=$(date +%s%N)
    case "$SUITE" in
    quick)
        "$BLOBBENCH" quick --dir "$WORK" --count "$COUNT" --json "$out" --report none "${inject[@]}" "${EXTRA[@]}" >"$out.log" 2>&1
        ;;
    fasterthanfs)
        "$BLOBBENCH" suite fasterthanfs --dir "$WORK" --count "$COUNT" --json "$out" "${inject[@]}" "${EXTRA[@]}" >"$out.log" 2>&1
        ;;
    internal-external)
        "$BLOBBENCH" suite internal-external --dir "$WORK" "${IE[@]}" --json "$out" "${inject[@]}" "${EXTRA[@]}" >"$out.log" 2>&1
        ;;
    http)
        "$BLOBBENCH" suite http --dir "$WORK" "${HTTP[@]}" --json "$out" "${inject[@]}" "${EXTRA[@]}" >"$out.log" 2>&1
        ;;
    run)
        local target="$WORK/run.db"
        [ -n "$factor" ] && target="$target?inject=x$factor"
        "$BLOBBENCH" run "$target" --json "$out" "${EXTRA[@]}" >"$out.log" 2>&1
        ;;
    esac || {
        echo "run failed: $out (log below)" >&2
        tail -20 "$out.log" >&2
        exit 1
    }
    # The run's wall time in ms, as a user waits for it (the summary's median).
    echo $((($(date +%s%N) - began) / 1000000)) >"$out.wall"
}

# compare $1 $2 into $3 (exit 1 is a verdict, not a failure).
judge() {
    "$BLOBBENCH" compare "$1" "$2" --json "$3" "${CMP[@]}" >"$3.log" 2>&1 || {
        echo "compare failed: $1 $2 (log below)" >&2
        tail -20 "$3.log" >&2
        exit 1
    }
}

# Writes result $1's rounds as two results, $1.h1.json and $1.h2.json:
# rounds 1, 2, 5, 6, ... and 3, 4, 7, 8, ..., each half with both of the
# rounds' case orders alike and the reference probes of its own rounds.
halves() {
    python3 - "$1" <<'SPLIT'
import copy, json, re, sys
src = sys.argv[1]
with open(src) as f:
    doc = json.load(f)
round_of = lambda run: int(re.search(r"\(round (\d+)\)$", run["name"]).group(1))
reference = doc["environment"].get("reference") or {}
http = doc["tables"].get("http")
if http:  # suite http: each system's rounds per level, in round order
    rounds = max(len(level) for s in http for level in s.get("rounds", [[]]))
else:
    rounds = max(round_of(r) for r in doc["runs"])
for which in (0, 1):
    keep = lambda k: ((k - 1) // 2) % 2 == which
    half = copy.deepcopy(doc)
    half["runs"] = [r for r in doc["runs"] if keep(round_of(r))]
    for s in (half["tables"]["http"] if http else []):
        s["rounds"] = [[f for k, f in enumerate(level, start=1) if keep(k)] for level in s.get("rounds", [])]
    if reference:
        half["environment"]["reference"] = {
            name: [x for i, x in enumerate(samples) if keep(i // max(1, len(samples) // rounds) + 1)]
            for name, samples in reference.items()
        }
    with open(f"{src[:-len('.json')]}.h{which + 1}.json", "w") as f:
        json.dump(half, f)
SPLIT
}

# compare the two halves of result $1 (see `halves`) into $2: an A/A inside
# one run, its halves interleaved in time, so what the machine did between
# runs is not in it. A run of `blobbench run` has repetitions, not rounds of
# alternating cases: it has no halves to compare.
judge_within() {
    [ "$SUITE" = run ] && return 0
    # K runs in one result (--runs K): compare already takes each run as
    # one result a side, and halving its rounds would mix the runs.
    [[ " ${EXTRA[*]} " == *" --runs "* ]] && return 0
    halves "$1"
    judge "${1%.json}.h1.json" "${1%.json}.h2.json" "$2"
}

# Warm-up runs, discarded, before the first pair. A disk that has rested
# can make its first durable writes faster: twice on this project's 2-core
# VM, after a rest of 25 s, rename+fsync took 0.6-0.7 ms in the first run
# and 1.3-1.8 ms in the runs after it (each run writes and deletes its own
# dataset), so the first pair's A met another disk than every other run
# and its durable cases were "changed" in both of that pair's comparisons
# (CI's failed calibration of stop 46 flagged that pair's two). Every
# measured run now follows a run, as the warm-up round does for the cases
# inside a run.
if [ "$SUITE" = run ]; then
    echo "making the dataset: $COUNT blobs in $WORK/run.db" >&2
    "$BLOBBENCH" init "$WORK/run.db" --count "$COUNT" -q >"$WORK/init.log" 2>&1 || {
        echo "init failed (log below)" >&2
        tail -20 "$WORK/init.log" >&2
        exit 1
    }
fi
for ((w = 1; w <= WARMUP; w++)); do
    echo "warm-up run $w of $WARMUP (discarded)" >&2
    measure "$WORK/warmup-$w.json"
done
started=$(date +%s)
for ((i = 1; i <= PAIRS; i++)); do
    names=(a a2 b1)
    [ "${#FACTORS[@]}" -eq 2 ] && names+=(b2)
    # Rotate the order by one each pair.
    shift_by=$(((i - 1) % ${#names[@]}))
    order=("${names[@]:shift_by}" "${names[@]:0:shift_by}")
    for name in "${order[@]}"; do
        case "$name" in
        a | a2) measure "$WORK/$name-$i.json" ;;
        b1) measure "$WORK/$name-$i.json" "${FACTORS[0]}" ;;
        b2) measure "$WORK/$name-$i.json" "${FACTORS[1]}" ;;
        esac
    done
    judge "$WORK/a-$i.json" "$WORK/a2-$i.json" "$WORK/aa-$i.cmp.json"
    judge "$WORK/a-$i.json" "$WORK/b1-$i.json" "$WORK/ab1-$i.cmp.json"
    [ "${#FACTORS[@]}" -eq 2 ] && judge "$WORK/a2-$i.json" "$WORK/b2-$i.json" "$WORK/ab2-$i.cmp.json"
    for name in "${names[@]}"; do
        judge_within "$WORK/$name-$i.json" "$WORK/within-$name-$i.cmp.json"
    done
    now=$(date +%s)
    left=$(((now - started) * (PAIRS - i) / i))
    printf 'pair %d of %d done, about %dm%02ds left\n' "$i" "$PAIRS" $((left / 60)) $((left % 60)) >&2
done

ARGS="${ARGS:-}" CMP_ARGS="${CMP_ARGS:-}" python3 - "$WORK" "$PAIRS" "$OUT" "$SUITE" "$INJECT_CASE" "${FACTORS[@]}" <<'PY'
import json, os, sys
work, pairs, out, suite, case = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
factors = sys.argv[6:]
FLAGGED = ("better", "worse")
TESTED = ("better", "worse", "within-noise")

def load(path):
    with open(path) as f:
        return json.load(f)["tables"]["compare"]["changes"]

def corrected(ch):
    return (ch.get("adjusted") or {}).get("verdict", ch["verdict"])

def share(k, n):
    return k / n if n else float("nan")

# Every untouched case flagged, by either verdict: which comparison, which
# case and by how much, so a false alarm can be traced to what moved.
alarms = []

def note_alarms(comparison, cases):
    for c in cases:
        if c["verdict"] in FLAGGED or corrected(c) in FLAGGED:
            adjusted = c.get("adjusted") or {}
            alarms.append({"comparison": comparison, "case": c["label"], "ratio": c["ratio"],
                           "verdict": c["verdict"], "corrected_ratio": adjusted.get("ratio"),
                           "corrected_verdict": corrected(c), "probe": adjusted.get("probe")})

def count_family(into, comparison, tested, count, prefix, with_any):
    """Adds one family of untouched case comparisons (`tested`, from
    `comparison`) to `into`: how many were tested (`count`), how many
    flagged by either verdict (keys under `prefix`), and whether any was
    (`with_any`, `with_any` + "_corrected"); notes each alarm."""
    flagged = sum(c["verdict"] in FLAGGED for c in tested)
    flagged_corrected = sum(corrected(c) in FLAGGED for c in tested)
    into[count] += len(tested)
    into[prefix + "flagged"] += flagged
    into[prefix + "flagged_corrected"] += flagged_corrected
    into[with_any] += flagged > 0
    into[with_any + "_corrected"] += flagged_corrected > 0
    note_alarms(comparison, tested)

aa = {"comparisons": 0, "flagged": 0, "flagged_corrected": 0, "pairs_with_any": 0,
      "pairs_with_any_corrected": 0, "rerun_checks": 0, "rerun_inside": 0}
for i in range(1, pairs + 1):
    changes = load(f"{work}/aa-{i}.cmp.json")
    tested = [c for c in changes if c["verdict"] in TESTED]
    count_family(aa, f"A/A pair {i}", tested, "comparisons", "", "pairs_with_any")
    for c in changes:
        interval = c["before"].get("interval")
        if interval:
            aa["rerun_checks"] += 1
            aa["rerun_inside"] += interval[0] <= c["after"]["median"] <= interval[1]

ab = []
for k, factor in enumerate(factors, start=1):
    row = {"factor": float(factor), "pairs": pairs, "found": 0, "found_corrected": 0,
           "missing": 0, "others": 0, "others_flagged": 0, "others_flagged_corrected": 0,
           "others_pairs_with_any": 0, "others_pairs_with_any_corrected": 0}
    for i in range(1, pairs + 1):
        changes = load(f"{work}/ab{k}-{i}.cmp.json")
        hit = [c for c in changes if c.get("injected")]
        if not hit:
            row["missing"] += 1
        row["found"] += any(c["verdict"] == "worse" for c in hit)
        row["found_corrected"] += any(corrected(c) == "worse" for c in hit)
        others = [c for c in changes if not c.get("injected") and c["verdict"] in TESTED]
        count_family(row, f"A/B x{factor} pair {i}", others, "others", "others_",
                     "others_pairs_with_any")
    ab.append(row)

# Within-run A/A: each run's two interleaved halves (every run of every
# pair). Every case flagged is a false alarm of compare's own statistics,
# with no drift of the machine between runs in it.
within = {"runs": 0, "comparisons": 0, "flagged": 0, "flagged_corrected": 0,
          "runs_with_any": 0, "runs_with_any_corrected": 0}
for i in range(1, pairs + 1):
    for name in ["a", "a2"] + [f"b{k}" for k in range(1, len(factors) + 1)]:
        if not os.path.exists(f"{work}/within-{name}-{i}.cmp.json"):
            continue  # a run of `blobbench run`: no rounds to halve
        tested = [c for c in load(f"{work}/within-{name}-{i}.cmp.json") if c["verdict"] in TESTED]
        within["runs"] += 1
        count_family(within, f"within run {name}-{i}", tested, "comparisons", "", "runs_with_any")

# The load each pair ran under: the highest 1-minute load average its
# runs recorded (at start and end), against the machine's cores. A pair
# above the cores is marked: an injected cost is a spin, and a loaded
# machine stretches what it and its neighbours measure.
def run_load(path):
    with open(path) as f:
        env = json.load(f)["environment"]
    loads = [env[k]["one_min"] for k in ("load_average_start", "load_average_end") if env.get(k)]
    return (max(loads) if loads else None), env.get("machine_cpus") or os.cpu_count()

loads, loaded = {}, []
for i in range(1, pairs + 1):
    names = ["a", "a2"] + [f"b{k}" for k in range(1, len(factors) + 1)]
    got = [run_load(f"{work}/{name}-{i}.json") for name in names]
    known = [l for l, _ in got if l is not None]
    cpus = got[0][1]
    loads[i] = max(known) if known else None
    if loads[i] is not None and loads[i] > cpus:
        loaded.append(i)

def median(xs):
    xs = sorted(xs)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2 if xs else float("nan")

# What each injection delivered, with the machine's drift taken out: in
# each run, the injected case's time over an untouched case of the same
# operation (same rounds, so what the machine did falls on both), B's
# median of that over A's. Quiet pairs and loaded ones apart.
def per_round(path):
    import re
    with open(path) as f:
        doc = json.load(f)
    times, injected = {}, None
    for r in doc["runs"]:
        # "read sql (round 3)", or with --runs K "read sql (run 2) (round 3)":
        # a round is keyed by its run as well, so runs are never crossed.
        m = re.match(r"^(.*?)(?: \(run (\d+)\))? \(round (\d+)\)$", r["name"])
        name, rnd = (m.group(1), (int(m.group(2) or 0), int(m.group(3)))) if m else (r["name"], (0, 1))
        rep = r["repetitions"][0]
        times.setdefault(name, {})[rnd] = (rep["ops_ns"] + rep["commit_ns"]) / max(1, rep["ops"])
        if r["plan"]["session"].get("inject"):
            injected = name
    return times, injected

def relative(times, case, ref):
    return median([times[case][k] / times[ref][k] for k in times[case] if k in times[ref]])

def per_round_http(path):
    """suite http: each system's rounds at the first level as times (one
    over requests/s), so the injected system's over the other's reads as
    the slowdown; the system with an injection named."""
    with open(path) as f:
        systems = json.load(f)["tables"]["http"]
    times = {s["system"]: {k: 1 / f["requests_per_s"] for k, f in enumerate(s["rounds"][0], start=1)}
             for s in systems if s.get("rounds")}
    injected = next((s["system"] for s in systems if s.get("injected")), None)
    return times, injected

delivered = []
for k, factor in enumerate(factors, start=1):
    if suite == "http":
        by = {"quiet": [], "loaded": []}
        for i in range(1, pairs + 1):
            b, case = per_round_http(f"{work}/b{k}-{i}.json")
            a, _ = per_round_http(f"{work}/{'a' if k == 1 else 'a2'}-{i}.json")
            refs = [n for n in b if case and n != case and n in a]
            if case in a and refs:
                ratio = relative(b, case, refs[0]) / relative(a, case, refs[0])
                by["loaded" if i in loaded else "quiet"].append(ratio)
        delivered.append({"factor": float(factor), **by})
        continue
    by = {"quiet": [], "loaded": []}
    for i in range(1, pairs + 1):
        b, case = per_round(f"{work}/b{k}-{i}.json")
        a, _ = per_round(f"{work}/{'a' if k == 1 else 'a2'}-{i}.json")
        op = case.split(" ")[0] if case else None
        refs = [n for n in b if case and n != case and n.split(" ")[0] == op and n in a]
        if case in a and refs:
            ratio = relative(b, case, refs[0]) / relative(a, case, refs[0])
            by["loaded" if i in loaded else "quiet"].append(ratio)
    delivered.append({"factor": float(factor), **by})

extra = os.environ.get("ARGS", "")
runs = f"`{suite} {extra}`" if extra else f"`{suite}`"
cmp_args = os.environ.get("CMP_ARGS", "")
compared = f"compare {cmp_args}" if cmp_args else "compare at its defaults"
print(f"\ncalibration: {pairs} pair(s) of {runs}, {compared}, injected into {case}")
print(f"A/A: {aa['flagged']} of {aa['comparisons']} case comparisons flagged "
      f"({100 * share(aa['flagged'], aa['comparisons']):.1f}% false alarms; "
      f"{100 * share(aa['flagged_corrected'], aa['comparisons']):.1f}% by the drift-corrected verdicts); "
      f"{aa['pairs_with_any']} of {pairs} pairs had any "
      f"({aa['pairs_with_any_corrected']} by the drift-corrected verdicts)")
print(f"within-run A/A (each run's rounds in two interleaved halves): {within['flagged']} of "
      f"{within['comparisons']} case comparisons flagged "
      f"({100 * share(within['flagged'], within['comparisons']):.1f}%; "
      f"{100 * share(within['flagged_corrected'], within['comparisons']):.1f}% by the drift-corrected verdicts); "
      f"{within['runs_with_any']} of {within['runs']} runs had any "
      f"({within['runs_with_any_corrected']} by the drift-corrected verdicts)")
print(f"rerun coverage: one run's interval held the rerun's median in {aa['rerun_inside']} of "
      f"{aa['rerun_checks']} cases ({100 * share(aa['rerun_inside'], aa['rerun_checks']):.0f}%)")
print(f"{'injected':>9}  {'found (power)':>14}  {'corrected':>10}  {'other cases flagged':>20}")
for row in ab:
    print(f"{'x' + format(row['factor'], '.2f'):>9}  "
          f"{row['found']:>3} of {pairs:<3} {100 * share(row['found'], pairs):4.0f}%  "
          f"{100 * share(row['found_corrected'], pairs):9.0f}%  "
          f"{row['others_flagged']:>5} of {row['others']:<5} {100 * share(row['others_flagged'], row['others']):4.1f}%")
    if row["missing"]:
        print(f"  warning: {row['missing']} comparison(s) did not mark the injected case")
for d in delivered:
    parts = [f"{len(d[k])} {k} pair(s) {median(d[k]):.3f}x" for k in ("quiet", "loaded") if d[k]]
    print(f"x{d['factor']:.2f} delivered (the injected case over an untouched one: of its operation, or for http the other system; B's over A's, "
          f"median): {'; '.join(parts) or 'no pair had an untouched case to set it against'}")
walls = []
for i in range(1, pairs + 1):
    for name in ["a", "a2"] + [f"b{k}" for k in range(1, len(factors) + 1)]:
        with open(f"{work}/{name}-{i}.json.wall") as f:
            walls.append(int(f.read()) / 1000)
print(f"wall time of one run of {runs}: median {median(walls):.1f} s (min {min(walls):.1f}, max {max(walls):.1f}, "
      f"{len(walls)} runs)")
cpus = run_load(f"{work}/a-1.json")[1]
shown = ", ".join(f"{i}: {loads[i]:.1f}" if loads[i] is not None else f"{i}: -" for i in loads)
print(f"load (highest 1-minute average of each pair's runs; {cpus} cores): {shown}")
if loaded:
    print(f"LOADED: pair(s) {', '.join(map(str, loaded))} ran above the machine's {cpus} cores; their "
          f"comparisons are counted above and marked below: rerun on a quiet machine for this machine's figures")
for a in alarms:
    fixed = (f"; drift-corrected by the {a['probe']} probe {a['corrected_ratio']:.2f}x, {a['corrected_verdict']}"
             if a["probe"] else "")
    pair = int(a["comparison"].rsplit(" ", 1)[-1].split("-")[-1])
    mark = " (loaded pair)" if pair in loaded else ""
    print(f"false alarm: {a['comparison']}: {a['case']} {a['ratio']:.2f}x, {a['verdict']}{fixed}{mark}")
json.dump({"suite": suite, "args": extra, "compare_args": cmp_args, "pairs": pairs, "inject_case": case, "a_a": aa, "a_b": ab,
           "within": within, "false_alarms": alarms, "loads": loads, "loaded_pairs": loaded,
           "cores": cpus, "delivered": delivered,
           "run_seconds": {"median": median(walls), "min": min(walls), "max": max(walls)}},
          open(out, "w"), indent=2)
print(f"written: {out}")
PY

#!/usr/bin/env bash
# How often a firm verdict of `blobbench reproduce` changes on an immediate
# rerun (issue 53): PAIRS pairs of `reproduce --budget BUDGET`, back to
# back, then per claim that ran in both runs of a pair, whether each firm
# verdict (holds, does not hold) of one run is the same in the other.
# Prints the count, how many were the opposite verdict, and the claims
# that changed most.
#
#   bench/verdict-flips.sh                          (10 pairs at --budget 30s, ~7 minutes here)
#   PAIRS=5 BUDGET=5m bench/verdict-flips.sh
#   BLOBBENCH=target/release/blobbench KEEP=1 bench/verdict-flips.sh
set -euo pipefail
shopt -s inherit_errexit

PAIRS=${PAIRS:-10}
BUDGET=${BUDGET:-30s}
BLOBBENCH=${BLOBBENCH:-target/release/blobbench}
if ! [[ "$PAIRS" =~ ^[1-9][0-9]*$ ]]; then
    echo "PAIRS=$PAIRS: a whole number of pairs, 1 or more" >&2
    exit 2
fi
if [ ! -x "$BLOBBENCH" ]; then
    echo "BLOBBENCH=$BLOBBENCH: no such program; build it with cargo build --release, or name one" >&2
    exit 2
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/blobbench-flips.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "results kept in $WORK" >&2
else
    trap 'rm -rf "$WORK"' EXIT
fi
for ((i = 1; i <= PAIRS; i++)); do
    for side in a b; do
        "$BLOBBENCH" reproduce --budget "$BUDGET" --dir "$WORK" --json "$WORK/$side-$i.json" --quiet \
            >"$WORK/$side-$i.log" 2>&1 || {
            # Exit 1 is an experiment that failed and was recorded: still a ledger.
            [ -s "$WORK/$side-$i.json" ] || {
                echo "reproduce failed (log below)" >&2
                tail -20 "$WORK/$side-$i.log" >&2
                exit 1
            }
        }
    done
    echo "pair $i of $PAIRS done" >&2
done
python3 - "$WORK" "$PAIRS" "$BUDGET" <<'PY'
import json, sys
work, pairs, budget = sys.argv[1], int(sys.argv[2]), sys.argv[3]
FIRM = {"holds", "does-not-hold"}
def verdicts(path):
    with open(path) as f:
        return {r["id"]: r["verdict"] for r in json.load(f)["tables"]["ledger"]}
firm = changed = opposite = ran = 0
by_claim = {}
for i in range(1, pairs + 1):
    a, b = verdicts(f"{work}/a-{i}.json"), verdicts(f"{work}/b-{i}.json")
    for claim, x in a.items():
        y = b.get(claim, "not-run")
        if "not-run" in (x, y):
            continue
        ran += 1
        # Each firm verdict of either run is one chance to change.
        for p, q in ((x, y), (y, x)):
            if p in FIRM:
                firm += 1
                if q != p:
                    changed += 1
                    opposite += q in FIRM
                    by_claim[claim] = by_claim.get(claim, 0) + 1
share = 100 * changed / firm if firm else float("nan")
print(f"{pairs} pair(s) of `reproduce --budget {budget}`: {ran} claims ran in both runs of a pair; "
      f"{changed} of {firm} firm verdicts ({share:.1f}%) were not the same on the rerun, {opposite} the opposite verdict")
for claim, n in sorted(by_claim.items(), key=lambda x: -x[1]):
    print(f"  {claim}: {n}")
PY

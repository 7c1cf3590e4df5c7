#!/usr/bin/env python3
"""The closing lines of scripts/test.sh, read from cargo-nextest's JUnit
reports (one per nextest run): each tier's wall time and counts, the ten
slowest tests with their times, every failing test with its first panic
line, so that a log cut to its tail still says what failed and why, and
last the plain closing line "tests: N passed, N failed, N skipped". Exits
1 if a test failed or no report holds a passing test.

    scripts/test-summary.py target/nextest/*/junit.xml

A test's tier is its module path's first name (fast, measured, servers,
calibration); a unit test of the library or the binary is fast, or servers
where its path has a `servers` module (tests that need a server)."""

import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta

TIERS = ("fast", "measured", "servers", "calibration")
SLOWEST = 10


def tier_of(binary, name):
    """The tier a test belongs to, from its binary and its path."""
    first = name.split("::", 1)[0]
    if binary.endswith("::tests") and first in TIERS:
        return first
    return "servers" if "::servers::" in f"::{name}" else "fast"


def first_panic(case):
    """The panic's place and the first line of its message, or the
    failure's own message (a crash, a signal, a time-out)."""
    text = "\n".join(
        (e.text or "") for e in case if e.tag in ("system-err", "system-out", "failure")
    )
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "panicked at" in line:
            place = line.split("panicked at", 1)[1].strip().rstrip(":")
            message = next((m.strip() for m in lines[i + 1 :] if m.strip()), "")
            return f"{message} (at {place})"
    failure = case.find("failure")
    if failure is None:
        failure = case.find("error")
    return (failure.get("message") or failure.get("type") or "failed") if failure is not None else "failed"


def cases(paths):
    """Every test case of every report, read once: (tier, name, start,
    seconds, failed, case), None for one the report lists as skipped."""
    for path in paths:
        for suite in ET.parse(path).getroot().iter("testsuite"):
            binary = suite.get("name", "")
            for case in suite.iter("testcase"):
                if case.find("skipped") is not None:
                    yield None
                    continue
                name = case.get("name", "")
                seconds = float(case.get("time") or 0)
                start = datetime.fromisoformat(case.get("timestamp"))
                failed = case.find("failure") is not None or case.find("error") is not None
                yield tier_of(binary, name), name, start, seconds, failed, case


def main(paths):
    every = list(cases(paths))
    found = [c for c in every if c is not None]
    failed = sum(1 for c in found if c[4])
    passed = len(found) - failed
    if found:
        report(found)
    print(f"tests: {passed} passed, {failed} failed, {len(every) - len(found)} skipped")
    return 0 if failed == 0 and passed > 0 else 1


def report(found):
    """Each tier's wall time, the slowest tests and the failures."""
    print("scripts/test.sh: tiers (wall time from the first test's start to the last one's end)")
    for tier in TIERS:
        mine = [c for c in found if c[0] == tier]
        if not mine:
            continue
        begin = min(c[2] for c in mine)
        end = max(c[2] + timedelta(seconds=c[3]) for c in mine)
        failed = sum(1 for c in mine if c[4])
        busy = sum(c[3] for c in mine)
        print(
            f"  {tier:<12} {(end - begin).total_seconds():7.1f} s wall, "
            f"{busy:7.1f} s of tests, {len(mine)} tests, {failed} failed"
        )
    print(f"scripts/test.sh: the {SLOWEST} slowest tests")
    for tier, name, _, seconds, failed, _ in sorted(found, key=lambda c: -c[3])[:SLOWEST]:
        print(f"  {seconds:7.1f} s  {name}{'  FAILED' if failed else ''}")
    failures = [c for c in found if c[4]]
    if failures:
        print(f"scripts/test.sh: {len(failures)} failed, each with its first panic line")
        for tier, name, _, seconds, _, case in failures:
            print(f"  {name} ({tier}, {seconds:.1f} s): {first_panic(case)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

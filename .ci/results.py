#!/usr/bin/env python3
"""CI's closing count from meson's test logs: every meson test is passed,
skipped (the whole program, or any of its cmocka tests, skipped) or failed.
Each skip is listed; one that .ci/expected-skips does not name fails CI,
and so does a missing log.

usage: results.py EXPECTED FUZZ_OK FUZZ_FAILED BUILD...
(each BUILD a build folder whose meson-logs/testlog.json is read; the
fuzzers' runs count as tests)"""
import json
import os
import re
import sys

# a TAP line of a skipped test: "ok 3 # SKIP name" (cmocka, after
# tests/common.c's rewrite) or "ok 3 - name # SKIP why"
SKIP_LINE = re.compile(r"^(?:not )?ok\s+\d+\s*(?:-\s*)?(.*?)\s*#\s*SKIP\b\s*(.*)$", re.I)
BAD = {"FAIL", "ERROR", "TIMEOUT", "UNEXPECTEDPASS", "INTERRUPT"}


def expected_skips(path):
    want = set()
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) != 3:
            sys.exit(f"{path}: want BUILD TEST CASE, got {' '.join(line)}")
        want.add(tuple(line))
    return want


def skipped_cases(stdout):
    cases = []
    for line in (stdout or "").splitlines():
        m = SKIP_LINE.match(line)
        if m:
            cases.append(m.group(1) or m.group(2) or "?")
    return cases


def main():
    expected = expected_skips(sys.argv[1])
    passed, failed, skipped = int(sys.argv[2]), int(sys.argv[3]), 0
    seen, tests = set(), set()
    for build in sys.argv[4:]:
        log = os.path.join(build, "meson-logs", "testlog.json")
        if not os.path.exists(log):
            print(f"no test log: {log}")
            failed += 1
            continue
        for line in open(log):
            r = json.loads(line)
            name, result = r["name"].split(" / ")[-1], r.get("result")
            tests.add((build, name))
            if result in BAD:
                failed += 1
                continue
            cases = skipped_cases(r.get("stdout"))
            if result == "SKIP" and not cases:
                cases = ["*"]
            if not cases:
                passed += 1
                continue
            unexpected = 0
            for case in cases:
                key = (build, name, case)
                seen.add(key)
                ok = key in expected
                unexpected += not ok
                print(f"skipped: {build} {name} {case}" + ("" if ok else "  <- not in .ci/expected-skips"))
            if unexpected:
                failed += 1
            else:
                skipped += 1
    for key in sorted(expected - seen):
        if key[:2] in tests:
            print(f"expected to skip, ran: {' '.join(key)}")
    print(f"{passed} passed, {skipped} skipped, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

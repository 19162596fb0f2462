#!/usr/bin/env python3
"""Where a meson test run spent its time, from BUILD/meson-logs/testlog.json.

    python3 tools/test_timeline.py BUILD [--replay]

Prints the run's length and the sum of its tests' durations, the longest
tests (start and end in seconds from the first start), and each stretch
where a single test ran (a test that runs alone, or the last long test).
--replay runs meson's order again on paper: the tests as BUILD declares
them now (priority, then declaration; a test that is not parallel waits for
the others and runs alone), each with its duration in the log, as many at a
time as cores: what an order or an is_parallel change would give before a
full run measures it.
"""
import heapq
import json
import os
import subprocess
import sys


def load(build):
    rows = []
    with open(os.path.join(build, 'meson-logs', 'testlog.json')) as f:
        for line in f:
            r = json.loads(line)
            rows.append((r['starttime'], r['duration'], r['name'].split(' / ')[-1]))
    t0 = min(r[0] for r in rows)
    return [(s - t0, d, n) for s, d, n in rows]


def alone_stretches(rows, least=10.0):
    """Stretches of at least `least` seconds with exactly one test running."""
    edges = sorted([(s, 1, n) for s, d, n in rows] + [(s + d, -1, n) for s, d, n in rows])
    running, out, since, who = set(), [], None, None
    for t, kind, n in edges:
        if since is not None and t - since >= least:
            out.append((since, t, who))
        running.add(n) if kind > 0 else running.discard(n)
        since, who = (t, next(iter(running))) if len(running) == 1 else (None, None)
    return out


def replay(build, rows, jobs):
    dur = {n: d for s, d, n in rows}
    tests = json.loads(subprocess.check_output(['meson', 'introspect', build, '--tests']))
    tests.sort(key=lambda t: -t['priority'])  # stable: declaration order within a priority
    now, running, missing = 0.0, [], []
    for t in tests:
        d = dur.get(t['name'])
        if d is None:
            missing.append(t['name'])
            continue
        if not t['is_parallel']:
            now, running = max([now] + running), []
            now += d
            continue
        if len(running) >= jobs:
            now = max(now, heapq.heappop(running))
        heapq.heappush(running, now + d)
    return max([now] + running), missing


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    rows = load(build)
    end = max(s + d for s, d, n in rows)
    print('%d tests: %.0f s from first start to last end, durations summing to %.0f s'
          % (len(rows), end, sum(d for s, d, n in rows)))
    print('longest:')
    for s, d, n in sorted(rows, key=lambda r: -r[1])[:15]:
        print('  %7.1f s  %7.0f-%-7.0f %s' % (d, s, s + d, n))
    print('one test running:')
    for a, b, n in alone_stretches(rows):
        print('  %7.0f-%-7.0f %6.0f s  %s' % (a, b, b - a, n))
    if '--replay' in sys.argv[2:]:
        jobs = int(os.environ.get('MESON_TESTTHREADS') or os.cpu_count() or 1)
        t, missing = replay(build, rows, jobs)
        print('replayed in the declared order, %d at a time: %.0f s' % (jobs, t))
        if missing:
            print('  not in the log (left out): ' + ', '.join(missing))


if __name__ == '__main__':
    main()

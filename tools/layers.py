#!/usr/bin/env python3
"""The call graph between clscale's source files, from the symbols of the
built objects (nm), and the check that it has no circles.

    python3 tools/layers.py BUILD_DIR            # check; exit 1 on a circle
    python3 tools/layers.py BUILD_DIR --picture  # also print the graph

Rules checked (docs/ARCHITECTURE.md):
  1. no two files call each other, directly or through others (no strongly
     connected component of more than one file);
  2. the library's folders call only downward:
     util <- io <- scalers <- stats <- engine <- quantiles <- lightcurve <- plan
          <- clean <- api <- mpi <- python, tools;
  3. their headers follow the same order: a file includes headers of its
     own folder or of folders below it (read from the sources' #include
     lines). The headers at the top of src/ (internal.h, testing.h: what
     every folder shares) may be included from any folder, and include
     nothing above src/scalers themselves;
  4. the environment (tools/env_check.py's source check, one list): the
     library reads only the documented CLSCALE_* variables
     (docs/ARCHITECTURE.md, "The environment") and never calls setenv,
     putenv, unsetenv or clearenv.
Objects come from the build's compile_commands.json, so a file added to
meson is checked without a change here. Tests and fuzz targets are left out.
"""
import glob
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

from env_check import ALLOWED as ENV_DOCUMENTED, check_sources as environment

# A folder may call folders of a lower or equal rank; equal rank only
# within the same folder (tools/cli and tools/bench share the tool's rank).
# scalers sit below stats: the stats file and stats_build look scalers up in
# their table. The engine is mechanics (devices, programs, slices, passes,
# staging, reports); exact selection (quantiles) and the light curves run
# their passes on it; the planner (plan) runs a call's passes, the robust
# scaler's quantiles among them, and decides the route; the cleaning stage
# asks the planner and runs the scaler through it; the public entry points
# (api) dispatch on the route.
RANK = {"src/util": 0, "src/io": 1, "src/scalers": 2, "src/stats": 3, "src/engine": 4,
        "src/quantiles": 5, "src/lightcurve": 6, "src/plan": 7, "src/clean": 8, "src/api": 9,
        "src/mpi": 10, "python": 11, "tools": 12}


def folder(path):
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return "src/" + parts[1]
    if parts[0] == "src":
        return "src"
    return parts[0]


def symbols(obj, flags):
    out = subprocess.run(["nm", "-P"] + flags + [obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2:
            yield f[0], f[1]


def load(build):
    root = os.path.dirname(os.path.abspath(os.path.join(build, "build.ninja")))
    with open(os.path.join(root, "compile_commands.json")) as fh:
        cmds = json.load(fh)
    src_root = None
    files = {}
    for c in cmds:
        src = os.path.normpath(os.path.join(c["directory"], c["file"]))
        if src_root is None:
            # the source tree: where this script's parent folder is
            src_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        rel = os.path.relpath(src, src_root)
        if rel.split("/")[0] not in ("src", "tools", "python") or rel == "tools/embed.c":
            continue
        obj = os.path.join(c["directory"], c["output"])
        if os.path.exists(obj):
            files.setdefault(rel, obj)  # the first of several builds (static/shared) is enough
    defs, uses = {}, defaultdict(set)
    for rel, obj in files.items():
        for name, kind in symbols(obj, ["--defined-only", "-g"]):
            if kind in "TDBRCV":
                defs.setdefault(name, rel)
        for name, kind in symbols(obj, ["-u"]):
            uses[rel].add(name)
    graph = defaultdict(set)
    for rel in files:
        for name in uses[rel]:
            to = defs.get(name)
            if to and to != rel:
                graph[rel].add(to)
    return sorted(files), graph


def circles(nodes, graph):
    """Tarjan's strongly connected components of more than one node."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


# What the headers at the top of src/ may include: folders up to this rank.
SHARED_RANK = RANK["src/scalers"]


def includes(src_root):
    """(file, header) for every #include "..." of a header of src/ in the
    library's, the tool's and the Python extension's sources."""
    out = []
    for top in ("src", "tools", "python"):
        for f in sorted(glob.glob(os.path.join(src_root, top, "**", "*.[ch]"), recursive=True)):
            rel = os.path.relpath(f, src_root)
            with open(f, errors="replace") as fh:
                text = fh.read()
            for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
                for base in (os.path.dirname(rel), "src", "include"):
                    cand = os.path.normpath(os.path.join(base, name))
                    if os.path.exists(os.path.join(src_root, cand)):
                        if cand.startswith("src/"):
                            out.append((rel, cand))
                        break
    return out


def upward_includes(src_root):
    bad = []
    for a, b in includes(src_root):
        fa, fb = folder(a), folder(b)
        if fa == fb or fb == "src":
            continue
        rb = RANK.get(fb)
        if fa == "src":
            if rb is None or rb > SHARED_RANK:
                bad.append((a, b))
            continue
        ra = RANK.get(fa)
        if ra is None or rb is None or ra < rb or (ra == rb and fa != fb):
            bad.append((a, b))
    return sorted(set(bad))


def upward(graph):
    bad = []
    for a, tos in graph.items():
        fa = folder(a)
        for b in tos:
            fb = folder(b)
            if fa == fb:
                continue
            ra, rb = RANK.get(fa), RANK.get(fb)
            if ra is None or rb is None or ra < rb or (ra == rb and fa != fb):
                bad.append((a, b))
    return sorted(bad)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    nodes, graph = load(sys.argv[1])
    if "--picture" in sys.argv:
        by_folder = defaultdict(lambda: defaultdict(int))
        for a, tos in graph.items():
            for b in tos:
                if folder(a) != folder(b):
                    by_folder[folder(a)][folder(b)] += 1
        print("folders (calls between files of different folders):")
        for fa in sorted(by_folder, key=lambda f: -RANK.get(f, 9)):
            print("  %-12s -> %s" % (fa, ", ".join("%s (%d)" % (fb, n) for fb, n in
                                                   sorted(by_folder[fa].items(), key=lambda x: -RANK.get(x[0], 9)))))
        print("files:")
        for a in nodes:
            if graph.get(a):
                print("  %s -> %s" % (a, ", ".join(sorted(graph[a]))))
    rc = 0
    for c in circles(nodes, graph):
        print("circle: " + " <-> ".join(c))
        rc = 1
    for a, b in upward(graph):
        print("upward call: %s -> %s" % (a, b))
        rc = 1
    for a, b in upward_includes(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        print("upward include: %s includes %s" % (a, b))
        rc = 1
    for line in environment(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        print("environment: %s (the library reads only %s and sets none)" % (line, ", ".join(sorted(ENV_DOCUMENTED))))
        rc = 1
    if rc == 0:
        print("%d files, no circles, every call and include goes down" % len(nodes))
    return rc


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The README's figures against the result files they come from.

Every table of figures in the README follows a line
    <!-- figures: KIND docs/results/FILE.json [more files] -->
and this script renders that table from the files (medians and the ratios
of medians the files hold, nothing extrapolated) and compares it, line for
line, with the README's. A figure edited by hand, a result file replaced
without its table, or a measured figure (a ratio, a time, a rate) in the
README outside such a table fails. --print writes the tables as they
should read.

usage: check_figures.py [--print] [README]     (exit 1 when a table differs)"""
import json
import os
import re
import sys

MARKER = re.compile(r"^<!-- figures: (\S+) (.+?) -->\s*$")
# a measured figure: a ratio (5.46x), a time (56.5 ms, 0.3 s) or a rate (30 GB/s)
FIGURE = re.compile(r"\b\d+(?:\.\d+)?(?:x\b| ?(?:ms|s|GB/s)\b)")


def ms(s):
    v = s * 1e3
    return f"{v:.3f} ms" if v < 1 else f"{v:.2f} ms" if v < 10 else f"{v:.1f} ms" if v < 1000 else f"{v:.0f} ms"



def x(v):
    return f"{v:.2f}x" if v < 10 else f"{v:.1f}x" if v < 100 else f"{v:.0f}x"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def user_run(w):
    """The run a plain call makes: every device together, or the one device."""
    runs = [r for r in w["runs"] if not r.get("pinned")]
    together = [r for r in runs if r["kind"] == "together"]
    if together:
        return together[0]
    alone = [r for r in runs if r["kind"] == "device"]
    return alone[0] if len(alone) == 1 else None


def render_bench(files):
    """`clscale bench --json`: one row per workload, the summary's figures."""
    j = files[0]
    rows = []
    for w in j["workloads"]:
        r = user_run(w)
        if r is None or r["status"] != "ok":
            raise ValueError(f"{w['name']}: no correct run of every device")
        np = w.get("numpy") or {}
        vs_numpy = x(np["median_s"] / r["times"]["median"]) if np.get("median_s") else "-"
        rows.append([f"{w['name']}: {w['description']}", ms(r["times"]["median"]),
                     f"{r['gbs']:.1f}", f"{100 * r['fraction_of_limit']:.0f}% {r['limit']['name']}",
                     vs_numpy, x(r["speedup"]["vs_threads"]), x(r["speedup"]["vs_single"])])
    return table(["workload", "clscale", "GB/s", "of the limit", "vs numpy", "vs all cores (C)", "vs one core (C)"],
                 rows)


def render_gpu(files):
    """`clscale bench --json` on a GPU machine: seed-A's runs on the devices."""
    j = files[0]
    w = next(w for w in j["workloads"] if w["name"] == "seed-a")
    rows = []
    for r in w["runs"]:
        if r["kind"] in ("host-single", "host-threads") or r["status"] != "ok":
            continue
        names = [j["machine"]["devices"][d]["name"] for d in r["devices"]]
        who = "all together" if r["kind"] == "together" else names[0]
        rows.append([who + (", pinned memory" if r.get("pinned") else ""), ms(r["times"]["median"]),
                     f"{r['gbs']:.1f}", x(r["speedup"]["vs_threads"])])
    return table(["seed-A on", "median", "GB/s", "vs all cores (C)"], rows)


def runs_by_kind(w):
    return {r["kind"]: r for r in w["runs"]}


def render_cleaning(files):
    """python -m clscale.bench: sigma-clip, quantiles, impute (+ impute-seed-a)."""
    rows = []
    for j in files:
        for w in j["workloads"]:
            k, ra = runs_by_kind(w), w["ratios"]
            med = {kind: r["times"]["median"] for kind, r in k.items()}
            if w["name"] == "sigma-clip":
                what = "3-sigma clipping to convergence, 18 x 60 x 20000 float64 (5% NaN), per matrix"
                rows.append([f"{what}: the library call", ms(med["c"]),
                             f"{x(med['astropy'] / med['c'])} faster than astropy's `sigma_clip`"])
                rows.append(["the same, `clscale.sigma_clip` (a masked array)", ms(med["python"]),
                             f"{x(ra['astropy_over_function'])} faster; masks equal"])
                rows.append(["the same, `clscale.SigmaClip().fit_transform`", ms(med["python-estimator"]),
                             f"{x(ra['astropy_over_estimator'])} faster"])
                rows.append(["`clscale.sigma_clipped_stats`", ms(med["python-stats"]),
                             f"{x(ra['astropy_over_stats'])} faster than astropy's"])
            elif w["name"] == "quantiles":
                rows.append(["median and quartiles of seed-A per matrix, exact: `clscale.nanpercentile`",
                             ms(med["python"]),
                             f"{x(med['numpy'] / med['python'])} faster than numpy's `percentile` "
                             f"(which keeps NaN); the C call {x(ra['quantiles_over_minmax_fit'])} a min-max fit"])
            elif w["name"] in ("impute", "impute-seed-a"):
                shape = " x ".join(str(n) for n in w["shape"]) + " " + w["dtype"]
                rows.append([f"`clscale.make_pipeline(SimpleImputer(), StandardScaler())`, {shape} (5% NaN)",
                             ms(med["fused"]),
                             f"{x(ra['fused_over_scaler_on_nan'])} `StandardScaler` alone; "
                             f"{x(ra['sklearn_over_fused'])} faster than scikit-learn's pipeline"])
                if w["name"] == "impute":
                    rows.append([f"`clscale.SimpleImputer` alone, {shape}", ms(med["imputer"]),
                                 f"{x(ra['sklearn_imputer_over_imputer'])} faster than scikit-learn's"])
    return table(["task", "clscale (median)", "against, same run"], rows)


SHAPE_OPS = [("robust", "robust"), ("quantiles", "quantiles"), ("impute", "median imputation"),
             ("clip-conv", "clip to convergence"), ("clip-mad", "clip, mad_std")]


# the columns of a GPU's run (`clscale bench --workload shapes --json`)
GPU_OPS = [("robust", "robust"), ("quantiles", "quantiles")]


def render_shapes(files):
    """python -m clscale.bench --workload shapes: a cell is the call as a
    multiple of one min-max call, then its speed-up over the peer; a second
    file, `clscale bench --workload shapes` on a GPU, adds its multiples."""
    w = files[0]["workloads"][0]
    gpu = {}
    if len(files) > 1:
        for r in files[1]["rows"]:
            gpu[(r["rows"], r["cols"], r["op"])] = r
    cells = {}
    for r in w["rows"]:
        cells[(r["rows"], r["cols"], r["op"])] = r
    shapes = sorted({(r["rows"], r["cols"]) for r in w["rows"]})
    rows = []
    for nr, nc in shapes:
        row = [f"{nr:,} x {nc:,}", f"{1e3 * cells[(nr, nc, 'minmax')]['median_s']:.0f} ms"]
        for op, _ in SHAPE_OPS:
            c = cells[(nr, nc, op)]
            row.append(f"{c['x_minmax']:.1f}x; {c['speedup']:.1f}x" if "speedup" in c else f"{c['x_minmax']:.1f}x")
        for op, _ in GPU_OPS if gpu else []:
            row.append(f"{gpu[(nr, nc, op)]['x_minmax']:.1f}x")
        rows.append(row)
    head = ["rows x columns", "min-max"] + [name for _, name in SHAPE_OPS]
    return table(head + ([f"H200: {name}" for _, name in GPU_OPS] if gpu else []), rows)


RENDER = {"bench": render_bench, "gpu": render_gpu, "cleaning": render_cleaning, "shapes": render_shapes}


def check(readme, show):
    root = os.path.dirname(os.path.abspath(readme))
    lines = open(readme, encoding="utf-8").read().split("\n")
    bad, found = 0, 0
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        found += 1
        kind, paths = m.group(1), m.group(2).split()
        if kind not in RENDER:
            print(f"{readme}:{i + 1}: unknown kind of figures {kind!r}")
            bad += 1
            continue
        try:
            files = [json.load(open(os.path.join(root, p), encoding="utf-8")) for p in paths]
            want = RENDER[kind](files)
        except (OSError, ValueError, KeyError, StopIteration) as e:
            print(f"{readme}:{i + 1}: {kind} {' '.join(paths)}: {type(e).__name__}: {e}")
            bad += 1
            continue
        got, k = [], i + 1
        while k < len(lines) and lines[k].startswith("|"):
            got.append(lines[k])
            k += 1
        if show:
            print(line)
            print("\n".join(want) + "\n")
        if got != want:
            bad += 1
            print(f"{readme}:{i + 2}: the table does not match {' '.join(paths)}:")
            for g, w in zip(got + [""] * len(want), want + [""] * len(got)):
                if g != w:
                    print(f"  README: {g}\n  file:   {w}")
    # outside the checked tables and code blocks, a figure has no file to match
    in_code, in_table = False, False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
        in_table = line.startswith("|") and (in_table or (i > 0 and MARKER.match(lines[i - 1]) is not None))
        if not in_code and not in_table and FIGURE.search(line):
            print(f"{readme}:{i + 1}: a figure outside the checked tables: {FIGURE.search(line).group(0)!r}")
            bad += 1
    if found == 0:
        print(f"{readme}: no <!-- figures: ... --> line: nothing checked")
        bad += 1
    if not show:
        print(f"check_figures: {found} tables, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    show = "--print" in args
    args = [a for a in args if a != "--print"]
    sys.exit(check(args[0] if args else os.path.join(os.path.dirname(__file__), "..", "README.md"), show))

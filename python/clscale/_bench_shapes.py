"""The shape sweep of `python -m clscale.bench --workload shapes`: exact
statistics and cleaning at every group length, against one min-max call on
the same data and against the peers a scientist runs today.

Data: float64, normal (mean 10, std 2) with 1 % NaN and 0.1 % outliers
(x 50), of `rows x cols` with the statistics per column (axis 0: a group
is a column of `rows` values). The group lengths run from 1 to 10^7 (those
up to the values per shape); the columns are as many as make 16 M values
(128 MB, scaled by --size), at most 10^6 groups.

Rows of each shape (every one a full call on the whole array):
  minmax       MinMaxScaler().fit_transform(x): the unit of the ratios
  robust       RobustScaler().fit_transform(x)   vs sklearn's RobustScaler
  quantiles    nanquantile(x, [.25, .5, .75], axis=0)   vs numpy's
  impute       SimpleImputer(strategy="median")   vs sklearn's SimpleImputer
  clip-5       sigma_clip(x, sigma=3, axis=0)  (median/std, 5 iterations)
  clip-conv    the same to convergence (maxiters=None)
  clip-mean    cenfunc="mean", to convergence
  clip-mad     stdfunc="mad_std", to convergence   each vs astropy's sigma_clip
Times are medians of --repeats calls after a warm-up (a peer taking over
2 s runs once). Results are checked against the peer's: masks equal,
values within 1e-9 relative.
"""
import warnings

import numpy as np

from ._bench_calls import SEED, median_time

LENGTHS = (1, 60, 64, 65, 300, 1000, 5000, 100_000, 10_000_000)
MAX_GROUPS = 1_000_000


def _data(rows, cols):
    rng = np.random.default_rng(SEED + rows)
    x = rng.normal(10.0, 2.0, (rows, cols))
    x[rng.random(x.shape) < 0.01] = np.nan
    out = rng.random(x.shape) < 0.001
    x[out] *= 50.0
    return x


def _close(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return np.inf
    both = np.isnan(a) & np.isnan(b)
    if (np.isnan(a) != np.isnan(b)).any():
        return np.inf
    d = np.abs(a - b)[~both]
    s = np.maximum(1.0, np.abs(b))[~both]
    return float((d / s).max()) if d.size else 0.0


def shapes(args):
    """One row per shape and operation: clscale's median time, its ratio to
    one min-max call and its speed-up over the peer (None without one)."""
    import clscale
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import RobustScaler
    try:
        from astropy.stats import sigma_clip as ap_clip
    except ImportError:  # astropy is optional: the clipping rows run without a peer
        ap_clip = None
    total = max(1, int(16_000_000 * args.size))
    rows_out = []
    lengths = [n for n in LENGTHS if n <= total]  # all of them at --size 1
    if getattr(args, "rows", None):
        lengths = [n for n in lengths if n == args.rows]
    for rows in lengths:
        cols = max(1, min(MAX_GROUPS, total // rows))
        x = _data(rows, cols)
        q = [0.25, 0.5, 0.75]
        ops = [
            ("minmax", lambda: clscale.MinMaxScaler().fit_transform(x), None),
            ("robust", lambda: clscale.RobustScaler().fit_transform(x),
             lambda: RobustScaler().fit_transform(x)),
            ("quantiles", lambda: clscale.nanquantile(x, q, axis=0),
             lambda: np.nanquantile(x, q, axis=0)),
            ("impute", lambda: clscale.SimpleImputer(strategy="median").fit_transform(x),
             lambda: SimpleImputer(strategy="median", keep_empty_features=True).fit_transform(x)),
        ]
        clips = [("clip-5", dict(maxiters=5)), ("clip-conv", dict(maxiters=None)),
                 ("clip-mean", dict(maxiters=None, cenfunc="mean")),
                 ("clip-mad", dict(maxiters=None, stdfunc="mad_std"))]
        for name, kw in clips:
            ops.append((name, (lambda kw=kw: clscale.sigma_clip(x, sigma=3, axis=0, **kw)),
                        (lambda kw=kw: ap_clip(x, sigma=3, axis=0, **kw)) if ap_clip else None))
        base = None
        for name, mine, peer in ops:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t, n = median_time(mine, args.repeats)
                row = {"rows": rows, "cols": cols, "op": name, "median_s": t, "calls": n}
                if base is None:
                    base = t
                row["x_minmax"] = t / base
                if peer is not None:
                    pt, pn = median_time(peer, args.repeats)
                    row.update(peer_s=pt, peer_calls=pn, speedup=pt / t)
                    a, b = mine(), peer()
                    if name.startswith("clip"):
                        ok = np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
                        row["check"] = "masks equal" if ok else "MASKS DIFFER"
                    else:
                        if name == "impute":
                            # scikit-learn fills an all-missing column with 0
                            # (keep_empty_features), clscale keeps it missing
                            b = np.where(np.isnan(x).all(axis=0), np.nan, b)
                        err = _close(a, b)
                        row["check"] = f"max rel error {err:.1e}" if err <= 1e-9 else f"DIFFERS {err:.1e}"
            rows_out.append(row)
            print(f"# {rows} x {cols} {name}: {row['median_s'] * 1e3:.1f} ms, {row['x_minmax']:.1f}x min-max"
                  + (f", {row['speedup']:.1f}x the peer ({row['check']})" if "speedup" in row else ""),
                  flush=True)
        del x
    return {"name": "shapes", "lengths": lengths, "values_per_shape": total, "rows": rows_out}


_COLORS = {"robust": "#1f77b4", "quantiles": "#ff7f0e", "impute": "#2ca02c", "clip-5": "#d62728",
           "clip-conv": "#9467bd", "clip-mean": "#8c564b", "clip-mad": "#e377c2"}


def svg(result, title):
    """Speed-up over the peer against the group length (log-log), one line
    per operation, as an SVG document."""
    W, H, L, R, T, B = 720, 420, 70, 150, 40, 50
    pts = [r for r in result["rows"] if "speedup" in r]
    xs = [np.log10(r["rows"]) for r in pts] or [0.0]
    ys = [np.log10(max(r["speedup"], 1e-3)) for r in pts] or [0.0]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    y0, y1 = min(min(ys), 0.0) - 0.1, max(ys) + 0.1

    def px(v):
        return L + (v - x0) / (x1 - x0) * (W - L - R)

    def py(v):
        return H - B - (v - y0) / (y1 - y0) * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
           f'font-size="12"><rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="22" font-size="14">{title}</text>']
    for e in range(int(np.floor(y0)), int(np.ceil(y1)) + 1):
        if y0 <= e <= y1:
            out.append(f'<line x1="{L}" x2="{W - R}" y1="{py(e):.1f}" y2="{py(e):.1f}" stroke="#ddd"/>'
                       f'<text x="{L - 8}" y="{py(e) + 4:.1f}" text-anchor="end">{10.0 ** e:g}x</text>')
    out.append(f'<line x1="{L}" x2="{W - R}" y1="{py(0):.1f}" y2="{py(0):.1f}" stroke="#888" '
               f'stroke-dasharray="4 3"/>')
    last = -1e9
    for n in result["lengths"]:
        x = px(np.log10(n))
        if x - last >= 28:  # 60, 64 and 65 share one place
            out.append(f'<text x="{x:.1f}" y="{H - B + 18}" text-anchor="middle">{n:g}</text>')
            last = x
    out.append(f'<line x1="{L}" x2="{W - R}" y1="{py(np.log10(5)):.1f}" y2="{py(np.log10(5)):.1f}" '
               f'stroke="#2a2" stroke-dasharray="2 4"/><text x="{W - R - 4}" y="{py(np.log10(5)) - 4:.1f}" '
               f'text-anchor="end" fill="#2a2">5x</text>')
    out.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 12}" text-anchor="middle">values per group '
               f'(rows of a column)</text>')
    out.append(f'<text x="16" y="{(T + H - B) / 2:.0f}" transform="rotate(-90 16 {(T + H - B) / 2:.0f})" '
               f'text-anchor="middle">speed-up over the peer</text>')
    for i, (op, col) in enumerate(_COLORS.items()):
        line = [r for r in pts if r["op"] == op]
        if not line:
            continue
        path = " ".join(f"{px(np.log10(r['rows'])):.1f},{py(np.log10(max(r['speedup'], 1e-3))):.1f}" for r in line)
        out.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="2"/>')
        out.append(f'<line x1="{W - R + 12}" x2="{W - R + 32}" y1="{T + 16 * i}" y2="{T + 16 * i}" '
                   f'stroke="{col}" stroke-width="2"/><text x="{W - R + 38}" y="{T + 16 * i + 4}">{op}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"

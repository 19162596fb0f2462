"""The seed-a-loop workload of `python -m clscale.bench` (run with seed-a):
seed-A as a scikit-learn user writes it, a new estimator and a new output
array per call, against scikit-learn's same code and numpy's floor for a
new array (allocate and copy the same array).

Rows, taking turns (bench's time_rows):
  loop      for i: y[i] = MinMaxScaler().fit_transform(x[i])  (clscale)
  loop-sk   the same loop with scikit-learn's MinMaxScaler
  2d        one MinMaxScaler().fit_transform(x[i]) (47 MB; i cycles over the
            batch), its output dropped as the loop drops it
  2d-kept   the same call as if the caller kept every output: each output
            on fresh memory (_output.fresh_outputs)
  copy-2d   numpy's x[i].copy(): the floor of a call that returns a new array
  3d        one MinMaxScaler(scope="matrix").fit_transform(x) (the batch),
            its output dropped
  3d-kept   the same call as if the caller kept every output (fresh memory)
  copy-3d   numpy's x.copy()
Ratios: loop-sk / loop (the speed-up over scikit-learn), 2d / copy-2d,
2d-kept / copy-2d, 3d / copy-3d and 3d-kept / copy-3d (multiples of
numpy's floor).
Every clscale output is checked against numpy in float64. A float32
matrix (23.6 MB) is below glibc's largest mmap threshold: from the second
copy on, copy-2d reuses the heap and pays no page faults, so in float32
call_2d_over_copy sets the kernel against memcpy (docs/PYTHON.md, the
floor the loop benchmark compares with).
"""
import statistics

import numpy as np

from . import _output
from ._bench_calls import time_rows
from ._scalers import MinMaxScaler


def _summary(ts):
    return {"unit": "s", "repeats": ts, "median": statistics.median(ts), "min": min(ts), "max": max(ts)}


def loops(x, y, want, repeats, devices):
    """The workload's result dict for seed-A `x` (batch x 60 x 98450,
    float64 or float32) whose per-matrix min-max scaling is `want`
    (float64); the loops write `y` (x's dtype)."""
    import sklearn.preprocessing as skp

    nb = x.shape[0]
    turn = [0]

    def matrix():
        turn[0] = (turn[0] + 1) % nb
        return x[turn[0]]

    def loop():
        for i in range(nb):
            y[i] = MinMaxScaler(devices=devices).fit_transform(x[i])

    def loop_sk():
        for i in range(nb):
            y[i] = skp.MinMaxScaler().fit_transform(x[i])

    def one_2d():
        MinMaxScaler(devices=devices).fit_transform(matrix())

    def one_2d_kept():
        with _output.fresh_outputs():
            MinMaxScaler(devices=devices).fit_transform(matrix())

    def one_3d():
        MinMaxScaler(scope="matrix", devices=devices).fit_transform(x)

    def one_3d_kept():
        with _output.fresh_outputs():
            MinMaxScaler(scope="matrix", devices=devices).fit_transform(x)

    rows = [
        ("clscale: for i: y[i] = MinMaxScaler().fit_transform(x[i])", "loop", loop),
        ("scikit-learn: for i: y[i] = MinMaxScaler().fit_transform(x[i])", "loop-sk", loop_sk),
        ("clscale: one MinMaxScaler().fit_transform(x[i]) (output dropped, as the loop does)", "2d", one_2d),
        ("clscale: one MinMaxScaler().fit_transform(x[i]) (every output kept: fresh memory)", "2d-kept",
         one_2d_kept),
        ("numpy: x[i].copy()", "copy-2d", lambda: matrix().copy()),
        ("clscale: one MinMaxScaler(scope='matrix').fit_transform(x) (output dropped)", "3d", one_3d),
        ("clscale: one MinMaxScaler(scope='matrix').fit_transform(x) (every output kept: fresh memory)",
         "3d-kept", one_3d_kept),
        ("numpy: x.copy()", "copy-3d", lambda: x.copy()),
    ]
    times = time_rows(rows, repeats)
    med = {r[1]: statistics.median(times[r[0]]) for r in rows}

    errors = {}
    y.fill(np.nan)
    loop()
    errors["loop"] = float(np.max(np.abs(y - want)))
    errors["2d"] = max(float(np.max(np.abs(MinMaxScaler(devices=devices).fit_transform(x[i]) - want[i])))
                       for i in (0, nb - 1))
    errors["3d"] = float(np.max(np.abs(MinMaxScaler(scope="matrix", devices=devices).fit_transform(x) - want)))
    dtype = x.dtype.name
    return {
        "name": "seed-a-loop" if dtype == "float64" else f"seed-a-loop-{dtype[0]}{dtype[-2:]}",
        "description": f"min-max scaling of {nb} matrices of 60 x 98450 {dtype} as a scikit-learn user "
                       f"writes it (a new estimator and output per matrix), against numpy's "
                       f"allocate-and-copy of the same arrays",
        "dtype": dtype, "shape": list(x.shape), "bytes": 2 * x.nbytes,
        "runs": [{"name": r[0], "kind": r[1], "times": _summary(times[r[0]])} for r in rows],
        "max_error": errors,
        "ratios": {
            "loop_speedup_over_sklearn": med["loop-sk"] / med["loop"],
            "call_2d_over_copy": med["2d"] / med["copy-2d"],
            "call_2d_kept_over_copy": med["2d-kept"] / med["copy-2d"],
            "call_3d_over_copy": med["3d"] / med["copy-3d"],
            "call_3d_kept_over_copy": med["3d-kept"] / med["copy-3d"],
        }}

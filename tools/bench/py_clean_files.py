"""What the per-matrix cleaning workaround of _files.stream_clean costs:
SimpleImputer(mean).fit_transform_file of a 3-D float64 file whose
matrices fit the 64 MiB buffer several at a time but not all at once,
streamed (a) as the package does past 4 buffers (a buffer of half a
matrix: the library's passes over groups larger than a buffer, right
outputs), (b) in the library's one pass (the default buffer: right data,
wrong statistics_ for all but the last chunk's matrices) and (c) in one
buffer of the whole file (what the package does up to 4 buffers: right
outputs), rows alternating, median of N.

  PYTHONPATH=build/python /usr/bin/python3 tools/bench/py_clean_files.py [DIR] [N]
"""
import os
import statistics
import sys
import time

import numpy as np

import clscale
from clscale import _clscale
from clscale._context import context


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    shape = (1200, 2000, 16)  # 256 kB matrices, 307 MB: more than the default pool, so the package
    # takes the half-matrix buffer
    x = np.random.default_rng(0).normal(5, 2, shape)
    x[x > 8] = np.nan
    src, out = os.path.join(folder, "bench-clean-in.npy"), os.path.join(folder, "bench-clean-out.npy")
    np.save(src, x)
    del x
    opts = clscale.SimpleImputer()._opts()
    times = {"package (half-matrix buffer)": [], "one pass (default buffer)": [],
             "one pass (one buffer of the file)": []}
    bytes_ = int(np.prod(shape)) * 8
    try:
        for _ in range(n):
            t = time.perf_counter()
            clscale.SimpleImputer().fit_transform_file(src, out)
            times["package (half-matrix buffer)"].append(time.perf_counter() - t)
            t = time.perf_counter()
            with context(None) as ctx:
                _clscale.stream_file(ctx, src, out, None, scope=0, clean=opts, clean_shape=shape[::2],
                                     fitted=False)
            times["one pass (default buffer)"].append(time.perf_counter() - t)
            t = time.perf_counter()
            with context(None) as ctx:
                _clscale.stream_file(ctx, src, out, None, scope=0, clean=opts, clean_shape=shape[::2],
                                     fitted=False, buffer_bytes=bytes_)
            times["one pass (one buffer of the file)"].append(time.perf_counter() - t)
    finally:
        for p in (src, out):
            if os.path.exists(p):
                os.unlink(p)
    base = statistics.median(times["one pass (default buffer)"])
    for k, v in times.items():
        print(f"{k}: median {statistics.median(v):.3f} s of {n} ({statistics.median(v) / base:.2f}x)")


if __name__ == "__main__":
    main()

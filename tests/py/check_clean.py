"""Checks the clscale tool's robust and max-abs scaling against scikit-learn
(RobustScaler, MaxAbsScaler, whose median and quantile range are numpy's
nanmedian and nanpercentile) on hostile columns, through .npy files. (The
quantiles' bit-exactness is tests/test_quantiles.c's, against sorting.) Run by meson (tests/meson.build) with Debian's
/usr/bin/python3: python3 check_clean.py CLSCALE TMPDIR. Exit 0 when every
check passes; each failure prints one line."""
import os
import sys
import warnings

import numpy as np
from sklearn.preprocessing import MaxAbsScaler, RobustScaler

import toolcheck
from toolcheck import compare, fail

warnings.simplefilter("ignore")  # all-NaN columns: numpy's "All-NaN slice" warnings
tool, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)


def run(*args):
    return toolcheck.run(tool, args)


for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-6)):
    for rows in (1, 60, 1000):  # one-row columns, one counting pass, radix passes
        x = toolcheck.hostile(rows, rows, dtype)
        xin = os.path.join(tmp, "x.npy")
        np.save(xin, x)
        tag = f"{np.dtype(dtype).name} rows {rows}"
        for qr in ((25.0, 75.0), (10.0, 90.0)):
            for uv in (False, True):
                out = os.path.join(tmp, "y.npy")
                args = ["normalize", "--method", "robust", "--quantile-range", f"{qr[0]},{qr[1]}"]
                if uv:
                    args.append("--unit-variance")
                rc, err = run(*args, xin, out)
                if rc:
                    fail(f"{tag}: normalize robust exit {rc}: {err.strip()}")
                    continue
                sk = RobustScaler(quantile_range=qr, unit_variance=uv).fit(x)
                want = x.astype(float)
                keep = ~np.isnan(sk.center_)  # scikit-learn keeps all-NaN columns as NaN too
                want = (want - np.where(keep, sk.center_, 0)) / np.where(keep, sk.scale_, 1)
                compare(f"{tag} robust {qr} unit_variance={uv}", np.load(out), want.astype(dtype), tol)
        out = os.path.join(tmp, "y.npy")
        rc, err = run("normalize", "--method", "maxabs", xin, out)
        if rc:
            fail(f"{tag}: normalize maxabs exit {rc}: {err.strip()}")
        else:
            sk = MaxAbsScaler().fit(x)
            scale = np.where(np.isnan(sk.scale_), 1, sk.scale_)
            compare(f"{tag} maxabs", np.load(out), (x / scale).astype(dtype), tol)


# usage errors name the option and exit 2
for bad in (["--quantile-range", "80,20"], ["--quantile-range", "-1,50"], ["--quantile-range", "20,101"]):
    rc, err = run("normalize", "--method", "robust", *bad, os.path.join(tmp, "x.npy"), os.path.join(tmp, "z.npy"))
    if rc != 2 or "--quantile-range" not in err:
        fail(f"{bad}: exit {rc}, stderr {err.strip()!r}")
    if os.path.exists(os.path.join(tmp, "z.npy")):
        fail(f"{bad}: an output was written")

toolcheck.finish()

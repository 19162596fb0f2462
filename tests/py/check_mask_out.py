"""Checks `clscale clean --mask-out MASK.npy`: the mask (a bool array of
IN's shape, True where a value was missing or clipped) against astropy's
sigma_clip mask, in memory and streamed through buffers far smaller than
the file (CLSCALE_STREAM_BUFFER), with a trend after the cleaning, per
matrix and per batch; OUT and the mask written both or neither when the run
fails after both were begun; and the usage errors. Run by meson
(tests/meson.build) with Debian's /usr/bin/python3:
python3 check_mask_out.py CLSCALE TMPDIR. Exit 0 when every check passes;
each failure prints one line."""
import os
import subprocess
import sys
import warnings

import numpy as np
from astropy.stats import sigma_clip

import toolcheck
from toolcheck import check, fail

warnings.simplefilter("ignore")  # astropy on NaN, all-NaN columns
tool, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
inp, out, msk = (os.path.join(tmp, n) for n in ("in.npy", "out.npy", "mask.npy"))


def hostile(rows, seed, dtype):
    """Columns with ties, heavy tails, NaN, +-Inf, a sentinel, constant, all missing, outliers."""
    return toolcheck.hostile(rows, seed, dtype, offset=False, last=(-9999.0, 0.1), outliers=True, infs=True)


def astropy_mask(x, sigma, iters, sentinel, batch=False):
    """astropy's sigma_clip mask along the rows of each column (of each matrix of a 3-D x)."""
    y = x.astype(np.float64)
    y = np.where(y == sentinel, np.nan, y) if sentinel is not None else y
    if sigma is None:
        return ~np.isfinite(y)
    if y.ndim == 3 and batch:
        flat = y.reshape(-1, y.shape[2])
        return astropy_mask(flat, sigma, iters, None).reshape(y.shape)
    if y.ndim == 3:
        return np.stack([astropy_mask(m, sigma, iters, None) for m in y])
    return np.ma.getmaskarray(sigma_clip(y, sigma=sigma, maxiters=iters, axis=0, masked=True))


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return toolcheck.run(tool, args, e)


def clean(args, x, env=None):
    np.save(inp, x)
    for f in (out, msk):
        if os.path.exists(f):
            os.unlink(f)
    rc, err = run(["clean", *args, "--mask-out", msk, inp, out], env)
    if rc != 0:
        fail(f"clean {' '.join(args)}: exit {rc}: {err.strip()}")
        return None, None
    return np.load(out), np.load(msk)


def temporaries():
    return [n for n in os.listdir(tmp) if ".tmp." in n]


STREAMS = (("mapped", {"CLSCALE_STREAM": "0"}), ("streamed", {"CLSCALE_STREAM": "1"}),
           ("4 KiB buffer", {"CLSCALE_STREAM": "1", "CLSCALE_STREAM_BUFFER": "4096"}))

# the mask against astropy's, every way the tool runs
for dtype in (np.float64, np.float32):
    dn = np.dtype(dtype).name
    for rows in (1, 7, 300):
        x = hostile(rows, rows, dtype)
        for k, (opts, sigma, iters, sentinel) in enumerate((
                (["--sigma-clip", "3"], 3.0, 5, None),
                (["--sigma-clip", "2,none", "--missing-value", "-9999"], 2.0, None, -9999.0),
                (["--sigma-clip", "3", "--clip-mode", "clamp"], 3.0, 5, None),
                (["--sigma-clip", "3", "--impute", "median", "--missing-value", "-9999"], 3.0, 5, -9999.0),
                (["--missing-value", "-9999"], None, None, -9999.0))):
            if rows == 1 and k:
                continue  # one row: one case is enough
            want = astropy_mask(x, sigma, iters, sentinel)
            masks = []
            for how, env in STREAMS if dtype == np.float64 else STREAMS[::2]:
                got, m = clean(opts, x, env)
                name = f"{' '.join(opts)} {rows} rows {dn} {how}"
                if m is None:
                    continue
                check(m.dtype == np.bool_ and m.shape == x.shape, f"{name}: mask {m.dtype} {m.shape}")
                masks.append(m)
                if dtype == np.float32 and sigma is not None and rows > 7:
                    # astropy computes float32 data's bounds in float64: a
                    # value on a bound may fall on either side; the missing
                    # values and the planted outlier are compared there
                    check(np.all(m[want & ~np.isfinite(x)]) and m[rows // 3, 0],
                          f"{name}: a missing value or the outlier unmasked")
                else:
                    check(np.array_equal(m, want),
                          f"{name}: mask differs from astropy's at {np.argwhere(m != want)[:5].tolist()}")
                if "--impute" not in opts and "clamp" not in opts:
                    # what the mask marks is what the cleaning wrote as NaN
                    # (+-Inf stay what they were)
                    check(np.array_equal(m, ~np.isfinite(got)), f"{name}: mask != NaN/Inf positions of OUT")
            check(all(np.array_equal(masks[0], m) for m in masks[1:]), f"{' '.join(opts)} {rows} {dn}: "
                  "mapped and streamed masks differ")

# 3-D per matrix and per batch, with a trend after the cleaning (the mask is
# the cleaning's: missing and clipped values, before the trend), streamed in
# blocks with halo rows
x3 = np.stack([hostile(120, 3, np.float64), hostile(120, 4, np.float64), hostile(120, 5, np.float64)])
for scope in ("matrix", "batch"):
    want = astropy_mask(x3, 3.0, 5, None, batch=scope == "batch")
    for how, env in STREAMS[::2]:
        for extra in ([], ["--detrend", "mean:15"], ["--detrend", "savgol:21,2", "--detrend-edge", "mirror",
                                                     "--bin-smooth", "10,median"]):
            got, m = clean(["--sigma-clip", "3", "--scope", scope, *extra], x3, env)
            if m is not None:
                check(np.array_equal(m, want), f"3-D {scope} {' '.join(extra)} {how}: mask differs from astropy's")

# all or none: a run that fails after OUT and the mask were begun (the
# interp edge needs window <= rows, known only once IN is read) leaves the
# old OUT and the old mask as they were, and no temporary
x = hostile(50, 9, np.float64)
np.save(inp, x)
old_out, old_mask = np.arange(3.0), np.array([True, False])
for how, env in STREAMS:
    np.save(out, old_out)
    np.save(msk, old_mask)
    rc, err = run(["clean", "--sigma-clip", "3", "--detrend", "savgol:101,2", "--mask-out", msk, inp, out], env)
    check(rc == 1 and "interp" in err, f"failing run {how}: exit {rc}, {err.strip()!r}")
    check(np.array_equal(np.load(out), old_out) and np.array_equal(np.load(msk), old_mask),
          f"failing run {how}: OUT or the mask changed")
    check(not temporaries(), f"failing run {how}: temporaries left: {temporaries()}")
    # neither is created when neither existed
    os.unlink(out)
    os.unlink(msk)
    rc, err = run(["clean", "--sigma-clip", "3", "--detrend", "savgol:101,2", "--mask-out", msk, inp, out], env)
    check(rc == 1 and not os.path.exists(out) and not os.path.exists(msk) and not temporaries(),
          f"failing run {how} with no old files: exit {rc}, OUT {os.path.exists(out)}, mask "
          f"{os.path.exists(msk)}, temporaries {temporaries()}")

# a successful run replaces both
np.save(out, old_out)
np.save(msk, old_mask)
rc, err = run(["clean", "--sigma-clip", "3", "--mask-out", msk, inp, out])
check(rc == 0 and np.load(msk).shape == x.shape and np.load(out).shape == x.shape and not temporaries(),
      f"replacing run: exit {rc}, {err.strip()!r}")

# usage errors: exit 2, the option named, nothing written
for f in (out, msk):
    if os.path.exists(f):
        os.unlink(f)
bad = (
    (["clean", "--sigma-clip", "3", "--bin", "10,mean", "--mask-out", msk, inp, out], "--mask-out"),
    (["clean", "--sigma-clip", "3", "--mask-out", out, inp, out], "--mask-out"),
    (["clean", "--sigma-clip", "3", "--mask-out", inp, inp, out], "--mask-out"),
    (["clean", "--sigma-clip", "3", "--mask-out", os.path.join(tmp, "no-such-folder", "m.npy"), inp, out],
     "--mask-out"),
    (["clean", "--sigma-clip", "3", "--mask-out", tmp, inp, out], "--mask-out"),
    (["clean", "--sigma-clip", "3", inp, out, "--mask-out"], "--mask-out"),
    (["clean", "--sigma-clip", "3", "--mpi", "--mask-out", msk, inp, out], "--m"),
    (["normalize", "--method", "minmax", "--mask-out", msk, inp, out], "--mask-out"),
    (["clean", "--mask-out", msk, inp, out], "nothing to clean"),
)
for args, word in bad:
    rc, err = run(args)
    check(rc == 2 and word in err and not os.path.exists(out) and not os.path.exists(msk),
          f"{' '.join(args)}: exit {rc}, stderr {err.strip()!r}, OUT {os.path.exists(out)}, "
          f"mask {os.path.exists(msk)}")
p = subprocess.run([tool, "clean", "--help"], capture_output=True, text=True)
check(p.returncode == 0 and "--mask-out MASK.npy" in p.stdout, "clean --help does not describe --mask-out")

toolcheck.finish()

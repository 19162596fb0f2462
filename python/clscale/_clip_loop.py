"""astropy's iterating sigma clipping, one iteration at a time, for the
arguments the library's one call cannot take: `grow` (masks dilated
between iterations) and callable `cenfunc`/`stdfunc` (any function of the
user's, run on the host). astropy itself takes two such paths (its
documented behaviour, followed here, not its code):

- with an axis, or with grow: a float working copy (float64; the data's
  float type, float32 for integers, in newer astropy: _peers.clip_dtype)
  with NaN where a value was clipped; each iteration takes the bounds of what is left,
  clips beyond them (and, with grow, every value within `grow` of a
  clipped one, in the clipped axes only), and a value clipped once stays
  clipped. masked=False returns the working copy in the data's shape,
  also with axis=None; the bounds keep the reduced axes (size 1).
- axis=None without grow: the finite values, flattened; each iteration
  keeps those within its bounds (inclusive). masked=False returns the
  values kept in the data's dtype; masked=True masks what lies beyond the
  last bounds.

The bounds of each iteration: the callables on the host (the slow path);
for "median"/"mean" and "std"/"mad_std" with grow, the library on the
devices (one cls_clean iteration, float64) for a float64 copy, else
numpy on the host (in the copy's type, as astropy; and on devices
without float64). May call the extension and numpy; nothing else.
"""
import warnings

import numpy as np

from . import _clscale
from ._context import context
from ._peers import clip_dtype

# astropy's mad_std: the median absolute deviation times 1 / Phi^-1(3/4)
_MAD_TO_STD = 1.482602218505602


def _nanmad_std(a, axis=None):
    with np.errstate(invalid="ignore"):
        med = np.nanmedian(a, axis=axis, keepdims=True)
        return np.nanmedian(np.abs(a - med), axis=axis) * _MAD_TO_STD


# the named functions on the host (astropy's, without bottleneck)
HOST_FUNCS = {"median": np.nanmedian, "mean": np.nanmean, "std": np.nanstd, "mad_std": _nanmad_std}


def grow_kernel(radius, ndim, axes):
    """The dilation's structuring element: the offsets within `radius`
    (Euclidean, in index units) of the centre, along the clipped axes
    only (size 1 along the others, so that nothing grows across them)."""
    c = int(radius)
    shape = tuple(2 * c + 1 if d in axes else 1 for d in range(ndim))
    idx = np.indices(shape)
    r2 = sum((idx[d] - (c if d in axes else 0)) ** 2 for d in range(ndim))
    return r2 <= radius ** 2


class _Bounds:
    """Each iteration's (lower, upper) bounds of f (float64, NaN where
    missing or clipped) over `axes` (None: all), as arrays that broadcast
    against f (the reduced axes of size 1) or scalars for axis=None."""

    def __init__(self, cenfunc, stdfunc, slo, shi, clip, axes, devices):
        self.cen = HOST_FUNCS.get(cenfunc, cenfunc) if isinstance(cenfunc, str) else cenfunc
        self.std = HOST_FUNCS.get(stdfunc, stdfunc) if isinstance(stdfunc, str) else stdfunc
        self.slo, self.shi, self.axes = slo, shi, axes
        # the library takes named functions only, and float64 on float64 devices
        self.clip = clip if isinstance(cenfunc, str) and isinstance(stdfunc, str) else None
        self.devices = devices

    def __call__(self, f):
        # the library's bounds are float64 ones: float copies of other types
        # (newer astropy's) take numpy's, in their type, as astropy's
        if self.clip is not None and f.dtype == np.float64:
            got = self._on_devices(f)
            if got is not None:
                return got
        axis = self.axes
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            # astropy's bounds of all-NaN slices are NaN, silently
            warnings.simplefilter("ignore", RuntimeWarning)
            cen = self.cen(f, axis=axis)
            std = self.std(f, axis=axis)
        lo, hi = cen - std * self.slo, cen + std * self.shi
        if axis is not None and not np.isscalar(lo):
            shape = tuple(1 if d in axis else n for d, n in enumerate(f.shape))
            lo, hi = np.reshape(lo, shape), np.reshape(hi, shape)
        return lo, hi

    def _on_devices(self, f):
        from ._functions import _blocks  # the shared batch x rows x cols view
        axes = tuple(range(f.ndim)) if self.axes is None else self.axes
        with context(self.devices) as ctx:
            if not all(d["fp64"] for d in ctx.devices()):
                return None
            m, shape = _blocks(f, axes)
            _, _, _, _, lo, hi, _, _ = _clscale.clean(ctx, m, None, None, scope=_clscale.SCOPE_MATRIX, mode=0,
                                                      **dict(self.clip, maxiters=1))
        if len(axes) == f.ndim:
            # astropy's: numpy's scalars where every axis is reduced
            return np.float64(lo.ravel()[0]), np.float64(hi.ravel()[0])
        keep = tuple(1 if d in axes else n for d, n in enumerate(f.shape))
        return lo.reshape(keep), hi.reshape(keep)


def clip_with_axis(arr, inmask, axes, masked, return_bounds, copy, maxiters, bounds, grow):
    """astropy's clipping with an axis or with grow (see the file's
    comment). arr: the data (an ndarray), inmask: its mask or None; axes:
    a tuple, or None for all."""
    # astropy's float copy: in the type the installed astropy takes (the
    # data's own float type, or float64), its bounds computed in that type
    f = arr.astype(clip_dtype(arr.dtype, inmask is not None), copy=True)
    f[~np.isfinite(f)] = np.nan
    if inmask is not None:
        f[inmask] = np.nan
    kernel = None
    if grow:
        from scipy.ndimage import binary_dilation  # astropy's grow needs scipy too
        kernel = grow_kernel(float(grow), f.ndim, tuple(range(f.ndim)) if axes is None else axes)
    lo = hi = np.nan
    it, changed = 0, True
    while changed and it < maxiters:
        it += 1
        lo, hi = bounds(f)
        with np.errstate(invalid="ignore"):
            new = (f < lo) | (f > hi)  # NaN compares False: only new clips grow
        if kernel is not None:
            new = binary_dilation(new, kernel)
        f[new] = np.nan
        changed = bool(np.count_nonzero(new))
    if masked:
        if copy:
            result = np.ma.MaskedArray(arr, mask=np.isnan(f), copy=True)
        else:
            # astropy's copy=False: the invalid values and those beyond the
            # last bounds, over the data itself (grown values not masked)
            with np.errstate(invalid="ignore"):
                out = np.ma.masked_invalid(np.ma.MaskedArray(arr, mask=inmask), copy=False)
                result = np.ma.masked_where((out < lo) | (out > hi), out, copy=False)
    else:
        result = f
    return (result, lo, hi) if return_bounds else result


def clip_flat(arr, inmask, masked, return_bounds, copy, maxiters, bounds):
    """astropy's clipping with axis=None and no grow, for callables (see
    the file's comment): the values in the data's dtype."""
    v = arr.ravel()
    if inmask is not None:
        v = v[~inmask.ravel()]
    v = v[np.isfinite(v)]
    lo = hi = np.nan
    it, changed = 0, True
    while changed and it < maxiters:
        it += 1
        lo, hi = bounds(v)
        n = v.size
        v = v[(v >= lo) & (v <= hi)]
        changed = v.size != n
    if masked:
        result = np.ma.masked_invalid(np.ma.MaskedArray(arr, mask=inmask), copy=copy)
        with np.errstate(invalid="ignore"):
            result.mask |= (arr < lo) | (arr > hi)
    else:
        result = v
    return (result, lo, hi) if return_bounds else result


def fast_bounds(v, clip):
    """Newer astropy's fast clipping (its C loop: an axis, named
    functions, no grow) of one column's values v, float64, for the columns
    where an iteration clips every value left: its last bounds are kept
    (the library's, astropy 5's, are NaN then). clip: _clip_options'."""
    v = v[np.isfinite(v)]
    lo = hi = np.nan
    it = 0
    while v.size:
        med = np.median(v)
        mean = v.mean()
        cen = mean if clip["center"] else med
        std = np.median(np.abs(v - med)) * _MAD_TO_STD if clip["spread"] else np.sqrt(np.mean((v - mean) ** 2))
        lo, hi = cen - clip["sigma_lower"] * std, cen + clip["sigma_upper"] * std
        keep = (v >= lo) & (v <= hi)
        n = int(np.count_nonzero(keep))
        if n == v.size or n == 0:
            break
        v = v[keep]
        it += 1
        if clip["maxiters"] != -1 and it >= clip["maxiters"]:
            break
    return lo, hi

"""Arrays already on an OpenCL device: pyopencl arrays scaled where they are.

    >>> import numpy as np, pyopencl as cl, pyopencl.array as cla, clscale
    >>> queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    >>> x = cla.to_device(queue, np.random.default_rng(0).uniform(-5, 5, (1000, 8)))
    >>> y, stats = clscale.device_fit_transform(x, "minmax")   # y: a new pyopencl array
    >>> clscale.device_transform(x, stats, out=x)               # in place

The data never leaves the device: clscale runs its kernels on the array's
own context and queue (pyopencl's objects, shared with the library, which
retains what it keeps and releases it when the context goes), and only
the statistics (a few numbers per column) come back. A library context is
made per (context, device, queue) on first use and kept for the process.
Arrays must be C-contiguous float32 or float64 pyopencl arrays of 1 to 3
dimensions (1-D: one column; 2-D: rows x cols; 3-D: batch x rows x cols)
on an in-order queue. The calls block until the output is written.
"""
import threading

import numpy as np

from . import _clscale

# Every scaler of the library's table; the library itself refuses one it
# cannot fit on a device's buffers (exact quantiles: ClscaleError).
_SCALERS = {name: code for name, code in _clscale.SCALERS.items() if code != _clscale.NONE}
_SCOPES = {"matrix": _clscale.SCOPE_MATRIX, "batch": _clscale.SCOPE_BATCH}

_lock = threading.Lock()
_contexts = {}  # (cl_context, device, queue) int_ptrs -> [capsule, lock, the pyopencl queue]


def _context_of(queue):
    key = (queue.context.int_ptr, queue.device.int_ptr, queue.int_ptr)
    with _lock:
        entry = _contexts.get(key)
    if entry is None:
        cap = _clscale.buffer_context(*key)
        # the queue is kept alive with the library context made on it
        entry = [cap, threading.Lock(), queue]
        with _lock:
            entry = _contexts.setdefault(key, entry)
    return entry


def _shape_of(a, what):
    try:
        import pyopencl.array as cla
    except ImportError as e:  # pragma: no cover - the caller has pyopencl arrays
        raise ValueError("device calls take pyopencl arrays; pyopencl is not installed") from e
    if not isinstance(a, cla.Array):
        raise ValueError(f"{what} must be a pyopencl.array.Array, got {type(a).__name__}")
    if a.dtype not in (np.float32, np.float64):
        raise ValueError(f"{what} must be float32 or float64, not {a.dtype}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{what} must be C-contiguous")
    if a.ndim == 1:
        shape = (1, a.shape[0], 1)
    elif a.ndim == 2:
        shape = (1,) + tuple(a.shape)
    elif a.ndim == 3:
        shape = tuple(a.shape)
    else:
        raise ValueError(f"{what} must have 1 to 3 dimensions, not {a.ndim}")
    if min(shape) < 1:
        raise ValueError(f"{what} has an empty dimension: {a.shape}")
    if a.base_data is None:
        raise ValueError(f"{what} has no buffer")
    return shape


def _out_for(x, out):
    if out is None:
        import pyopencl.array as cla
        return cla.empty_like(x)
    if out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError(f"out must have x's shape {x.shape} and dtype {x.dtype}, not {out.shape} {out.dtype}")
    if out.context != x.context:
        raise ValueError("out must be on x's OpenCL context")
    return out


def _call(op, x, out, stats, **pipeline):
    shape = _shape_of(x, "x")
    out = _out_for(x, out)
    _shape_of(out, "out")
    cap, lock, _ = _context_of(x.queue)
    with lock:
        fitted = _clscale.buffer_call(
            cap, op, x.base_data.int_ptr, x.offset, out.base_data.int_ptr, out.offset, str(x.dtype),
            shape[0], shape[1], shape[2], stats=stats, **pipeline)
    return out, fitted


def device_fit_transform(x, scaler="minmax", *, scope="matrix", feature_range=(0.0, 1.0), clip=False, out=None):
    """Fits `scaler` (a name of clscale's table: "minmax", "zscore", ...) to the pyopencl array
    `x` and scales it into `out` (a new array on x's queue when None; `x`
    itself scales in place). `scope` "matrix": statistics per matrix of a
    3-D array; "batch": shared by all. Returns (out, Stats). Bad arguments:
    ValueError; device failures, and a scaler the library does not fit on
    device buffers (robust: its counting passes read host memory):
    ClscaleError."""
    if scaler not in _SCALERS:
        raise ValueError(f"scaler must be one of {sorted(_SCALERS)}, not {scaler!r}")
    if scope not in _SCOPES:
        raise ValueError(f"scope must be 'matrix' or 'batch', not {scope!r}")
    # the range is the ranged scaler's (min-max); the library ignores it for the others
    lo, hi = (float(v) for v in feature_range)
    return _call("fit_transform", x, out, None, scaler=_SCALERS[scaler], scope=_SCOPES[scope], lo=lo, hi=hi,
                 clip=bool(clip))


def device_transform(x, stats, *, out=None, inverse=False):
    """Applies fitted `stats` (from device_fit_transform, an estimator's
    `stats_`, or clscale.load) to the pyopencl array `x`, into `out` (new
    when None; `x` for in place); `inverse` undoes the scaling. Returns out."""
    if not isinstance(stats, _clscale.Stats):
        raise ValueError(f"stats must be a clscale.Stats, not {type(stats).__name__}")
    info = stats.info
    out, _ = _call("transform", x, out, stats, scaler=info["scaler"], scope=info["scope"], lo=info["lo"],
                   hi=info["hi"], clip=bool(info["clip"]) and not inverse, inverse=bool(inverse))
    return out

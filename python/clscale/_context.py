"""Contexts: one per process and devices selector, made on first use.

A library context may serve one call at a time, so each selector keeps a
small pool: a call takes an idle context (making one only when every
existing one is busy, i.e. when threads call at once) and gives it back.
One thread therefore always reuses one context; two threads calling at once
run at once on two. After fork() the child starts with empty pools and never
touches its parent's contexts (their OpenCL objects are the parent's).
"""
import atexit
import contextlib
import os
import threading

from . import _clscale

_lock = threading.Lock()
_pools = {}  # selector (None or str) -> list of idle _clscale.Context
_pid = os.getpid()


def check_selector(devices):
    """`devices` as given to an estimator: None or a selector string."""
    if devices is not None and not isinstance(devices, str):
        raise ValueError(
            f"devices must be None or a selector string such as 'all', 'cpu', 'gpu', '0,2' "
            f"or 'pocl', got {devices!r}")
    return devices


def _take(devices):
    global _pid
    with _lock:
        if os.getpid() != _pid:
            _pools.clear()
            _pid = os.getpid()
        idle = _pools.get(devices)
        if idle:
            return idle.pop()
    # Made outside the lock: building kernels takes a while, and a failure
    # (no device) is raised to the caller without being kept.
    return _clscale.Context(devices)


def _give(devices, ctx):
    with _lock:
        if os.getpid() == _pid:
            _pools.setdefault(devices, []).append(ctx)


@contextlib.contextmanager
def context(devices=None):
    """The process's context for `devices`, held for the block."""
    devices = check_selector(devices)
    ctx = _take(devices)
    try:
        yield ctx
    finally:
        _give(devices, ctx)


def devices(devices=None):
    """The OpenCL devices that `devices` selects, as a list of dicts.

    `devices` is a selector like the tool's ``--devices``: None (the
    environment's ``CLSCALE_DEVICES``, else ``"all"``), ``"all"``, ``"cpu"``,
    ``"gpu"``, indices ``"0,2"``, or a name such as ``"pocl"``. Raises
    ClscaleError when nothing matches (the message lists what exists)."""
    with context(devices) as ctx:
        return ctx.devices()


@atexit.register
def _close_all():
    with _lock:
        if os.getpid() != _pid:
            return
        pools = list(_pools.values())
        _pools.clear()
    for idle in pools:
        for ctx in idle:
            ctx.close()

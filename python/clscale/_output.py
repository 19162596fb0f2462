"""New output arrays, from a few reused blocks of memory.

A transform that returns a new array writes memory that was never touched:
for a large array the kernel pays a page fault and the zeroing of every
page, which costs more than the scaling itself (glibc maps every block
above 32 MiB afresh and unmaps it on free). The natural loop
`for i ...: y[i] = MinMaxScaler().fit_transform(x[i])` drops each output
right after copying it, so the next call can write the same, already
mapped pages. Here a few blocks are kept; a block is handed out again only
when no array uses it any more: every array made from a block (and every
view of one) holds a reference to it, and a block nobody else refers to is
free. Outputs the caller keeps are never reused.

Every block comes from numpy's own allocator, so it gets numpy's huge-page
advice, and its pages are mapped before the device writes them
(_clscale.populate: one call instead of the faults the kernel's threads
would take in the middle of their work). At most `_MAX_BLOCKS` blocks of
`_limit` bytes together are kept (set_output_cache); a new output that
does not fit there is fresh memory that is not kept.
"""
import contextlib
import os
import sys
import threading

import numpy as np

from . import _clscale

_MIN_BYTES = 1 << 20      # below this, malloc's own free lists reuse memory
_MAX_BLOCKS = 2           # enough for a loop that alternates two sizes
_lock = threading.Lock()
_blocks = []              # 1-D uint8 arrays; only this list refers to a free one
_limit = 256 << 20
_bypass = False           # fresh_outputs


def _refs(block):
    return sys.getrefcount(block)


def _free_refs():
    """The reference count _refs reads for a block only _blocks holds
    (the list, the loop variable, the argument), measured the way
    _take reads it, so that it holds for any interpreter version."""
    probe = [np.empty(1, np.uint8)]
    for b in probe:
        return _refs(b)


_FREE = _free_refs()


def _after_fork():
    # a thread of the parent may have held the lock at fork(): the child's
    # copy would stay locked; the child's blocks are its own copies
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def set_output_cache(max_bytes):
    """Sets how many bytes of freed output arrays clscale keeps for its
    next new outputs (default 256 MiB, in at most two blocks; 0 keeps
    none and releases what is kept). Returns the previous setting."""
    global _limit
    if not isinstance(max_bytes, (int, np.integer)) or isinstance(max_bytes, bool) or max_bytes < 0:
        raise ValueError(f"max_bytes must be a non-negative integer, got {max_bytes!r}")
    with _lock:
        old, _limit = _limit, int(max_bytes)
        _evict(0)
    return old


@contextlib.contextmanager
def fresh_outputs():
    """New outputs on fresh memory for the block, the kept blocks left as
    they are (the bench's row of a caller that keeps every output)."""
    global _bypass
    _bypass = True
    try:
        yield
    finally:
        _bypass = False


def _free_flags():
    """Whether each block is free (read as _free_refs reads it)."""
    flags = []
    for b in _blocks:
        flags.append(_refs(b) == _FREE)
    return flags


def _evict(need):
    """Drops free blocks (oldest first) until `need` more bytes and one
    more block fit in the limits; returns whether they do."""
    def fits():
        return len(_blocks) < _MAX_BLOCKS and sum(b.nbytes for b in _blocks) + need <= _limit
    dropped = 0
    for i in [i for i, free in enumerate(_free_flags()) if free]:
        if fits():
            return True
        del _blocks[i - dropped]
        dropped += 1
    return fits()


def _take(nbytes):
    """A free block of between nbytes and twice nbytes, or a new one kept
    for later, or None when the limits leave no room."""
    with _lock:
        if nbytes <= _limit:
            found = next((i for i, free in enumerate(_free_flags())
                          if free and nbytes <= _blocks[i].nbytes <= 2 * nbytes), None)
            if found is not None:
                return _blocks[found][:nbytes]
            if _evict(nbytes):
                block = _fresh(nbytes)
                _blocks.append(block)
                return block[:nbytes]
        elif _limit == 0 and _blocks:
            _evict(0)  # blocks still held when the cache was turned off, released once free
        return None


def _fresh(nbytes):
    """New memory, its pages mapped before a device writes them."""
    block = np.empty(nbytes, np.uint8)
    _clscale.populate(block)
    return block


def empty_like(X):
    """A new C-ordered array of X's shape and dtype, its contents undefined
    (np.empty_like), on memory that a dropped output left mapped when there
    is such memory."""
    nbytes = X.size * X.dtype.itemsize
    if nbytes < _MIN_BYTES:
        return np.empty(X.shape, X.dtype)
    mem = None if _bypass else _take(nbytes)
    if mem is None:
        mem = _fresh(nbytes)
    return mem.view(X.dtype).reshape(X.shape)

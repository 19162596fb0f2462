"""New output arrays, from a few reused blocks of memory.

A transform that returns a new array writes memory that was never touched:
for a large array the kernel pays a page fault and the zeroing of every
page, which costs more than the scaling itself (glibc maps every block
above 32 MiB afresh and unmaps it on free; numpy's own `x.copy()` pays the
same, but zeroes each page just before it copies into it, while a device's
column-block passes write every page long after it was zeroed). The
natural loop `for i ...: y[i] = MinMaxScaler().fit_transform(x[i])`, and
a whole batch's `fit_transform(x)` called again, drop each output before
the next call, so the next call can write the same, already mapped pages.
Here a few blocks are kept; a block is handed out again only once no array
uses it any more. Outputs the caller keeps are never reused.

Each output is lent its block through a `_clscale.Lease`: the arrays over
it (and every view of them) hold the lease, and when the last goes the
lease hands the block back (`_Block.free`) after giving its pages to the
kernel to take back if it needs memory (MADV_FREE): a kept block is
reclaimable, not memory the process sits on, and what the kernel leaves
is not zeroed again. A block lent again has its small pages mapped once
more (_clscale.populate: nothing to do where the kernel took none); huge
pages the kernel took are faulted in again by the device's threads.

Every block and every fresh output comes from numpy's own allocator and
is advised huge pages (_clscale.huge). Where it gets them, the device's
worker threads fault its pages in as they write it: a few hundred 2 MiB
faults for the largest outputs, each mapping and zeroing its page in the
thread that writes it, shared out over those threads, where mapping the
whole output first would zero it on the calling thread alone while the
device's threads wait. Where the pages are small (transparent huge pages
off), they are mapped before the device writes them (_clscale.populate:
one call instead of a fault per 4 KiB in the middle of the kernel's
work). At most `_MAX_BLOCKS` blocks of
`_limit` bytes together are kept (set_output_cache); a new output that
does not fit there is fresh memory that is not kept.
"""
import contextlib
import os
import threading

import numpy as np

from . import _clscale

_MIN_BYTES = 1 << 20      # below this, malloc's own free lists reuse memory
_MAX_BLOCKS = 2           # enough for a loop that alternates two sizes
_DEFAULT_LIMIT = 1 << 30  # a whole batch of seed-A's shape (850 MB) and one matrix of it
_lock = threading.Lock()
_blocks = []              # _Block, oldest first
_limit = _DEFAULT_LIMIT
_bypass = False           # fresh_outputs


class _Block:
    """A kept block of memory (`mem`, 1-D uint8) and whether no output
    uses it (`free`: set by the lease's release, which may run in any
    thread, at any point, even while this thread holds _lock; a plain
    attribute store, so it takes no lock)."""

    __slots__ = ("mem", "free", "huge")

    def __init__(self, nbytes):
        self.mem = np.empty(nbytes, np.uint8)
        self.free = False
        self.huge = _clscale.huge(self.mem)

    def release(self):
        self.free = True


def _after_fork():
    # a thread of the parent may have held the lock at fork(): the child's
    # copy would stay locked; the child's blocks are its own copies
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def set_output_cache(max_bytes):
    """Sets how many bytes of freed output arrays clscale keeps for its
    next new outputs (default 1 GiB, in at most two blocks, which the
    kernel may take back when it needs memory; 0 keeps none and releases
    what is kept). Returns the previous setting."""
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


def _evict(need):
    """Drops free blocks (oldest first) until `need` more bytes and one
    more block fit in the limits; returns whether they do."""
    def fits():
        return len(_blocks) < _MAX_BLOCKS and sum(b.mem.nbytes for b in _blocks) + need <= _limit
    dropped = 0
    for i in [i for i, b in enumerate(_blocks) if b.free]:
        if fits():
            return True
        del _blocks[i - dropped]
        dropped += 1
    return fits()


def _take(nbytes):
    """A free block of between nbytes and twice nbytes, or a new one kept
    for later, marked used; None when the limits leave no room."""
    with _lock:
        if nbytes <= _limit:
            found = next((b for b in _blocks if b.free and nbytes <= b.mem.nbytes <= 2 * nbytes), None)
            if found is None and _evict(nbytes):
                found = _Block(nbytes)
                _blocks.append(found)
            if found is not None:
                found.free = False
            return found
        if _limit == 0 and _blocks:
            _evict(0)  # blocks still held when the cache was turned off, released once free
        return None


def _lend(nbytes):
    """nbytes (1-D uint8) of a kept block, its small pages mapped, lent
    to the arrays made from it; None when no block is kept for it."""
    block = _take(nbytes)
    if block is None:
        return None
    try:
        if not block.huge:
            _clscale.populate(block.mem[:nbytes])  # outside the lock: faults, or nothing to do
        return np.frombuffer(_clscale.lease(block.mem, nbytes, block.release), np.uint8)
    except BaseException:
        block.release()
        raise


def _fresh(nbytes):
    """New memory: huge pages, left for the device's threads to fault in,
    or small pages mapped before a device writes them."""
    mem = np.empty(nbytes, np.uint8)
    if not _clscale.huge(mem):
        _clscale.populate(mem)
    return mem


def empty_like(X):
    """A new C-ordered array of X's shape and dtype, its contents undefined
    (np.empty_like), on memory that a dropped output left mapped when there
    is such memory."""
    nbytes = X.size * X.dtype.itemsize
    if nbytes < _MIN_BYTES:
        return np.empty(X.shape, X.dtype)
    mem = None if _bypass else _lend(nbytes)
    if mem is None:
        mem = _fresh(nbytes)
    return mem.view(X.dtype).reshape(X.shape)

"""New output arrays reuse the memory of outputs nobody refers to any more
(clscale/_output.py), never that of an output, or a view of one, that is
still held; results are the same either way."""
import threading

import numpy as np
import pytest
from sklearn.preprocessing import MinMaxScaler as SkMinMax

import clscale
from clscale import _clscale, _output
from conftest import DTYPES, assert_close, make_data, tol

# 2 MB float64 / 1 MB float32 matrices: above the size where blocks are kept
SHAPE = (64, 4096)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Every test starts with no kept block (outputs other tests hold keep
    their memory; the list only forgets it) and the default limit."""
    old = clscale.set_output_cache(256 << 20)
    _output._blocks.clear()
    yield
    clscale.set_output_cache(old)


def _ref(x):
    return SkMinMax().fit_transform(x.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_natural_loop_gives_scikit_learns_results(dtype):
    x = np.stack([make_data(SHAPE, dtype, seed=s, nan=0.0, const=False) for s in range(5)])
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = clscale.MinMaxScaler().fit_transform(x[i])
    for i in range(x.shape[0]):
        assert_close(y[i], _ref(x[i]), tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_dropped_output_is_reused_and_a_kept_one_never(dtype):
    x1 = make_data(SHAPE, dtype, seed=1, nan=0.0, const=False)
    x2 = make_data(SHAPE, dtype, seed=2, nan=0.0, const=False)
    x3 = make_data(SHAPE, dtype, seed=3, nan=0.0, const=False)
    kept = clscale.MinMaxScaler().fit_transform(x1)
    want = kept.copy()
    dropped = clscale.MinMaxScaler().fit_transform(x2)
    where = dropped.ctypes.data
    assert not np.shares_memory(kept, dropped)
    del dropped
    again = clscale.MinMaxScaler().fit_transform(x3)
    assert again.ctypes.data == where  # the dropped output's memory
    assert not np.shares_memory(again, kept)
    assert np.array_equal(kept, want)  # the kept output untouched
    assert_close(again, _ref(x3), tol(dtype))


def test_a_view_keeps_its_output_from_being_reused():
    x = make_data(SHAPE, np.float32, seed=4, nan=0.0, const=False)
    y = clscale.MinMaxScaler().fit_transform(x)
    view = y[3:10, ::2]
    want = view.copy()
    del y
    others = [clscale.MinMaxScaler().fit_transform(x + k) for k in range(3)]
    for o in others:
        assert not np.shares_memory(o, view)
    assert np.array_equal(view, want)


def test_transform_and_inverse_reuse_too_and_stay_right():
    x = make_data(SHAPE, np.float32, seed=5, nan=0.02, const=True)
    est = clscale.StandardScaler().fit(x)
    ref = est.transform(x).copy()
    for _ in range(3):
        y = est.transform(x)
        assert np.array_equal(y, ref, equal_nan=True)
        back = est.inverse_transform(y)
        assert_close(back, x, 1e-3 * np.nanmax(np.abs(x)))
        del y, back


def test_no_reuse_when_the_cache_is_off():
    assert clscale.set_output_cache(0) == 256 << 20
    x = make_data(SHAPE, np.float32, seed=6, nan=0.0)
    for _ in range(3):
        y = clscale.MinMaxScaler().fit_transform(x)
        assert_close(y, _ref(x), tol(np.float32))
        del y
    assert len(_output._blocks) == 0
    assert clscale.set_output_cache(256 << 20) == 0


def test_outputs_past_the_limit_are_not_kept():
    clscale.set_output_cache((1 << 20) - 1)  # less than one output
    x = make_data(SHAPE, np.float32, seed=7, nan=0.0)
    y = clscale.MinMaxScaler().fit_transform(x)
    assert len(_output._blocks) == 0
    assert_close(y, _ref(x), tol(np.float32))


def test_at_most_two_blocks_are_kept_and_held_ones_are_not_dropped():
    x = make_data(SHAPE, np.float32, seed=8, nan=0.0)
    held = [clscale.MinMaxScaler().fit_transform(x + k) for k in range(4)]
    assert len(_output._blocks) == 2
    want = [h.copy() for h in held]
    more = clscale.MinMaxScaler().fit_transform(x)  # both kept blocks held: fresh memory
    for h, w in zip(held, want):
        assert not np.shares_memory(h, more)
        assert np.array_equal(h, w)


def test_a_block_serves_a_smaller_output_but_not_a_much_smaller_one():
    x = make_data((64, 8192), np.float32, seed=9, nan=0.0)
    y = clscale.MinMaxScaler().fit_transform(x)
    where = y.ctypes.data
    del y
    half = clscale.MinMaxScaler().fit_transform(x[:, :4096].copy())
    assert half.ctypes.data == where
    del half
    quarter = clscale.MinMaxScaler().fit_transform(x[:32, :4096].copy())  # 0.5 MB: not from a block
    assert quarter.ctypes.data != where


def test_small_outputs_are_plain_arrays():
    x = make_data((100, 50), np.float64, seed=10)
    y = clscale.MinMaxScaler().fit_transform(x)
    assert y.base is None and y.flags.owndata


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True])
def test_set_output_cache_refuses_what_is_not_a_byte_count(bad):
    with pytest.raises(ValueError, match="max_bytes"):
        clscale.set_output_cache(bad)


def test_threads_calling_at_once_get_distinct_outputs():
    xs = [make_data(SHAPE, np.float32, seed=20 + k, nan=0.0) for k in range(4)]
    got = [None] * len(xs)

    def work(k):
        for _ in range(3):
            got[k] = clscale.MinMaxScaler().fit_transform(xs[k])

    ts = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in range(len(xs)):
        assert_close(got[k], _ref(xs[k]), tol(np.float32))
        for j in range(k):
            assert not np.shares_memory(got[k], got[j])


def _refuses_what_it_cannot_touch(fn, a):
    """fn refuses a strided view of a, a read-only copy and a list."""
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(a[::2])
    ro = a.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        fn(ro)
    with pytest.raises(TypeError):
        fn([1.0, 2.0])


def test_populate_leaves_the_data_as_it_is():
    a = np.arange(3 << 18, dtype=np.float64)  # 6 MB, pages partly before and after
    want = a.copy()
    assert isinstance(_clscale.populate(a[1:-1]), bool)
    assert np.array_equal(a, want)
    assert _clscale.populate(np.empty(3)) is False  # no whole page inside
    _refuses_what_it_cannot_touch(_clscale.populate, a)


def test_a_forked_child_makes_outputs_while_the_parent_holds_the_lock():
    """fork() while another thread holds the cache's lock: the child gets
    a lock of its own (os.register_at_fork) and its outputs are right."""
    import os
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    x = make_data(SHAPE, np.float32, seed=30, nan=0.0)
    with _output._lock:
        pid = os.fork()
        if pid == 0:  # the child: no OpenCL here (its contexts are the parent's), the cache alone
            try:
                a = _output.empty_like(x)
                a[...] = x
                os._exit(0 if np.array_equal(a, x) else 1)
            except BaseException:
                os._exit(2)
    import signal
    import time
    deadline = time.monotonic() + 20  # a child stuck on the parent's lock never exits
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child waited on the lock its parent held at fork()")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_blocks_held_when_the_cache_is_turned_off_are_released_once_dropped():
    x = make_data(SHAPE, np.float32, seed=31, nan=0.0)
    held = clscale.MinMaxScaler().fit_transform(x)
    assert len(_output._blocks) == 1
    clscale.set_output_cache(0)
    assert len(_output._blocks) == 1  # still held by `held`
    del held
    y = clscale.MinMaxScaler().fit_transform(x)  # the next output forgets it
    assert len(_output._blocks) == 0
    assert_close(y, _ref(x), tol(np.float32))


def test_a_lease_hands_its_block_back_when_the_last_array_over_it_goes():
    block = np.zeros(5 << 20, np.uint8)  # whole huge pages inside, given back to the kernel on release
    released = []
    lease = _clscale.lease(block, 3 << 20, lambda: released.append(True))
    a = np.frombuffer(lease, np.uint8)
    view = a[100:200].view(np.float32)
    del lease
    assert a.flags.writeable and a.nbytes == 3 << 20 and np.shares_memory(a, block)
    a[:16] = 7
    assert np.all(block[:16] == 7)
    del a
    assert released == []  # the view still holds it
    del view
    assert released == [True]


def test_lease_refuses_what_is_not_a_writeable_byte_block():
    block = np.zeros(1 << 20, np.uint8)
    with pytest.raises(ValueError, match="bytes of a block"):
        _clscale.lease(block, (1 << 20) + 1, lambda: None)
    with pytest.raises(ValueError, match="bytes of a block"):
        _clscale.lease(block, -1, lambda: None)
    with pytest.raises(ValueError, match="uint8"):
        _clscale.lease(block.view(np.float64), 8, lambda: None)
    with pytest.raises(ValueError, match="uint8"):
        _clscale.lease(block.reshape(1024, 1024), 8, lambda: None)
    ro = block.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        _clscale.lease(ro, 8, lambda: None)
    with pytest.raises(TypeError, match="callable"):
        _clscale.lease(block, 8, None)


def test_a_block_is_free_exactly_while_no_output_uses_it():
    x = make_data(SHAPE, np.float64, seed=32, nan=0.0)
    y = clscale.MinMaxScaler().fit_transform(x)
    [block] = _output._blocks
    assert not block.free
    rows = y[5:9]
    del y
    assert not block.free
    del rows
    assert block.free


def test_the_default_cache_holds_a_whole_batch_of_seed_a():
    """1 GiB: seed-A's whole batch (18 x 60 x 98450 float64, 850 MB) and
    one matrix of it, so that fit_transform(x) called again reuses its
    dropped output."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", "import clscale; print(clscale.set_output_cache(0))"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == 1 << 30 >= 18 * 60 * 98450 * 8 + 60 * 98450 * 8


def _thp_setting():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return "never"
    return "always" if "[always]" in text else "madvise" if "[madvise]" in text else "never"


def test_huge_says_whether_the_pages_are_huge_and_leaves_the_data_as_it_is():
    """huge() advises huge pages and answers whether the kernel gives them
    (then _output leaves the pages to the device's threads), never for an
    array with no whole 2 MiB page inside."""
    a = np.arange(5 << 18, dtype=np.float64)  # 10 MB: at least four whole huge pages
    want = a.copy()
    assert _clscale.huge(a[1:-1]) is (_thp_setting() != "never")
    assert np.array_equal(a, want)
    assert _clscale.huge(np.empty(3)) is False
    _refuses_what_it_cannot_touch(_clscale.huge, a)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_outputs_on_fresh_huge_pages_are_right(dtype):
    """Outputs the caller keeps (fresh memory, faulted in by the device's
    threads where the pages are huge) equal those into a given out, whole
    matrices and odd sizes alike."""
    rng = np.random.default_rng(44)
    x = (rng.random((3, 40, 33333)) * 200 - 50).astype(dtype)  # 16 / 8 MB, rows off 16 bytes
    x[1, 5, 7] = np.nan
    want = np.empty_like(x)
    clscale.MinMaxScaler(scope="matrix").fit_transform(x, out=want)
    with _output.fresh_outputs():
        got = clscale.MinMaxScaler(scope="matrix").fit_transform(x)
        got2 = clscale.MinMaxScaler().fit_transform(x[2])
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(got2, want[2])

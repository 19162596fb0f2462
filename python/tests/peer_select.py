"""A pytest plugin for test_peer_suites.py's runs of a peer's own test
file (loaded there with -p peer_select): keeps the tests that reach one
of the names swapped for clscale's (--peer-names), and deselects the
rest, which test only the peer and would only cost time.

A test reaches a name when its code (nested functions and lambdas
included, and the test module's own helpers it calls, as deep as they
go) reads the name as a global or as an attribute (`np.nanmedian`), or
when one of its parameters is the swapped object, an instance of a
swapped class, or a list or tuple holding one."""
import types


def pytest_addoption(parser):
    parser.addoption("--peer-names", default="", help="comma-separated names swapped for clscale's")


def _names(code, module, seen):
    """The global and attribute names `code` reads, through the module's
    own functions it calls."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c, module, seen)
    for name in list(out):
        fn = module.get(name)
        if isinstance(fn, types.FunctionType) and fn.__code__ not in seen:
            seen.add(fn.__code__)
            out |= _names(fn.__code__, module, seen)
    return out


def _holds(value, objects):
    if isinstance(value, (list, tuple)):
        return any(_holds(v, objects) for v in value)
    for obj in objects:
        try:
            if value is obj or (isinstance(obj, type) and isinstance(value, obj)):
                return True
        except TypeError:
            continue
    return False


def pytest_collection_modifyitems(config, items):
    names = {n for n in config.getoption("--peer-names").split(",") if n}
    if not names:
        return
    keep, drop = [], []
    for item in items:
        fn = getattr(item, "function", None)
        module = getattr(getattr(item, "module", None), "__dict__", {})
        objects = [module[n] for n in names if n in module]
        # numpy's functions reached as np.<name>: the swapped np's own
        np_ = module.get("np")
        objects += [getattr(np_, n) for n in names if np_ is not None and n in getattr(np_, "__dict__", {})]
        reads = _names(fn.__code__, module, set()) if fn is not None else set()
        params = getattr(getattr(item, "callspec", None), "params", {})
        if reads & names or any(_holds(v, objects) for v in params.values()):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

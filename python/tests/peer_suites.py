"""The peers' own test files that test_peer_suites.py runs on clscale: where
each installed peer keeps the file, the names swapped for clscale's (the
import lines, replaced whole: each must occur exactly once, so a file of
another layout is noticed, not half-swapped), and the one list of what
may fail there: features clscale does not take, each refused with an
error that names the alternative, and clscale's deliberate differences.
A failure of any other kind, or with another message, fails the test."""
import dataclasses
import importlib.metadata
import importlib.util
import os
import re


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str
    package: str       # the installed package that ships the file
    path: str          # the file, relative to the package's folder
    swaps: tuple       # (line as shipped, line with clscale's names)
    names: tuple       # the names swapped: the tests that reach one run
    min_passed: int    # fewer passing means the selection or the swap broke
    dist: str          # the distribution's name, for its version
    verified: str      # the release series the list below was checked against
    extra: tuple = ()  # a helper module written beside the file (name, source)


# numpy's functions are reached as np.<name>: the file's np becomes numpy
# with clscale's three functions in their places
_PEER_NUMPY = '''"""numpy, with clscale's nanmedian, nanpercentile and nanquantile."""
import types

import numpy

import clscale


class _Numpy(types.ModuleType):
    def __getattr__(self, name):
        return getattr(numpy, name)


np = _Numpy("numpy")
for _name in ("nanmedian", "nanpercentile", "nanquantile"):
    setattr(np, _name, getattr(clscale, _name))
'''

_SCALERS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")

SUITES = (
    # astropy's SigmaClip stays astropy's: clscale's SigmaClip is a
    # scikit-learn transformer (fit/transform), not astropy's callable
    Suite("astropy", "astropy", "stats/tests/test_sigma_clipping.py",
          (("from astropy.stats.sigma_clipping import SigmaClip, sigma_clip, sigma_clipped_stats\n",
            "from astropy.stats.sigma_clipping import SigmaClip\n"
            "from clscale import sigma_clip, sigma_clipped_stats\n"),),
          ("sigma_clip", "sigma_clipped_stats"), 25, "astropy", "5.2"),
    Suite("numpy", "numpy", "lib/tests/test_nanfunctions.py",
          (("\nimport numpy as np\n", "\nfrom peer_numpy import np\n"),),
          ("nanmedian", "nanpercentile", "nanquantile"), 200, "numpy", "1.24", ("peer_numpy", _PEER_NUMPY)),
    Suite("sklearn", "sklearn", "preprocessing/tests/test_data.py",
          tuple((f"from sklearn.preprocessing import {n}\n", f"from clscale import {n}\n") for n in _SCALERS),
          _SCALERS, 60, "scikit-learn", "1.2"),
)


@dataclasses.dataclass(frozen=True)
class Allowed:
    suite: str
    what: str
    why: str
    error: str         # a regular expression the failure's text must match
    check: object = None  # and where given, a function of the match that must hold


def _keyword_only_extras(m):
    """numpy's test_signature_match's failure: numpy's signature (ACTUAL)
    and clscale's (DESIRED) differ only by keyword-only parameters after
    numpy's own, devices= and weights= (numpy 2's, which numpy 1 lacks)."""
    def split(s):
        ps = s.split(", ")
        i = ps.index("*") if "*" in ps else len(ps)
        return ps[:i], ps[i + 1:]
    np_pos, np_kw = split(m["numpy"])
    pos, kw = split(m["clscale"])
    extra = [p for p in kw if p not in np_kw]
    return (pos == np_pos and [p for p in kw if p in np_kw] == np_kw and "devices='...'" in extra
            and all(p in ("weights='...'", "devices='...'") for p in extra))


ALLOWED = (
    Allowed("sklearn", "sparse input (scipy.sparse matrices and arrays)",
            "the devices scale dense columns; a sparse matrix would be densified whole",
            r"TypeError: clscale\.\w+ takes dense arrays only, got a sparse \w+: convert it with X\.toarray\(\)"),
    Allowed("sklearn", "sample_weight (StandardScaler's fit, partial_fit, fit_transform)",
            "the devices fit unweighted statistics",
            r"TypeError: clscale\.StandardScaler fits unweighted statistics and does not take sample_weight: "
            r"leave it out, or use sklearn\.preprocessing\.StandardScaler"),
    # numpy's test compares nanmedian's signature with median's (the same
    # for percentile and quantile): clscale's has numpy's parameters, in
    # numpy's order and kinds, and keyword-only ones after them
    Allowed("numpy", "keyword-only devices= (and numpy 2's weights=) after numpy's parameters",
            "devices= is the device selector of every clscale call; weights= goes to numpy's own function "
            "(where the installed numpy has none, numpy refuses it); no call numpy takes reaches either",
            r"ACTUAL: <Signature \((?P<numpy>[^)]*)\)>\s*\n\s*E?\s*DESIRED: <Signature \((?P<clscale>[^)]*)\)>",
            _keyword_only_extras),
)


def installed_series(suite):
    """The installed peer's release series ("1.24"), or None."""
    try:
        v = importlib.metadata.version(suite.dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    return ".".join(v.split(".")[:2])


def peer_file(suite):
    """The installed peer's file, or None where the package or the file
    is missing."""
    spec = importlib.util.find_spec(suite.package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], suite.path)
    return path if os.path.isfile(path) else None


def swapped(suite, source):
    """The file's text with clscale's names, or None where a line to swap
    does not occur exactly once (another version's layout)."""
    for old, new in suite.swaps:
        if source.count(old) != 1:
            return None
        source = source.replace(old, new)
    return source


def allowed(suite, text):
    """The entry of ALLOWED a failure's text matches, or None."""
    for a in ALLOWED:
        m = re.search(a.error, text) if a.suite == suite.name else None
        if m and (a.check is None or a.check(m)):
            return a
    return None

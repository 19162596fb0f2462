"""The peers' own test files, as the installed packages ship them (astropy's
test_sigma_clipping.py, numpy's test_nanfunctions.py, scikit-learn's
preprocessing/tests/test_data.py), with the names clscale claims swapped
for clscale's (peer_suites.py: the swaps and the one list of what may
fail), run by pytest in a child process on the tests that reach a swapped
name (peer_select.py). Every test run must pass, but those whose failure
is one of the listed refusals of a feature clscale does not take, with
its message, or a listed deliberate difference; every listed entry must
still be seen, so that the list says what is true. SKIP where a peer or
its file is missing, where the file is not the layout the swaps were
written for, or where the installed release is not the one the list was
checked against (Debian 12's: the pip check's venv of the index's
releases skips)."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import clscale
import peer_suites

HERE = os.path.dirname(os.path.abspath(__file__))


def _outcomes(xml_path):
    """(test id, outcome, text) of every test case of a junit XML file."""
    out = []
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome, text = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
                text = (child.get("message") or "") + "\n" + (child.text or "")
                if child.tag != "skipped":
                    break
        out.append((name, outcome, text))
    return out


@pytest.mark.fp64
@pytest.mark.parametrize("suite", peer_suites.SUITES, ids=lambda s: s.name)
def test_peer_suite_passes_but_listed_refusals(suite, tmp_path):
    path = peer_suites.peer_file(suite)
    if path is None:
        pytest.skip(f"{suite.package} or its {suite.path} is not installed")
    with open(path, encoding="utf-8") as f:
        source = peer_suites.swapped(suite, f.read())
    if source is None:
        pytest.skip(f"{path} is not the layout the swaps were written for (Debian 12's)")
    series = peer_suites.installed_series(suite)
    if series != suite.verified:
        # another release's file has other tests: the list was not checked there
        pytest.skip(f"{suite.dist} {series} installed; the list of refusals was checked against "
                    f"{suite.verified} (Debian 12's)")
    name = "test_peer_" + suite.name + ".py"
    (tmp_path / name).write_text(source, encoding="utf-8")
    if suite.extra:
        (tmp_path / (suite.extra[0] + ".py")).write_text(suite.extra[1], encoding="utf-8")
    env = dict(os.environ)
    # the plugin and the package as this run imports them; the OpenCL
    # driver conftest.py chose is in the environment already
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(clscale.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), HERE, pkg] + [p for p in [env.get("PYTHONPATH")] if p])
    xml = tmp_path / "result.xml"
    # --tb=line: a failure's message (what the list matches) is in the
    # results whole; the tracebacks of the refused tests took most of the
    # run's time
    cmd = [sys.executable, "-m", "pytest", "-q", "--tb=line", "-p", "no:cacheprovider", "-p", "peer_select",
           "--peer-names", ",".join(suite.names), "--junitxml", str(xml), "-o", "junit_family=xunit1",
           "--rootdir", str(tmp_path), str(tmp_path / name)]
    # in this run's folder: the environment's paths may be relative to it
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert xml.exists(), f"pytest wrote no results (exit {run.returncode}):\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    results = _outcomes(xml)
    passed = [n for n, o, _ in results if o == "passed"]
    unexpected, seen = [], set()
    for n, o, text in results:
        if o in ("failure", "error"):
            a = peer_suites.allowed(suite, text)
            if a is None:
                unexpected.append(f"{n}:\n{text[:3000]}")
            else:
                seen.add(a.what)
    assert not unexpected, f"{len(unexpected)} failures in claimed features:\n\n" + "\n\n".join(unexpected[:10])
    listed = {a.what for a in peer_suites.ALLOWED if a.suite == suite.name}
    assert seen == listed, f"listed but not seen (the list is out of date): {sorted(listed - seen)}"
    assert len(passed) >= suite.min_passed, (f"only {len(passed)} of {len(results)} tests passed "
                                             f"(the selection or the swap broke):\n{run.stdout[-3000:]}")


def _suite(name):
    return next(s for s in peer_suites.SUITES if s.name == name)


def test_the_list_admits_only_its_own_messages():
    """What the list lets fail: clscale's refusals with their wording, and
    signatures that differ by keyword-only extras alone; not the generic
    errors these features got before, nor another signature."""
    sk, np_ = _suite("sklearn"), _suite("numpy")
    sparse = ("TypeError: clscale.RobustScaler takes dense arrays only, got a sparse csr_matrix: convert it with "
              "X.toarray(), or keep it sparse with sklearn.preprocessing.RobustScaler(with_centering=False)")
    weight = ("TypeError: clscale.StandardScaler fits unweighted statistics and does not take sample_weight: "
              "leave it out, or use sklearn.preprocessing.StandardScaler for weighted ones")
    assert peer_suites.allowed(sk, sparse) is not None
    assert peer_suites.allowed(sk, weight) is not None
    assert peer_suites.allowed(np_, sparse) is None  # another suite's entry
    for text in ("TypeError: A sparse matrix was passed, but dense data is required. Use X.toarray() to convert "
                 "to a dense numpy array.",
                 "TypeError: Scaler.fit() got an unexpected keyword argument 'sample_weight'",
                 "AssertionError: arrays are not almost equal"):
        assert peer_suites.allowed(sk, text) is None

    def sig(numpy_, ours):
        return (f"AssertionError: \nItems are not equal:\n ACTUAL: <Signature ({numpy_})>\n"
                f" DESIRED: <Signature ({ours})>")
    med = "a, axis='...', out='...', overwrite_input='...', keepdims='...'"
    q1 = "a, q, axis='...', out='...', overwrite_input='...', method='...', keepdims='...', *, interpolation='...'"
    assert peer_suites.allowed(np_, sig(med, med + ", *, devices='...'")) is not None
    assert peer_suites.allowed(np_, sig(q1, q1.replace("*, ", "*, weights='...', ") + ", devices='...'")) is not None
    # a parameter of numpy's missing, moved, made keyword-only, or an extra
    # one that is not keyword-only or not one of the two
    assert peer_suites.allowed(np_, sig(med, "a, axis='...', out='...', keepdims='...', *, devices='...'")) is None
    assert peer_suites.allowed(np_, sig(med, "a, out='...', axis='...', overwrite_input='...', keepdims='...', "
                                             "*, devices='...'")) is None
    assert peer_suites.allowed(np_, sig(med, "a, axis='...', out='...', overwrite_input='...', *, keepdims='...', "
                                             "devices='...'")) is None
    assert peer_suites.allowed(np_, sig(med, med + ", devices='...'")) is None
    assert peer_suites.allowed(np_, sig(med, med + ", *, devices='...', chunk='...'")) is None
    assert peer_suites.allowed(np_, sig(med, med)) is None

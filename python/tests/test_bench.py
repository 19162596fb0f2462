"""python -m clscale.bench runs, at a small size, and every row's result is
right (the timings themselves are the benchmark's, never a test's)."""
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.fp64


def test_bench_runs_small_and_every_row_is_correct(tmp_path):
    out = tmp_path / "b.json"
    r = subprocess.run([sys.executable, "-m", "clscale.bench", "--size", "0.05", "--repeats", "1",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    names = [w["name"] for w in d["workloads"]]
    assert names == ["seed-a", "seed-a-loop", "seed-a-zscore", "seed-b"]
    loop = d["workloads"].pop(1)  # the natural loop: its own rows and ratios
    assert {r["kind"] for r in loop["runs"]} == {"loop", "loop-sk", "2d", "2d-kept", "copy-2d", "3d", "3d-kept",
                                                    "copy-3d"}
    assert all(r["times"]["median"] > 0 for r in loop["runs"])
    assert set(loop["max_error"]) == {"loop", "2d", "3d"}
    assert all(e <= 1e-12 for e in loop["max_error"].values()), loop["max_error"]
    assert set(loop["ratios"]) == {"loop_speedup_over_sklearn", "call_2d_over_copy", "call_2d_kept_over_copy",
                                   "call_3d_over_copy", "call_3d_kept_over_copy"}
    for w in d["workloads"]:
        kinds = {run["kind"] for run in w["runs"]}
        assert {"python", "c", "numpy"} <= kinds
        for run in w["runs"]:
            assert run["max_error"] <= 1e-12, (w["name"], run["name"])
            assert run["times"]["median"] > 0
    mem = d["memory"]["runs"]
    assert [m["via"] for m in mem] == ["python", "c"]
    assert all(m["peak_rss_during_call"] >= m["rss_with_array"] > m["rss_before_array"] for m in mem)



def test_bench_natural_loop_alone_in_float32(tmp_path):
    """--workload seed-a-loop-f32: the natural loop's rows alone, on the
    same values in float32, checked against numpy in float64."""
    out = tmp_path / "l.json"
    r = subprocess.run([sys.executable, "-m", "clscale.bench", "--workload", "seed-a-loop-f32", "--size", "0.05",
                        "--repeats", "1", "--no-memory", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    [w] = json.loads(out.read_text())["workloads"]
    assert w["name"] == "seed-a-loop-f32" and w["dtype"] == "float32" and w["shape"] == [1, 60, 98450]
    assert set(w["max_error"]) == {"loop", "2d", "3d"}
    assert all(e <= 1e-6 for e in w["max_error"].values()), w["max_error"]
    assert all(run["times"]["median"] > 0 for run in w["runs"])

def test_bench_quantiles_workload_is_exact_against_numpy(tmp_path):
    """The quantiles workload (one matrix; numpy's nanpercentile on it takes
    seconds) checks cls_quantiles bit for bit against numpy and reports its
    ratios to the min-max pass and to numpy."""
    out = tmp_path / "q.json"
    r = subprocess.run([sys.executable, "-m", "clscale.bench", "--workload", "quantiles", "--size", "0.05",
                        "--repeats", "1", "--numpy-matrices", "1", "--no-memory", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    w = json.loads(out.read_text())["workloads"][0]
    assert w["name"] == "quantiles" and w["shape"] == [1, 60, 98450]
    assert w["exact_vs_numpy"] is True and w["function_equals_c"] is True
    assert set(w["ratios"]) == {"quantiles_over_minmax_fit", "quantiles_over_minmax_fit_transform",
                                "numpy_percentile_over_quantiles",
                                "function_over_c", "numpy_nanpercentile_over_function"}
    assert all(run["times"]["median"] > 0 for run in w["runs"])


def test_bench_sigma_clip_workload_masks_equal_astropy(tmp_path):
    """The sigma-clip workload times clscale.sigma_clip, the estimator and
    the library call beside astropy's sigma_clip, and compares the masks."""
    pytest.importorskip("astropy")
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, "-m", "clscale.bench", "--workload", "sigma-clip", "--size", "0.06",
                        "--repeats", "1", "--no-memory", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    w = json.loads(out.read_text())["workloads"][0]
    assert w["name"] == "sigma-clip" and w["shape"] == [1, 60, 20000]
    assert w["masks_equal_astropy"] is True
    assert w["stats_equal_astropy"] is True
    assert [run["kind"] for run in w["runs"]] == ["python", "python-estimator", "c", "python-stats", "astropy",
                                                   "astropy-stats"]
    assert set(w["ratios"]) == {"function_over_c", "astropy_over_function", "astropy_over_estimator",
                                "astropy_over_stats"}


def test_bench_impute_workload_rows_and_ratios(tmp_path):
    """The impute workload runs the fused pipeline, the two steps, the
    scaler alone, scikit-learn's pipeline, both imputers alone and the C
    calls, each right."""
    out = tmp_path / "i.json"
    r = subprocess.run([sys.executable, "-m", "clscale.bench", "--workload", "impute", "--size", "0.005",
                        "--repeats", "1", "--no-memory", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    w = json.loads(out.read_text())["workloads"][0]
    assert w["name"] == "impute" and w["shape"] == [10000, 8]
    assert [run["kind"] for run in w["runs"]] == ["fused", "two-steps", "scaler-alone", "scaler-nan", "sklearn",
                                                   "imputer", "sklearn-imputer", "c-fused", "c-alone", "c-nan"]
    assert all(run["max_error"] <= 1e-5 and run["times"]["median"] > 0 for run in w["runs"])
    assert set(w["ratios"]) == {"fused_over_scaler_alone", "fused_over_scaler_on_nan", "two_steps_over_scaler_alone",
                                "two_steps_over_fused", "sklearn_over_fused", "sklearn_imputer_over_imputer",
                                "imputer_over_scaler_on_nan", "c_fused_over_c_alone", "c_fused_over_c_on_nan"}


def test_bench_shapes_sweep_checks_every_row_against_its_peer(tmp_path):
    """The shape sweep at a small size: every operation at every length it
    reaches, each result equal to the peer's (astropy's masks, numpy's and
    scikit-learn's values), and the SVG drawn."""
    pytest.importorskip("astropy")
    out, svg = tmp_path / "s.json", tmp_path / "s.svg"
    r = subprocess.run([sys.executable, "-m", "clscale.bench", "--workload", "shapes", "--size", "0.0005",
                        "--repeats", "1", "--no-memory", "--json", str(out), "--svg", str(svg)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    w = json.loads(out.read_text())["workloads"][0]
    assert w["name"] == "shapes"
    assert w["lengths"] == [1, 60, 64, 65, 300, 1000, 5000]
    ops = {"minmax", "robust", "quantiles", "impute", "clip-5", "clip-conv", "clip-mean", "clip-mad"}
    for n in w["lengths"]:
        assert {row["op"] for row in w["rows"] if row["rows"] == n} == ops
    for row in w["rows"]:
        if row["op"] != "minmax":
            assert row["check"] in ("masks equal",) or row["check"].startswith("max rel error"), row
    text = svg.read_text()
    assert text.startswith("<svg") and text.count("<polyline") == len(ops) - 1
